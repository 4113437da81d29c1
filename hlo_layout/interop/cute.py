"""CuTe / CATLASS-TLA hierarchical `shape:stride` layouts, and XLA layouts written as one.

A layout is two congruent nested integer tuples: `((4,2),(4,3)):((4,16),(1,32))` maps the
coordinate `(1,5)` to `1·4 + 0·16 + 1·1 + 1·32 = 37`. The functions below follow pycute
(NVIDIA/cutlass `python/pycute/int_tuple.py`, `layout.py`) and CATLASS TLA
(`include/tla/layout.hpp`, `docs/2_Design/02_tla/01_layout.md`): same names, same case analysis,
same colexicographic convention (the first sub-mode of a mode is the fastest).

`cute_layout(shape)` turns an XLA array layout (minor_to_major + any number of tiles, `*` entries
included) into the equivalent layout over the *logical* coordinates: mode i is logical dimension i,
nested as (within-tile, tile count, ...) from fastest to slowest, each with its stride in elements.
Shapes are padded extents, so for a padded layout the domain is the padded array.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace
from typing import Union

from hlo_layout.interop.errors import InteropError
from hlo_layout.layout.tiling import physical_axes, physical_dims, shape_tiles, tiling_steps
from hlo_layout.strides import row_major_strides
from hlo_layout.syntax.shape import ArrayShape

IntTuple = Union[int, tuple["IntTuple", ...]]  # noqa: UP007  (a recursive alias needs Union)

# --- int tuples (pycute int_tuple.py) ----------------------------------------------------------


def is_tuple(x: object) -> bool:
    return isinstance(x, tuple)


def product(t: IntTuple) -> int:
    """Number of coordinates of a (nested) shape: `((4,2),(4,3))` → 96."""
    if is_tuple(t):
        return math.prod(product(x) for x in t)  # type: ignore[union-attr,misc]
    return t  # type: ignore[return-value]


def rank(t: IntTuple) -> int:
    """Number of top-level modes; an integer has rank 1 (TLA `rank(IntTuple)`)."""
    return len(t) if is_tuple(t) else 1  # type: ignore[arg-type]


def depth(t: IntTuple) -> int:
    """Nesting depth; an integer has depth 0 (TLA `depth(IntTuple)`)."""
    if is_tuple(t):
        return 1 + max((depth(x) for x in t), default=0)  # type: ignore[union-attr]
    return 0


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The integers of a nested tuple, left to right."""
    if is_tuple(t):
        return tuple(v for x in t for v in flatten(x))  # type: ignore[union-attr]
    return (t,)  # type: ignore[return-value]


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same nesting profile (pycute `congruent`)."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))  # type: ignore
    return not is_tuple(a) and not is_tuple(b)


def prefix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product, the compact column-major stride: `(2,(3,4))` → `(1,(2,6))`."""
    if is_tuple(t):
        out = []
        for x in t:  # type: ignore[union-attr]
            out.append(prefix_product(x, init))
            init *= product(x)
        return tuple(out)
    return init


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple) -> int:
    """Offset of a coordinate: pycute `crd2idx`, CuTe `crd2idx`, TLA `crd2offset`.

    An integer coordinate of a tuple mode is split colexicographically (first sub-mode fastest);
    the last sub-mode takes the rest without a modulo, as TLA's `crd2offset_itt` does.

    >>> crd2idx((1, 5), ((4, 2), (4, 3)), ((4, 16), (1, 32)))
    37
    """
    if is_tuple(crd):
        if not is_tuple(shape):  # tuple "int" "int"
            raise InteropError(f"coordinate {crd} has more modes than shape {shape}")
        if len(crd) != len(shape):  # type: ignore[arg-type]
            raise InteropError(f"coordinate {crd} does not match the rank of shape {shape}")
        # tuple tuple tuple
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))  # type: ignore
    if is_tuple(shape):  # "int" tuple tuple
        if not shape:
            return 0
        result = 0
        for s, d in zip(shape[:-1], stride[:-1]):  # type: ignore[index]
            n = product(s)
            result += crd2idx(crd % n, s, d)  # type: ignore[operator]
            crd = crd // n  # type: ignore[operator]
        return result + crd2idx(crd, shape[-1], stride[-1])  # type: ignore[index,return-value]
    return crd * stride  # type: ignore[operator,return-value]  # "int" "int" "int"


#: TLA's name for `crd2idx`.
crd2offset = crd2idx


def idx2crd(idx: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> IntTuple:
    """pycute `idx2crd`: with the default (compact column-major) stride, the colexicographic
    coordinate of index `idx`; with a layout's own stride, `(idx // stride) % shape` per leaf.

    >>> idx2crd(37, ((4, 2), (4, 3)))
    ((1, 1), (0, 1))
    """
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):  # type: ignore[arg-type]
            raise InteropError(f"index {idx} does not match shape {shape}")
        # tuple tuple tuple
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))  # type: ignore
    if is_tuple(shape):  # int tuple tuple
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))  # type: ignore
    if shape == 0:  # int int int
        return 0
    return (idx // stride) % shape  # type: ignore[operator]


def format_int_tuple(t: IntTuple) -> str:
    """C++ CuTe's spelling, no spaces: `((4,2),(4,3))`, `(8)`, `5`."""
    if is_tuple(t):
        return "(" + ",".join(format_int_tuple(x) for x in t) + ")"  # type: ignore[union-attr]
    return str(t)


_TOKEN = re.compile(r"\s*(?:(\()|(\))|(,)|(-?_?\d+))")


def parse_int_tuple(text: str) -> IntTuple:
    """Read `((4,2),(4,3))`, pycute's `((4, 2), (4, 3))` and `(8,)`, or CuTe's static `_4`."""
    pos = 0
    stack: list[list[IntTuple]] = []
    result: IntTuple | None = None
    done = False
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or done:
            raise InteropError(f"cannot read {text!r} as a CuTe int tuple (at column {pos + 1})")
        pos = m.end()
        if m.group(1):
            stack.append([])
        elif m.group(2):
            if not stack:
                raise InteropError(f"unbalanced ')' in {text!r}")
            value: IntTuple = tuple(stack.pop())
            if stack:
                stack[-1].append(value)
            else:
                result, done = value, True
        elif m.group(3):
            if not stack:
                raise InteropError(f"',' outside parentheses in {text!r}")
        else:
            number = int(m.group(4).replace("_", ""))
            if stack:
                stack[-1].append(number)
            else:
                result, done = number, True
    if stack or result is None:
        raise InteropError(f"cannot read {text!r} as a CuTe int tuple")
    return result


# --- layouts -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CuteLayout:
    """A CuTe `Layout(shape, stride)`: a function from coordinates to offsets (in elements).

    Frozen and hashable, unlike pycute's `Layout`; the constructor checks what pycute asserts.
    """

    shape: IntTuple
    stride: IntTuple

    def __post_init__(self) -> None:
        if not congruent(self.shape, self.stride):
            raise InteropError(f"shape {self.shape} and stride {self.stride} are not congruent")
        if any(s < 0 for s in flatten(self.shape)):
            raise InteropError(f"shape {self.shape} has a negative extent")

    @property
    def rank(self) -> int:
        return rank(self.shape)

    @property
    def depth(self) -> int:
        return depth(self.shape)

    @property
    def size(self) -> int:
        """Number of coordinates (pycute `size`)."""
        return product(self.shape)

    @property
    def cosize(self) -> int:
        """One past the offset of the last coordinate (pycute `cosize`; the largest offset for
        non-negative strides); 0 for an empty layout."""
        if self.size == 0:
            return 0
        return self(self.size - 1) + 1

    def __call__(self, *crd: IntTuple) -> int:
        """`L(1, 5)` or `L((1, 5))`: the offset of a coordinate (CuTe `Layout::operator()`)."""
        c: IntTuple = crd[0] if len(crd) == 1 else tuple(crd)
        return crd2idx(c, self.shape, self.stride)

    def get(self, *modes: int) -> CuteLayout:
        """TLA `get<I0,I1,...>(layout)`: the sub-layout of mode I0, then its mode I1, ..."""
        shape, stride = self.shape, self.stride
        for i in modes:
            if not is_tuple(shape) or not 0 <= i < len(shape):  # type: ignore[arg-type]
                raise InteropError(f"layout {self} has no mode {modes}")
            shape, stride = shape[i], stride[i]  # type: ignore[index]
        return CuteLayout(shape, stride)

    def mode_extents(self) -> tuple[int, ...]:
        """Coordinates per top-level mode: the padded extent of each logical dimension."""
        if not is_tuple(self.shape):
            return (self.shape,)  # type: ignore[return-value]
        return tuple(product(s) for s in self.shape)  # type: ignore[union-attr]

    def coordinate(self, offset: int) -> tuple[int, ...] | None:
        """Inverse of `__call__` for a one-to-one layout: the per-mode (integer) coordinate whose
        offset is `offset`, or None when no coordinate lands there (padding, holes).

        Reads the leaves from the largest stride down, like pycute's `idx2crd(offset, shape,
        stride)` but allowing gaps between sub-modes, then checks the answer.
        """
        modes = self.shape if is_tuple(self.shape) else (self.shape,)
        strides = self.stride if is_tuple(self.stride) else (self.stride,)
        leaves = []  # (stride, size, mode, weight of the leaf inside its mode)
        for m, (shape, stride) in enumerate(zip(modes, strides)):  # type: ignore[arg-type]
            for size, d, w in zip(flatten(shape), flatten(stride), flatten(prefix_product(shape))):
                if size > 1 and d > 0:
                    leaves.append((d, size, m, w))
        out = [0] * len(modes)  # type: ignore[arg-type]
        rest = offset
        for d, size, m, w in sorted(leaves, reverse=True):
            c = rest // d
            if c >= size:
                return None
            rest -= c * d
            out[m] += c * w
        flat = tuple(out)
        if rest or self(flat) != offset:
            return None
        return flat

    def __str__(self) -> str:
        return format_int_tuple(self.shape) + ":" + format_int_tuple(self.stride)


def parse_cute(text: str) -> CuteLayout:
    """Read `shape:stride` as printed by `str(CuteLayout)`, C++ CuTe or pycute; a bare shape gets
    pycute's default compact column-major stride.

    >>> str(parse_cute("((4, 2), (4, 3)):((4, 16), (1, 32))"))
    '((4,2),(4,3)):((4,16),(1,32))'
    """
    shape_text, colon, stride_text = text.partition(":")
    shape = parse_int_tuple(shape_text)
    stride = parse_int_tuple(stride_text) if colon else prefix_product(shape)
    return CuteLayout(shape, stride)


def make_layout_tile(layout: CuteLayout, tile_shape: tuple[int, ...]) -> CuteLayout:
    """TLA `MakeLayoutTile`: the layout of a tile of `tile_shape` elements cut from `layout`;
    strides are kept, shapes cut. A flat mode becomes the tile's extent; a nested mode keeps its
    inner sub-modes and its outermost sub-mode becomes the number of inner blocks the tile needs
    (`CeilDiv`), as in `zN::GetTileLayout`.

    >>> str(make_layout_tile(parse_cute("((4,2),(4,3)):((4,16),(1,32))"), (4, 4)))
    '((4,1),(4,1)):((4,16),(1,32))'
    """
    modes = layout.shape if is_tuple(layout.shape) else (layout.shape,)
    if len(tile_shape) != len(modes):  # type: ignore[arg-type]
        raise InteropError(f"tile shape {tile_shape} does not match the rank of {layout}")
    out: list[IntTuple] = []
    for mode, n in zip(modes, tile_shape):  # type: ignore[arg-type]
        if not is_tuple(mode):
            out.append(n)
            continue
        inner = mode[:-1]  # type: ignore[index]
        out.append((*inner, -(-n // max(product(inner), 1))))
    shape: IntTuple = tuple(out) if is_tuple(layout.shape) else out[0]
    return CuteLayout(shape, layout.stride)


# --- constructors (TLA MakeLayout<Element, LayoutTag>) ----------------------------------------


def row_major(*dims: int) -> CuteLayout:
    """`(2,3):(3,1)`: the last coordinate is contiguous (TLA `RowMajor`, XLA `{1,0}`)."""
    return CuteLayout(tuple(dims), row_major_strides(tuple(dims)))


def column_major(*dims: int) -> CuteLayout:
    """`(2,3):(1,2)`: the first coordinate is contiguous (TLA `ColumnMajor`, XLA `{0,1}`)."""
    return CuteLayout(tuple(dims), prefix_product(tuple(dims)))


#: Ascend cube-core constants (CATLASS `catlass.hpp`): a C0 block is 32 bytes, a fractal 512
#: bytes, 16 C0 blocks per fractal.
BYTE_PER_C0 = 32
C0_NUM_PER_FRACTAL = 16


def _ascend(element_bytes: int, c0: int | None, fractal_rows: int) -> tuple[int, int, int]:
    if c0 is None:
        c0 = BYTE_PER_C0 // element_bytes
    if c0 <= 0 or fractal_rows <= 0:
        raise InteropError("an Ascend block needs positive sizes")
    return c0, fractal_rows, c0 * fractal_rows


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def zN(
    rows: int, cols: int, *, element_bytes: int = 2, c0: int | None = None, fractal_rows: int = 16
) -> CuteLayout:
    """Ascend `zN`: row-major inside each fractal (rows of `c0` elements), fractals column-major.

    TLA `MakeLayout<Element, zN>`; the TLA document's 4×4-block example is
    `zN(8, 12, c0=4, fractal_rows=4)` = `((4,2),(4,3)):((4,16),(1,32))`.
    """
    c0, f, frac = _ascend(element_bytes, c0, fractal_rows)
    return CuteLayout(
        ((f, _cdiv(rows, f)), (c0, _cdiv(cols, c0))),
        ((c0, frac), (1, _cdiv(rows, f) * f * c0)),
    )


def zZ(
    rows: int, cols: int, *, element_bytes: int = 2, c0: int | None = None, fractal_rows: int = 16
) -> CuteLayout:
    """Ascend `zZ`: row-major inside each fractal, fractals row-major (XLA `{1,0:T(f,c0)}`)."""
    c0, f, frac = _ascend(element_bytes, c0, fractal_rows)
    return CuteLayout(
        ((f, _cdiv(rows, f)), (c0, _cdiv(cols, c0))),
        ((c0, _cdiv(cols, c0) * c0 * f), (1, frac)),
    )


def nZ(
    rows: int, cols: int, *, element_bytes: int = 2, c0: int | None = None, fractal_rows: int = 16
) -> CuteLayout:
    """Ascend `nZ`: column-major inside each fractal (columns of `c0` elements), fractals
    row-major."""
    c0, f, frac = _ascend(element_bytes, c0, fractal_rows)
    return CuteLayout(
        ((c0, _cdiv(rows, c0)), (f, _cdiv(cols, f))),
        ((1, _cdiv(cols, f) * f * c0), (c0, frac)),
    )


def nN(
    rows: int, cols: int, *, element_bytes: int = 2, c0: int | None = None, fractal_rows: int = 16
) -> CuteLayout:
    """Ascend `nN` (CATLASS `layout::nN`): column-major inside each fractal, fractals
    column-major (XLA `{0,1:T(f,c0)}`)."""
    c0, f, frac = _ascend(element_bytes, c0, fractal_rows)
    return CuteLayout(
        ((c0, _cdiv(rows, c0)), (f, _cdiv(cols, f))),
        ((1, frac), (c0, _cdiv(rows, c0) * c0 * f)),
    )


# --- XLA layouts as CuTe layouts ---------------------------------------------------------------

# NOTE: [digits] Every dimension of the shape a tile level produces is a mixed-radix number whose
# digits each read one logical coordinate: digit (axis a, divisor p, size s) is `(x[a] // p) % s`.
# The physical dims start as one digit each. A `*` entry concatenates the digit lists of the
# dimensions it merges; a tile entry t splits a list where the digits below make exactly t
# (splitting one digit if needed); when the dimension is smaller than t, XLA pads it, which gives
# its most significant digit more `slots` in memory than values. Only the axis's most significant
# digit may be padded by rounding its size up (`x // p` never wraps); a padded split anywhere else
# mixes two coordinates and has no shape:stride form. After the last tile, the dims are laid out
# row-major by their slots, which gives every digit its stride; gathering each axis's digits from
# the smallest divisor up gives mode i, fastest sub-mode first.


@dataclass(frozen=True, slots=True)
class _Digit:
    axis: int | None  # the logical dimension read; None for a unit dimension a tile prepended
    divisor: int
    size: int
    slots: int
    top: bool  # the axis's most significant digit: `x // divisor < size`, no wrap


_UNIT = _Digit(None, 1, 1, 1, False)


def _count_digit(head: _Digit) -> tuple[_Digit, _Digit]:
    """The tile count (always 0) above `head` once a tile took all of its dimension."""
    if head.axis is None or not head.top:
        return head, _UNIT
    return replace(head, top=False), _Digit(head.axis, head.divisor * head.size, 1, 1, True)


def _split(digits: list[_Digit], t: int) -> tuple[list[_Digit], list[_Digit]]:
    """Split one dimension by tile entry t: (⌈d/t⌉ part, t part), as digit lists."""
    if not digits:  # a tile entry 1 left an empty (extent-1) dimension
        digits = [_UNIT]
    need, i = t, len(digits) - 1
    low: list[_Digit] = []
    while need > 1 and i >= 0:
        d = digits[i]
        if 0 < d.slots <= need and (need % d.slots == 0 or i > 0):
            # The whole digit goes inside the tile.
            if need % d.slots:
                raise InteropError(
                    f"tile entry {t} does not split the dimension's {d.slots}-slot part evenly"
                )
            low.insert(0, d)
            need //= d.slots
            i -= 1
            continue
        if d.slots % need and i > 0:
            raise InteropError(
                f"tile entry {t} pads a dimension in the middle of a merged (*) dimension"
            )
        hi_slots = -(-d.slots // need)
        if d.axis is None:
            lo, hi = replace(_UNIT, slots=need), replace(_UNIT, slots=hi_slots)
        elif d.size % need == 0 or d.top:
            lo = _Digit(d.axis, d.divisor, need, need, False)
            hi = _Digit(d.axis, d.divisor * need, -(-d.size // need), hi_slots, d.top)
        elif d.size < need:
            lo, hi = replace(d, slots=need), replace(_UNIT, slots=hi_slots)
        else:
            raise InteropError(
                f"tile entry {t} splits a {d.size}-value part of dimension {d.axis} unevenly"
            )
        return [*digits[:i], hi], [lo, *low]
    if i >= 0:
        return digits[: i + 1], low
    # The tile covers the whole dimension: XLA pads it up to t, and one tile (count 1) remains.
    head = low[0]
    if head.top:
        head = replace(head, size=head.size * need, slots=head.slots * need)
    else:
        head = replace(head, slots=head.slots * need)
    head, count = _count_digit(head)
    return [count], [head, *low[1:]]


@functools.lru_cache(maxsize=4096)
def cute_layout(shape: ArrayShape) -> CuteLayout:
    """The CuTe layout of an XLA array: coordinate (x0, x1, ...) → offset in elements, equal to
    LayoutUtil::LinearIndexForNestedTiling (`layout.element_offset`) for every index.

    Mode i is logical dimension i; a tiled dimension nests as (within-tile, tile count) per tile
    level, fastest first. Extents are padded (a 3-row dim under `T(2,…)` has shape `(2,2)`).
    Split configs and memory spaces do not change offsets and are ignored.

    >>> from hlo_layout.syntax import parse_shape
    >>> str(cute_layout(parse_shape("f32[3,5]{1,0:T(2,2)}")))
    '((2,2),(2,3)):((2,12),(1,4))'
    """
    axes = physical_axes(shape)
    dims = physical_dims(shape)
    current: list[list[_Digit]] = [[_Digit(a, 1, d, d, True)] for a, d in zip(axes, dims)]
    steps = tiling_steps(dims, shape_tiles(shape))
    for step in steps:
        current = [[_UNIT] for _ in range(step.leading_ones)] + current
        start = len(current) - sum(step.groups)
        merged: list[list[_Digit]] = []
        pos = start
        for g in step.groups:
            merged.append([d for dim in current[pos : pos + g] for d in dim])
            pos += g
        parts = [_split(m, t) for m, t in zip(merged, step.tile)]
        current = current[:start] + [hi for hi, _ in parts] + [lo for _, lo in parts]
    extents = [math.prod(d.slots for d in dim) for dim in current]
    expected = steps[-1].after if steps else dims
    if tuple(extents) != tuple(expected):
        raise InteropError(f"internal: digits of {shape} make {extents}, XLA makes {expected}")
    # Row-major strides by slots, then each axis's digits from the finest up.
    per_axis: dict[int, list[tuple[int, int, int]]] = {a: [] for a in range(shape.rank)}
    stride = 1
    for dim in reversed(current):
        for d in reversed(dim):
            if d.axis is not None:
                per_axis[d.axis].append((d.divisor, d.size, stride))
            stride *= d.slots
    shapes: list[IntTuple] = []
    strides: list[IntTuple] = []
    for a in range(shape.rank):
        digits = sorted(per_axis[a])
        p = 1
        for divisor, size, _ in digits:
            if divisor != p:
                raise InteropError(f"internal: dimension {a} of {shape} has a gap in its digits")
            p *= size
        if len(digits) == 1:
            shapes.append(digits[0][1])
            strides.append(digits[0][2])
        else:
            shapes.append(tuple(s for _, s, _ in digits))
            strides.append(tuple(st for _, _, st in digits))
    return CuteLayout(tuple(shapes), tuple(strides))


__all__ = [
    "BYTE_PER_C0",
    "C0_NUM_PER_FRACTAL",
    "CuteLayout",
    "IntTuple",
    "column_major",
    "congruent",
    "crd2idx",
    "crd2offset",
    "cute_layout",
    "depth",
    "flatten",
    "format_int_tuple",
    "idx2crd",
    "is_tuple",
    "make_layout_tile",
    "nN",
    "nZ",
    "parse_cute",
    "parse_int_tuple",
    "prefix_product",
    "product",
    "rank",
    "row_major",
    "zN",
    "zZ",
]
