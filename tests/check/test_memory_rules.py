"""`--max-peak-bytes` and `--max-temp-bytes`: budgets on XLA's own measures, set at and one byte
below the figures, with the temp figure taken from the compiler's buffer assignment."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hlo_layout.layout.buffer_assignment import read_buffer_assignment
from hlo_layout.memory import analyze_memory
from hlo_layout.syntax import parse_file
from tests.conftest import CORPUS, REPO

CPU = CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt"
ASSIGNMENT = CPU.with_name(CPU.name.replace(".txt", "-buffer-assignment.txt"))


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hlo_layout", "check", "--format", "json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def _compiler_temp() -> int:
    assignment = read_buffer_assignment(ASSIGNMENT)
    return sum(a.size for a in assignment.allocations if a.is_preallocated_temp and a.color == 0)


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_temp_bytes_is_the_compilers_temp_allocation(slack: int, code: int) -> None:
    temp = _compiler_temp()
    assert temp > 0
    got = _check(str(CPU), "--max-temp-bytes", f"0={temp + slack}")
    assert got.returncode == code, got.stderr
    if code:
        violation = json.loads(got.stdout)["violations"][0]
        assert violation["rule"] == "max-temp-bytes"
        assert violation["value"] == temp


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_peak_bytes_is_the_analysis_peak(slack: int, code: int) -> None:
    analysis = analyze_memory(parse_file(CPU), file=str(CPU))
    peak = next(s.peak_bytes for s in analysis.spaces if s.memory_space == 0)
    assert peak == analysis.peak_bytes == read_buffer_assignment(ASSIGNMENT).total_bytes
    got = _check(str(CPU), "--max-peak-bytes", f"0={peak + slack}")
    assert got.returncode == code, got.stderr
