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
from hlo_layout.layout.memory_space import peak_space_name
from hlo_layout.layout.size import array_bytes
from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.assigner import BufferAssigner
from hlo_layout.memory.attribution import Group, Grouping, group_buffers
from hlo_layout.memory.backend import Backend, BackendChoice, as_choice
from hlo_layout.memory.buffer_assignment import BufferAssignment, foreign_values
from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue
from hlo_layout.memory.frontend import detect_frontend
from hlo_layout.memory.gpu_alias import custom_call_target
from hlo_layout.memory.heap_simulator import union_spans
from hlo_layout.memory.live_range import LiveRange
from hlo_layout.memory.metadata import SourceInfo
from hlo_layout.memory.peak import SpaceFigures, compute_peak
from hlo_layout.syntax.opcodes import CUSTOM_CALL
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape, Shape
from hlo_layout.syntax.tree import Instruction, Module

SCHEMA_VERSION = 2
#: A buffer's place in its allocation: (start, end, offset, size, row).
_Place = tuple[int, int, int, int, int]
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
    #: The instruction inside the computation the defining instruction runs whose metadata
    #: `op_name` and `source` are (None: its own; memory/metadata.py, NOTE: [attribution]).
    via: str | None = None
    #: Whether the buffer comes from an argument of the program (an entry parameter or a copy
    #: of one): no line of the program put it there.
    argument: bool = False


@dataclass(frozen=True, slots=True)
class SpacePeak:
    """One memory space's headline and its parts (memory/peak.py, NOTE: [the headline])."""

    memory_space: int
    name: str
    #: What the device must hold in this space: the compiler's allocations on CPU and GPU; on
    #: TPU its static allocations + its heap trace's peak (the parts jax's peak adds up).
    peak_bytes: int
    static_bytes: int
    temp_allocation_bytes: int
    #: The most bytes of temporaries live at once (the heap simulation's trace peak).
    heap_peak_bytes: int
    thread_local_bytes: int
    #: The step where the most bytes are live, and those bytes (the live-at-peak table's sum).
    peak_step: int
    peak_instruction: str | None
    live_bytes: int
    estimate: bool

    @property
    def fragmentation_bytes(self) -> int:
        """The temp allocation's bytes no temporary needs at the heap's peak."""
        return max(0, self.temp_allocation_bytes - self.heap_peak_bytes)

    def to_dict(self) -> dict[str, Any]:
        """This space's object in `memory --format json` (and `inspect`'s `peak`)."""
        return {
            "memory_space": self.memory_space,
            "name": self.name,
            "peak_bytes": self.peak_bytes,
            "static_bytes": self.static_bytes,
            "temp_allocation_bytes": self.temp_allocation_bytes,
            "heap_peak_bytes": self.heap_peak_bytes,
            "fragmentation_bytes": self.fragmentation_bytes,
            "thread_local_bytes": self.thread_local_bytes,
            "peak_step": self.peak_step,
            "peak_instruction": self.peak_instruction,
            "live_bytes": self.live_bytes,
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
    #: Rows whose memory a buffer defined at their last step takes over, and that step (they
    #: are not listed live there: analysis._shared_steps).
    taken: dict[int, int] = field(default_factory=dict)
    #: The live spans of buffers whose values leave gaps (NormalizeAliasedBuffers keeps a gap
    #: between a value's last use and the next value's definition); others span start-end.
    spans: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    def live(self, k: int, step: int) -> bool:
        """Whether row k's buffer holds memory at `step` (taken over there excluded)."""
        if self.taken.get(k) == step:
            return False
        spans = self.spans.get(k)
        if spans is None:
            return self.start[k] <= step <= self.end[k]
        return any(s <= step <= e for s, e in spans)

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


@dataclass
class MemoryAnalysis:
    """Peak memory of one module as XLA computes it (see the package docstring).

    `peak_bytes` is the headline (memory/peak.py, NOTE: [the headline]); `spaces` hold each
    memory space's headline and parts."""

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
    #: The TPU generation whose rules were used (`v4/v5e`, `v5p`, `v6e`), "" elsewhere.
    tpu_generation: str = ""
    #: Whether nothing decided the backend (or the TPU generation) and it was assumed.
    backend_assumed: bool = False
    #: The note saying how the backend was chosen (one of `notes`; "" when given).
    backend_note: str = ""
    #: The framework that built the module (`jax`, `tensorflow`, `torch-xla`), None when its
    #: text does not say (memory/frontend.py).
    frontend: str | None = None
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

    def headline_parts(self) -> list[tuple[str, int]]:
        """The parts `peak_bytes` is the sum of, named as every view names them (memory/peak.py,
        NOTE: [the headline]): static + temp allocation (+ thread-local) on CPU and GPU; static
        + the largest heap peak (of its space) on TPU."""
        static = sum(s.static_bytes for s in self.spaces)
        if self.backend == "tpu":
            top = max(self.spaces, key=lambda s: (s.heap_peak_bytes, -s.memory_space), default=None)
            if top is None or not top.heap_peak_bytes:
                return [("static", static)]
            return [("static", static), (f"heap peak of {top.name}", top.heap_peak_bytes)]
        parts = [("static", static), ("temp allocation", self.temp_allocation_bytes)]
        local = sum(s.thread_local_bytes for s in self.spaces)
        if local:
            parts.append(("thread-local", local))
        return parts

    @property
    def temp_allocation_bytes(self) -> int:
        """The temp allocations of every space."""
        return sum(s.temp_allocation_bytes for s in self.spaces)

    def live_at(self, step: int, space: int | None = None) -> list[LiveBuffer]:
        """Buffers live at a schedule step (all spaces, or one), largest first."""
        b = self._buffers
        if b is None:
            return []
        rows = [
            b.row(k)
            for k, (s, e, sp) in enumerate(zip(b.start, b.end, b.color))
            if s <= step <= e and (space is None or sp == space) and b.live(k, step)
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
        """The space with the most bytes live at one step (the default space on ties): its
        buffers are the ones `live_at_peak()` lists."""
        if not self.spaces:
            return None
        return max(self.spaces, key=lambda s: (s.live_bytes, -s.memory_space))

    def live_at_peak(self, space: int | None = None) -> list[LiveBuffer]:
        if space is None:
            sp = self.peak_space
        else:
            sp = next((s for s in self.spaces if s.memory_space == space), None)
        if sp is None:
            return []
        return self.live_at(sp.peak_step, sp.memory_space)

    def grouped(self, rows: list[LiveBuffer], grouping: Grouping) -> list[Group]:
        """Buffers grouped by source line or op_name (memory/attribution.py), largest first."""
        return group_buffers(rows, grouping)

    def timeline(self, space: int) -> tuple[list[int], int]:
        """Live bytes per step of one space, max-pooled to at most TIMELINE_POINTS numbers.

        Returns (values, bucket)."""
        series = self.timelines.get(space, [])
        bucket = max(1, -(-len(series) // TIMELINE_POINTS))
        if bucket == 1:
            return list(series), 1
        return [max(series[k : k + bucket]) for k in range(0, len(series), bucket)], bucket

    def to_dict(
        self,
        *,
        top: int | None = None,
        op_depth: int = 0,
        space: int | None = None,
        at: int | None = None,
    ) -> dict:
        """One element of the `modules` list of `hlo-layout memory --format json`.

        `top` keeps the largest rows of each list (all when None; `values` always holds every
        value), `op_depth` groups `by_op_name` by that many `/`-parts of op_name (0: whole),
        `space` lists the buffers live at that space's peak (default: the space with the most
        bytes live), `at` adds what is live at that schedule step (`at`)."""
        lists = self.peak_lists(space, top=top, op_depth=op_depth)
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
            "tpu_generation": self.tpu_generation or None,
            "backend_assumed": self.backend_assumed,
            "frontend": self.frontend,
            "scheduled": self.scheduled,
            "notes": list(self.notes),
            "peak_bytes": self.peak_bytes,
            "static_bytes": self.static_bytes,
            "temp_allocation_bytes": self.temp_allocation_bytes,
            "peak_parts": [{"name": n, "bytes": b} for n, b in self.headline_parts()],
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
            "live_at_peak": lists["live_at_peak"],
            "live_at_peak_total": lists["live_at_peak_total"],
            "timeline": timeline,
            "by_source": lists["by_source"],
            "by_op_name": lists["by_op_name"],
            "compiler": self.compiler,
            **({} if at is None else {"at": self._at_dict(at, space, top)}),
        }

    def peak_lists(
        self, space: int | None = None, *, top: int | None = None, op_depth: int = 0
    ) -> dict[str, Any]:
        """The buffers live at one space's peak step (default: `peak_space`) and their sums by
        source line and by op_name, as `to_dict` writes them (`live_at_peak`,
        `live_at_peak_total`, `by_source`, `by_op_name`; `top` rows each)."""
        rows = self.live_at_peak(space)
        return {
            "live_at_peak": [buffer_dict(b) for b in rows[:top]],
            "live_at_peak_total": len(rows),
            "by_source": [
                {"source": g.key, "bytes": g.bytes, "values": g.buffers}
                for g in self.grouped(rows, Grouping("source"))[:top]
            ],
            "by_op_name": [
                {"op_name": g.key, "bytes": g.bytes, "values": g.buffers}
                for g in self.grouped(rows, Grouping("op", op_depth))[:top]
            ],
        }

    def _at_dict(self, step: int, space: int | None, top: int | None) -> dict:
        live = self.live_at(step, space)
        return {
            "step": step,
            "instruction": self.sequence[step] if 0 <= step < len(self.sequence) else None,
            "live_bytes": sum(b.bytes for b in live),
            "live": [buffer_dict(b) for b in live[:top]],
            "live_total": len(live),
        }


def buffer_dict(b: LiveBuffer) -> dict:
    """A buffer's object in `live_at_peak` (and `at.live`)."""
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
        "via": b.via,
        "argument": b.argument,
    }


def _space_name(number: int, backend: str) -> str:
    return peak_space_name(number, tpu=backend == "tpu")


def _allocation_kind(kind: str, live_out: bool) -> str:
    if kind in ("parameter", "constant", "thread_local"):
        return kind
    return "output" if live_out else "temp"


def _compiler_vmem(be: Backend, assignment: BufferAssignment | None) -> dict[int, int]:
    """The compiler's temp allocation of each space libtpu's memory-space assignment places
    (VMEM), where its buffer assignment is beside the dump: ours there is an estimate."""
    if assignment is None or not be.msa_spaces:
        return {}
    out: dict[int, int] = {}
    for x in assignment.allocations:
        if x.is_preallocated_temp and x.color in be.msa_spaces:
            out[x.color] = out.get(x.color, 0) + x.size
    return out


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
    backend: str | Backend | BackendChoice | None = None,
    buffer_assignment: BufferAssignment | None = None,
    *,
    file: str | Path | None = None,
) -> MemoryAnalysis:
    """XLA's memory analysis of a parsed module (see the module docstring).

    `backend`: a name of BACKENDS or settings to use, or how the reader chose them
    (`hlo_layout.reader.Dump.backend`); None detects it from the module's text and `file`'s name
    alone. `buffer_assignment` is the compiler's own file when one is beside the dump: shown
    beside our figures (and, on TPU, the labelled source of VMEM), never used to compute ours.
    Raises ValueError for a module with no computation and KeyError for an unknown backend name.
    """
    choice = as_choice(backend, module, str(file) if file is not None else None)
    with collector.paused():
        return _analyze(module, choice, buffer_assignment, file)


def _analyze(
    module: Module,
    choice: BackendChoice,
    buffer_assignment: BufferAssignment | None,
    file: str | Path | None,
) -> MemoryAnalysis:
    notes: list[str] = []
    be = choice.backend
    if choice.reason != "--backend":
        notes.append(choice.note)
    a = module.attr("is_scheduled")
    scheduled = a is not None and a.raw.strip().lower() == "true"
    if not scheduled:
        notes.append(
            "the dump is not scheduled (no is_scheduled=true): the text order stands in for the "
            "schedule, so intervals and the peak are estimates"
        )
    if buffer_assignment is not None:
        names = {i.name for c in module.computations for i in c.instructions}
        foreign = foreign_values(buffer_assignment, names)
        if foreign:
            notes.append(
                f"{foreign:,} of the {len(buffer_assignment.values):,} values of "
                f"{Path(buffer_assignment.name).name} name no instruction of this module: it "
                "is another compile's buffer assignment, so its figures are not used"
            )
            buffer_assignment = None
    df = DataflowAnalysis(module, be)
    alias = AliasAnalysis(df)
    lr = LiveRange(df, alias)
    assigner = BufferAssigner(df, alias, lr, be)
    compiler_temps = _compiler_vmem(be, buffer_assignment)
    peak, figures = compute_peak(assigner, compiler_temps)
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
    #: On TPU the headline is jax's peak, whose heap traces hold no tuple pointer tables (they
    #: get allocations of their own, folded into the temp allocation): live bytes leave them
    #: out too, so they never exceed the headline.
    tables_uncounted = be.name == "tpu"
    #: Buffer number -> its row (read for concat views only).
    row_of_buffer: dict[int, int] = {}
    views: list[tuple[int, HloValue]] = []  # rows laid over their operands (concat views)
    #: Per allocation, its buffers' (start, end, offset, size, row), see _shared_steps: the
    #: first alone, a list once there are two (most allocations hold one buffer).
    places: dict[int, _Place | list[_Place]] = {}

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
        spans: list[tuple[int, int]] | None = None
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
            spans = union_spans((r.start, r.end) for r, _ in ranged)
            if len(spans) > 1:  # the buffer is free between its values: another may use it
                bc.spans[len(bc.start)] = spans
        alloc = allocation_of_value[rep.id]
        if tables_uncounted and alloc is not None and alloc.kind == "tuple" and not alloc.live_out:
            continue  # a TPU pointer table among the temps: jax's peak does not count it
        size = assigner.buffer_size[n]
        color = assigner.buffer_color[n]
        d = diffs.get(color)
        if d is None:  # not setdefault: its default list would be built for every buffer
            d = diffs[color] = [0] * (n_steps + 1)
        # An allocation of one value, or that nothing is placed in after its buffer (not
        # reusable), holds one buffer: no other's memory to take over (`_shared_steps`).
        placed = (
            alloc.index if alloc is not None and alloc.reusable and len(alloc.values) > 1 else None
        )
        offset = alloc.values.get(rep.id, 0) if alloc is not None else 0
        if be.concat_views:
            row_of_buffer[n] = len(bc.start)
        if (
            be.concat_views
            and rep.instruction.opcode == CUSTOM_CALL
            and not rep.index
            and custom_call_target(rep.instruction) in be.concat_views
        ):
            views.append((len(bc.start), rep))
        for s, e in spans or ((start, end),):
            d[s] += size
            d[min(e, n_steps - 1) + 1] -= size
            if placed is not None:
                p = (s, e, offset, size, len(bc.start))
                got = places.get(placed)
                if got is None:
                    places[placed] = p
                elif isinstance(got, tuple):
                    places[placed] = [got, p]
                else:
                    got.append(p)
        bc.start.append(start)
        bc.end.append(end)
        bc.color.append(color)
        bc.size.append(size)
        bc.kind.append(kind)
        bc.instruction.append(rep.instruction)
        bc.index.append(rep.index)
        bc.shape.append(rep.shape)

    bc.taken = _shared_steps(places, bc.color, diffs)
    for row, view in views:
        # A view over its operands laid end to end (Backend.concat_views): operands dying
        # where it is defined hold the view's own bytes.
        start = bc.start[row]
        for op in view.instruction.operands:
            for ov in df.value_set(view.computation, op.name).get((), ()):
                k = row_of_buffer.get(alias.buffer_of[ov.id])
                if k is None or k == row or k in bc.taken or not bc.live(k, start):
                    continue
                if not bc.live(k, start + 1):
                    bc.taken[k] = start
                    d = diffs[bc.color[k]]
                    d[start] -= bc.size[k]
                    d[start + 1] += bc.size[k]
    timelines: dict[int, list[int]] = {}
    spaces: list[SpacePeak] = []
    for color in sorted(set(diffs) | set(figures)):
        length = max(1, n_steps - 1)
        deltas = diffs.get(color)
        series = list(accumulate(deltas[:length])) if deltas is not None else [0] * length
        timelines[color] = series
        top = max(series, default=0)
        step = series.index(top) if series else 0
        f = figures.get(color) or SpaceFigures(0, 0, 0, 0, 0)
        estimate = color in be.msa_spaces and color not in compiler_temps
        spaces.append(
            SpacePeak(
                color,
                _space_name(color, be.name),
                f.peak_bytes,
                f.static_bytes,
                f.temp_allocation_bytes,
                f.heap_peak_bytes,
                f.thread_local_bytes,
                step,
                sequence[step] if step < len(sequence) else None,
                top,
                estimate,
            )
        )
        if color in compiler_temps and buffer_assignment is not None:
            notes.append(
                f"S({color}) temp bytes are the compiler's "
                f"(from {Path(buffer_assignment.name).name}): "
                "libtpu's memory-space assignment is closed"
            )
        if estimate:
            notes.append(
                f"S({color}) ({_space_name(color, be.name)}) is placed by libtpu's closed "
                "memory-space assignment: its figures are an estimate"
            )
    frontend = detect_frontend(module)[0]
    # jax's figures: not for TensorFlow's or torch-xla's modules (memory/frontend.py)
    if be.name == "cpu" and not choice.assumed and frontend in ("jax", None):
        notes.append(
            "jax on CPU reports memory_analysis().peak_memory_in_bytes as the static part only "
            "(parameters + outputs + constants = static_bytes), not a peak; jax 0.12's "
            "total_allocation_bytes is our peak less the thread-local allocations"
        )
    compiler = _compiler_figures(buffer_assignment) if buffer_assignment is not None else None
    return MemoryAnalysis(
        module.name,
        str(file) if file is not None else None,
        be.name,
        scheduled,
        notes,
        peak,
        sum(f.static_bytes for f in figures.values()),
        spaces,
        timelines,
        sequence,
        compiler,
        be.generation,
        choice.assumed,
        choice.note if choice.reason != "--backend" else "",
        frontend,
        bc,
        vc,
    )


def _shared_steps(
    places: dict[int, _Place | list[_Place]],
    colors: list[int],
    diffs: dict[int, list[int]],
) -> dict[int, int]:
    """Count memory a buffer takes over from its dying operand once.

    A buffer defined at step t may take the memory of an operand whose live range ends at t
    (in place: CanShareOperandBufferWithUser; the heap simulator's ShareWith): both intervals
    hold t, but the bytes are the same. For each such overlap of byte ranges in one allocation,
    the step's live bytes lose the overlap (`diffs`, in place), so a space's live bytes never
    exceed what is allocated. Returns the rows of buffers whose every byte is taken over at
    their last step, and that step: `live_at` leaves them out there."""
    taken: dict[int, int] = {}
    for place in places.values():
        if not isinstance(place, list):  # one place: nothing to share
            continue
        starting: dict[int, list[tuple[int, int, int, int, int]]] = {}
        for p in place:
            starting.setdefault(p[0], []).append(p)
        for a_start, a_end, a_off, a_size, a_row in place:
            news = starting.get(a_end)
            if not news or a_start == a_end:
                continue
            covered = 0
            for _b_start, _b_end, b_off, b_size, b_row in news:
                if b_row == a_row:
                    continue
                overlap = min(a_off + a_size, b_off + b_size) - max(a_off, b_off)
                if overlap > 0:
                    covered += overlap
            if covered:
                d = diffs[colors[a_row]]
                d[a_end] -= covered
                d[a_end + 1] += covered
                if covered >= a_size:
                    taken[a_row] = a_end
    return taken


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
    found = source.attribute(instruction, index)
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
        found.op_name,
        found.source,
        found.via,
        found.argument,
    )
