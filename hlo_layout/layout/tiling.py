"""Tiled layouts as index arithmetic: where element `e` of an array lives in its buffer.

Mirrors XLA's docs/tiled_layout.md and LayoutUtil::LinearIndexForNestedTiling, for any number of
tile levels:

- the array's dimensions are put in physical order (major → minor, the reverse of
  minor_to_major); that is `d` below, and `e` is an index in the same order;
- each tile of rank k works on the shape the previous one produced: if the shape has fewer than k
  dimensions, unit dimensions are prepended (XLA's ArraySize does the same; the nested-tiling
  helper would CHECK-fail); `*` entries merge a dimension into the next more-minor one; then the
  k most-minor dimensions `d` become `(⌈d/t⌉…, t…)` and an index `e` becomes `(⌊e/t⌋…, e mod t…)`;
- the final shape is linearized row-major.

This is the tiled-layout document's pad-reshape-transpose view. The byte size XLA allocates uses
only the first tile (ShapeUtil::ArraySize, see `size.py`); `tiled_elements` here is the strict
nested count, which differs only for odd layouts such as `bf16[]{:T(512)(2,1)}`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from hlo_layout import limits
from hlo_layout.layout.errors import LayoutError
from hlo_layout.strides import delinearize, linear_index
from hlo_layout.syntax.layout_text import tile_problem
from hlo_layout.syntax.shape import COMBINE, UNBOUNDED, ArrayShape, Tile

TileLike = Tile | Sequence[int]


@dataclass(frozen=True, slots=True)
class TileStep:
    """One tile level applied to a shape (major → minor dimension sizes).

    `before` is the shape the tile sees; `leading_ones` unit dimensions are prepended when the tile
    has more entries than the shape has dimensions; `groups[j]` counts how many of those dimensions
    `*` entries fold into the j-th tiled dimension (1 when nothing is merged); `combined` is the
    shape after prepending and merging; `tile` is the tile without its `*` entries; `after` is
    `(untouched prefix…, ⌈d/t⌉…, t…)`.
    """

    before: tuple[int, ...]
    leading_ones: int
    groups: tuple[int, ...]
    combined: tuple[int, ...]
    tile: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def prefix_rank(self) -> int:
        return len(self.combined) - len(self.tile)

    @property
    def padded(self) -> tuple[int, ...]:
        """`combined` with each tiled dimension rounded up to its tile entry."""
        p = self.prefix_rank
        return self.combined[:p] + tuple(
            -(-d // t) * t for d, t in zip(self.combined[p:], self.tile)
        )


def _tile_dims(tile: TileLike) -> tuple[int, ...]:
    return tile.dims if isinstance(tile, Tile) else tuple(tile)


@functools.lru_cache(maxsize=4096)
def _steps(dims: tuple[int, ...], tiles: tuple[tuple[int, ...], ...]) -> tuple[TileStep, ...]:
    problem = limits.array_problem(dims, tiles)
    if problem is not None:  # a shape built in code, not parsed: the parser checks the same
        raise LayoutError(problem)
    steps: list[TileStep] = []
    current = dims
    for tile in tiles:
        problem = tile_problem(tuple(tile))
        if problem is not None:
            raise LayoutError(problem)
        k = len(tile)
        ones = max(0, k - len(current))
        padded = (1,) * ones + current
        start = len(padded) - k
        combined = list(padded[:start])
        groups: list[int] = []
        entries: list[int] = []
        size, run = 1, 0
        for j, t in enumerate(tile):
            size *= padded[start + j]
            run += 1
            if t == COMBINE:
                continue
            combined.append(size)
            groups.append(run)
            entries.append(t)
            size, run = 1, 0
        prefix = tuple(combined[:start])
        suffix = combined[start:]
        after = prefix + tuple(-(-d // t) for d, t in zip(suffix, entries)) + tuple(entries)
        steps.append(TileStep(current, ones, tuple(groups), tuple(combined), tuple(entries), after))
        current = after
    return tuple(steps)


def tiling_steps(dims: Sequence[int], tiles: Iterable[TileLike]) -> tuple[TileStep, ...]:
    """The shapes each tile level sees and makes, for physical dims `d` (major → minor).

    >>> [s.after for s in tiling_steps((4, 8), [(2, 4), (2, 1)])]
    [(2, 2, 2, 4), (2, 2, 1, 4, 2, 1)]
    """
    return _steps(tuple(dims), tuple(_tile_dims(t) for t in tiles))


def tiled_dims(dims: Sequence[int], tiles: Iterable[TileLike]) -> tuple[int, ...]:
    """The final (pad-reshape-transposed) shape: `f32[3,5]{1,0:T(2,2)}` → (2, 3, 2, 2)."""
    steps = tiling_steps(dims, tiles)
    return steps[-1].after if steps else tuple(dims)


@dataclass(frozen=True, slots=True)
class PadReshapeTranspose:
    """One tile level as the tiled-layout document's three steps: pad each tiled dim to a multiple
    of its entry, split it into (⌈d/t⌉, t), move the t's to the minor end. `merged` is the shape
    after unit dims were added and `*` dims merged (equal to the input when nothing was)."""

    tile: tuple[int, ...]
    merged: tuple[int, ...]
    padded: tuple[int, ...]
    reshaped: tuple[int, ...]
    transposed: tuple[int, ...]


def pad_reshape_transpose(
    dims: Sequence[int], tiles: Iterable[TileLike]
) -> tuple[PadReshapeTranspose, ...]:
    """Each tile level of `tiles` on physical dims `dims` as pad → reshape → transpose.

    >>> [(s.padded, s.reshaped, s.transposed) for s in pad_reshape_transpose((3, 5), [(2, 2)])]
    [((4, 6), (2, 2, 3, 2), (2, 3, 2, 2))]
    """
    out = []
    for step in tiling_steps(dims, tiles):
        p = step.prefix_rank
        counts = step.after[p : p + len(step.tile)]
        reshaped = step.combined[:p] + tuple(x for c, t in zip(counts, step.tile) for x in (c, t))
        out.append(PadReshapeTranspose(step.tile, step.combined, step.padded, reshaped, step.after))
    return tuple(out)


def _forward(step: TileStep, e: tuple[int, ...]) -> tuple[int, ...]:
    e = (0,) * step.leading_ones + e
    padded = (1,) * step.leading_ones + step.before
    p = step.prefix_rank
    # `start` is where the tile's entries begin in the prepended (unmerged) shape.
    start = len(padded) - sum(step.groups)
    merged: list[int] = []
    pos = start
    for g in step.groups:
        m = 0
        for q in range(pos, pos + g):
            m = m * padded[q] + e[q]
        merged.append(m)
        pos += g
    return (
        e[:p]
        + tuple(m // t for m, t in zip(merged, step.tile))
        + tuple(m % t for m, t in zip(merged, step.tile))
    )


def _backward(step: TileStep, c: tuple[int, ...]) -> tuple[int, ...] | None:
    p = step.prefix_rank
    k = len(step.tile)
    merged = [o * t + i for o, i, t in zip(c[p : p + k], c[p + k :], step.tile)]
    for m, bound in zip(merged, step.combined[p:]):
        if m >= bound:
            return None  # a padding slot of this tile level
    padded = (1,) * step.leading_ones + step.before
    e = list(c[:p])
    pos = p
    for m, g in zip(merged, step.groups):
        parts = []
        for q in range(pos + g - 1, pos - 1, -1):
            m, r = divmod(m, padded[q])
            parts.append(r)
        e.extend(reversed(parts))
        pos += g
    return tuple(e[step.leading_ones :])


def _check_index(e: Sequence[int], d: Sequence[int]) -> None:
    if len(e) != len(d):
        raise LayoutError(f"index has {len(e)} coordinates but the array has {len(d)} dimensions")
    for i, n in zip(e, d):
        if not 0 <= i < n:
            raise LayoutError(f"index {tuple(e)} is out of bounds {tuple(d)}")


def linear_index_with_tile(
    e: Sequence[int], d: Sequence[int], tiles: Iterable[TileLike], *, check: bool = True
) -> int:
    """Offset, in elements, of index `e` of an array with physical bounds `d` under `tiles`.

    The tiled-layout document's `linear_index_with_tile(e, d, t)` generalized to any number of
    tile levels, `*` entries and tiles longer than the array (LinearIndexForNestedTiling).
    With `check=False` an index inside the first tile's padding is accepted (used to number
    padding cells in a grid).

    >>> linear_index_with_tile((2, 3), (3, 5), [(2, 2)])   # docs Figure 1
    17
    """
    e = tuple(e)
    d = tuple(d)
    if check:
        _check_index(e, d)
    steps = tiling_steps(d, tiles)
    for step in steps:
        e = _forward(step, e)
    return linear_index(e, steps[-1].after if steps else d)


def index_at_offset(
    offset: int, d: Sequence[int], tiles: Iterable[TileLike]
) -> tuple[int, ...] | None:
    """Inverse of `linear_index_with_tile`: the index stored at `offset`, or None for padding.

    >>> index_at_offset(17, (3, 5), [(2, 2)])
    (2, 3)
    """
    d = tuple(d)
    steps = tiling_steps(d, tiles)
    final = steps[-1].after if steps else d
    if not 0 <= offset < math.prod(final):
        raise LayoutError(f"offset {offset} is outside the buffer's {math.prod(final)} elements")
    c: tuple[int, ...] = delinearize(offset, final)
    for step in reversed(steps):
        back = _backward(step, c)
        if back is None:
            return None
        c = back
    return c


# --- array shapes ---------------------------------------------------------------------------


def bounded_dims(shape: ArrayShape) -> tuple[int, ...]:
    """Logical dimension sizes, dynamic `<=N` dimensions at their bound; `?` has no size."""
    if shape.is_unbounded:
        raise LayoutError(f"{shape} has an unbounded (?) dimension: its size is not known")
    return shape.dims


def physical_axes(shape: ArrayShape) -> tuple[int, ...]:
    """Logical dimension numbers in physical order, major → minor (minor_to_major reversed)."""
    return tuple(reversed(shape.minor_to_major))


def physical_dims(shape: ArrayShape) -> tuple[int, ...]:
    """Dimension sizes in physical order: `f32[4,128,9]{1,2,0}` → (4, 9, 128)."""
    dims = bounded_dims(shape)
    return tuple(dims[a] for a in physical_axes(shape))


def shape_tiles(shape: ArrayShape) -> tuple[Tile, ...]:
    return shape.layout.tiles if shape.layout is not None else ()


def tiled_elements(shape: ArrayShape) -> int:
    """Element slots of the buffer under every tile level (the strict nested rule)."""
    return math.prod(tiled_dims(physical_dims(shape), shape_tiles(shape)))


def element_offset(shape: ArrayShape, index: Sequence[int]) -> int:
    """Offset in elements of the logical index `index` (in the shape's own dimension order).

    >>> from hlo_layout.syntax import parse_shape
    >>> element_offset(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3))
    17
    """
    index = tuple(index)
    dims = bounded_dims(shape)
    _check_index(index, dims)
    axes = physical_axes(shape)
    return linear_index_with_tile(
        tuple(index[a] for a in axes), physical_dims(shape), shape_tiles(shape)
    )


def index_at(shape: ArrayShape, offset: int) -> tuple[int, ...] | None:
    """The logical index stored at element `offset`, or None if that slot is padding."""
    axes = physical_axes(shape)
    phys = index_at_offset(offset, physical_dims(shape), shape_tiles(shape))
    if phys is None:
        return None
    out = [0] * len(axes)
    for a, i in zip(axes, phys):
        out[a] = i
    return tuple(out)


@dataclass(frozen=True, slots=True)
class GridCell:
    """One cell of a 2-D memory-order picture: its offset and which first-level tile holds it."""

    offset: int
    tile: int
    padding: bool


@dataclass(frozen=True, slots=True)
class Grid:
    """The docs' Figures 1 and 2 as data: the array extended to whole first-level tiles, each cell
    numbered with its offset. Rows and columns are the shape's logical dimensions 0 and 1."""

    rows: int
    columns: int
    logical_rows: int
    logical_columns: int
    cells: tuple[tuple[GridCell, ...], ...]


#: Largest grid `tile_grid` draws; bigger shapes are better read as numbers.
MAX_GRID_CELLS = 4096


def tile_grid(shape: ArrayShape, max_cells: int = MAX_GRID_CELLS) -> Grid:
    """Offsets of every cell of a 1-D or 2-D array, padding cells included.

    A 1-D array is drawn as one row. Cells are coloured by the first-level tile that holds them.

    >>> from hlo_layout.syntax import parse_shape
    >>> g = tile_grid(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    >>> [c.offset for c in g.cells[2]]
    [12, 13, 16, 17, 20, 21]
    """
    if shape.rank == 1:
        layout = shape.layout
        shape = ArrayShape(
            shape.element_type,
            (1, *shape.dims),
            (False, *shape.dynamic) if shape.dynamic else (),
            None if layout is None else replace(layout, minor_to_major=(1, 0), split_configs=()),
        )
    if shape.rank != 2:
        raise LayoutError(f"--grid draws 1-D and 2-D shapes; {shape} has rank {shape.rank}")
    tiles = shape_tiles(shape)
    axes = physical_axes(shape)
    phys = physical_dims(shape)
    steps = tiling_steps(phys, tiles)
    first = steps[0] if steps else None
    # The picture covers whole first-level tiles: each logical dimension at its padded size.
    extent = list(shape.dims)
    if first is not None and all(g == 1 for g in first.groups):
        padded = first.padded[first.leading_ones :]
        for pos, a in enumerate(axes):
            extent[a] = padded[pos]
    rows, columns = extent
    if rows * columns > max_cells:
        raise LayoutError(
            f"{shape} spans {rows}×{columns} cells with its padding; --grid draws at most "
            f"{max_cells}"
        )
    cells = []
    for r in range(rows):
        row = []
        for c in range(columns):
            e = tuple((r, c)[a] for a in axes)
            offset = linear_index_with_tile(e, phys, tiles, check=False)
            tile_id = 0
            if first is not None:
                n_outer = first.prefix_rank + len(first.tile)
                tile_id = linear_index(_forward(first, e)[:n_outer], first.after[:n_outer])
            padding = r >= shape.dims[0] or c >= shape.dims[1]
            row.append(GridCell(offset, tile_id, padding))
        cells.append(tuple(row))
    return Grid(rows, columns, shape.dims[0], shape.dims[1], tuple(cells))


__all__ = [
    "COMBINE",
    "UNBOUNDED",
    "Grid",
    "GridCell",
    "PadReshapeTranspose",
    "TileStep",
    "bounded_dims",
    "delinearize",
    "element_offset",
    "index_at",
    "index_at_offset",
    "linear_index",
    "linear_index_with_tile",
    "pad_reshape_transpose",
    "physical_axes",
    "physical_dims",
    "shape_tiles",
    "tile_grid",
    "tiled_dims",
    "tiled_elements",
    "tiling_steps",
]
