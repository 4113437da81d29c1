"""Start-up (issues 11 and 13): a command imports only what it needs. `layout SHAPE` never loads
numpy, the grammar (Lark), the indexing engine or other commands; no command loads pydantic
(which Typer's own parameter coercion would: `cli/fast_params.py`); `inspect` of a dump the
scanner reads whole never loads Lark. Times live in benchmarks/, not here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "hlo_layout", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )


def _imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}


@pytest.mark.parametrize("options", [[], ["--format", "text"], ["--grid"]])
def test_layout_imports_only_what_it_needs(options: list[str]) -> None:
    imported = _imported(_run(["layout", "f32[8,128]{1,0:T(8,128)}", *options], importtime=True))
    assert "hlo_layout.report.layout_model" in imported  # the measurement is real
    for heavy in ("numpy", "lark", "pydantic", "hlo_layout.indexing", "hlo_layout.cli.inspect_cmd"):
        assert heavy not in imported, heavy


@pytest.mark.parametrize("options", [[], ["--top", "3", "--format", "json"]])
def test_inspect_loads_neither_pydantic_nor_the_grammar(options: list[str]) -> None:
    sample = ROOT / "samples" / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
    imported = _imported(_run(["inspect", str(sample), *options], importtime=True))
    assert "hlo_layout.memory.analysis" in imported  # the measurement is real
    for heavy in ("lark", "pydantic"):
        assert heavy not in imported, heavy
