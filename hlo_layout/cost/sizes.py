"""The two shape-size functions the cost analysis runs with (XLA's `Options::shape_size`).

- `xla_shape_size`: what jaxlib's CPU client gives HloCostAnalysis (CpuExecutable::ShapeSizeBytes):
  ShapeUtil::ByteSizeOf with 8-byte pointers, plus 4 bytes per dimension of a dynamic array (its
  size metadata). Logical sizes: no tiling. XLA's `bytes_accessed` is counted with it.
- `physical_shape_size`: the bytes the buffer really spans (ShapeUtil::ArraySize: first-tile
  padding, `L(n)`, `E(n)`), as XLA's TPU backend sizes shapes for its own cost model: what the
  hardware moves. Tuples are their pointer tables and dynamic arrays carry their size metadata,
  as in the logical size, so it is never below it. (A split config `SC(..)` sizes the largest
  piece, below the whole array: the logical size stands then.)

Both are memoized per shape object (a dump shares one object per distinct shape text).
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_layout.layout.errors import LayoutError
from hlo_layout.layout.size import byte_size_of, physical_bytes
from hlo_layout.syntax.shape import ArrayShape, Shape

ShapeSize = Callable[[Shape], int]

#: Bytes of a dynamic dimension's size on XLA:CPU (an s32 per dimension).
DYNAMIC_DIMENSION_BYTES = 4


def _xla(shape: Shape) -> int:
    size = byte_size_of(shape)
    if isinstance(shape, ArrayShape) and shape.is_dynamic:
        size += DYNAMIC_DIMENSION_BYTES * shape.rank
    return size


def _physical(shape: Shape) -> int:
    if isinstance(shape, ArrayShape) and shape.layout is not None and not shape.is_unbounded:
        try:
            size = physical_bytes(shape)
        except LayoutError:  # a layout our sizer cannot read: the logical size, no padding known
            return _xla(shape)
        if shape.is_dynamic:
            size += DYNAMIC_DIMENSION_BYTES * shape.rank
        return max(size, _xla(shape))
    return _xla(shape)


def _memoized(size: Callable[[Shape], int]) -> ShapeSize:
    """`size` cached by shape identity (hashing a shape walks its layout; ids are free). The
    shape is kept in the cache, so its id is never reused while the entry lives."""
    cache: dict[int, tuple[Shape, int]] = {}

    def sized(shape: Shape) -> int:
        hit = cache.get(id(shape))
        if hit is not None and hit[0] is shape:
            return hit[1]
        value = size(shape)
        if len(cache) > 1 << 16:
            cache.clear()
        cache[id(shape)] = (shape, value)
        return value

    sized.__doc__ = size.__doc__
    return sized


xla_shape_size: ShapeSize = _memoized(_xla)
physical_shape_size: ShapeSize = _memoized(_physical)

__all__ = ["DYNAMIC_DIMENSION_BYTES", "ShapeSize", "physical_shape_size", "xla_shape_size"]
