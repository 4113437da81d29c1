"""Start-up (issue 11): `hlo-layout layout SHAPE` imports only what it needs — never numpy, the
grammar (Lark), the indexing engine, other commands, or pydantic (which Typer's parameter
coercion loads; the option-less `layout` path runs the same command function without it) — and
gives exactly what the Typer path gives. Times live in benchmarks/, not here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_SHAPES = [
    ["f32[8,128]{1,0}"],
    ["bf16[3,5]{1,0:T(8,128)(2,1)}", "(f32[2], s8[4]{0:T(4)E(8)})"],
    ["f32[8"],  # a syntax error: exit 3
    ["true"],  # a flag value: exit 2
    ["f32[8,128]{1,0:T(8,*)}"],
]


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


@pytest.mark.parametrize("shapes", _SHAPES, ids=lambda s: " ".join(s))
def test_plain_layout_equals_the_typer_path(shapes: list[str]) -> None:
    plain = _run(["layout", *shapes])
    typed = _run(["layout", *shapes, "--format", "text"])  # an option: the Typer path
    assert (plain.returncode, plain.stdout, plain.stderr) == (
        typed.returncode,
        typed.stdout,
        typed.stderr,
    )


def test_plain_layout_imports_only_what_it_needs() -> None:
    done = _run(["layout", "f32[8,128]{1,0:T(8,128)}"], importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "hlo_layout.report.layout_model" in imported  # the measurement is real
    for heavy in ("numpy", "lark", "pydantic", "hlo_layout.indexing", "hlo_layout.cli.inspect_cmd"):
        assert heavy not in imported, heavy
