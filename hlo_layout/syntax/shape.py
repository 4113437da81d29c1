"""Shapes and layouts as values: what `bf16[8,128]{1,0:T(8,128)(2,1)S(1)}` says, nothing computed.

The byte arithmetic lives in `hlo_layout.layout`; this module only holds the parsed facts, frozen
and hashable so that a dump's few hundred distinct shape strings are built once and shared.
See ../shared/docs/layout_rules.md §1 for the text forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hlo_layout.errors import Span
from hlo_layout.limits import MAX_SHAPE_DEPTH, exceeded

#: Tile entry written `*`: merge this dimension into the next more-minor one (XLA stores INT64_MIN).
COMBINE = -(2**63)
#: Size of a `?` (unbounded dynamic) dimension.
UNBOUNDED = -1


@dataclass(frozen=True, slots=True)
class Tile:
    """One level of tiling, e.g. `(8,128)`; entries pair with the most-minor physical dims."""

    dims: tuple[int, ...]

    @property
    def has_combine(self) -> bool:
        return COMBINE in self.dims

    def __str__(self) -> str:
        return "(" + ",".join("*" if d == COMBINE else str(d) for d in self.dims) + ")"


@dataclass(frozen=True, slots=True)
class SplitConfig:
    """`SC(d:i,...)`: physical dimension d (0 = most major) is split at the given indices."""

    dimension: int
    split_indices: tuple[int, ...]

    def __str__(self) -> str:
        return f"({self.dimension}:" + ",".join(map(str, self.split_indices)) + ")"


@dataclass(frozen=True, slots=True)
class Layout:
    """A layout: minor_to_major plus the properties after the colon, each at its default if absent.

    `unknown_props` keeps, verbatim, any `X(...)` property a newer XLA may print: nothing is lost.
    """

    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...] = ()
    tail_padding_alignment: int = 1
    index_type: str | None = None
    pointer_type: str | None = None
    element_size_bits: int = 0
    memory_space: int = 0
    split_configs: tuple[SplitConfig, ...] = ()
    physical_shape: Shape | None = None
    dynamic_shape_metadata_prefix_bytes: int = 0
    dim_level_types: tuple[str, ...] = ()
    unknown_props: tuple[str, ...] = ()

    @property
    def has_props(self) -> bool:
        """True when anything follows the colon in XLA's printed form."""
        return bool(
            self.tiles
            or self.tail_padding_alignment != 1
            or self.index_type
            or self.pointer_type
            or self.element_size_bits
            or self.memory_space
            or self.split_configs
            or self.physical_shape is not None
            or self.dynamic_shape_metadata_prefix_bytes
            or self.unknown_props
        )

    def __str__(self) -> str:
        from hlo_layout.syntax.printer import print_layout

        return print_layout(self)


@dataclass(frozen=True, slots=True)
class ArrayShape:
    """`type[dims]{layout}`. `layout` is None when the text printed none (XLA then assumes the
    descending default); `dynamic` marks `<=N` and `?` dimensions (the latter sized UNBOUNDED)."""

    element_type: str
    dims: tuple[int, ...]
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_dynamic(self) -> bool:
        return any(self.dynamic)

    @property
    def is_unbounded(self) -> bool:
        return any(d and s == UNBOUNDED for d, s in zip(self.dynamic, self.dims))

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """The layout's order, or XLA's default (descending, row-major) when none was printed."""
        if self.layout is not None:
            return self.layout.minor_to_major
        return tuple(range(self.rank - 1, -1, -1))

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    def leaves(self) -> tuple[tuple[tuple[int, ...], ArrayShape], ...]:
        return (((), self),)

    def __str__(self) -> str:
        from hlo_layout.syntax.printer import print_shape

        return print_shape(self)


@dataclass(frozen=True, slots=True)
class TupleShape:
    """`(s0, s1, ...)`; a tuple has no layout of its own, each leaf carries one."""

    elements: tuple[Shape, ...]

    def leaves(self) -> tuple[tuple[tuple[int, ...], ArrayShape], ...]:
        """Every array leaf with its ShapeIndex, depth first (XLA's ForEachSubshape order)."""
        out: list[tuple[tuple[int, ...], ArrayShape]] = []
        for i, element in enumerate(self.elements):
            for index, leaf in element.leaves():
                out.append(((i, *index), leaf))
        return tuple(out)

    def __str__(self) -> str:
        from hlo_layout.syntax.printer import print_shape

        return print_shape(self)


@dataclass(frozen=True, slots=True)
class TokenShape:
    """`token[]`: ordering only, no storage."""

    def leaves(self) -> tuple[tuple[tuple[int, ...], ArrayShape], ...]:
        return ()

    def __str__(self) -> str:
        return "token[]"


@dataclass(frozen=True, slots=True)
class OpaqueShape:
    """`opaque[]`: a pointer-sized handle (custom calls)."""

    def leaves(self) -> tuple[tuple[tuple[int, ...], ArrayShape], ...]:
        return ()

    def __str__(self) -> str:
        return "opaque[]"


@dataclass(frozen=True, slots=True)
class BufferShape:
    """`b(shape)`: XLA's 2025 BUFFER type wrapping an array shape."""

    element: Shape

    def leaves(self) -> tuple[tuple[tuple[int, ...], ArrayShape], ...]:
        return self.element.leaves()

    def __str__(self) -> str:
        from hlo_layout.syntax.printer import print_shape

        return print_shape(self)


Shape = ArrayShape | TupleShape | TokenShape | OpaqueShape | BufferShape

#: Element types XLA knows (primitive_util); anything else still parses and is kept as written.
ELEMENT_TYPES = frozenset(
    {
        "pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64",
        "u1", "u2", "u4", "u8", "u16", "u32", "u64",
        "f16", "bf16", "f32", "f64",
        "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz", "f8e4m3fnuz",
        "f4e2m1fn", "f8e8m0fnu", "c64", "c128", "token", "opaque",
    }
)  # fmt: skip


def check_tuple_depth(elements: Sequence[Shape], span: Span | None = None) -> None:
    """Raise LimitExceeded when a tuple of `elements` nests more than MAX_SHAPE_DEPTH deep
    (its elements have passed this check, so the walk is as deep as the limit at most)."""
    depth, level = 1, list(elements)
    while level:
        nested = [e.element if isinstance(e, BufferShape) else e for e in level]
        level = [x for e in nested if isinstance(e, TupleShape) for x in e.elements]
        if any(isinstance(e, TupleShape) for e in nested):
            depth += 1
        if depth > MAX_SHAPE_DEPTH:
            raise exceeded("tuple shape nesting", depth, MAX_SHAPE_DEPTH, "MAX_SHAPE_DEPTH", span)
