"""Tiled offsets: the tiled-layout document's worked examples, and the bijection law."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hlo_layout.layout import (
    LayoutError,
    element_offset,
    index_at,
    index_at_offset,
    linear_index_with_tile,
    pad_reshape_transpose,
    tile_grid,
    tiled_dims,
    tiling_steps,
)
from hlo_layout.syntax import COMBINE, ArrayShape, parse_shape


def offsets(shape_text: str) -> list[list[int]]:
    shape = parse_shape(shape_text)
    assert isinstance(shape, ArrayShape)
    rows, cols = shape.dims
    return [[element_offset(shape, (r, c)) for c in range(cols)] for r in range(rows)]


def test_figure_1_element_2_3_is_at_17() -> None:
    # docs/tiled_layout.md: linear_index_with_tile((2,3), (3,5), (2,2)) = 17.
    assert linear_index_with_tile((2, 3), (3, 5), [(2, 2)]) == 17
    assert element_offset(parse_shape("f32[3,5]{1,0:T(2,2)}"), (2, 3)) == 17
    assert index_at_offset(17, (3, 5), [(2, 2)]) == (2, 3)


def test_figure_1_tiles_and_padding() -> None:
    # Figure 1: 2x2 tiles laid out row-major, each tile row-major inside; [3,5] pads to [4,6].
    grid = tile_grid(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    assert (grid.rows, grid.columns) == (4, 6)
    got = [[c.offset for c in row] for row in grid.cells]
    assert got[0][:2] == [0, 1] and got[1][:2] == [2, 3]  # tile (0,0)
    assert got[0][2:4] == [4, 5]  # tile (0,1) follows tile (0,0)
    assert got[2][0] == 4 * 3  # the second tile row starts after three 2x2 tiles
    padding = {(r, c) for r in range(4) for c in range(6) if grid.cells[r][c].padding}
    assert padding == {(r, 5) for r in range(4)} | {(3, c) for c in range(6)}


def test_figure_2_numbers() -> None:
    # Figure 2: a 4x8 array tiled (2,4) then (2,1); consecutive offsets pair rows 2k and 2k+1 of
    # one column, walking the 2x4 tile column by column, tiles in row-major order.
    got = offsets("f32[4,8]{1,0:T(2,4)(2,1)}")
    for r in range(4):
        for c in range(8):
            tile = (r // 2) * 2 + c // 4
            assert got[r][c] == tile * 8 + (c % 4) * 2 + r % 2
    assert got[0] == [0, 2, 4, 6, 8, 10, 12, 14]
    assert got[3] == [17, 19, 21, 23, 25, 27, 29, 31]


def test_doc_second_tile_over_tile_counts_is_51() -> None:
    # docs: an 8x8 array tiled (2,4)(2,1,1,1); the element at (6,5) lands at 51.
    assert linear_index_with_tile((6, 5), (8, 8), [(2, 4), (2, 1, 1, 1)]) == 51


def test_bf16_packing_order() -> None:
    # (8,128)(2,1): one element of an even row and the one below it form one 32-bit word.
    shape = parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}")
    assert isinstance(shape, ArrayShape)
    for r in range(0, 16, 2):
        for c in range(256):
            low = element_offset(shape, (r, c))
            assert low % 2 == 0
            assert element_offset(shape, (r + 1, c)) == low + 1
    assert element_offset(shape, (0, 1)) == 2  # the next column follows the pair
    assert element_offset(shape, (0, 128)) == 8 * 128  # then the next (8,128) tile


def test_combine_dims_example() -> None:
    # docs: f32[2,7,8,11,10] with (*,*,2,*,3) is tiled as f32[112,110] by (2,3).
    assert tiled_dims((2, 7, 8, 11, 10), [(COMBINE, COMBINE, 2, COMBINE, 3)]) == (56, 37, 2, 3)
    e = (1, 6, 7, 10, 9)
    merged = (((1 * 7 + 6) * 8 + 7), 10 * 10 + 9)
    assert linear_index_with_tile(e, (2, 7, 8, 11, 10), [(COMBINE, COMBINE, 2, COMBINE, 3)]) == (
        linear_index_with_tile(merged, (112, 110), [(2, 3)])
    )


def test_tile_longer_than_array_pads_unit_dims() -> None:
    # s32[]{:T(128)} holds 128 slots; the nested rule gives a scalar (512)(2,1) 1024 slots.
    assert math.prod(tiled_dims((), [(128,)])) == 128
    assert math.prod(tiled_dims((), [(512,), (2, 1)])) == 1024


def test_physical_order_follows_minor_to_major() -> None:
    row_major = parse_shape("f32[2,3]{1,0}")
    column_major = parse_shape("f32[2,3]{0,1}")
    assert isinstance(row_major, ArrayShape) and isinstance(column_major, ArrayShape)
    assert element_offset(row_major, (1, 0)) == 3
    assert element_offset(column_major, (1, 0)) == 1
    assert index_at(column_major, 1) == (1, 0)


@pytest.mark.parametrize(
    ("dims", "tiles"),
    [((3, 5), [(2, 2)]), ((3,), [(8, 128)]), ((4,), [(COMBINE,)])],
)
def test_bad_input_raises_layout_error(dims: tuple[int, ...], tiles: list) -> None:
    with pytest.raises(LayoutError):
        linear_index_with_tile((9,) * len(dims), dims, tiles)


# --- the law: linear_index_with_tile is a bijection onto the non-padding offsets -------------


@st.composite
def tilings(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    rank = draw(st.integers(0, 3))
    dims = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    levels = []
    current_rank = rank
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(1, current_rank + 1))
        tile = draw(
            st.lists(st.sampled_from([1, 2, 3, 4, 8, COMBINE]), min_size=k, max_size=k).filter(
                lambda t: t[-1] != COMBINE
            )
        )
        levels.append(tuple(tile))
        current_rank = len(tiling_steps(dims, levels)[-1].after)
    return dims, tuple(levels)


@settings(max_examples=300, deadline=None)
@given(tilings())
def test_linear_index_with_tile_is_a_bijection_onto_non_padding(case) -> None:
    dims, tiles = case
    total = math.prod(tiled_dims(dims, tiles))
    assume(total <= 20_000)
    elements = list(itertools.product(*(range(n) for n in dims)))
    seen = {}
    for e in elements:
        offset = linear_index_with_tile(e, dims, tiles)
        assert 0 <= offset < total
        assert offset not in seen, f"{e} and {seen[offset]} share offset {offset}"
        seen[offset] = e
        assert index_at_offset(offset, dims, tiles) == e
    # Every other slot of the buffer is padding: the inverse says so.
    for offset in range(total):
        if offset not in seen:
            assert index_at_offset(offset, dims, tiles) is None
    assert len(seen) == math.prod(dims)


def test_pad_reshape_transpose_view() -> None:
    # docs "Tiling as pad-reshape-transpose": [3,5] by (2,2) → pad [4,6] → [2,2,3,2] → [2,3,2,2].
    (step,) = pad_reshape_transpose((3, 5), [(2, 2)])
    assert (step.padded, step.reshaped, step.transposed) == ((4, 6), (2, 2, 3, 2), (2, 3, 2, 2))
    steps = pad_reshape_transpose((3, 5), [(8, 128), (2, 1)])
    assert steps[-1].transposed == tiled_dims((3, 5), [(8, 128), (2, 1)])
    for s in steps:
        assert math.prod(s.padded) == math.prod(s.reshaped) == math.prod(s.transposed)
