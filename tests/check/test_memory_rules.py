"""`--max-peak-bytes` and `--max-temp-bytes`: budgets on XLA's own measures, set at and one byte
below the figures, with the temp figure taken from the compiler's buffer assignment."""

from __future__ import annotations

import json

import pytest

from hlo_layout.memory import analyze_memory
from hlo_layout.reader.sidefiles import read_buffer_assignment
from hlo_layout.syntax import parse_file
from tests.support import CORPUS, REPO, CliProcess

CPU = CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt"
ASSIGNMENT = CPU.with_name(CPU.name.replace(".txt", "-buffer-assignment.txt"))


def _compiler_temp() -> int:
    assignment = read_buffer_assignment(ASSIGNMENT)
    return sum(a.size for a in assignment.allocations if a.is_preallocated_temp and a.color == 0)


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_temp_bytes_is_the_compilers_temp_allocation(
    cli_process: CliProcess, slack: int, code: int
) -> None:
    temp = _compiler_temp()
    assert temp > 0
    got = cli_process(
        "check", "--format", "json", str(CPU), "--max-temp-bytes", f"0={temp + slack}", cwd=REPO
    )
    assert got.returncode == code, got.stderr
    if code:
        violation = json.loads(got.stdout)["violations"][0]
        assert violation["rule"] == "max-temp-bytes"
        assert violation["value"] == temp


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_peak_bytes_is_the_analysis_peak(
    cli_process: CliProcess, slack: int, code: int
) -> None:
    analysis = analyze_memory(parse_file(CPU), file=str(CPU))
    peak = next(s.peak_bytes for s in analysis.spaces if s.memory_space == 0)
    assert peak == analysis.peak_bytes == read_buffer_assignment(ASSIGNMENT).total_bytes
    got = cli_process(
        "check", "--format", "json", str(CPU), "--max-peak-bytes", f"0={peak + slack}", cwd=REPO
    )
    assert got.returncode == code, got.stderr
