"""Byte footprints: what a value holds (logical), what the compiler allocates (physical), and the
difference (padding).

Physical bytes mirror ShapeUtil::ArraySize, which is what XLA's buffer assignment allocates on
TPU, GPU and CPU (layout_rules.md §2.1–2.2):

1. physical dims, major → minor; a `<=N` dimension counts at its bound N, a dimension with a
   split config `SC(d:i,…)` at its largest piece (LayoutUtil::MaxSplitSize);
2. only the **first** tile pads: the k most-minor dims are rounded up to the tile's entries
   (missing major dims count as 1 and are padded too); `*` entries merge a dimension into the next
   more-minor one first. Later tiles, e.g. `(2,1)` for 16 bits, only reorder a tile's contents;
3. the element count is rounded up to a multiple of `L(n)`;
4. bytes = ⌈elements × E / 8⌉ with `E(n)`, else elements × byte width.

Logical bytes are the unpadded array: elements × bits per element (a `pred` counts one byte,
sub-byte types their real width), rounded up to a whole byte; with a split config, of the
largest piece, like the physical size. Tuples add up their leaf arrays;
their pointer tables are reported apart (`pointer_table_bytes`). `token[]` holds nothing.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from hlo_layout.layout.element_type import POINTER_BYTES, logical_bits, storage_bits
from hlo_layout.layout.errors import LayoutError
from hlo_layout.layout.tiling import TileStep, bounded_dims, physical_axes, tiling_steps
from hlo_layout.syntax.shape import (
    ArrayShape,
    BufferShape,
    OpaqueShape,
    Shape,
    TokenShape,
    TupleShape,
)


def max_split_size(shape: ArrayShape, dim: int) -> int:
    """Size of logical dimension `dim`, or its largest piece when a split config splits it.

    Mirrors LayoutUtil::MaxSplitSize: `SC(d:…)` names the *physical* dimension d (0 = most
    major). `s32[6]{0:T(128)SC(0:3)}` → pieces [0,3) and [3,6) → 3.
    """
    size = bounded_dims(shape)[dim]
    layout = shape.layout
    if layout is None or not layout.split_configs:
        return size
    axes = physical_axes(shape)
    for config in layout.split_configs:
        if not 0 <= config.dimension < len(axes):
            raise LayoutError(
                f"split config SC{config} names physical dimension {config.dimension} of a "
                f"rank-{shape.rank} array"
            )
        if axes[config.dimension] != dim:
            continue
        largest, last = 0, 0
        for split in config.split_indices:
            largest = max(largest, split - last)
            last = split
        return max(largest, size - last)
    return size


def sized_physical_dims(shape: ArrayShape) -> tuple[int, ...]:
    """Physical dims (major → minor) as ArraySize sizes them: bounds, largest split pieces."""
    return tuple(max_split_size(shape, a) for a in physical_axes(shape))


def first_tile_step(shape: ArrayShape) -> TileStep | None:
    """The first tile applied to the sized physical dims, or None for an untiled layout."""
    layout = shape.layout
    if layout is None or not layout.tiles:
        return None
    return tiling_steps(sized_physical_dims(shape), layout.tiles[:1])[0]


@functools.lru_cache(maxsize=65536)
def physical_elements(shape: ArrayShape) -> int:
    """Element slots ArraySize allocates: first-tile padding and `L(n)` included.

    >>> from hlo_layout.syntax import parse_shape
    >>> physical_elements(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    24
    """
    step = first_tile_step(shape)
    n = math.prod(step.padded) if step is not None else math.prod(sized_physical_dims(shape))
    layout = shape.layout
    if layout is not None and layout.tail_padding_alignment > 1:
        n = -(-n // layout.tail_padding_alignment) * layout.tail_padding_alignment
    return n


def element_storage_bits(shape: ArrayShape) -> int:
    """Bits per element in the buffer (ShapeUtil::ElementSizeInBits): `E(n)` or whole bytes."""
    layout = shape.layout
    return storage_bits(shape.element_type, layout.element_size_bits if layout else 0)


def physical_bytes(shape: ArrayShape) -> int:
    """Bytes XLA allocates for an array (ShapeUtil::ArraySize; the buffer assignment's `size=`).

    >>> from hlo_layout.syntax import parse_shape
    >>> physical_bytes(parse_shape("bf16[3,5]{1,0:T(8,128)(2,1)}"))
    2048
    """
    return -(-physical_elements(shape) * element_storage_bits(shape) // 8)


def logical_bytes(shape: ArrayShape) -> int:
    """Bytes of the unpadded array: elements × bits, rounded up (a `pred` is one byte).

    With a split config both figures describe the largest piece, as the compiler sizes the buffer
    (so the padding of a split array is per piece, never negative).

    >>> from hlo_layout.syntax import parse_shape
    >>> logical_bytes(parse_shape("s32[8388608,8,4]{2,1,0:T(8,128)}")) == 2**30
    True
    """
    return -(-math.prod(sized_physical_dims(shape)) * logical_bits(shape.element_type) // 8)


def padding_bytes(shape: ArrayShape) -> int:
    """Physical minus logical bytes: what tiling, `L(n)`, `E(n)` and byte rounding add."""
    return physical_bytes(shape) - logical_bytes(shape)


def memory_space(shape: ArrayShape) -> int:
    """The layout's `S(n)`, 0 when absent (LayoutUtil::MemorySpace)."""
    return shape.layout.memory_space if shape.layout is not None else 0


@dataclass(frozen=True, slots=True)
class ArrayBytes:
    """One array leaf of a value: its ShapeIndex, shape, byte figures and memory space.

    A figure is None when it cannot be known: a `?` dimension or an element type this version does
    not know (`unknown` says why).
    """

    index: tuple[int, ...]
    shape: ArrayShape
    logical_bytes: int | None
    physical_bytes: int | None
    memory_space: int
    unknown: str | None = None

    @property
    def padding_bytes(self) -> int | None:
        if self.logical_bytes is None or self.physical_bytes is None:
            return None
        return self.physical_bytes - self.logical_bytes


@functools.lru_cache(maxsize=65536)
def array_bytes(shape: ArrayShape, index: tuple[int, ...] = ()) -> ArrayBytes:
    """The byte figures of one array, unknown ones as None instead of an error."""
    try:
        return ArrayBytes(
            index, shape, logical_bytes(shape), physical_bytes(shape), memory_space(shape)
        )
    except LayoutError as e:
        try:  # the logical size needs no layout rule (a tile ending in `*` only hides physical)
            logical: int | None = logical_bytes(shape)
        except LayoutError:
            logical = None
        return ArrayBytes(index, shape, logical, None, memory_space(shape), e.message)


def _sum(values: tuple[int | None, ...]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


@dataclass(frozen=True, slots=True)
class Footprint:
    """Everything a value's shape occupies: its array leaves (summed), the tuple pointer tables
    (ShapeUtil::ByteSizeOf of each tuple: pointer size × element count) and `opaque[]` handles."""

    arrays: tuple[ArrayBytes, ...]
    pointer_table_bytes: int = 0
    opaque_bytes: int = 0

    @property
    def logical_bytes(self) -> int | None:
        return _sum(tuple(a.logical_bytes for a in self.arrays))

    @property
    def physical_bytes(self) -> int | None:
        return _sum(tuple(a.physical_bytes for a in self.arrays))

    @property
    def padding_bytes(self) -> int | None:
        return _sum(tuple(a.padding_bytes for a in self.arrays))

    @property
    def memory_space(self) -> int | None:
        """The one memory space all leaves share; None for mixed spaces or no arrays."""
        spaces = {a.memory_space for a in self.arrays}
        return spaces.pop() if len(spaces) == 1 else None


def byte_size_of(shape: Shape, pointer_size: int = POINTER_BYTES) -> int:
    """ShapeUtil::ByteSizeOf: the bytes of a shape's top-level buffer, without tiling. An array is
    its elements (`<=N` dimensions at their bound) × `E(n)` bits when the layout sets it, else ×
    the element's whole-byte width (ShapeUtil::ByteSizeOfElements); a tuple is its pointer table
    alone (`pointer_size` × element count; the elements are buffers of their own); `token[]` is 0
    and `opaque[]` one pointer. What XLA's HloCostAnalysis counts as bytes accessed.

    Deviation: an element type this version does not know, or a `?` dimension, is 0 bytes (XLA
    would have rejected the text).

    >>> from hlo_layout.syntax import parse_shape
    >>> byte_size_of(parse_shape("s4[3,5]{1,0:T(8,128)(2,1)E(4)}"))
    8
    >>> byte_size_of(parse_shape("(f32[2], s4[9])"))
    16
    """
    if isinstance(shape, ArrayShape):
        if shape.is_unbounded:
            return 0
        layout = shape.layout
        try:
            bits = storage_bits(shape.element_type, layout.element_size_bits if layout else 0)
        except LayoutError:
            return 0
        return -(-math.prod(shape.dims) * bits // 8)
    if isinstance(shape, TupleShape):
        return pointer_size * len(shape.elements)
    if isinstance(shape, OpaqueShape):
        return pointer_size
    if isinstance(shape, BufferShape):
        return byte_size_of(shape.element, pointer_size)
    return 0


#: Bytes a tuple's pointer table takes on TPU: every tuple value in the corpus's TPU buffer
#: assignments (2 to 13 elements) is 512 B, and `memory_analysis()` output sizes add 512 B for a
#: tuple result. An inference from those files (libtpu is closed source): 8 B per element,
#: rounded up to 512.
TPU_TABLE_ALIGNMENT = 512


def pointer_table_bytes(shape: Shape, pointer_size: int = POINTER_BYTES, alignment: int = 1) -> int:
    """ShapeUtil::ByteSizeOf(tuple, pointer_size) summed over every tuple node: each tuple is a
    table of pointer_size × element count bytes, rounded up to `alignment` (512 on TPU).
    `(f32[2], (s32[], s32[]))` → 16 + 16 = 32."""
    if isinstance(shape, TupleShape):
        own = -(-pointer_size * len(shape.elements) // alignment) * alignment
        return own + sum(pointer_table_bytes(e, pointer_size, alignment) for e in shape.elements)
    if isinstance(shape, BufferShape):
        return pointer_table_bytes(shape.element, pointer_size, alignment)
    return 0


def _opaque_count(shape: Shape) -> int:
    if isinstance(shape, OpaqueShape):
        return 1
    if isinstance(shape, TupleShape):
        return sum(_opaque_count(e) for e in shape.elements)
    if isinstance(shape, BufferShape):
        return _opaque_count(shape.element)
    return 0


@functools.lru_cache(maxsize=65536)
def footprint(shape: Shape) -> Footprint:
    """The footprint of any shape: arrays, tuples (leaves summed), `token[]` (nothing), `opaque[]`.

    >>> from hlo_layout.syntax import parse_shape
    >>> f = footprint(parse_shape("(f32[]{:T(128)}, bf16[3,5]{1,0:T(8,128)(2,1)}, token[])"))
    >>> f.physical_bytes, f.logical_bytes, f.pointer_table_bytes
    (2560, 34, 24)
    """
    if isinstance(shape, ArrayShape):
        return Footprint((array_bytes(shape),))
    if isinstance(shape, TokenShape):
        return Footprint(())
    # The figures once per distinct leaf object (the parser shares one per shape text), not
    # through array_bytes' cache per (leaf, index): a 100,000-leaf tuple filled its 65,536
    # entries, kept for the process.
    arrays = []
    seen: dict[int, ArrayBytes] = {}
    for index, leaf in shape.leaves():
        one = seen.get(id(leaf))
        if one is None:
            one = seen[id(leaf)] = array_bytes(leaf)
        arrays.append(
            ArrayBytes(
                index, leaf, one.logical_bytes, one.physical_bytes, one.memory_space, one.unknown
            )
        )
    return Footprint(
        tuple(arrays),
        pointer_table_bytes(shape),
        POINTER_BYTES * _opaque_count(shape),
    )
