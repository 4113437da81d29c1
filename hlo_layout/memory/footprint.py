"""Where a module's memory goes: plain frozen data built from a parsed module (and, when there is
one, the compiler's buffer assignment). `inspect` renders it (Rich in `report/footprint_view.py`,
JSON in `report/model.py`) and `check` budgets read it (`check/figures.py`).

NOTE: [which values count] One definition, XLA's, shared with `hlo_layout/memory/` (the peak
analysis): the computations whose values get buffers are the entry and those run through control
flow (`syntax.index.computation_kinds`: while, conditional, call, async-start); fusion bodies
and reducers hold none. An instruction defines the array values HloDataflowAnalysis says it does
(`memory.dataflow.defines_value`: get-tuple-element, bitcast, tuple, while, call, ... forward
their operands' values; copy-start's and async-start's operand slots too). Each value is counted
once, with no liveness, so these totals are "bytes of values defined", a secondary figure: the
peak as XLA computes it is `MemoryReport.peak` (`hlo_layout.memory.analyze_memory`). With a buffer
assignment beside the dump, the real allocations are shown next to them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container
from dataclasses import dataclass, replace
from operator import itemgetter
from pathlib import Path

from hlo_layout.layout.memory_space import memory_space
from hlo_layout.layout.padding import explain_padding, tiling_pattern
from hlo_layout.layout.size import (
    ArrayBytes,
    Footprint,
    footprint,
    pointer_table_bytes,
)
from hlo_layout.memory.analysis import MemoryAnalysis, analyze_memory
from hlo_layout.memory.backend import Backend, BackendChoice, as_choice
from hlo_layout.memory.buffer_assignment import BufferAssignment, foreign_values
from hlo_layout.memory.dataflow import defines_value
from hlo_layout.syntax.index import computation_kinds
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape, Shape
from hlo_layout.syntax.tree import Computation, Instruction, Module


@dataclass(frozen=True, slots=True)
class LeafRow:
    """One array: of an entry parameter (`parameter_number`), of the entry result, or a value."""

    name: str
    index: tuple[int, ...]
    shape: str
    logical_bytes: int | None
    physical_bytes: int | None
    memory_space: int
    opcode: str | None = None
    computation: str | None = None
    parameter_number: int | None = None

    @property
    def padding_bytes(self) -> int | None:
        if self.logical_bytes is None or self.physical_bytes is None:
            return None
        return self.physical_bytes - self.logical_bytes


@dataclass(frozen=True, slots=True)
class PaddingRow:
    """One padded shape: how many values have it, its bytes each, and why it is padded."""

    shape: str
    values: int
    logical_bytes: int
    physical_bytes: int
    reasons: tuple[str, ...]
    example: str

    @property
    def padding_bytes(self) -> int:
        return (self.physical_bytes - self.logical_bytes) * self.values

    @property
    def expansion(self) -> float:
        return self.physical_bytes / self.logical_bytes if self.logical_bytes else 1.0


@dataclass(frozen=True, slots=True)
class PaddingGroup:
    """Padded values sharing a tiling pattern (`T(8,128)(2,1)`), worst shapes first."""

    pattern: str
    values: int
    logical_bytes: int
    physical_bytes: int
    rows: tuple[PaddingRow, ...]

    @property
    def padding_bytes(self) -> int:
        return self.physical_bytes - self.logical_bytes


@dataclass(frozen=True, slots=True)
class SpaceTotal:
    """Values and bytes in one memory space `S(n)`."""

    memory_space: int
    name: str
    label: str
    values: int
    logical_bytes: int
    physical_bytes: int
    unknown_values: int = 0

    @property
    def padding_bytes(self) -> int:
        return self.physical_bytes - self.logical_bytes


@dataclass(frozen=True, slots=True)
class SharedValue:
    """A value placed in an allocation (from the buffer assignment)."""

    name: str
    index: tuple[int, ...]
    size: int
    offset: int
    shape: str


@dataclass(frozen=True, slots=True)
class AllocationRow:
    """One real allocation: size, color, what it is for, and the values that share it."""

    index: int
    size: int
    color: int
    kind: str
    parameter_number: int | None
    values: tuple[SharedValue, ...]


@dataclass(frozen=True, slots=True)
class ColorTotal:
    color: int
    label: str
    allocations: int
    bytes: int


@dataclass(frozen=True, slots=True)
class SizeMismatch:
    """An array value whose compiler size differs from ours (expected: none)."""

    name: str
    shape: str
    compiler_bytes: int
    our_bytes: int | None


@dataclass(frozen=True, slots=True)
class AllocationSummary:
    """What the compiler's buffer assignment says, and whether its sizes agree with ours."""

    file: str
    total_bytes: int
    colors: tuple[ColorTotal, ...]
    allocations: tuple[AllocationRow, ...]
    values_checked: int
    mismatches: tuple[SizeMismatch, ...]
    unknown_instructions: int


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """Where one module's memory goes. Row tuples are sorted; `buffers` holds the largest values
    (`buffer_count` says how many there are in all); views truncate the rest."""

    tpu: bool
    scope: str | None
    entry_parameters: tuple[LeafRow, ...]
    entry_outputs: tuple[LeafRow, ...]
    output_pointer_table_bytes: int
    buffers: tuple[LeafRow, ...]
    buffer_count: int
    padding: tuple[PaddingGroup, ...]
    totals: tuple[SpaceTotal, ...]
    allocations: AllocationSummary | None = None
    #: XLA's peak (static + temps per memory space), for a whole module; None for one computation.
    peak: MemoryAnalysis | None = None


class ShapeFacts:
    """XLA's text and the footprint of each distinct shape object, computed once.

    Keyed by object identity, not equality: the parser shares one object per distinct shape
    text, and a frozen dataclass recomputes its (recursive) hash on every lookup, which costs more
    than the footprint it would find. Each entry keeps its shape alive, so an id is never reused
    while the cache lives.
    """

    def __init__(self) -> None:
        self._text: dict[int, tuple[Shape, str]] = {}
        self._footprint: dict[int, tuple[Shape, Footprint]] = {}
        self._figures: dict[int, tuple[Shape, tuple]] = {}

    def text(self, shape: Shape) -> str:
        hit = self._text.get(id(shape))
        if hit is None:
            hit = self._text[id(shape)] = (shape, print_shape(shape, default_layout=True))
        return hit[1]

    __call__ = text

    def footprint(self, shape: Shape) -> Footprint:
        hit = self._footprint.get(id(shape))
        if hit is None:
            hit = self._footprint[id(shape)] = (shape, footprint(shape))
        return hit[1]

    def figures(self, shape: Shape) -> tuple[int | None, int | None, int | None, int | None]:
        """(logical, physical, padding bytes, memory space) of a shape's footprint."""
        hit = self._figures.get(id(shape))
        if hit is None:
            fp = self.footprint(shape)
            figures = (fp.logical_bytes, fp.physical_bytes, fp.padding_bytes, fp.memory_space)
            hit = self._figures[id(shape)] = (shape, figures)
        return hit[1]


def _tiled(arrays: tuple[ArrayBytes, ...]) -> bool:
    """Tiled layouts appear only in TPU compiler output: that is how we tell a TPU dump."""
    return any(a.shape.layout is not None and a.shape.layout.tiles for a in arrays)


def buffer_computations(module: Module) -> tuple[Computation, ...]:
    """The entry and every computation run through control flow (see NOTE: [which values count])."""
    kinds = computation_kinds(module)
    return tuple(c for c in module.computations if kinds.get(c.name) == "global")


def defined_leaves(
    instruction: Instruction,
    *,
    is_entry: bool,
    measure: Callable[[Shape], Footprint] = footprint,
) -> tuple[ArrayBytes, ...]:
    """The array values an instruction defines (NOTE: [which values count])."""
    arrays = measure(instruction.shape).arrays
    if not arrays:
        return arrays
    opcode = instruction.opcode
    return tuple(
        a for a in arrays if defines_value(opcode, a.index, a.shape, param_defines=is_entry)
    )


def _leaf_row(
    name: str,
    a: ArrayBytes,
    text: ShapeFacts,
    *,
    opcode: str | None = None,
    computation: str | None = None,
    parameter_number: int | None = None,
) -> LeafRow:
    return LeafRow(
        name,
        a.index,
        text(a.shape),
        a.logical_bytes,
        a.physical_bytes,
        a.memory_space,
        opcode,
        computation,
        parameter_number,
    )


def _padding_groups(padded: dict[int, list], facts: ShapeFacts) -> tuple[PaddingGroup, ...]:
    """Group padded shapes (id → [shape, values, first value's name]) by tiling pattern."""
    by_pattern: dict[str, dict[str, list]] = {}
    for shape, count, first in padded.values():
        text = facts.text(shape)
        shapes = by_pattern.setdefault(tiling_pattern(shape), {})
        entry = shapes.get(text)
        if entry is None:
            shapes[text] = [shape, count, first]
        else:
            entry[1] += count
    groups = []
    for pattern, shapes in by_pattern.items():
        prows = []
        for text, (shape, count, first) in shapes.items():
            why = explain_padding(shape)
            prows.append(
                PaddingRow(text, count, why.logical_bytes, why.physical_bytes, why.reasons(), first)
            )
        prows.sort(key=lambda r: (-r.padding_bytes, r.shape))
        groups.append(
            PaddingGroup(
                pattern,
                sum(r.values for r in prows),
                sum(r.logical_bytes * r.values for r in prows),
                sum(r.physical_bytes * r.values for r in prows),
                tuple(prows),
            )
        )
    groups.sort(key=lambda g: (-g.padding_bytes, g.pattern))
    return tuple(groups)


def _totals(acc: dict[int, list[int]], tpu: bool) -> tuple[SpaceTotal, ...]:
    out = []
    for space, (n, logical, physical, unknown) in sorted(acc.items()):
        info = memory_space(space, tpu=tpu)
        out.append(SpaceTotal(space, info.name, info.label, n, logical, physical, unknown))
    return tuple(out)


def _allocation_summary(
    assignment: BufferAssignment, names: Container[str], tpu: bool, text: ShapeFacts
) -> AllocationSummary:
    colors = tuple(
        ColorTotal(
            color,
            f"S({color}) {memory_space(color, tpu=True).label}" if tpu else f"color {color}",
            n,
            b,
        )
        for color, n, b in assignment.bytes_by_color()
    )
    rows = []
    checked = 0
    mismatches = []
    unknown = foreign_values(assignment, names)
    for allocation in assignment.allocations:
        shared = []
        for v in allocation.values:
            shape = v.shape
            if isinstance(shape, ArrayShape):
                checked += 1
                ours = text.footprint(shape).physical_bytes
                if ours != v.size:
                    mismatches.append(SizeMismatch(v.instruction, v.shape_text, v.size, ours))
            shared.append(SharedValue(v.instruction, v.index, v.size, v.offset, text(shape)))
        shared.sort(key=lambda s: (-s.size, s.name, s.index))
        rows.append(
            AllocationRow(
                allocation.index,
                allocation.size,
                allocation.color,
                allocation.kind,
                allocation.parameter_number,
                tuple(shared),
            )
        )
    rows.sort(key=lambda r: (-r.size, r.index))
    return AllocationSummary(
        assignment.name,
        assignment.total_bytes,
        colors,
        tuple(rows),
        checked,
        tuple(mismatches),
        unknown,
    )


def memory_report(
    module: Module,
    *,
    computation: str | None = None,
    assignment: BufferAssignment | None = None,
    top: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    peak: bool = True,
    file: str | Path | None = None,
    backend: Backend | BackendChoice | str | None = None,
) -> MemoryReport:
    """Build the memory report of a module, or of one computation of it (`computation`).

    `buffers` keeps the `top` largest values (all of them when `top` is None); totals and padding
    always cover every value. `progress(done, total)` is called once per computation measured.
    For a whole module (`computation` None) and `peak`, `report.peak` holds XLA's peak analysis
    (`backend`: as the reader chose it, `hlo_layout.reader.Dump.backend`; None detects it from
    the text and `file`'s name: a streamed skeleton keeps no attribute text to detect it from,
    so the streamer passes it, see `report/skeleton.py`).
    Raises KeyError when `computation` names no computation of the module.
    """
    choice = as_choice(backend, module, str(file) if file is not None else None)
    facts = ShapeFacts()
    entry = module.entry
    if computation is not None:
        scope = module.computation(computation)
        if scope is None:
            raise KeyError(computation)
        scopes: tuple[Computation, ...] = (scope,)
        head: Computation | None = scope
    else:
        scopes = buffer_computations(module)
        head = entry
    head_info = head_rows(head, facts)
    tally = ValueTally(top)
    for done, c in enumerate(scopes, 1):
        tally.add(c, is_entry=c is entry, facts=facts)
        if progress is not None:
            progress(done, len(scopes))
    report = tally.report(
        facts,
        head_info,
        scope=computation,
        assignment=assignment,
        names=_InstructionNames(module),
        backend=choice.backend,
    )
    if computation is None and peak and module.entry is not None:
        report = replace(report, peak=analyze_memory(module, choice, assignment, file=file))
    return report


@dataclass(frozen=True, slots=True)
class HeadRows:
    """What a report needs of its head computation: parameter and output leaves, result shape."""

    params: tuple[tuple[str, ArrayBytes, int | None], ...] = ()
    outputs: tuple[tuple[str, ArrayBytes, str], ...] = ()
    root_shape: Shape | None = None
    tiled: bool = False


def head_rows(head: Computation | None, facts: ShapeFacts) -> HeadRows:
    """Parameter and output leaves of the head (entry) computation."""
    if head is None:
        return HeadRows()
    params: list[tuple[str, ArrayBytes, int | None]] = []
    outputs: list[tuple[str, ArrayBytes, str]] = []
    tiled = False
    for p in head.parameter_instructions:
        arrays = facts.footprint(p.shape).arrays
        tiled = tiled or _tiled(arrays)
        params.extend((p.name, a, p.parameter_number) for a in arrays)
    root = head.root
    if root is None:
        return HeadRows(tuple(params), (), None, tiled)
    arrays = facts.footprint(root.shape).arrays
    tiled = tiled or _tiled(arrays)
    outputs.extend((root.name, a, root.opcode) for a in arrays)
    return HeadRows(tuple(params), tuple(outputs), root.shape, tiled)


class _InstructionNames:
    """`name in names` over every instruction of a module, built on first use."""

    def __init__(self, module: Module) -> None:
        self._module = module
        self._names: set[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            self._names = {i.name for c in self._module.computations for i in c.instructions}
        return name in self._names


class ValueTally:
    """The values of some computations, counted as the memory report needs them: totals per
    memory space, padded shapes, whether any is tiled, and the `top` largest as light rows.

    `top` None keeps every row, 0 none; totals and padded shapes always cover every value.
    """

    def __init__(self, top: int | None = None) -> None:
        self.top = top
        self.rows: list[tuple[int, str, str, tuple[int, ...], ArrayBytes, str]] = []
        self.count = 0
        self.totals: dict[int, list[int]] = {}
        self.padded: dict[int, list] = {}
        self.tiled = False

    def _trim(self) -> None:
        if self.top is not None and len(self.rows) > 4 * self.top + 64:
            self.rows = heapq.nsmallest(self.top, self.rows, key=_ROW_KEY)

    def add(self, c: Computation, *, is_entry: bool, facts: ShapeFacts) -> None:
        rows, totals, padded = self.rows, self.totals, self.padded
        keep_rows = self.top != 0
        for instruction in c.instructions:
            arrays = defined_leaves(instruction, is_entry=is_entry, measure=facts.footprint)
            if not arrays:
                continue
            if not self.tiled:
                self.tiled = _tiled(arrays)
            for a in arrays:
                physical = a.physical_bytes
                self.count += 1
                if keep_rows:
                    rows.append(
                        (-(physical or 0), c.name, instruction.name, a.index, a, instruction.opcode)
                    )
                acc = totals.get(a.memory_space)
                if acc is None:
                    acc = totals[a.memory_space] = [0, 0, 0, 0]
                logical = a.logical_bytes
                if physical is None or logical is None:
                    acc[3] += 1
                    continue
                acc[0] += 1
                acc[1] += logical
                acc[2] += physical
                if physical != logical:
                    hit = padded.get(id(a.shape))
                    if hit is None:
                        padded[id(a.shape)] = [a.shape, 1, instruction.name]
                    else:
                        hit[1] += 1
        self._trim()

    def report(
        self,
        facts: ShapeFacts,
        head: HeadRows,
        *,
        scope: str | None,
        assignment: BufferAssignment | None,
        names: Container[str],
        backend: Backend,
    ) -> MemoryReport:
        """The MemoryReport of these values and the head computation's parameters/outputs (its
        result's tuple tables sized as `backend` sizes them)."""
        tpu = head.tiled or self.tiled
        table = 0
        if head.root_shape is not None:
            table = pointer_table_bytes(
                head.root_shape, backend.pointer_bytes, alignment=backend.table_alignment
            )
        param_rows = [_leaf_row(n, a, facts, parameter_number=k) for n, a, k in head.params]
        output_rows = [_leaf_row(n, a, facts, opcode=op) for n, a, op in head.outputs]
        rows = self.rows
        if self.top is None:
            largest = sorted(rows, key=_ROW_KEY)
        else:
            largest = heapq.nsmallest(self.top, rows, key=_ROW_KEY)
        buffers = [
            _leaf_row(name, a, facts, opcode=opcode, computation=comp)
            for _, comp, name, _, a, opcode in largest
        ]
        summary = None
        if assignment is not None:
            summary = _allocation_summary(assignment, names, tpu, facts)
        return MemoryReport(
            tpu,
            scope,
            tuple(param_rows),
            tuple(output_rows),
            table,
            tuple(buffers),
            self.count,
            _padding_groups(self.padded, facts),
            _totals(self.totals, tpu),
            summary,
        )


_ROW_KEY = itemgetter(0, 1, 2, 3)


__all__ = [
    "AllocationRow",
    "AllocationSummary",
    "ColorTotal",
    "HeadRows",
    "LeafRow",
    "MemoryReport",
    "PaddingGroup",
    "PaddingRow",
    "ShapeFacts",
    "SharedValue",
    "SizeMismatch",
    "SpaceTotal",
    "ValueTally",
    "buffer_computations",
    "defined_leaves",
    "head_rows",
    "memory_report",
]
