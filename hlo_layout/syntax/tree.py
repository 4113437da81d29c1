"""The typed, immutable syntax tree of an HLO dump: Module → Computation → Instruction.

Nodes are frozen slotted dataclasses; spans are excluded from equality so that trees built by the
fast scanner and by the Lark grammar compare equal. Def-use and caller indexes are derived on
demand and cached outside the compared fields.

NOTE: [tuple-element operands] Newer XLA prints `%x#1` for "element 1 of the tuple %x" instead of a
separate get-tuple-element. We keep it as `Operand(name="x", index=1)`; XLA's own parser expands it
into a synthesized instruction named `x_1`, which has no line in the text and so none in our tree.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple, Protocol, overload

from hlo_layout.errors import Span
from hlo_layout.syntax import index
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS, FUSION, PARAMETER
from hlo_layout.syntax.shape import Shape

if TYPE_CHECKING:
    from hlo_layout.syntax.values import Value


@dataclass(frozen=True, slots=True)
class Attribute:
    """`key=value`, with the value's exact text; the structured value is decoded on first use."""

    key: str
    raw: str
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def value(self) -> Value:
        """The generic structure of the value (parsed by the grammar, memoized by text)."""
        from hlo_layout.syntax.fragments import parse_value

        return parse_value(self.raw, self.span)

    def __str__(self) -> str:
        return f"{self.key}={self.raw}"


class AttributeSplitter(Protocol):
    """How a `LazyAttributes` splits its text (the scanner's, `scan.TailSplitter`)."""

    def spans(self, text: str) -> tuple[int, ...]:
        """The one attribute splitter's spans of `text` (`scan.attribute_spans`)."""
        ...

    def __call__(self, text: str, offset: int, spans: tuple[int, ...]) -> tuple[Attribute, ...]:
        """The attributes of `text` (at `offset` in the source) from its `spans`."""
        ...


class LazyAttributes(Sequence[Attribute]):
    """An instruction's attributes, split out of their text on first use.

    Most analyses read two or three attributes of a few instructions; splitting every
    `metadata={...}` of a 100 MB dump up front would cost more than the rest of the parse. Equal to
    the tuple of the same attributes, so trees from either parser tier compare equal.

    The text is split once, by the scanner's splitter (`spans`), and whoever reads the items
    reads those spans: the attributes made on first use, `scan.attribute_pairs`, the JSON
    writers (`report/model.py`, `accel/jsonattrs.c`).
    """

    __slots__ = ("_items", "_offset", "_spans", "_split", "_text")

    def __init__(self, text: str, offset: int, split: AttributeSplitter):
        self._text = text
        self._offset = offset
        self._split = split
        self._items: tuple[Attribute, ...] | None = None
        self._spans: tuple[int, ...] | None = None

    def spans(self) -> tuple[int, ...]:
        """(key start, key end, value start, value end) of each attribute in the text, flat,
        found once by the scanner's splitter; () where it does not follow the text (the
        grammar splits it: `Attribute.span` then says where each is)."""
        spans = self._spans
        if spans is None:
            spans = self._spans = self._split.spans(self._text)
        return spans

    def _get(self) -> tuple[Attribute, ...]:
        items = self._items
        if items is None:
            items = self._items = self._split(self._text, self._offset, self.spans())
        return items

    @overload
    def __getitem__(self, index: int) -> Attribute: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Attribute, ...]: ...
    def __getitem__(self, index: int | slice) -> Attribute | tuple[Attribute, ...]:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self._get())

    def __bool__(self) -> bool:
        return True  # only made for a non-empty attribute tail

    def mentions(self, pattern: re.Pattern[str]) -> bool:
        """Whether the unsplit text matches `pattern` anywhere (a cheap pre-filter)."""
        return pattern.search(self._text) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyAttributes):
            other = other._get()
        return isinstance(other, tuple) and self._get() == other

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


def find_attribute(attributes: Sequence[Attribute], key: str) -> Attribute | None:
    """The attribute `key` of an instruction or module, or None. A lazy tail that does not
    mention the key is not split to learn that."""
    if type(attributes) is LazyAttributes and key not in attributes._text:
        return None
    for a in attributes:
        if a.key == key:
            return a
    return None


#: A fusion's `kind=kLoop` as the first attribute of an unsplit tail (what splitting would give
#: as its raw value: a word, then the next attribute or the end).
_LEADING_KIND = re.compile(r",[ \t]*kind[ \t]*=[ \t]*([A-Za-z0-9_]+)[ \t]*(?=,|$)")


class Operand(NamedTuple):
    """A use of another instruction's result: `%x`, `%x#1` (tuple element 1), with the operand's
    shape when the dump printed it inline (`fusion(bf16[8]{0} %x)`).

    A NamedTuple, not a dataclass: a dump holds one per edge, and tuples are built five times
    faster than frozen dataclasses.
    """

    name: str
    # Shadows tuple.index on purpose: the tuple element number is the natural name here.
    index: int | None = None  # type: ignore[assignment]
    shape: Shape | None = None

    @property
    def ref(self) -> str:
        """The name as XLA prints the operand, without `%`: `x` or `x#1`."""
        return self.name if self.index is None else f"{self.name}#{self.index}"


class Instruction(NamedTuple):
    """One line `[ROOT] %name = shape opcode(operands), attrs...`.

    `opcode` is the text as written, known or not. For `constant` the literal's text is kept in
    `literal`; for `parameter` the number is `parameter_number`. Equality ignores `span` and
    `shape_inferred`.

    NOTE: [inferred shapes] When the text gives no shape (`ROOT n = negate(a)`), `shape` is the
    one XLA's shape inference computes and `shape_inferred` is True (syntax/shape_inference.py).
    An operand written as an instruction, `add(f32[] parameter(0), ...)`, is an instruction of its
    own named `parameter.anon` (syntax/grammar.py has the details).

    A NamedTuple rather than a frozen dataclass because a 100 MB dump holds a million of them and
    a frozen dataclass costs 3 µs to build, a tuple 0.4 µs (see benchmarks/).
    """

    name: str
    opcode: str
    shape: Shape
    operands: tuple[Operand, ...] = ()
    attributes: Sequence[Attribute] = ()
    is_root: bool = False
    literal: str | None = None
    parameter_number: int | None = None
    span: Span | None = None
    shape_inferred: bool = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instruction):
            return NotImplemented
        return self[:8] == other[:8]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self[:8])

    def __repr__(self) -> str:
        return (
            f"Instruction(name={self.name!r}, opcode={self.opcode!r}, shape={self.shape!r}, "
            f"operands={self.operands!r}, attributes={tuple(self.attributes)!r}, "
            f"is_root={self.is_root!r}, literal={self.literal!r}, "
            f"parameter_number={self.parameter_number!r})"
        )

    def attr(self, key: str) -> Attribute | None:
        return find_attribute(self.attributes, key)

    @property
    def called_computations(self) -> tuple[str, ...]:
        """Names of the computations this instruction calls, in attribute order."""
        attributes = self.attributes
        if not attributes:
            return ()
        if type(attributes) is LazyAttributes:
            found = index.tail_callees(attributes)  # found without making attributes
            if found is not None:
                return found
        from hlo_layout.syntax.attrs import computation_names  # only to split: not per call

        out: list[str] = []
        for a in attributes:
            if a.key in CALLED_COMPUTATION_KEYS:
                out.extend(computation_names(a))
        return tuple(out)

    @property
    def callee_keys(self) -> tuple[str, ...]:
        """The keys of the attributes naming called computations (`calls`, `to_apply`, ...), in
        attribute order, each as often as written."""
        attributes = self.attributes
        if type(attributes) is LazyAttributes:
            found = index.tail_callee_keys(attributes)  # without splitting the tail
            if found is not None:
                return found
        return tuple(a.key for a in attributes or () if a.key in CALLED_COMPUTATION_KEYS)

    @property
    def fusion_kind(self) -> str | None:
        if self.opcode != FUSION:
            return None  # never split the attributes of the many non-fusion instructions
        attributes = self.attributes
        if type(attributes) is LazyAttributes and attributes._items is None:
            # XLA prints `kind=` first: read it without splitting a long backend_config.
            leading = _LEADING_KIND.match(attributes._text)
            if leading is not None:
                return leading.group(1)
        a = self.attr("kind")
        return a.raw if a is not None else None


_INSTRUCTION_NAME = itemgetter(0)


@dataclass(frozen=True, slots=True)
class ParameterDecl:
    """`name: shape` in a computation signature (printed without layouts)."""

    name: str
    shape: Shape


@dataclass(frozen=True, slots=True)
class Computation:
    """`[ENTRY] %name (params) -> result { instructions }`.

    `signature` is None when the text printed none (`ENTRY e {`). A header-less run of bare
    instruction lines becomes one computation with `synthetic=True`.
    """

    name: str
    instructions: tuple[Instruction, ...]
    is_entry: bool = False
    parameters: tuple[ParameterDecl, ...] | None = None
    result_shape: Shape | None = None
    attributes: tuple[Attribute, ...] = ()
    synthetic: bool = False
    span: Span | None = field(default=None, compare=False, repr=False)
    #: The text's shape of each instruction whose `shape` is the one XLA's parser gives it
    #: instead (`written_shape`); None when there is none.
    written_shapes: Mapping[str, Shape] | None = field(default=None, compare=False, repr=False)
    _by_name: dict[str, Instruction] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _cache: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # The first instruction of a name, as `setdefault` in text order keeps it: the last
        # one written in reverse order (C-level loops: every parse builds this index).
        instructions = self.instructions[::-1]
        self._by_name.update(zip(map(_INSTRUCTION_NAME, instructions), instructions))

    def __getitem__(self, name: str) -> Instruction:
        return self._by_name[name.removeprefix("%")]

    def __repr__(self) -> str:
        """One line, whatever the computation's size."""
        entry = "ENTRY " if self.is_entry else ""
        return f"<Computation {entry}{self.name!r}: {len(self.instructions)} instructions>"

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.removeprefix("%") in self._by_name

    def get(self, name: str) -> Instruction | None:
        return self._by_name.get(name.removeprefix("%"))

    def written_shape(self, instruction: Instruction) -> Shape:
        """The shape the text wrote for `instruction`. Its `shape` is the one XLA's parser
        builds, which for `send`, `recv`, `send-done`, `recv-done`, `outfeed`, `after-all`,
        `add-dependency` and `constant` comes from the operands or the literal whatever the
        text says (NOTE: [send/recv shapes] in syntax/shape_inference.py)."""
        written = self.written_shapes
        if written is not None:
            found = written.get(instruction.name)
            if found is not None:
                return found
        return instruction.shape

    @property
    def root(self) -> Instruction | None:
        """The ROOT instruction, or the last one when none is marked (XLA's rule). Cached: it is
        found by a scan, and the analyses ask for it per call site."""
        cache = self._cache
        if "root" not in cache:
            found = next((i for i in self.instructions if i.is_root), None)
            if found is None and self.instructions:
                found = self.instructions[-1]
            cache["root"] = found
        return cache["root"]  # type: ignore[return-value]

    def resolve(self, operand: Operand) -> Instruction | None:
        """The instruction an operand refers to, within this computation."""
        return self._by_name.get(operand.name)

    @property
    def parameter_instructions(self) -> tuple[Instruction, ...]:
        """`parameter(N)` instructions ordered by N. Cached (found by a scan; the memory
        analysis asks per fusion operand it may share)."""
        cache = self._cache
        found = cache.get("parameters")
        if found is None:
            params = [i for i in self.instructions if i.opcode == PARAMETER]
            params.sort(key=lambda i: i.parameter_number or 0)
            found = cache["parameters"] = tuple(params)
        return found  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class SectionEntry:
    """One row of a stack-frame table: `3 {file_name_id=1 ...}` or `1 "file.py"`."""

    id: int
    raw: str


@dataclass(frozen=True, slots=True)
class Section:
    """`FileNames`, `FunctionNames`, `FileLocations` or `StackFrames` with its rows."""

    name: str
    entries: tuple[SectionEntry, ...]


@dataclass(frozen=True, slots=True)
class Module:
    """`HloModule name, attrs...` and its computations. `name` is None for header-less snippets."""

    name: str | None
    computations: tuple[Computation, ...]
    attributes: tuple[Attribute, ...] = ()
    sections: tuple[Section, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)
    _cache: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    def attr(self, key: str) -> Attribute | None:
        return find_attribute(self.attributes, key)

    def computation(self, name: str) -> Computation | None:
        by_name = self._cache.get("by_name")
        if by_name is None:
            by_name = self._cache["by_name"] = {c.name: c for c in self.computations}
        return by_name.get(name.removeprefix("%"))  # type: ignore[attr-defined]

    def root_signature(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        """(opcode, attribute keys) of the ROOT of computation `name` when known without reading
        the computation: None here (read it); a streamed skeleton module
        (`report/skeleton.SpooledModule`) knows it for the computations it does not hold, whose
        roots are all the in-place rules read of most fusion bodies."""
        return None

    def computations_in(self, names: Container[str]) -> Iterator[Computation]:
        """The computations named in `names` (a set: asked per computation), in module order (a
        streamed skeleton module, `report/skeleton.SpooledModule`, reads back those it does not
        hold)."""
        return (c for c in self.computations if c.name in names)

    @property
    def entry(self) -> Computation | None:
        """The ENTRY computation; XLA takes the last one when none is marked."""
        if "entry" not in self._cache:
            found = next((c for c in self.computations if c.is_entry), None)
            if found is None and self.computations:
                found = self.computations[-1]
            self._cache["entry"] = found
        return self._cache["entry"]  # type: ignore[return-value]

    @property
    def callers(self) -> dict[str, tuple[tuple[Computation, Instruction], ...]]:
        """For each computation name, the (computation, instruction) pairs that call it."""
        return index.callers(self)

    def kind(self, computation: Computation) -> str:
        """`entry`, `fusion` (called by fusion instructions), `called` or `unused`."""
        return index.kind(self, computation)

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def __str__(self) -> str:
        from hlo_layout.syntax.printer import print_module

        return print_module(self)

    def __repr__(self) -> str:
        """One line, whatever the module's size (the text is `str(module)`)."""
        return (
            f"<Module {self.name!r}: {len(self.computations)} computations, "
            f"{self.instruction_count} instructions>"
        )
