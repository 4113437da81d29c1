"""What the tests share besides fixtures: where the test data lives, the corpus readers, and the
runners that `tests/conftest.py`'s fixtures hand out (`cli`, `cli_process`).

pytest's advice, which this follows: `conftest.py` holds fixtures and hooks and is never imported;
helpers that tests import (data paths a `parametrize` needs at collection, the runners' types for
annotations) live in an ordinary module. Tests that read `../shared` skip with a message when it
is absent (a user's clone has none).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from click.testing import Result

    from hlo_layout.syntax.tree import Module

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
CORPUS = DATA / "corpus"
SAMPLES = REPO / "samples"
#: The team's shared corpus (absent from a user's clone).
SHARED = REPO.parent / "shared"


def compiled_scanner() -> Any:
    """The compiled scanner (`_hlo_layout_scan`) when it is built at the ABI `scan.py` reads,
    else None; imported even under HLO_LAYOUT_PURE_PYTHON, which turns it off for the package,
    so the tests still compare it with the Python reference."""
    import importlib

    from hlo_layout.syntax import scan

    try:
        module = importlib.import_module("_hlo_layout_scan")
    except ImportError:
        return None
    return module if getattr(module, "ABI", None) == scan._ACCEL_ABI else None


#: Files in the corpus that are compiler reports, not HLO text.
_NOT_HLO = ("buffer-assignment", "memory-usage-report", "live-range", "/oom-reports/")


def hlo_files() -> list[Path]:
    """Every HLO text dump of the corpus, in a stable order."""
    return sorted(
        p for p in CORPUS.rglob("*.txt") if not any(marker in p.as_posix() for marker in _NOT_HLO)
    )


def oracle_files() -> list[Path]:
    """Every `*.xla.json` (XLA's own parse of the dump beside it)."""
    return sorted(CORPUS.rglob("*.xla.json"))


def corpus_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


@functools.cache
def corpus_modules(path: Path) -> tuple[Module, ...]:
    """`parse_file_modules(path)`, parsed once per test session (per xdist worker) and shared:
    trees are immutable, and several tests walk every corpus dump (the 1.7 MB gemma one too)."""
    from hlo_layout.syntax import parse_file_modules

    return parse_file_modules(path)


class Cli:
    """`hlo-layout ARGS` run in this process, as Typer's CliRunner runs it (the `cli` fixture):
    `cli("inspect", path, "-f", "json")` gives the Result (exit code, stdout, stderr)."""

    def __init__(self) -> None:
        from typer.testing import CliRunner

        self._runner = CliRunner()

    def __call__(
        self, *args: str | Path, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> Result:
        from hlo_layout.cli import app

        return self._runner.invoke(app, [str(a) for a in args], input=input, env=env)

    def json(self, *args: str | Path, **kwargs: Any) -> Any:
        """The JSON document a run that must succeed writes on stdout."""
        result = self(*args, **kwargs)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


class CliProcess:
    """`python -m hlo_layout ARGS` in a child process (the `cli_process` fixture): what a shell
    sees (exit code, stdout and stderr through pipes, no terminal), within a generous timeout."""

    def __call__(
        self,
        *args: str | Path,
        input: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hlo_layout", *map(str, args)]
        environment = None if env is None else {**os.environ, **env}
        return subprocess.run(
            command,
            input=input,
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def json(self, *args: str | Path, **kwargs: Any) -> Any:
        """The JSON document a run that must succeed writes on stdout."""
        result = self(*args, **kwargs)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)
