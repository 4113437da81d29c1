"""The report model of `hlo-layout indexing`: the maps of one fusion, instruction or computation.

Plain frozen data, built from the indexing analysis (`indexing/rules`, `indexing/fusion.py`,
`indexing/physical.py`); `indexing_view.py` draws it with Rich and `indexing_json` gives the
JSON the command prints. Finding the target by name, and the close-match candidates when the name
is wrong, live here too, so the command only wires arguments to this module.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hlo_layout import collector
from hlo_layout.errors import HloLayoutError, HloSemanticError
from hlo_layout.indexing.fusion import (
    computation_input_to_output,
    computation_output_to_input,
    share_budget,
)
from hlo_layout.indexing.map import MapState
from hlo_layout.indexing.operand import (
    UNKNOWN,
    InstructionIndexing,
    OperandIndexing,
    format_operand_indexing,
    operand_indexing_json,
    sorted_indexings,
)
from hlo_layout.indexing.physical import physical_operand_indexing
from hlo_layout.indexing.rules import OpContext, Unsupported, input_to_output, output_to_input
from hlo_layout.syntax.opcodes import FUSION
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: Bumped when a key changes meaning or disappears (adding keys does not bump it).
SCHEMA_VERSION = 1

Direction = Literal["out2in", "in2out"]
Kind = Literal["fusion", "instruction", "computation"]

#: The name that stands for the module's entry computation (`--computation ENTRY`), or for its
#: root instruction (`--instruction ENTRY`, `--fusion ENTRY`), unless something is named so.
ENTRY_ALIAS = "ENTRY"

#: How many names a "did you mean" list shows.
MAX_CANDIDATES = 20


class IndexingTargetError(HloLayoutError):
    """No target was named, or the name matches nothing: a usage error (exit 2). `candidates`
    are names that exist, closest matches first."""

    def __init__(self, message: str, candidates: Sequence[str] = (), total: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.candidates = tuple(candidates)
        #: How many names there are in all (`candidates` shows the first MAX_CANDIDATES).
        self.total = max(total, len(self.candidates))


@dataclass(frozen=True, slots=True)
class MapEntry:
    """One map of an operand. `output` is the output it starts from (out2in) or reaches
    (in2out); `physical` marks maps whose results are element offsets."""

    output: int
    indexing: OperandIndexing

    @property
    def text(self) -> str:
        return format_operand_indexing(self.indexing)


@dataclass(frozen=True, slots=True)
class OperandReport:
    """An operand (a fusion's or instruction's operand, a computation's parameter) and its maps,
    sorted by output, then by text."""

    index: int
    name: str
    shape: str
    maps: tuple[MapEntry, ...]

    @property
    def unknown(self) -> bool:
        undefined = MapState.UNDEFINED
        return any(m.indexing.map.state is undefined for m in self.maps)


@dataclass(frozen=True, slots=True)
class IndexingReport:
    """Everything `hlo-layout indexing` shows for one target."""

    file: str
    module: str | None
    computation: str
    target: str
    opcode: str | None
    kind: Kind
    direction: Direction
    physical: bool
    outputs: tuple[str, ...]
    operands: tuple[OperandReport, ...]
    notes: tuple[str, ...]

    @property
    def counts(self) -> dict[str, int]:
        """Maps by state: `exact` (a known map, KNOWN EMPTY included) and `unknown`."""
        # States read directly: mixtral's report has 300,000 maps, and the properties cost.
        states = [m.indexing.map.state for op in self.operands for m in op.maps]
        unknown = states.count(MapState.UNDEFINED)
        empty = states.count(MapState.KNOWN_EMPTY)
        return {"maps": len(states), "exact": len(states) - unknown, "unknown": unknown,
                "known_empty": empty}  # fmt: skip


# -- finding the target -----------------------------------------------------------------------


def _candidates(name: str | None, names: Sequence[str]) -> list[str]:
    unique = sorted(set(names))
    if not name:
        return unique[:MAX_CANDIDATES]
    close = difflib.get_close_matches(name, unique, n=MAX_CANDIDATES, cutoff=0.5)
    rest = [n for n in unique if n not in close]
    return (close + rest)[:MAX_CANDIDATES]


def _instructions(module: Module) -> list[tuple[Computation, Instruction]]:
    entry = module.entry
    order = [entry] if entry is not None else []
    order += [c for c in module.computations if c is not entry]
    return [(c, i) for c in order for i in c.instructions]


def _missing(kind: str, name: str | None, names: Sequence[str]) -> IndexingTargetError:
    candidates = _candidates(name, names)
    if name is None:
        message = "name what to index: --fusion NAME, --instruction NAME or --computation NAME"
    else:
        message = f"no {kind} named '{name}'"
    return IndexingTargetError(message, candidates, len(set(names)))


def find_target(
    modules: Sequence[tuple[str, Module]],
    *,
    fusion: str | None = None,
    instruction: str | None = None,
    computation: str | None = None,
) -> tuple[str, Module, Computation, Instruction | None]:
    """(file, module, computation, instruction) named by exactly one of the three selectors;
    `instruction` is None for a computation. `ENTRY` (ENTRY_ALIAS) names the entry computation,
    or its root for --instruction/--fusion, unless a computation or instruction is named so.
    Raises IndexingTargetError with candidates."""
    given = [s for s in (fusion, instruction, computation) if s is not None]
    if len(given) > 1:
        raise IndexingTargetError("give only one of --fusion, --instruction, --computation")
    if computation is not None:
        name = computation.removeprefix("%")
        for file, module in modules:
            found = module.computation(name)
            if found is not None:
                return file, module, found, None
        if name == ENTRY_ALIAS:
            for file, module in modules:
                if module.entry is not None:
                    return file, module, module.entry, None
        names = [c.name for _, m in modules for c in m.computations]
        raise _missing("computation", computation, names)
    wanted = (fusion or instruction or "").removeprefix("%") or None
    kind = "fusion" if fusion is not None or wanted is None else "instruction"
    everything = [(f, m, c, i) for f, m in modules for c, i in _instructions(m)]
    pool = [t for t in everything if kind == "instruction" or t[3].opcode == FUSION]
    for file, module, comp, inst in pool:
        if inst.name == wanted:
            return file, module, comp, inst
    if wanted == ENTRY_ALIAS and not any(t[3].name == wanted for t in everything):
        for file, module in modules:
            entry = module.entry
            root = entry.root if entry is not None else None
            if entry is None or root is None:
                continue
            if kind == "fusion" and root.opcode != FUSION:
                raise IndexingTargetError(
                    f"the ENTRY computation's root '{root.name}' is a {root.opcode}, not a "
                    "fusion; use --instruction ENTRY or --computation ENTRY"
                )
            return file, module, entry, root
    if kind == "fusion" and any(t[3].name == wanted for t in everything):
        raise IndexingTargetError(f"'{wanted}' is not a fusion; use --instruction {wanted}")
    raise _missing(kind, wanted, [t[3].name for t in pool])


# -- building the report ----------------------------------------------------------------------


def _shape_text(shape: Shape) -> str:
    return print_shape(shape, default_layout=True)


def _outputs(shape: Shape) -> list[Shape]:
    return list(shape.elements) if isinstance(shape, TupleShape) else [shape]


def _physical(indexing: OperandIndexing, shape: Shape, notes: list[str]) -> OperandIndexing:
    if indexing.is_undefined or indexing.is_known_empty:
        return indexing
    if not isinstance(shape, ArrayShape):
        notes.append(f"no physical offsets for a non-array shape {shape}")
        return UNKNOWN
    try:
        return physical_operand_indexing(indexing, shape)
    except (ValueError, HloLayoutError) as e:
        notes.append(f"no physical offsets for {shape}: {e}")
        return UNKNOWN


def indexing_report(
    modules: Sequence[tuple[str, Module]],
    *,
    fusion: str | None = None,
    instruction: str | None = None,
    computation: str | None = None,
    direction: Direction = "out2in",
    physical: bool = False,
) -> IndexingReport:
    """The maps of the named target, per operand (a computation's operands are its parameters).

    out2in: for every output (each element of a tuple result), the maps from the output index to
    each operand's index (XLA's output-to-input indexing). in2out: for every operand, the maps
    from its index to each output's index. With `physical`, each map goes on to the element
    offset in the buffer it lands in (the operand's for out2in, the output's for in2out), through
    that buffer's `minor_to_major` order and tiles.
    """
    file, module, comp, inst = find_target(
        modules, fusion=fusion, instruction=instruction, computation=computation
    )
    try:
        with collector.paused():
            return _report(file, module, comp, inst, direction, physical)
    except RecursionError:
        # Nesting is walked iteratively (indexing/fusion.py); an expression or a rule that still
        # recurses too deep is reported at the target, as bad input (exit 3), with its place.
        what = f"'{inst.name}'" if inst is not None else f"computation '{comp.name}'"
        span = inst.span if inst is not None and inst.span is not None else comp.span
        raise HloSemanticError(
            f"{what} is nested too deeply to index (Python's recursion limit)", span
        ) from None


def _report(
    file: str,
    module: Module,
    comp: Computation,
    inst: Instruction | None,
    direction: Direction,
    physical: bool,
) -> IndexingReport:
    session: dict[Any, Any] = {}
    if inst is None:
        root = comp.root
        if root is None:
            raise IndexingTargetError(f"computation '{comp.name}' is empty")
        result_shape: Shape = root.shape
        operands = [(p.name, p.shape) for p in comp.parameter_instructions]
        target, opcode, kind = comp.name, None, "computation"
    else:
        ctx = OpContext(inst, comp, module, session)
        result_shape = inst.shape
        operands = []
        for k, operand in enumerate(inst.operands):
            try:
                shape = ctx.operand_full_shape(k)
            except Unsupported:  # an undefined operand: reported, not fatal
                shape = operand.shape or TupleShape(())
            operands.append((operand.ref, shape))
        target, opcode = inst.name, inst.opcode
        kind = "fusion" if inst.opcode == FUSION else "instruction"
    outputs = _outputs(result_shape)
    collected: list[list[MapEntry]] = [[] for _ in operands]
    notes: list[str] = []

    def add(k: int, output: int, maps: frozenset[OperandIndexing], shape: Shape) -> None:
        for oi in sorted_indexings(maps):
            collected[k].append(MapEntry(output, _physical(oi, shape, notes) if physical else oi))

    def note(indexing: InstructionIndexing) -> None:
        notes.extend(n for n in indexing.notes if n not in notes)

    share_budget(session, module, len(outputs) if direction == "out2in" else len(operands))
    if direction == "out2in":
        for j in range(len(outputs)):
            if inst is None:
                indexing = computation_output_to_input(module, comp, j, session=session)
            else:
                indexing = output_to_input(OpContext(inst, comp, module, session), j)
            note(indexing)
            for k, slot in indexing.nonempty():
                if k < len(operands):
                    add(k, j, slot, operands[k][1])
    else:
        for k in range(len(operands)):
            if inst is None:
                indexing = computation_input_to_output(module, comp, k, session=session)
            else:
                indexing = input_to_output(OpContext(inst, comp, module, session), k)
            note(indexing)
            for j, slot in indexing.nonempty():
                if j < len(outputs):
                    add(k, j, slot, outputs[j])
    return IndexingReport(
        file=file,
        module=module.name,
        computation=comp.name,
        target=target,
        opcode=opcode,
        kind=kind,  # type: ignore[arg-type]
        direction=direction,
        physical=physical,
        outputs=tuple(_shape_text(s) for s in outputs),
        operands=tuple(
            OperandReport(k, name, _shape_text(shape), tuple(collected[k]))
            for k, (name, shape) in enumerate(operands)
        ),
        notes=tuple(notes),
    )


def indexing_json(report: IndexingReport) -> dict[str, Any]:
    """The `indexing --format json` document (keys in the README)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "file": report.file,
        "module": report.module,
        "computation": report.computation,
        "instruction": report.target,
        "opcode": report.opcode,
        "kind": report.kind,
        "direction": report.direction,
        "physical": report.physical,
        "outputs": [{"index": j, "shape": s} for j, s in enumerate(report.outputs)],
        "operands": [
            {
                "index": op.index,
                "name": op.name,
                "shape": op.shape,
                "unknown": op.unknown,
                "maps": [
                    {"output": m.output, **operand_indexing_json(m.indexing)} for m in op.maps
                ],
            }
            for op in report.operands
        ],
        "summary": report.counts,
        "notes": list(report.notes),
    }
