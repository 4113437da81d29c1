"""The report model of `inspect`: plain, JSON-ready data built from a parsed module.

Both renderers (Rich in `report/inspect_view.py`, JSON in the CLI) read this model; neither looks
at the tree again. Keys are stable and documented in the README (CI users script against them).
Byte figures come from `hlo_layout.layout` (ShapeUtil::ArraySize semantics) through the memory
model (`hlo_layout/memory/footprint.py`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from hlo_layout import accel as _accel
from hlo_layout.memory.buffer_assignment import BufferAssignment
from hlo_layout.memory.footprint import (
    LeafRow,
    MemoryReport,
    PaddingGroup,
    ShapeFacts,
    memory_report,
)
from hlo_layout.report.json_text import (
    SPLICE,
    Mapped,
    dumps_indented,
    encode_str,
    write_document,
)
from hlo_layout.syntax.index import CALLS_RE
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS, FUSION
from hlo_layout.syntax.scan import attribute_pairs, splitter, tail_mentions
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Module

_encode_str = encode_str
#: The compiled twin of `InstructionText.add` (`accel/jsonattrs.c`): whole instructions, a batch
#: per call, and the attribute items alone; or None.
_json = _accel.load("_hlo_layout_json", _accel.ABIS["_hlo_layout_json"])

#: Bumped when a key changes meaning or disappears (adding keys does not bump it).
SCHEMA_VERSION = 2

#: Depth of a computation object in the document (root, `modules`, module, `computations`).
COMPUTATION_LEVEL = 4


def instruction_record(
    name: str,
    opcode: str,
    shape: str,
    operands: list[str],
    is_root: bool,
    figures: tuple[Any, Any, Any, Any],
    *,
    inferred: bool = False,
    parameter_number: int | None = None,
    literal: str | None = None,
    called: Sequence[str] = (),
    attributes: dict[str, str],
) -> dict[str, Any]:
    """The JSON object of one instruction: the schema, written here once. `name`, `opcode`,
    `shape` (XLA's spelling, default layouts filled in), `operands` (names, `x#1` kept),
    `is_root`, the byte figures of its shape (`logical_bytes`, `physical_bytes`,
    `padding_bytes`: array leaves summed, null when unknown) and its `memory_space` (null for a
    tuple whose leaves differ), `shape_inferred: true` when the text gave no shape (XLA's shape
    inference gave it), `parameter_number`, `literal`, `called_computations` when there are
    any, `attributes` (key → raw text).

    The generic encoder writes it (`instruction_json`); `InstructionText` writes the same text
    from pieces cut out of this record's encoding (`_PIECES`), and `accel/jsonattrs.c` from
    those pieces too."""
    logical, physical, padding, space = figures
    out: dict[str, Any] = {
        "name": name,
        "opcode": opcode,
        "shape": shape,
        "operands": operands,
        "is_root": is_root,
        "logical_bytes": logical,
        "physical_bytes": physical,
        "padding_bytes": padding,
        "memory_space": space,
    }
    if inferred:
        out["shape_inferred"] = True
    if parameter_number is not None:
        out["parameter_number"] = parameter_number
    if literal is not None:
        out["literal"] = literal
    if called:
        out["called_computations"] = list(called)
    out["attributes"] = attributes
    return out


def instruction_json(instruction: Instruction, shape_text: ShapeFacts) -> dict[str, Any]:
    """`instruction_record` of one instruction (the reference all writers are held to)."""
    return instruction_record(
        instruction.name,
        instruction.opcode,
        shape_text(instruction.shape),
        [o.ref for o in instruction.operands],
        instruction.is_root,
        shape_text.figures(instruction.shape),
        inferred=instruction.shape_inferred,
        parameter_number=instruction.parameter_number,
        literal=instruction.literal,
        called=instruction.called_computations,
        attributes={a.key: a.raw for a in instruction.attributes},
    )


def computation_json(
    module: Module,
    computation: Computation,
    shape_text: ShapeFacts,
    entry: Computation | None = None,
) -> dict[str, Any]:
    """One computation; `entry` saves looking the ENTRY up again for each computation."""
    if entry is None:
        entry = module.entry
    kind = "entry" if computation is entry else module.kind(computation)
    return computation_object(computation, shape_text, kind, computation is entry)


def computation_object(
    computation: Computation,
    shape_text: ShapeFacts,
    kind: str,
    is_entry: bool,
    instructions: list[Any] | None = None,
) -> dict[str, Any]:
    """The computation's JSON object once its kind is known (streaming knows it only later and
    passes a placeholder `instructions` list, writing the instructions itself)."""
    if instructions is None:
        instructions = [instruction_json(i, shape_text) for i in computation.instructions]
    return {
        "name": computation.name,
        "kind": kind,
        "is_entry": is_entry,
        "instructions": instructions,
    }


#: Depth of an instruction object in the document (a computation's `instructions` list).
INSTRUCTION_LEVEL = COMPUTATION_LEVEL + 2
#: Instructions joined into one piece of `computation_pieces` (a few hundred KB of text).
_BATCH = 256


def computation_pieces(
    computation: Computation, text: InstructionText, kind: str, is_entry: bool
) -> Iterator[str]:
    """`dumps_indented(computation_object(...), COMPUTATION_LEVEL)` a batch of instructions at a
    time: a computation of a million instructions never becomes one Python structure or one
    string, yet the writer gets few, large pieces."""
    head = (
        f'{{{_C_KEY}"name": {_encode_str(computation.name)},{_C_KEY}"kind": '
        f'{_encode_str(kind)},{_C_KEY}"is_entry": {"true" if is_entry else "false"},'
        f'{_C_KEY}"instructions": '
    )
    instructions = computation.instructions
    if not instructions:
        yield head + _C_EMPTY
        return
    add = text.add
    count = len(instructions)
    if _json is None:
        for start in range(0, count, _BATCH):
            parts = [head, _C_OPEN] if start == 0 else []
            put = parts.append
            for n in range(start, min(start + _BATCH, count)):
                if n:
                    put(_C_SEPARATOR)
                add(instructions[n], put)
            yield "".join(parts)
        yield _C_CLOSE
        return
    # The compiled writer takes a batch with its prefix and suffix, up to an instruction it
    # leaves to `add`, then goes on after it.
    compiled = _json.instructions
    memos = (
        text._opcodes,
        text._shapes,
        LazyAttributes,
        splitter(),
        CALLED_COMPUTATION_KEYS,
        _FRAGMENTS,
        text.calls,
    )
    for start in range(0, count, _BATCH):
        stop = min(start + _BATCH, count)
        ends = (head + _C_OPEN if start == 0 else "", _C_CLOSE if stop == count else "")
        written, n = compiled(instructions, start, stop, *memos, *ends)
        if n == stop:
            yield written
            continue
        parts = [written]
        put = parts.append
        ends = ("", ends[1])
        while n < stop:
            if n:
                put(_C_SEPARATOR)
            add(instructions[n], put)
            written, n = compiled(instructions, n + 1, stop, *memos, *ends)
            put(written)
        yield "".join(parts)


_C_KEY = "\n" + "  " * (COMPUTATION_LEVEL + 1)
_C_OPEN = "[\n" + "  " * INSTRUCTION_LEVEL
_C_SEPARATOR = ",\n" + "  " * INSTRUCTION_LEVEL
_C_CLOSE = _C_KEY + "]\n" + "  " * COMPUTATION_LEVEL + "}"
_C_EMPTY = "[]\n" + "  " * COMPUTATION_LEVEL + "}"


class InstructionText:
    """`dumps_indented(instruction_json(i, facts), INSTRUCTION_LEVEL)`, spelled directly.

    The generic encoder walks a fresh dict per instruction in Python; here the text is put
    together from fragments that repeat across a dump and are spelled once, by the generic
    encoder itself (so the spelling cannot drift): the opcode's line, the shape's line and its
    byte figures (per shape object: the parser shares one per distinct text), attribute keys.
    Only names, operand references and attribute values are encoded per instruction.
    tests/report/test_json_text.py compares the two on every corpus instruction.

    `add` is the reference; `computation_pieces` hands the compiled writer (`accel/jsonattrs.c`
    `instructions`) a batch at a time, with these memos, and `add` only the instructions it
    leaves (a first opcode or shape, non-ASCII text, a tail the grammar split):
    tests/report/test_json_accel.py holds the two equal. Neither reads HLO: the attributes are
    the scanner's spans (`LazyAttributes.spans`, `scan.attribute_pairs`).
    """

    __slots__ = ("_keys", "_opcodes", "_shapes", "calls", "facts")

    def __init__(self, facts: ShapeFacts) -> None:
        self.facts = facts
        #: When a list, what the streamer needs too, gathered while writing instead of read
        #: again: (callee, calling opcode) of every call.
        self.calls: list[tuple[str, str]] | None = None
        self._opcodes: dict[str, str] = {}
        self._shapes: dict[int, tuple[Shape, str, str, str]] = {}  # by id, as ShapeFacts
        self._keys: dict[str, str] = {}

    def _opcode(self, opcode: str) -> str:
        text = _PIECES["key_opcode"] + _encode_str(opcode) + _PIECES["key_shape"]
        self._opcodes[opcode] = text
        return text

    def _shape(self, shape: Shape) -> tuple[Shape, str, str, str]:
        """(shape, its text up to the operands' key, then `is_root` false / true and the byte
        figures up to the next key)."""
        figures = self.facts.figures(shape)
        hit = self._shapes[id(shape)] = (
            shape,
            _encode_str(self.facts(shape)) + _PIECES["key_operands"],
            _figures_text(False, figures),
            _figures_text(True, figures),
        )
        return hit

    def _key(self, key: str) -> str:
        text = self._keys[key] = _ITEM + _encode_str(key) + _KEY_VALUE
        return text

    def __call__(self, instruction: Instruction) -> str:
        parts: list[str] = []
        self.add(instruction, parts.append)
        return "".join(parts)

    def add(self, instruction: Instruction, put: Callable[[str], object]) -> None:
        """Put the instruction's text, in pieces, with `put` (a list's append: a batch of
        instructions is then joined once)."""
        name, opcode, shape, operands, attributes, is_root, literal, number, _, inferred = (
            instruction
        )
        hit = self._shapes.get(id(shape)) or self._shape(shape)
        op = self._opcodes.get(opcode) or self._opcode(opcode)
        figures = hit[3] if is_root else hit[2]
        if operands:
            refs = _ITEM_SEP.join(
                [_encode_str(n) if i is None else _encode_str(f"{n}#{i}") for n, i, _ in operands]
            )
            put(f"{_HEAD}{_encode_str(name)}{op}{hit[1]}{_OPEN_LIST}{refs}{_CLOSE_LIST}{figures}")
        else:
            put(f"{_HEAD}{_encode_str(name)}{op}{hit[1]}[]{figures}")
        if inferred:
            put(_INFERRED)
        if number is not None:
            put(_PARAMETER_NUMBER + int.__repr__(number))
        if literal is not None:
            put(_LITERAL + _encode_str(literal))
        # A tail naming no called computation is not handed to the callee reader, whose memo
        # would keep every tail alive (streaming drops them) for an answer known to be ().
        lazy = attributes if type(attributes) is LazyAttributes else None
        called = (
            instruction.called_computations
            if attributes and (lazy is None or tail_mentions(lazy._text, CALLS_RE))
            else ()
        )
        if called:
            if self.calls is not None:
                self.calls.extend([(c, opcode) for c in called])
            put(_CALLED_OPEN)
            put(_ITEM_SEP.join([_encode_str(c) for c in called]))
            put(_CLOSE_LIST)
        if attributes:
            pairs = attribute_pairs(attributes)
            # a repeated key: its first place, last value (as the dict of `instruction_json`)
            items = dict(pairs).items() if len(pairs) > 1 else pairs
            keys = self._keys
            put(_ATTRIBUTES_OPEN)
            put(",".join([(keys.get(k) or self._key(k)) + _encode_str(v) for k, v in items]))
            put(_CLOSE_OBJECT_END)
        else:
            put(_NO_ATTRIBUTES_END)


def _cut(text: str, marks: Sequence[str]) -> list[str]:
    """`text` cut at each of `marks` (encoded JSON strings, in the order the text holds them):
    the pieces before, between and after them."""
    pieces = []
    pos = 0
    for mark in marks:
        at = text.index(mark, pos)
        pieces.append(text[pos:at])
        pos = at + len(mark)
    pieces.append(text[pos:])
    return pieces


#: A mark as the encoder spells it.
_MARK = re.compile(r'"\\u0000[a-z0-9]+\\u0000"')


def _record_pieces(**fields: Any) -> list[str]:
    """An instruction record whose every value is a mark (`fields` change some), as the generic
    encoder spells it at `INSTRUCTION_LEVEL`, cut at the marks of the values it holds."""
    mark = "\x00{}\x00".format
    record: dict[str, Any] = {
        "name": mark("name"),
        "opcode": mark("opcode"),
        "shape": mark("shape"),
        "operands": [mark("o1"), mark("o2")],
        "is_root": mark("root"),
        "figures": (mark("f1"), mark("f2"), mark("f3"), mark("f4")),
        "inferred": True,
        "parameter_number": mark("number"),
        "literal": mark("literal"),
        "called": [mark("c1"), mark("c2")],
        "attributes": {mark("k1"): mark("v1"), mark("k2"): mark("v2")},
    }
    record.update(fields)
    text = dumps_indented(instruction_record(**record), INSTRUCTION_LEVEL)
    return _cut(text, _MARK.findall(text))


def _pieces() -> dict[str, str]:
    """The constant text of an instruction object, cut out of `instruction_record` as the generic
    encoder spells it: a record of marks with every key (`full`), with no optional key
    (`bare`), and without `shape_inferred` (`plain`). So the fragment writers
    (`InstructionText`, `accel/jsonattrs.c`) spell the one schema, key for key."""
    full = _record_pieces()
    bare = _record_pieces(
        operands=[], inferred=False, parameter_number=None, literal=None, called=[], attributes={}
    )
    plain = _record_pieces(inferred=False)
    item_sep = full[4]  # between two operands
    open_list = "[" + item_sep[1:]
    key_operands = full[3].removesuffix(open_list)
    key_is_root = bare[3].removeprefix(key_operands + "[]")
    close_list = full[5].removesuffix(key_is_root)
    number = plain[10]
    out = {
        "head": full[0],
        "key_opcode": full[1],
        "key_shape": full[2],
        "key_operands": key_operands,
        "open_list": open_list,
        "item_sep": item_sep,
        "item": item_sep[1:],
        "close_list": close_list,
        "key_is_root": key_is_root,
        "inferred": full[10].removesuffix(number),
        "number": number,
        "literal": full[11],
        "called_open": full[12],
        "attributes_open": full[14].removeprefix(close_list).removesuffix(item_sep[1:]),
        "key_value": full[15],
        "close_object_end": full[18],
        "no_attributes_end": bare[8],
    }
    if (
        full[13] != item_sep
        or full[16] != item_sep
        or full[17] != out["key_value"]
        or not full[14].startswith(close_list)
    ):
        raise AssertionError("instruction_record is not encoded as the fragment writers assume")
    return out


_PIECES = _pieces()
#: Between `is_root` and the byte figures, and between those (cut out of the record too).
_FIGURE_KEYS = tuple(_record_pieces()[6:10])
_HEAD = _PIECES["head"]
#: Before an item of an instruction's lists and objects, and between two items.
_ITEM = _PIECES["item"]
_ITEM_SEP = _PIECES["item_sep"]
_OPEN_LIST = _PIECES["open_list"]
_CLOSE_LIST = _PIECES["close_list"]
_ATTRIBUTES_OPEN = _PIECES["attributes_open"]
_CLOSE_OBJECT_END = _PIECES["close_object_end"]
_NO_ATTRIBUTES_END = _PIECES["no_attributes_end"]
_INFERRED = _PIECES["inferred"]
_PARAMETER_NUMBER = _PIECES["number"]
_LITERAL = _PIECES["literal"]
_CALLED_OPEN = _PIECES["called_open"]
_KEY_VALUE = _PIECES["key_value"]
#: The constant pieces the compiled writer puts (`accel/jsonattrs.c`, its F_* order).
_FRAGMENTS = (
    _C_SEPARATOR,
    _HEAD,
    _OPEN_LIST,
    _ITEM_SEP,
    _CLOSE_LIST,
    _INFERRED,
    _PARAMETER_NUMBER,
    _LITERAL,
    _CALLED_OPEN,
    _ATTRIBUTES_OPEN,
    _ITEM,
    _CLOSE_OBJECT_END,
    _NO_ATTRIBUTES_END,
)


def _figures_text(is_root: bool, figures: tuple[Any, Any, Any, Any]) -> str:
    """An instruction's `is_root` and byte figures as they sit between its operands and its next
    key (`_PIECES`)."""
    values = [dumps_indented(v) for v in (is_root, *figures)]
    return _PIECES["key_is_root"] + "".join(
        v + s for v, s in itertools.zip_longest(values, _FIGURE_KEYS, fillvalue="")
    )


def leaf_json(row: LeafRow) -> dict[str, Any]:
    """One array of an entry parameter or output: `name`, `index` (ShapeIndex), `shape`, bytes,
    `memory_space` (and `parameter_number` for parameters)."""
    out: dict[str, Any] = {"name": row.name}
    if row.parameter_number is not None:
        out["parameter_number"] = row.parameter_number
    out.update(
        index=list(row.index),
        shape=row.shape,
        logical_bytes=row.logical_bytes,
        physical_bytes=row.physical_bytes,
        padding_bytes=row.padding_bytes,
        memory_space=row.memory_space,
    )
    return out


def allocations_json(report: MemoryReport) -> dict[str, Any] | None:
    """The compiler's buffer assignment as read, when there was one."""
    summary = report.allocations
    if summary is None:
        return None
    return {
        "file": summary.file,
        "total_bytes": summary.total_bytes,
        "colors": [
            {"color": c.color, "allocations": c.allocations, "bytes": c.bytes}
            for c in summary.colors
        ],
        "values_checked": summary.values_checked,
        "values_matching": summary.values_checked - len(summary.mismatches),
        "allocations": [
            {
                "index": a.index,
                "size": a.size,
                "color": a.color,
                "kind": a.kind,
                "parameter_number": a.parameter_number,
                "values": [
                    {
                        "name": v.name,
                        "index": list(v.index),
                        "size": v.size,
                        "offset": v.offset,
                        "shape": v.shape,
                    }
                    for v in a.values
                ],
            }
            for a in sorted(summary.allocations, key=lambda a: a.index)
        ],
    }


def buffer_json(row: LeafRow) -> dict[str, Any]:
    """One of the largest buffers: `leaf_json` with its `opcode` and `computation`."""
    return {**leaf_json(row), "opcode": row.opcode, "computation": row.computation}


def padding_group_json(group: PaddingGroup, rows: int | None = None) -> dict[str, Any]:
    """One tiling pattern as the text view groups it: its totals and, per padded shape (worst
    first; the first `rows` when given), its count, sizes, `expansion`, why it pads (`reasons`)
    and an example value."""
    return {
        "pattern": group.pattern,
        "values": group.values,
        "logical_bytes": group.logical_bytes,
        "physical_bytes": group.physical_bytes,
        "padding_bytes": group.padding_bytes,
        "rows": [
            {
                "shape": r.shape,
                "values": r.values,
                "logical_bytes": r.logical_bytes,
                "physical_bytes": r.physical_bytes,
                "padding_bytes": r.padding_bytes,
                "expansion": round(r.expansion, 4),
                "reasons": list(r.reasons),
                "example": r.example,
            }
            for r in group.rows[:rows]
        ],
    }


def peak_json(report: MemoryReport) -> dict[str, Any] | None:
    """The peak as the text view leads with it (`memory`'s headline and parts per space)."""
    ma = report.peak
    if ma is None:
        return None
    return {
        "peak_bytes": ma.peak_bytes,
        "static_bytes": ma.static_bytes,
        "temp_allocation_bytes": ma.temp_allocation_bytes,
        "backend": ma.backend,
        "tpu_generation": ma.tpu_generation or None,
        "backend_assumed": ma.backend_assumed,
        "scheduled": ma.scheduled,
        "spaces": [s.to_dict() for s in ma.spaces],
    }


def memory_json(report: MemoryReport, *, lazy: bool = False) -> dict[str, Any]:
    """The per-module memory keys: `entry_parameters`, `entry_outputs`,
    `entry_output_table_bytes`, `totals` (per memory space), `largest_buffers` (with
    `buffer_count`), `padding_groups` (with reasons), `peak` (null for one computation) and,
    with a buffer assignment, `buffer_assignment`: everything the text view shows. `lazy`: the
    entry lists as `Mapped` rows, for `write_document` (a leaf's object made as it is written).
    """
    params: Any = Mapped(report.entry_parameters, leaf_json)
    outputs: Any = Mapped(report.entry_outputs, leaf_json)
    if not lazy:
        params, outputs = list(params), list(outputs)
    out: dict[str, Any] = {
        "entry_parameters": params,
        "entry_outputs": outputs,
        "entry_output_table_bytes": report.output_pointer_table_bytes,
        "totals": [
            {
                "memory_space": t.memory_space,
                "name": t.name,
                "values": t.values,
                "logical_bytes": t.logical_bytes,
                "physical_bytes": t.physical_bytes,
                "padding_bytes": t.padding_bytes,
                **({"unknown_values": t.unknown_values} if t.unknown_values else {}),
            }
            for t in report.totals
        ],
        "largest_buffers": [buffer_json(r) for r in report.buffers],
        "buffer_count": report.buffer_count,
        "padding_groups": [padding_group_json(g) for g in report.padding],
        "peak": peak_json(report),
    }
    allocations = allocations_json(report)
    if allocations is not None:
        out["buffer_assignment"] = allocations
    return out


def module_head(
    module_name: str | None,
    file: str | None,
    entry: str | None,
    attributes: dict[str, str],
    report: MemoryReport,
    *,
    has_computations: bool,
) -> dict[str, Any]:
    """One module object of `inspect --format json`, its computations left as a splice marker
    (`write_inspect_json` writes them in place), its entry lists `Mapped`: for `write_document`."""
    return {
        "module": module_name,
        "file": file,
        "entry": entry,
        "attributes": attributes,
        "computations": [SPLICE] if has_computations else [],
        **memory_json(report, lazy=True),
    }


def _selected(module: Module, computation: str | None) -> list[Computation]:
    return [c for c in module.computations if computation is None or c.name == computation]


def module_json(
    module: Module,
    file: str | None = None,
    *,
    computation: str | None = None,
    assignment: BufferAssignment | None = None,
    report: MemoryReport | None = None,
) -> dict[str, Any]:
    """One module object of `inspect --format json` (only `computation` when one is named)."""
    shape_text = ShapeFacts()
    entry = module.entry
    if report is None:
        report = memory_report(module, computation=computation, assignment=assignment, file=file)
    computations = _selected(module, computation)
    return {
        "module": module.name,
        "file": file,
        "entry": entry.name if entry is not None else None,
        "attributes": {a.key: a.raw for a in module.attributes},
        "computations": [computation_json(module, c, shape_text, entry) for c in computations],
        **memory_json(report),
    }


def inspect_json(
    modules: list[tuple[str, Module]],
    *,
    computation: str | None = None,
    assignments: dict[int, BufferAssignment] | None = None,
    reports: dict[int, MemoryReport] | None = None,
) -> dict[str, Any]:
    """The whole `inspect --format json` document for (file, module) pairs; `assignments` and
    `reports` are keyed by the pair's position."""
    assignments = assignments or {}
    reports = reports or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "modules": [
            module_json(
                m,
                file,
                computation=computation,
                assignment=assignments.get(n),
                report=reports.get(n),
            )
            for n, (file, m) in enumerate(modules)
        ],
    }


def write_inspect_json(
    out: TextIO,
    modules: Sequence[tuple[str, Module, MemoryReport]],
    *,
    computation: str | None = None,
) -> None:
    """Write `json.dumps(inspect_json(...), indent=2, ensure_ascii=False)` plus a newline to
    `out`, one instruction at a time (never the whole document in memory)."""
    text = InstructionText(ShapeFacts())
    heads = []
    for file, module, report in modules:
        entry = module.entry
        heads.append(
            module_head(
                module.name,
                file,
                entry.name if entry is not None else None,
                {a.key: a.raw for a in module.attributes},
                report,
                has_computations=bool(_selected(module, computation)),
            )
        )
    spliced = [m for m in modules if _selected(m[1], computation)]

    def fill(n: int) -> Iterator[Iterator[str]]:
        module = spliced[n][1]
        entry = module.entry
        for c in _selected(module, computation):
            kind = "entry" if c is entry else module.kind(c)
            yield computation_pieces(c, text, kind, c is entry)

    write_document(out, {"schema_version": SCHEMA_VERSION, "modules": heads}, fill)


@dataclass(frozen=True, slots=True)
class ModuleSummary:
    """Counts for the human view: computations by kind, instructions, opcodes, fusion kinds, and
    the entry's signature (XLA's shape text)."""

    module: str | None
    computations: int
    computations_by_kind: dict[str, int]
    instructions: int
    opcodes: list[tuple[str, int]]
    fusions_by_kind: list[tuple[str, int]]
    entry: str | None
    entry_parameters: list[tuple[str, str]]
    entry_result: str | None


def module_summary(module: Module) -> ModuleSummary:
    """Counts for the human view: computations by kind, instructions, opcodes, fusion kinds."""
    kinds: Counter[str] = Counter()
    opcodes: Counter[str] = Counter()
    fusion_kinds: Counter[str] = Counter()
    for computation in module.computations:
        kinds[module.kind(computation)] += 1
        for instruction in computation.instructions:
            opcodes[instruction.opcode] += 1
            if instruction.opcode == FUSION:  # only then split the attributes for `kind=`
                kind = instruction.fusion_kind
                if kind is not None:
                    fusion_kinds[kind] += 1
    entry = module.entry
    shape_text = ShapeFacts()
    return ModuleSummary(
        module=module.name,
        computations=len(module.computations),
        computations_by_kind=dict(sorted(kinds.items())),
        instructions=module.instruction_count,
        opcodes=sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0])),
        fusions_by_kind=sorted(fusion_kinds.items(), key=lambda kv: (-kv[1], kv[0])),
        entry=entry.name if entry is not None else None,
        entry_parameters=[
            (p.name, shape_text(p.shape)) for p in (entry.parameter_instructions if entry else ())
        ],
        entry_result=shape_text(entry.root.shape) if entry and entry.root else None,
    )
