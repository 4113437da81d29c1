"""The byte figures of a module for budgets: read off its footprint (`memory/footprint.py`) and
its peak (`memory/analysis.py`), the same objects `inspect` and `memory` show.

One definition of "which values count" serves `inspect` and `check`: see NOTE: [which values
count] in `hlo_layout/memory/footprint.py`. Bytes per memory space are what XLA's buffer
assignment allocates there (`hlo_layout.memory`: static allocations + the temp allocation), not
the sum of every value defined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hlo_layout.check.metrics import Buffer
from hlo_layout.memory.backend import BackendChoice
from hlo_layout.memory.buffer_assignment import BufferAssignment
from hlo_layout.memory.footprint import LeafRow, MemoryReport, memory_report
from hlo_layout.syntax.tree import Module

#: How many of the largest buffers a ModuleMetrics keeps.
KEEP_LARGEST = 20


def _buffer(row: LeafRow) -> Buffer:
    name = row.name if not row.index else f"{row.name}{{{','.join(map(str, row.index))}}}"
    return Buffer(
        name,
        row.computation or "",
        row.shape,
        row.physical_bytes or 0,
        row.logical_bytes or 0,
        row.memory_space,
    )


def _space_bytes(report: MemoryReport) -> dict[int, int]:
    """Per memory space, the bytes XLA's buffer assignment allocates there: static + temp
    allocation + thread-local (on CPU and GPU the space's peak; on TPU, whose peak is jax's
    trace-based figure, what the allocations reserve). Values defined when the module has no
    entry to analyze."""
    if report.peak is None:
        return {t.memory_space: t.physical_bytes for t in report.totals}
    return {
        s.memory_space: s.static_bytes + s.temp_allocation_bytes + s.thread_local_bytes
        for s in report.peak.spaces
    }


def memory_figures(
    module: Module,
    assignment: BufferAssignment | None = None,
    file: Path | str | None = None,
    backend: BackendChoice | None = None,
) -> dict[str, Any]:
    """Argument/output bytes, bytes per memory space, padding, largest buffers, allocations.
    `assignment` and `backend` as the reader found them (`hlo_layout.reader.Dump`)."""
    return figures_of(report_for(module, assignment, file, backend))


def report_for(
    module: Module,
    assignment: BufferAssignment | None = None,
    file: Path | str | None = None,
    backend: BackendChoice | None = None,
) -> MemoryReport:
    """The memory report the figures are read off (its `peak` is the module's analysis)."""
    return memory_report(
        module, assignment=assignment, top=KEEP_LARGEST, file=file, backend=backend
    )


def figures_of(report: MemoryReport) -> dict[str, Any]:
    """ModuleMetrics' byte figures from a module's memory report."""
    params = [_buffer(r) for r in report.entry_parameters]
    outputs = [_buffer(r) for r in report.entry_outputs]
    return {
        "argument_bytes": sum(b.physical_bytes for b in params),
        "output_bytes": sum(b.physical_bytes for b in outputs),
        "space_bytes": _space_bytes(report),
        "peak_bytes": (
            {s.memory_space: s.peak_bytes for s in report.peak.spaces} if report.peak else {}
        ),
        "temp_bytes": (
            {s.memory_space: s.temp_allocation_bytes for s in report.peak.spaces}
            if report.peak
            else {}
        ),
        "logical_bytes": sum(t.logical_bytes for t in report.totals),
        "physical_bytes": sum(t.physical_bytes for t in report.totals),
        "largest": tuple(_buffer(r) for r in report.buffers),
        "entry_buffers": tuple(params + outputs),
        "allocation_bytes": report.allocations.total_bytes if report.allocations else None,
        "module_peak_bytes": report.peak.peak_bytes if report.peak else None,
        "backend_note": (
            report.peak.backend_note if report.peak and report.peak.backend_assumed else ""
        ),
    }
