"""The code stays lint-, format- and type-clean (ruff, ruff format, mypy with check_untyped_defs,
configured in pyproject.toml). Each tool runs in a subprocess; a missing tool skips."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from tests.support import REPO


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(tool) is not None:
        command = [sys.executable, "-m", tool, *args]
    elif shutil.which(tool) is not None:
        command = [tool, *args]
    else:
        pytest.skip(f"{tool} is not installed (pip install '.[test]')")
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)


def test_ruff_check() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy() -> None:
    result = _run("mypy")  # files and options: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
