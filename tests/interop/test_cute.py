"""CuTe/TLA layouts: the TLA document's examples, and XLA layouts written as CuTe layouts.

The defining law: for every coordinate, the CuTe layout's offset equals the layout engine's
(LayoutUtil::LinearIndexForNestedTiling, `element_offset` / `linear_index_with_tile`); for random
shapes and tilings (Hypothesis) and for every distinct layout in the corpus. Where pycute (from
the `nvidia-cutlass` wheel) is installed, our strings are read back by pycute and its `crd2idx`
must give the same offsets.
"""

from __future__ import annotations

import itertools
import random
from functools import cache
from typing import Any

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from hlo_layout.interop.cute import (
    CuteLayout,
    column_major,
    crd2offset,
    cute_layout,
    depth,
    idx2crd,
    make_layout_tile,
    nN,
    nZ,
    parse_cute,
    parse_int_tuple,
    rank,
    row_major,
    zN,
    zZ,
)
from hlo_layout.interop.errors import InteropError
from hlo_layout.layout import element_offset, linear_index_with_tile, physical_axes, physical_dims
from hlo_layout.layout.tiling import shape_tiles, tiled_elements
from hlo_layout.syntax import COMBINE, ArrayShape, Layout, Tile, parse_shape
from tests.support import corpus_modules, hlo_files

# --- the TLA document (CATLASS docs/2_Design/02_tla/01_layout.md) ------------------------------

#: The document's zN table: an 8×12 matrix in 4×4 blocks, offset of each (row, column).
TLA_ZN_TABLE = [
    [0, 1, 2, 3, 32, 33, 34, 35, 64, 65, 66, 67],
    [4, 5, 6, 7, 36, 37, 38, 39, 68, 69, 70, 71],
    [8, 9, 10, 11, 40, 41, 42, 43, 72, 73, 74, 75],
    [12, 13, 14, 15, 44, 45, 46, 47, 76, 77, 78, 79],
    [16, 17, 18, 19, 48, 49, 50, 51, 80, 81, 82, 83],
    [20, 21, 22, 23, 52, 53, 54, 55, 84, 85, 86, 87],
    [24, 25, 26, 27, 56, 57, 58, 59, 88, 89, 90, 91],
    [28, 29, 30, 31, 60, 61, 62, 63, 92, 93, 94, 95],
]


def table(layout: CuteLayout, rows: int, cols: int) -> list[list[int]]:
    return [[layout((r, c)) for c in range(cols)] for r in range(rows)]


def test_tla_make_layout_examples_print_as_the_document() -> None:
    w2xh4 = CuteLayout((2, 4), (12, 1))
    w32xh48 = CuteLayout(((16, 2), (16, 3)), ((16, 256), (1, 512)))
    assert str(w2xh4) == "(2,4):(12,1)"
    assert str(w32xh48) == "((16,2),(16,3)):((16,256),(1,512))"
    # CuTe prints static integers as `_2`; the document writes `(_2,4):(_12,_1)`.
    assert parse_cute("(_2,4):(_12,_1)") == w2xh4


def test_tla_row_and_column_major_tables() -> None:
    assert str(row_major(2, 3)) == "(2,3):(3,1)"
    assert table(row_major(2, 3), 2, 3) == [[0, 1, 2], [3, 4, 5]]
    assert str(column_major(2, 3)) == "(2,3):(1,2)"
    assert table(column_major(2, 3), 2, 3) == [[0, 2, 4], [1, 3, 5]]


def test_tla_zn_example_reproduces_its_table() -> None:
    layout = zN(8, 12, c0=4, fractal_rows=4)
    assert str(layout) == "((4,2),(4,3)):((4,16),(1,32))"
    assert table(layout, 8, 12) == TLA_ZN_TABLE


def test_tla_crd2offset_1_5_is_37() -> None:
    shape, stride = ((4, 2), (4, 3)), ((4, 16), (1, 32))
    assert crd2offset((1, 5), shape, stride) == 37
    assert parse_cute("((4,2),(4,3)):((4,16),(1,32))")(1, 5) == 37


def test_tla_make_layout_tile_keeps_strides_and_cuts_shapes() -> None:
    a = parse_cute("((4,2),(4,3)):((4,16),(1,32))")
    assert str(make_layout_tile(a, (4, 4))) == "((4,1),(4,1)):((4,16),(1,32))"
    # A depth-1 layout takes the new shape as it is (TLA's first branch).
    assert make_layout_tile(row_major(8, 8), (2, 3)) == CuteLayout((2, 3), (8, 1))
    # The tile's offsets are the big layout's offsets of the same coordinates.
    tile = make_layout_tile(a, (8, 8))
    assert all(tile((r, c)) == a((r, c)) for r in range(8) for c in range(8))


def test_tla_accessors() -> None:
    a = parse_cute("((4,2),(4,3)):((4,16),(1,32))")
    assert (a.rank, a.depth, a.size, a.cosize) == (2, 2, 96, 96)
    assert a.get(1) == CuteLayout((4, 3), (1, 32))
    assert a.get(0, 1) == CuteLayout(2, 16)
    assert (a.get(1, 0).shape, a.get(1, 0).stride) == (4, 1)
    assert (rank(5), depth(5), rank((1, (2, 3))), depth((1, (2, 3)))) == (1, 0, 2, 2)
    with pytest.raises(InteropError):
        a.get(2)
    with pytest.raises(InteropError):
        CuteLayout((2, 3), (1,))


def test_idx2crd_is_colexicographic() -> None:
    shape = ((4, 2), (4, 3))
    for i in range(96):
        crd = idx2crd(i, shape)
        # first sub-mode fastest: i = c00 + 4·c01 + 8·c10 + 32·c11
        assert crd[0][0] + 4 * crd[0][1] + 8 * crd[1][0] + 32 * crd[1][1] == i


def test_ascend_formats_are_one_to_one_on_their_padded_blocks() -> None:
    for make in (zN, zZ, nZ, nN):
        for rows, cols in ((32, 48), (17, 5), (16, 16)):
            layout = make(rows, cols, element_bytes=2)
            offsets = sorted(layout(c) for c in range(layout.size))
            assert offsets == list(range(layout.size)), (make.__name__, rows, cols)


@pytest.mark.parametrize("rows,cols", [(32, 48), (16, 16), (17, 5), (40, 8)])
def test_xla_tiled_layouts_are_the_ascend_zz_and_nn_formats(rows: int, cols: int) -> None:
    # zZ: 16×16 fractals row-major inside and between = XLA {1,0:T(16,16)}; nN: column-major
    # inside and between = XLA {0,1:T(16,16)} (tiles over the (column, row) physical order).
    zz = cute_layout(parse_shape(f"f16[{rows},{cols}]{{1,0:T(16,16)}}"))
    nn = cute_layout(parse_shape(f"f16[{rows},{cols}]{{0,1:T(16,16)}}"))
    assert zz == zZ(rows, cols, element_bytes=2)
    assert nn == nN(rows, cols, element_bytes=2)


def test_docs_figure_1_as_a_cute_layout() -> None:
    # tiled_layout.md Figure 1: f32[3,5] tiled (2,2); element (2,3) is at 17.
    layout = cute_layout(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    assert str(layout) == "((2,2),(2,3)):((2,12),(1,4))"
    assert layout((2, 3)) == 17


def test_untiled_layouts_are_plain_strides() -> None:
    assert str(cute_layout(parse_shape("f32[2,3,4]{2,1,0}"))) == "(2,3,4):(12,4,1)"
    assert str(cute_layout(parse_shape("f32[2,3,4]{0,1,2}"))) == "(2,3,4):(1,2,6)"
    assert str(cute_layout(parse_shape("f32[]"))) == "():()"


def test_layouts_without_a_shape_stride_form_say_so() -> None:
    # The tiled-layout document's `*` example merges (11,10) into 110 and tiles it by 3: the
    # inner index (11·x3 + x4) mod 3 mixes two coordinates.
    with pytest.raises(InteropError, match="merged"):
        cute_layout(parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"))
    with pytest.raises(InteropError):
        cute_layout(parse_shape("f32[3,5]{1,0:T(4)(3)}"))


def test_parse_int_tuple_reads_every_spelling() -> None:
    assert parse_int_tuple("((4, 2), (4, 3))") == ((4, 2), (4, 3))
    assert parse_int_tuple("(8,)") == (8,)
    assert parse_int_tuple("_4") == 4
    for bad in ("((4,2)", "4)", "(4,2) 3", "(a)"):
        with pytest.raises(InteropError):
            parse_int_tuple(bad)


# --- the law: CuTe offset == XLA's nested-tiling offset ----------------------------------------


def padded_coords(layout: CuteLayout, shape: ArrayShape) -> itertools.product:
    extents = layout.mode_extents() if shape.rank else ()
    return itertools.product(*(range(e) for e in extents))


def check_layout(shape: ArrayShape, coords: list[tuple[int, ...]] | None = None) -> CuteLayout:
    """Offsets over the logical array (exactly), and over the padded extents (against
    linear_index_with_tile with its bounds check off); coordinate() inverts them."""
    layout = cute_layout(shape)
    logical = coords or list(itertools.product(*(range(d) for d in shape.dims)))
    for x in logical:
        assert layout(x) == element_offset(shape, x), (str(shape), x)
    if coords is not None:
        return layout
    # With a `*` merge, XLA's index past the end of the merged minor dimension rolls over into
    # the major one, so padded coordinates only compare with XLA when nothing is merged.
    merges = any(t.has_combine for t in shape_tiles(shape))
    axes, dims, tiles = physical_axes(shape), physical_dims(shape), shape_tiles(shape)
    for x in padded_coords(layout, shape):
        offset = layout(x)
        if not merges:
            e = tuple(x[a] for a in axes)
            assert offset == linear_index_with_tile(e, dims, tiles, check=False), (str(shape), x)
        assert layout.coordinate(offset) == x
    if tiled_elements(shape) == shape.num_elements:  # padding-free: onto [0, size)
        assert sorted(layout(x) for x in logical) == list(range(layout.size))
    return layout


@st.composite
def tiled_shapes(draw: st.DrawFn, *, entries: list[int]) -> ArrayShape:
    rank = draw(st.integers(0, 4))
    dims = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, rank + 1))
        tile = draw(st.lists(st.sampled_from(entries), min_size=n, max_size=n))
        if tile[-1] == COMBINE:
            tile[-1] = 2
        tiles.append(Tile(tuple(tile)))
    return ArrayShape("f32", dims, layout=Layout(m2m, tuple(tiles)))


def small_enough(shape: ArrayShape) -> bool:
    try:
        layout = cute_layout(shape)
    except InteropError:
        return True
    return layout.size <= 6000


@settings(max_examples=300, deadline=None)
@given(tiled_shapes(entries=[1, 2, 4, 8]))
def test_power_of_two_tilings_always_have_a_cute_form(shape: ArrayShape) -> None:
    assume(small_enough(shape))
    note(str(shape))
    check_layout(shape)


@settings(max_examples=300, deadline=None)
@given(tiled_shapes(entries=[1, 2, 3, 4, 6, COMBINE]))
def test_any_tiling_with_a_cute_form_matches_xla(shape: ArrayShape) -> None:
    assume(small_enough(shape))
    note(str(shape))
    try:
        check_layout(shape)
    except InteropError:
        # No shape:stride form: then some tile must split a dimension unevenly (a tile entry
        # that does not divide, or is not divided by, what it splits) or pad inside a `*` merge.
        assert any(
            COMBINE in t.dims or any(e in (3, 6) for e in t.dims) for t in shape_tiles(shape)
        )


@cache
def corpus_layouts() -> tuple[ArrayShape, ...]:
    """Every distinct (dims, minor_to_major, tiles) of an array in the corpus dumps."""
    seen: dict[object, ArrayShape] = {}
    for path in hlo_files():
        for module in corpus_modules(path):
            for computation in module.computations:
                for instruction in computation.instructions:
                    for _, leaf in instruction.shape.leaves():
                        if leaf.layout is None or leaf.is_unbounded:
                            continue
                        key = (leaf.dims, leaf.layout.minor_to_major, leaf.layout.tiles)
                        seen.setdefault(key, leaf)
    return tuple(seen.values())


def sample_coords(shape: ArrayShape, layout: CuteLayout, rng: random.Random) -> list:
    """All coordinates of a small array; for a big one, per dimension the values around every
    sub-mode boundary (where a tile or tile count steps), both ends and a few random ones."""
    if shape.num_elements <= 4096:
        return list(itertools.product(*(range(d) for d in shape.dims)))
    per_dim = []
    for i, d in enumerate(shape.dims):
        mode = layout.get(i).shape
        sizes = mode if isinstance(mode, tuple) else (mode,)
        values = {0, d - 1, *(rng.randrange(d) for _ in range(3))}
        p = 1
        for s in sizes[:-1]:
            p *= s
            values |= {x for x in (p - 1, p, p + 1, 2 * p - 1, 2 * p) if 0 <= x < d}
        per_dim.append(sorted(values))
    coords = list(itertools.product(*per_dim))
    return coords if len(coords) <= 2000 else rng.sample(coords, 2000)


def test_every_corpus_layout_matches_xla() -> None:
    layouts = corpus_layouts()
    assert len(layouts) > 800  # the corpus has 859 distinct array layouts; all have a CuTe form
    rng = random.Random(5)
    tiled = 0
    for shape in layouts:
        layout = cute_layout(shape)
        coords = sample_coords(shape, layout, rng)
        for x in coords:
            assert layout(x) == element_offset(shape, x), (str(shape), x)
        tiled += bool(shape_tiles(shape))
    assert tiled > 100


def test_small_tiled_corpus_layouts_match_over_their_padded_extents() -> None:
    checked = 0
    for shape in corpus_layouts():
        if shape_tiles(shape) and cute_layout(shape).size <= 8192:
            check_layout(shape)
            checked += 1
    assert checked > 50


# --- pycute as the oracle ----------------------------------------------------------------------


def pycute_layout(text: str) -> Any:
    """Our string read back into a pycute.Layout."""
    pycute = pytest.importorskip("pycute")
    layout = parse_cute(text)
    return pycute.Layout(layout.shape, layout.stride)


def pycute_spelling(text: str) -> str:
    """pycute prints Python tuples: `((4, 2), (4, 3)):((4, 16), (1, 32))`, `(8,):(1,)`."""
    return text.replace(", ", ",").replace(",)", ")")


def test_pycute_reads_our_strings_and_agrees_on_the_tla_example() -> None:
    ours = "((4,2),(4,3)):((4,16),(1,32))"
    theirs = pycute_layout(ours)
    assert pycute_spelling(str(theirs)) == ours
    assert theirs((1, 5)) == 37
    for r, c in itertools.product(range(8), range(12)):
        assert theirs((r, c)) == TLA_ZN_TABLE[r][c]


def test_pycute_crd2idx_agrees_on_every_corpus_layout() -> None:
    pycute = pytest.importorskip("pycute")
    rng = random.Random(7)
    for shape in corpus_layouts():
        ours = cute_layout(shape)
        theirs = pycute_layout(str(ours))
        assert pycute_spelling(str(theirs)) == str(ours)
        for x in sample_coords(shape, ours, rng)[:200]:
            assert pycute.crd2idx(x, theirs.shape, theirs.stride) == ours(x), (str(shape), x)


@settings(max_examples=200, deadline=None)
@given(tiled_shapes(entries=[1, 2, 4, 8]))
def test_pycute_crd2idx_agrees_on_random_tilings(shape: ArrayShape) -> None:
    pycute = pytest.importorskip("pycute")
    assume(small_enough(shape))
    ours = cute_layout(shape)
    theirs = pycute_layout(str(ours))
    for x in padded_coords(ours, shape):
        assert pycute.crd2idx(x, theirs.shape, theirs.stride) == ours(x)
