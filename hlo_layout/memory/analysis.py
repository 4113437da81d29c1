"""`analyze_memory`: XLA's answer to "what is alive at the peak, and why" for one module.

Runs, in XLA's order, the dataflow, alias, live-range, buffer-assignment and heap-simulation
analyses of this package, and gathers what the `memory` command, `inspect` and `check` show. The
result's `to_dict()` is one element of `hlo-layout memory --format json`'s `modules` list
(README, "memory --format json").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from hlo_layout import collector
from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.layout.memory_space import peak_space_name
from hlo_layout.layout.size import array_bytes
from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.assigner import BufferAssigner
from hlo_layout.memory.backend import Backend, backend_named, detect_backend
from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue
from hlo_layout.memory.live_range import LiveRange
from hlo_layout.memory.metadata import SourceInfo
from hlo_layout.memory.peak import compute_peak
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape, Shape
from hlo_layout.syntax.tree import Instruction, Module

SCHEMA_VERSION = 1
#: At most this many numbers per memory space in `timeline` (max-pooled beyond).
TIMELINE_POINTS = 2000


@dataclass(frozen=True, slots=True)
class ValueRow:
    """One value with a live range: where it lives in the flattened schedule and in memory."""

    name: str
    index: tuple[int, ...]
    start: int
    end: int
    bytes: int
    memory_space: int
    allocation: str


@dataclass(frozen=True, slots=True)
class LiveBuffer:
    """A buffer live at a moment: its largest value's shape and figures, and its source op."""

    name: str
    index: tuple[int, ...]
    shape: str
    bytes: int
    logical_bytes: int
    padding_bytes: int
    memory_space: int
    allocation: str
    start: int
    end: int
    op_name: str | None
    source: str | None


@dataclass(frozen=True, slots=True)
class SpacePeak:
    memory_space: int
    name: str
    static_bytes: int
    temp_allocation_bytes: int
    peak_live_bytes: int
    peak_step: int
    peak_instruction: str | None
    estimate: bool

    def to_dict(self) -> dict[str, Any]:
        """This space's object in `memory --format json` (and `inspect`'s `peak`)."""
        return {
            "memory_space": self.memory_space,
            "name": self.name,
            "static_bytes": self.static_bytes,
            "temp_allocation_bytes": self.temp_allocation_bytes,
            "peak_live_bytes": self.peak_live_bytes,
            "peak_step": self.peak_step,
            "peak_instruction": self.peak_instruction,
            "estimate": self.estimate,
        }


@dataclass(slots=True)
class _BufferColumns:
    """The buffers with a live range, a list per field (NOTE: [columns])."""

    source: SourceInfo
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    color: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    #: The buffer's largest value (its representative): defining instruction, index, shape.
    instruction: list[Instruction] = field(default_factory=list)
    index: list[tuple[int, ...]] = field(default_factory=list)
    shape: list[Shape] = field(default_factory=list)

    def row(self, k: int) -> LiveBuffer:
        return _live_buffer(
            self.instruction[k],
            self.index[k],
            self.shape[k],
            self.size[k],
            self.color[k],
            self.kind[k],
            self.start[k],
            self.end[k],
            self.source,
        )


@dataclass(slots=True)
class _ValueColumns:
    """MemoryAnalysis.values as a list per field, by value id; `start` is None for a value with
    no live range (it has no row).

    NOTE: [columns] The analysis' result is kept as lists of plain numbers, strings and the
    parse tree's own objects, not as an object per value or buffer (nor a closure over the
    analyses): the collector, off during the analysis, otherwise walks every such object once
    it is back on (a tenth of the analysis on a 19 MB CPU dump)."""

    name: list[str]
    index: list[tuple[int, ...]]
    start: list[int | None]
    end: list[int]
    kind: list[str]
    size: list[int]
    color: list[int]

    def rows(self) -> list[ValueRow]:
        name, index, end, kind, size, color = (
            self.name,
            self.index,
            self.end,
            self.kind,
            self.size,
            self.color,
        )
        return [
            ValueRow(name[k], index[k], s, end[k], size[k], color[k], kind[k])
            for k, s in enumerate(self.start)
            if s is not None
        ]


@dataclass(frozen=True, slots=True)
class OpNameRow:
    op_name: str
    bytes: int
    values: int


@dataclass
class MemoryAnalysis:
    """Peak memory of one module as XLA computes it (see the package docstring)."""

    module: str | None
    file: str | None
    backend: str
    scheduled: bool
    notes: list[str]
    peak_bytes: int
    static_bytes: int
    spaces: list[SpacePeak]
    timelines: dict[int, list[int]]
    sequence: list[str]
    compiler: dict | None = None
    #: Every buffer with a live range; its LiveBuffer row is made when asked (`live_at`).
    _buffers: _BufferColumns | None = field(default=None, repr=False)
    #: The rows of `values`, or the columns they are made of on first use (JSON reads them).
    _values: list[ValueRow] | _ValueColumns = field(default_factory=list, repr=False)

    @property
    def values(self) -> list[ValueRow]:
        """Every value with a live range, in value id order."""
        got = self._values
        if isinstance(got, _ValueColumns):
            got = self._values = got.rows()
        return got

    def live_at(self, step: int, space: int | None = None) -> list[LiveBuffer]:
        """Buffers live at a schedule step (all spaces, or one), largest first."""
        b = self._buffers
        if b is None:
            return []
        rows = [
            b.row(k)
            for k, (s, e, sp) in enumerate(zip(b.start, b.end, b.color))
            if s <= step <= e and (space is None or sp == space)
        ]
        rows.sort(key=lambda r: (-r.bytes, r.name, r.index))
        return rows

    def step_of(self, instruction: str) -> int | None:
        """The schedule step of an instruction (by name), None when it is not scheduled."""
        name = instruction.removeprefix("%")
        for n, s in enumerate(self.sequence):
            if s == name:
                return n
        return None

    @property
    def peak_space(self) -> SpacePeak | None:
        """The space whose live bytes peak highest (the default space on ties)."""
        if not self.spaces:
            return None
        return max(self.spaces, key=lambda s: (s.peak_live_bytes, -s.memory_space))

    def live_at_peak(self, space: int | None = None) -> list[LiveBuffer]:
        if space is None:
            sp = self.peak_space
        else:
            sp = next((s for s in self.spaces if s.memory_space == space), None)
        if sp is None:
            return []
        return self.live_at(sp.peak_step, sp.memory_space)

    def by_op_name(self, rows: list[LiveBuffer]) -> list[OpNameRow]:
        acc: dict[str, list[int]] = {}
        for b in rows:
            key = b.op_name or b.name
            got = acc.setdefault(key, [0, 0])
            got[0] += b.bytes
            got[1] += 1
        out = [OpNameRow(k, v[0], v[1]) for k, v in acc.items()]
        out.sort(key=lambda r: (-r.bytes, r.op_name))
        return out

    def timeline(self, space: int) -> tuple[list[int], int]:
        """Live bytes per step of one space, max-pooled to at most TIMELINE_POINTS numbers.

        Returns (values, bucket)."""
        series = self.timelines.get(space, [])
        bucket = max(1, -(-len(series) // TIMELINE_POINTS))
        if bucket == 1:
            return list(series), 1
        return [max(series[k : k + bucket]) for k in range(0, len(series), bucket)], bucket

    def to_dict(self) -> dict:
        """One element of the `modules` list of `hlo-layout memory --format json`."""
        peak_rows = self.live_at_peak()
        timeline = []
        for sp in self.spaces:
            values, bucket = self.timeline(sp.memory_space)
            timeline.append(
                {
                    "memory_space": sp.memory_space,
                    "length": len(self.timelines.get(sp.memory_space, [])),
                    "bucket": bucket,
                    "live_bytes": values,
                }
            )
        return {
            "module": self.module,
            "file": self.file,
            "backend": self.backend,
            "scheduled": self.scheduled,
            "notes": list(self.notes),
            "peak_bytes": self.peak_bytes,
            "static_bytes": self.static_bytes,
            "spaces": [s.to_dict() for s in self.spaces],
            "values": [
                {
                    "name": v.name,
                    "index": list(v.index),
                    "start": v.start,
                    "end": v.end,
                    "bytes": v.bytes,
                    "memory_space": v.memory_space,
                    "allocation": v.allocation,
                }
                for v in self.values
            ],
            "live_at_peak": [_buffer_dict(b) for b in peak_rows],
            "timeline": timeline,
            "by_op_name": [
                {"op_name": r.op_name, "bytes": r.bytes, "values": r.values}
                for r in self.by_op_name(peak_rows)
            ],
            "compiler": self.compiler,
        }


def _buffer_dict(b: LiveBuffer) -> dict:
    return {
        "name": b.name,
        "index": list(b.index),
        "shape": b.shape,
        "bytes": b.bytes,
        "logical_bytes": b.logical_bytes,
        "padding_bytes": b.padding_bytes,
        "memory_space": b.memory_space,
        "allocation": b.allocation,
        "start": b.start,
        "end": b.end,
        "op_name": b.op_name,
        "source": b.source,
    }


def _space_name(number: int, backend: str) -> str:
    return peak_space_name(number, tpu=backend == "tpu")


def _allocation_kind(kind: str, live_out: bool) -> str:
    if kind in ("parameter", "constant", "thread_local"):
        return kind
    return "output" if live_out else "temp"


def _compiler_figures(assignment: BufferAssignment) -> dict:
    temps: dict[str, int] = {}
    for a in assignment.allocations:
        if a.is_preallocated_temp:
            temps[str(a.color)] = temps.get(str(a.color), 0) + a.size
    return {
        "file": assignment.name,
        "temp_allocation_bytes": temps,
        "allocations": [
            {"index": a.index, "size": a.size, "color": a.color, "kind": a.kind}
            for a in assignment.allocations
        ],
    }


def analyze_memory(
    module: Module,
    backend: str | Backend | None = None,
    buffer_assignment: BufferAssignment | None = None,
    *,
    file: str | Path | None = None,
) -> MemoryAnalysis:
    """XLA's memory analysis of a parsed module (see the module docstring).

    `backend` overrides detection (`cpu`, `gpu`, `tpu`); `buffer_assignment` is the compiler's
    own file when one is beside the dump: shown beside our figures (and, on TPU, the labelled
    source of VMEM), never used to compute ours. Raises ValueError for a module with no
    computation and KeyError for an unknown backend name.
    """
    with collector.paused():
        return _analyze(module, backend, buffer_assignment, file)


def _analyze(
    module: Module,
    backend: str | Backend | None,
    buffer_assignment: BufferAssignment | None,
    file: str | Path | None,
) -> MemoryAnalysis:
    notes: list[str] = []
    if isinstance(backend, Backend):
        be = backend
    elif backend is not None:
        be = backend_named(backend)
    else:
        be, why = detect_backend(module, file)
        notes.append(f"backend {be.name} detected from {why}; --backend overrides")
    a = module.attr("is_scheduled")
    scheduled = a is not None and a.raw.strip().lower() == "true"
    if not scheduled:
        notes.append(
            "the dump is not scheduled (no is_scheduled=true): the text order stands in for the "
            "schedule, so intervals and the peak are estimates"
        )
    df = DataflowAnalysis(module, be)
    alias = AliasAnalysis(df)
    lr = LiveRange(df, alias)
    assigner = BufferAssigner(df, alias, lr, be)
    peak, static, _traces = compute_peak(assigner)
    source = SourceInfo(module)
    sequence = [i.name for i in lr.sequence]

    # Values (their rows, `MemoryAnalysis.values`) and buffers (the union of their values'
    # ranges, sized as XLA sizes the buffer), read in one walk over the buffers.
    n_values = len(df.values)
    vc = _ValueColumns(
        [""] * n_values,
        [()] * n_values,
        [None] * n_values,
        [0] * n_values,
        ["temp"] * n_values,
        assigner.size,
        assigner.color,
    )
    v_name, v_index, v_start, v_end, v_kind = vc.name, vc.index, vc.start, vc.end, vc.kind
    allocation_of_value = assigner.allocation_of_value
    n_steps = lr.end_time + 1
    diffs: dict[int, list[int]] = {}
    bc = _BufferColumns(source)
    ranges = lr.ranges

    def record(v: HloValue, start: int, end: int) -> str:
        """Fill value v's row; its allocation's kind."""
        alloc = allocation_of_value[v.id]
        kind = _allocation_kind(alloc.kind, alloc.live_out) if alloc else "temp"
        vid = v.id
        v_name[vid], v_index[vid], v_start[vid], v_end[vid], v_kind[vid] = (
            v.instruction.name,
            v.index,
            start,
            end,
            kind,
        )
        return kind

    for n, buffer in enumerate(alias.buffers):
        if len(buffer) == 1:  # most buffers: no min, max or key function to call
            rep = buffer[0]
            one = ranges.get(rep.id)
            if one is None:
                continue
            start, end = one.start, one.end
            kind = record(rep, start, end)
        else:
            ranged = [(ranges[v.id], v) for v in buffer if v.id in ranges]
            if not ranged:
                continue
            start = min(r.start for r, _ in ranged)
            end = max(r.end for r, _ in ranged)
            rep = max(ranged, key=lambda rv: (assigner.size[rv[1].id], -rv[1].id))[1]
            for r, v in ranged:
                record(v, r.start, r.end)
            kind = v_kind[rep.id]  # rep is one of `ranged`
        size = assigner.buffer_size[n]
        color = assigner.buffer_color[n]
        d = diffs.get(color)
        if d is None:  # not setdefault: its default list would be built for every buffer
            d = diffs[color] = [0] * (n_steps + 1)
        d[start] += size
        d[min(end, n_steps - 1) + 1] -= size
        bc.start.append(start)
        bc.end.append(end)
        bc.color.append(color)
        bc.size.append(size)
        bc.kind.append(kind)
        bc.instruction.append(rep.instruction)
        bc.index.append(rep.index)
        bc.shape.append(rep.shape)

    timelines: dict[int, list[int]] = {}
    spaces: list[SpacePeak] = []
    colors = sorted(set(diffs) | set(static) | set(assigner.temp_allocation_bytes))
    for color in colors:
        length = max(1, n_steps - 1)
        deltas = diffs.get(color)
        series = list(accumulate(deltas[:length])) if deltas is not None else [0] * length
        timelines[color] = series
        top = max(series, default=0)
        step = series.index(top) if series else 0
        estimate = color in be.msa_spaces
        temp = assigner.temp_allocation_bytes.get(color, 0)
        if estimate and buffer_assignment is not None:
            compiler_temp = sum(
                x.size
                for x in buffer_assignment.allocations
                if x.is_preallocated_temp and x.color == color
            )
            temp, estimate = compiler_temp, False
            notes.append(
                f"S({color}) temp bytes are the compiler's "
                f"(from {Path(buffer_assignment.name).name}): "
                "libtpu's memory-space assignment is closed"
            )
        spaces.append(
            SpacePeak(
                color,
                _space_name(color, be.name),
                static.get(color, 0),
                temp,
                top,
                step,
                sequence[step] if step < len(sequence) else None,
                estimate,
            )
        )
        if estimate:
            notes.append(
                f"S({color}) ({_space_name(color, be.name)}) is placed by libtpu's closed "
                "memory-space assignment: its figures are an estimate"
            )
    if be.name == "cpu":
        notes.append(
            "jax (0.10.2) on CPU reports memory_analysis().peak_memory_in_bytes as the static part "
            "only (parameters + outputs + constants = static_bytes), not a peak"
        )
    compiler = _compiler_figures(buffer_assignment) if buffer_assignment is not None else None
    return MemoryAnalysis(
        module.name,
        str(file) if file is not None else None,
        be.name,
        scheduled,
        notes,
        peak,
        sum(static.values()),
        spaces,
        timelines,
        sequence,
        compiler,
        bc,
        vc,
    )


def _live_buffer(
    instruction: Instruction,
    index: tuple[int, ...],
    shape: Shape,
    size: int,
    color: int,
    kind: str,
    start: int,
    end: int,
    source: SourceInfo,
) -> LiveBuffer:
    if isinstance(shape, ArrayShape):
        ab = array_bytes(shape)
        logical = ab.logical_bytes if ab.logical_bytes is not None else size
    else:
        logical = size
    op_name, src = source.of(instruction)
    return LiveBuffer(
        instruction.name,
        index,
        print_shape(shape, default_layout=True),
        size,
        logical,
        max(0, size - logical),
        color,
        kind,
        start,
        end,
        op_name,
        src,
    )
