"""The slim copy of a computation that the memory report and XLA's peak analysis read.

Streaming (`report/stream_json.py`) drops each computation's tree once its JSON is written, yet
`largest_buffers`, `padding_groups` and `peak` need the whole module: which computations hold
buffers is known only once every caller has been read, and the peak needs the whole schedule.
So the streamer keeps a skeleton of each computation: the same `Instruction` and `Computation`
classes (so `memory_report` and `hlo_layout.memory.analyze_memory` run on it unchanged) holding
only what those read, and runs the very same code on it at the end of the module.

Kept per instruction: name, opcode, shape (shared with every other instruction of that shape
text), operands (the parsed tuple itself), is_root, parameter_number, shape_inferred, and of the
attributes only SKELETON_ATTRIBUTES and READ_BY_OPCODE, without spans. Dropped: spans (they pin
the chunk's source text), every other attribute (`metadata`, `backend_config`, `sharding`, ...:
the peak JSON shows no `op_name`), literals' text, and the computation's signature and attributes.

Not kept, so the caller passes it: the backend the module was compiled for, which
`memory.detect_backend` reads off attribute text (GPU custom calls and backend configs); the
streamer detects it per computation while the full tree is still there (`BackendVote`).
"""

from __future__ import annotations

import marshal
import re
from array import array
from collections import OrderedDict
from collections.abc import Container, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from hlo_layout.memory.backend import (
    TPU,
    BackendChoice,
    TextSigns,
    backend_by_name,
    choose_backend,
)
from hlo_layout.memory.buffer_assignment import BufferAssignment
from hlo_layout.syntax.index import kinds_of_calls
from hlo_layout.syntax.opcodes import (
    ALL_REDUCE,
    ALL_REDUCE_START,
    CALLED_COMPUTATION_KEYS,
    CUSTOM_CALL,
    REDUCE,
)
from hlo_layout.syntax.scan import attribute_pairs, tail_mentions
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.tree import (
    Attribute,
    Computation,
    Instruction,
    LazyAttributes,
    Module,
    Operand,
)

#: The attributes the memory package reads: the called computations (dataflow, live ranges,
#: computation kinds), `output_to_operand_aliasing` (alias.py, in-place outputs), `index`
#: (get-tuple-element in dataflow.py), `kind` (fusion kind, assigner.py). A new reader of
#: another attribute must add its key here; tests/layout/test_skeleton.py compares the analysis
#: of the skeleton with that of the full tree on every corpus dump.
SKELETON_ATTRIBUTES = frozenset(
    (
        *CALLED_COMPUTATION_KEYS,
        "output_to_operand_aliasing",
        "index",
        "kind",
        "custom_call_target",  # cuBLASLt's workspace never shares (assigner.can_share)
    )
)
#: Attributes the analysis reads of some opcodes only, kept on those: an NVSHMEM all-reduce is
#: not in place (memory/alias.output_operand_pairs, gpu_alias.gpu_may_alias), cuBLASLt's bias
#: is overwritten only with a non-zero beta, and a reduce's `dimensions` tell whether it is the
#: reduction emitter's hero (gpu_alias). Every other backend_config and dimensions is dropped.
READ_BY_OPCODE: dict[str, frozenset[str]] = {
    ALL_REDUCE_START: frozenset({"backend_config"}),
    ALL_REDUCE: frozenset({"backend_config"}),
    CUSTOM_CALL: frozenset({"backend_config"}),
    REDUCE: frozenset({"dimensions"}),
}
_NONE: frozenset[str] = frozenset()
#: Finds where a SKELETON_ATTRIBUTES key may occur in an unsplit tail: most tails hold none
#: (only `metadata`), and neither splitting them nor reading their pairs is then needed.
_KEPT_KEY = re.compile("|".join(sorted(SKELETON_ATTRIBUTES)))


def _kept(opcode: str, key: str) -> bool:
    return key in SKELETON_ATTRIBUTES or key in READ_BY_OPCODE.get(opcode, _NONE)


def skeleton_instruction(instruction: Instruction) -> Instruction:
    """`instruction` with only what the memory analysis reads (see the module docstring)."""
    attributes = instruction.attributes
    kept: tuple[Attribute, ...] = ()
    if attributes:
        op = instruction.opcode
        kept = tuple(Attribute(a.key, a.raw) for a in attributes if _kept(op, a.key))
    return Instruction(
        instruction.name,
        instruction.opcode,
        instruction.shape,
        instruction.operands,
        kept,
        instruction.is_root,
        None,
        instruction.parameter_number,
        None,
        instruction.shape_inferred,
    )


def skeleton_computation(computation: Computation) -> Computation:
    """`computation` with skeleton instructions, no signature, attributes or span."""
    return Computation(
        computation.name,
        tuple(skeleton_instruction(i) for i in computation.instructions),
        is_entry=computation.is_entry,
        synthetic=computation.synthetic,
    )


def skeleton_module(
    name: str | None,
    computations: tuple[Computation, ...],
    attributes: tuple[Attribute, ...],
    cls: type[Module] = Module,
) -> Module:
    """A module (of class `cls`) of skeleton computations; the module's attributes are kept (a
    handful: the analysis reads `is_scheduled` and `input_output_alias`), without spans."""
    return cls(name, computations, tuple(Attribute(a.key, a.raw) for a in attributes))


class SkeletonSpool:
    """Skeleton computations on a binary file (`marshal`ed plain tuples, shapes as numbers into
    a table of the distinct shape objects), so a streamed dump holds none of them while it is
    read. Kept in memory per computation: its name, where it lies in the file, its calls and
    its ROOT's opcode and kept attribute keys. `module()` gives a `SpooledModule` of those
    reachable from the entry (the only ones `memory_report` and the analysis visit:
    `syntax.index.computation_kinds`), in file order, each equal to `skeleton_computation`
    of the full tree's (tests/layout/test_skeleton.py); it holds only those that hold buffers.

    So memory is the skeleton of the entry and its control-flow callees at the module's end
    (about 400 bytes an instruction), not the dump: fusion bodies and unused computations,
    however many, cost a few list slots each. Deviation:
    `MemoryReport.allocations.unknown_instructions` (not in the JSON) counts the instructions
    of computations not held as unknown.
    """

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._shapes: list[Shape] = []
        self._shape_ids: dict[int, int] = {}  # id(shape) -> its number; the list keeps it alive
        self._common: dict[str, str] = {}  # opcodes, attribute keys, short values: one each
        #: Of each computation of the current module: its name, where its skeleton starts in the
        #: file and its length, and its calls as (opcode, callees)
        self._names: list[str] = []
        self._starts = array("q")
        self._lengths = array("q")
        self._calls: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
        #: (opcode, kept attribute keys) of its ROOT (None without one), one tuple per kind
        self._roots: list[tuple[str, tuple[str, ...]] | None] = []
        self._signatures: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...]]] = {}

    def _shape_id(self, shape: Shape) -> int:
        n = self._shape_ids.get(id(shape))
        if n is None:
            n = self._shape_ids[id(shape)] = len(self._shapes)
            self._shapes.append(shape)
        return n

    def add(
        self,
        computation: Computation,
        calls: Sequence[tuple[str, str]],
    ) -> None:
        """Write `computation`'s skeleton; `calls` gives (callee, calling opcode) of each call
        it makes."""
        ids = self._shape_ids
        shape_id = self._shape_id
        kept_keys = SKELETON_ATTRIBUTES
        by_opcode = READ_BY_OPCODE
        rows = []
        for i in computation.instructions:
            name, opcode, shape, operands, attributes, is_root, _, number, _, inferred = i
            n = ids.get(id(shape))
            rows.append(
                (
                    name,
                    opcode,
                    n if n is not None else shape_id(shape),
                    [
                        (o[0], o[1], -1 if o[2] is None else shape_id(o[2]))
                        if o[2] is not None or o[1] is not None
                        else o[0]
                        for o in operands
                    ]
                    if operands
                    else (),
                    [
                        (key, raw)
                        for key, raw in attribute_pairs(attributes)
                        if key in kept_keys or (opcode in by_opcode and _kept(opcode, key))
                    ]
                    if attributes
                    and (
                        opcode in by_opcode
                        or type(attributes) is not LazyAttributes
                        or tail_mentions(attributes._text, _KEPT_KEY)
                    )
                    else (),
                    is_root,
                    number,
                    inferred,
                )
            )
        root = computation.root
        signature = None
        if root is not None:
            instructions = computation.instructions
            k = len(instructions) - 1
            while instructions[k] is not root:  # the last one, nearly always
                k -= 1
            row = rows[k]
            found = (row[1], tuple(key for key, _ in row[4]))
            signature = self._signatures.setdefault(found, found)
        data = marshal.dumps((computation.name, computation.is_entry, computation.synthetic, rows))
        f = self._file
        f.seek(0, 2)
        start = f.tell()
        f.write(data)
        grouped: dict[str, list[str]] = {}
        for callee, opcode in calls:
            grouped.setdefault(opcode, []).append(callee)
        edges = tuple((opcode, tuple(callees)) for opcode, callees in grouped.items())
        self._names.append(computation.name)
        self._starts.append(start)
        self._lengths.append(len(data))
        self._calls.append(edges if edges else ())
        self._roots.append(signature)

    def _load(self, start: int, length: int) -> Computation:
        f = self._file
        f.seek(start)
        name, is_entry, synthetic, rows = marshal.loads(f.read(length))
        shapes = self._shapes
        new = tuple.__new__  # NamedTuples built as the scanner builds them (five times faster)
        # Every string once: an operand's name is its producer's (marshal wrote it again), and
        # opcodes, attribute keys and short values repeat across the module. A plain `%x` is
        # one Operand per name, as the scanner shares it.
        common = self._common
        plain = {row[0]: new(Operand, (row[0], None, None)) for row in rows}

        def operand(o: str | list[Any]) -> Operand:
            if isinstance(o, str):  # a name defined in another computation (rare)
                hit = plain[o] = new(Operand, (o, None, None))
                return hit
            ref, index, s = o
            known = plain.get(ref)
            return new(Operand, (known[0] if known else ref, index, shapes[s] if s >= 0 else None))

        def attribute(key: str, raw: str) -> Attribute:
            if len(raw) <= 16:
                raw = common.setdefault(raw, raw)
            return Attribute(common.setdefault(key, key), raw)

        get = plain.get
        instructions = tuple(
            [
                new(
                    Instruction,
                    (
                        n,
                        common.setdefault(opcode, opcode),
                        shapes[shape],
                        tuple([get(o) or operand(o) for o in operands]) if operands else (),
                        tuple([attribute(key, raw) for key, raw in kept]) if kept else (),
                        is_root,
                        None,
                        parameter_number,
                        None,
                        inferred,
                    ),
                )
                for n, opcode, shape, operands, kept, is_root, parameter_number, inferred in rows
            ]
        )
        return Computation(name, instructions, is_entry=is_entry, synthetic=synthetic)

    def module(
        self, name: str | None, attributes: tuple[Attribute, ...], entry: str | None
    ) -> Module:
        """The skeleton module of the computations added since the last call: those reachable
        from `entry` (none without one), in the order they were added. Fusion bodies stay in
        the spool, read back when asked for (`SpooledModule`)."""
        names, starts, lengths, calls = self._names, self._starts, self._lengths, self._calls
        roots = self._roots
        self._names, self._starts, self._lengths, self._calls = [], array("q"), array("q"), []
        self._roots = []
        edges = dict(zip(names, calls))
        del calls
        kinds = kinds_of_calls(entry, edges, edges)
        del edges
        computations = tuple(
            self._load(starts[n], lengths[n])
            for n, c in enumerate(names)
            if kinds.get(c) == "global"
        )
        spooled = {c: n for n, c in enumerate(names) if kinds.get(c) in ("thread_local", "fusion")}
        module = skeleton_module(name, computations, attributes, SpooledModule)
        module._cache["kinds"] = kinds
        order = [c for c in names if c in kinds]
        module._cache["spooled"] = _Spooled(self, order, spooled, starts, lengths, roots)
        return module


class _Spooled:
    """The computations a `SpooledModule` does not hold, read from the spool on demand; the
    last few are kept (the assigner asks for a fusion's body once per operand it may share).
    `order`: every reached computation's name, in module order."""

    _KEEP = 32

    def __init__(
        self,
        spool: SkeletonSpool,
        order: list[str],
        where: dict[str, int],
        starts: array[int],
        lengths: array[int],
        roots: list[tuple[str, tuple[str, ...]] | None],
    ) -> None:
        self._spool = spool
        self.order = order
        self._where = where  # name -> its number in `starts`, `lengths` and `roots`
        self._starts, self._lengths = starts, lengths
        self.roots = roots
        self._kept: OrderedDict[str, Computation] = OrderedDict()

    def get(self, name: str) -> Computation | None:
        kept = self._kept
        hit = kept.get(name)
        if hit is not None:
            kept.move_to_end(name)
            return hit
        n = self._where.get(name)
        if n is None:
            return None
        hit = kept[name] = self._spool._load(self._starts[n], self._lengths[n])
        if len(kept) > self._KEEP:
            kept.popitem(last=False)
        return hit

    def root(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        """The ROOT signature of a computation held here; None for one not held (or rootless)."""
        n = self._where.get(name)
        return self.roots[n] if n is not None else None


class SpooledModule(Module):
    """A streamed skeleton module: `computations` holds the entry and the computations run
    through control flow (those whose values get buffers); fusion bodies and thread-local
    computations (reducers, comparators), most of a GPU dump's instructions, are not held but
    read from the spool when `computation(name)` or `computations_in` asks for them (the
    in-place and sharing rules look inside fusions; the buffer assigner counts thread-local
    values once). Its `computation_kinds` come with it, from the call graph the spool kept.

    So a fully reached 19 MB GPU dump's skeleton holds its 12,000 global instructions, not all
    88,000. Valid while the spool's file is open."""

    __slots__ = ()

    def computation(self, name: str) -> Computation | None:
        found = Module.computation(self, name)
        if found is None:
            spooled = self._cache.get("spooled")
            if isinstance(spooled, _Spooled):
                found = spooled.get(name.removeprefix("%"))
        return found

    def root_signature(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        """Known for every computation the spool holds, without reading it."""
        spooled = self._cache.get("spooled")
        return spooled.root(name.removeprefix("%")) if isinstance(spooled, _Spooled) else None

    def computations_in(self, names: Container[str]) -> Iterator[Computation]:
        spooled = self._cache.get("spooled")
        if not isinstance(spooled, _Spooled):
            return Module.computations_in(self, names)
        found = (self.computation(n) for n in spooled.order if n in names)
        return (c for c in found if c is not None)


class BackendVote:
    """`memory.detect_backend` over a module read one computation at a time: the text's signs
    added computation by computation (`memory.backend.TextSigns`), then the file's name and what
    lies beside it (`choose_backend`, the one rule both paths use)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.signs = TextSigns()
        #: The file's name decides first (`choose_backend`): then the text is not read, except
        #: for a TPU's memory spaces.
        named = backend_by_name(str(path) if path is not None else None)
        self.named_tpu = named is not None and named[0] is TPU
        self.named = named is not None and not self.named_tpu

    def add(self, computation: Computation) -> None:
        if self.named:
            return
        if self.named_tpu and not self.signs.tiled:
            self.signs.tiled = True  # the name says TPU: only its memory spaces are wanted
        self.signs.add((computation,))

    def choice(
        self,
        path: str | Path | None,
        target_arguments: tuple[str, str] | None = None,
        assignment: BufferAssignment | None = None,
    ) -> BackendChoice:
        return choose_backend(
            lambda: self.signs,
            str(path) if path is not None else None,
            target_arguments=target_arguments,
            assignment=assignment,
        )


__all__ = [
    "READ_BY_OPCODE",
    "SKELETON_ATTRIBUTES",
    "BackendVote",
    "SkeletonSpool",
    "SpooledModule",
    "skeleton_computation",
    "skeleton_instruction",
    "skeleton_module",
]
