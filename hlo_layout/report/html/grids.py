"""Tile-grid pictures for the padding section: the data `layout --grid` draws, for a small
stand-in of a padded shape.

A real padded buffer (`bf16[3,1000]{1,0:T(8,128)(2,1)}`) has far too many elements to draw, so
the picture is of a 2-D array with the same element type and layout properties whose dims are
the shape's two most-minor physical dimensions cut to one whole tile plus the remainder (or to
the remainder alone when that is still too big). The remainder is what the tile pads, so the
picture shows the padding pattern exactly; the page names the stand-in shape it draws.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.tiling import MAX_GRID_CELLS, tile_grid
from hlo_layout.syntax.parse import parse_shape
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import COMBINE, ArrayShape


def _clip(size: int, tile: int, whole: bool) -> int:
    """A dimension cut to (one whole tile +) the remainder the tile pads."""
    if tile <= 0 or size <= (2 * tile if whole else tile):
        return size
    rest = size % tile or tile
    return tile + rest if whole else rest


def stand_in(shape: ArrayShape, whole: bool = True) -> ArrayShape:
    """The 1-D or 2-D array the picture draws for `shape` (see the module docstring)."""
    layout = shape.layout
    tile: tuple[int, ...] = layout.tiles[0].dims if layout is not None and layout.tiles else ()
    if COMBINE in tile:
        tile = ()
    t_col = tile[-1] if tile else 0
    t_row = tile[-2] if len(tile) >= 2 else 0
    if shape.rank == 0:
        dims: tuple[int, ...] = (1,)
    elif shape.rank == 1:
        dims = (_clip(shape.dims[0], t_col, whole),)
    else:
        m2m = layout.minor_to_major if layout is not None else tuple(range(shape.rank - 1, -1, -1))
        dims = (
            _clip(shape.dims[m2m[1]], t_row, whole),
            _clip(shape.dims[m2m[0]], t_col, whole),
        )
    m2m_new = tuple(range(len(dims) - 1, -1, -1))
    new_layout = (
        None
        if layout is None
        else replace(layout, minor_to_major=m2m_new, split_configs=(), physical_shape=None)
    )
    return ArrayShape(shape.element_type, dims, (), new_layout)


def pattern_picture(shape_text: str, max_cells: int = MAX_GRID_CELLS) -> dict[str, Any] | None:
    """`{"of", "shape", "rows", "columns", "logical_rows", "logical_columns", "offsets",
    "tiles"}` (row-major flat lists: each cell's offset in elements and its first-level tile) for
    the stand-in of `shape_text`, or None when no stand-in fits in `max_cells`."""
    try:
        shape = parse_shape(shape_text)
    except HloLayoutError:
        return None
    if not isinstance(shape, ArrayShape):
        return None
    # The shape itself when it is small and 1-D/2-D, else its stand-ins, largest first.
    candidates = [shape] if shape.rank in (1, 2) else []
    candidates += [stand_in(shape, True), stand_in(shape, False)]
    for picture in candidates:
        try:
            grid = tile_grid(picture, max_cells)
        except (HloLayoutError, ValueError, IndexError):
            continue
        return {
            "of": shape_text,
            "shape": print_shape(picture),
            "rows": grid.rows,
            "columns": grid.columns,
            "logical_rows": grid.logical_rows,
            "logical_columns": grid.logical_columns,
            "offsets": [c.offset for row in grid.cells for c in row],
            "tiles": [c.tile for row in grid.cells for c in row],
        }
    return None


__all__ = ["pattern_picture", "stand_in"]
