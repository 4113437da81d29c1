"""The memory report model: which values count, totals, padding groups, the compiler's allocations,
and byte units as XLA prints them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_layout.layout import tiling_pattern
from hlo_layout.memory.footprint import memory_report
from hlo_layout.reader.sidefiles import buffer_assignment_beside, read_buffer_assignment
from hlo_layout.report.units import human_bytes
from hlo_layout.syntax import ArrayShape, parse_file, parse_shape
from tests.support import CORPUS, SAMPLES, corpus_id, hlo_files

WITH_BUFFERS = [p for p in hlo_files() if buffer_assignment_beside(p) is not None]
SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"


@pytest.mark.parametrize("dump", WITH_BUFFERS, ids=corpus_id)
def test_counted_values_are_values_the_compiler_allocated(dump: Path) -> None:
    # NOTE: [which values count]: no value we count is missing from the buffer assignment, and
    # where both have it the sizes agree.
    assignment = read_buffer_assignment(buffer_assignment_beside(dump))
    sizes = {
        (v.instruction, v.index): v.size
        for v in assignment.values
        if isinstance(v.shape, ArrayShape)
    }
    report = memory_report(parse_file(dump), assignment=assignment)
    assert report.buffers
    for row in report.buffers:
        assert sizes.get((row.name, row.index)) == row.physical_bytes, row
    summary = report.allocations
    assert summary is not None
    assert summary.values_checked == len(sizes) and summary.mismatches == ()
    assert summary.unknown_instructions == 0
    assert summary.total_bytes == sum(a.size for a in assignment.allocations)


def test_totals_padding_and_order_agree_with_the_rows() -> None:
    folder = CORPUS / "libtpu-v5e" / "elementwise_odd_shapes"
    dump = folder / "elementwise_odd_shapes.after_optimizations.txt"
    report = memory_report(parse_file(dump))
    assert report.tpu
    rows = report.buffers
    assert [r.physical_bytes for r in rows] == sorted(
        (r.physical_bytes for r in rows), reverse=True
    )
    assert sum(t.physical_bytes for t in report.totals) == sum(r.physical_bytes for r in rows)
    assert sum(t.values for t in report.totals) == len(rows)
    assert [t.memory_space for t in report.totals] == sorted({r.memory_space for r in rows})
    padded = [r for r in rows if r.padding_bytes]
    assert sum(g.padding_bytes for g in report.padding) == sum(r.padding_bytes for r in padded)
    assert sum(g.values for g in report.padding) == len(padded)
    for group in report.padding:
        for row in group.rows:
            assert row.reasons
            assert tiling_pattern(parse_shape(row.shape)) == group.pattern


def test_entry_outputs_and_host_offload() -> None:
    dump = CORPUS / "libtpu-v5e/host_offload/host_offload.after_optimizations.txt"
    report = memory_report(parse_file(dump))
    assert {r.memory_space for r in report.entry_parameters} == {0, 5}
    assert [r.index for r in report.entry_outputs] == [(0,), (1,)]
    assert report.output_pointer_table_bytes == 512
    assert any(t.name == "host" and t.values for t in report.totals)


def test_scope_to_one_computation() -> None:
    module = parse_file(SAMPLE)
    fusion = next(c for c in module.computations if module.kind(c) == "fusion")
    report = memory_report(module, computation=fusion.name)
    assert report.scope == fusion.name
    assert len(report.entry_parameters) == len(fusion.parameter_instructions)
    assert {r.computation for r in report.buffers} <= {fusion.name}
    with pytest.raises(KeyError):
        memory_report(module, computation="no-such-computation")


def test_progress_callback_reaches_the_end() -> None:
    calls: list[tuple[int, int]] = []
    memory_report(parse_file(SAMPLE), progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]


def test_human_bytes_match_the_compilers_memory_reports() -> None:
    # Every `Total bytes: N (X)` line the compiler wrote: our formatting of N is X.
    seen = 0
    for path in CORPUS.rglob("*memory-usage-report.txt"):
        for n, text in re.findall(r"Total bytes: (\d+) \(([^)]+)\)", path.read_text()):
            assert human_bytes(int(n)) == text
            seen += 1
    assert seen >= 20
