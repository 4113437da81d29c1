"""Physical indexing: element offsets through minor_to_major and tiles, and XLA's physical-layout
helper (its test cases run in test_conformance.py)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.indexing.map import IndexingMap, compose, evaluate_domain, evaluate_map
from hlo_layout.indexing.physical import element_offset_map, physical_operand_indexing
from hlo_layout.indexing.rules import OpContext, output_to_input
from hlo_layout.indexing.rules.shapes import logical_to_physical, physical_to_logical
from hlo_layout.indexing.simplify import simplify
from hlo_layout.layout.tiling import element_offset
from hlo_layout.syntax import parse, parse_file, parse_shape
from hlo_layout.syntax.shape import ArrayShape
from tests.support import hlo_files


def offsets(shape_text: str) -> dict[tuple[int, ...], int]:
    m = element_offset_map(parse_shape(shape_text))  # type: ignore[arg-type]
    points, results = evaluate_domain(m)
    return {tuple(int(x) for x in p): int(r[0]) for p, r in zip(points, results)}


def test_tiled_layout_document_figure_1() -> None:
    # docs/tiled_layout.md, Figure 1: f32[3,5] tiled by (2,2); element (2, 3) sits at 17.
    assert offsets("f32[3,5]{1,0:T(2,2)}")[(2, 3)] == 17


def test_untiled_minor_to_major() -> None:
    got = offsets("f32[2,3]{0,1}")
    assert got == {(i, j): j * 2 + i for i in range(2) for j in range(3)}


@st.composite
def tiled_shapes(draw: st.DrawFn) -> str:
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 5)) for _ in range(rank)]
    m2m = draw(st.permutations(range(rank)))
    tiles = []
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(1, 3))
        entries = [str(draw(st.integers(1, 4))) for _ in range(k)]
        if k > 1 and draw(st.booleans()):
            entries[0] = "*"
        tiles.append("(" + ",".join(entries) + ")")
    tail = (":T" + "".join(tiles)) if tiles else ""
    return f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}{tail}}}"


@settings(max_examples=200, deadline=None)
@given(text=tiled_shapes())
def test_offsets_agree_with_the_layout_engine(text: str) -> None:
    """Our symbolic offsets equal hlo_layout.layout's element_offset at every index."""
    shape = parse_shape(text)
    got = offsets(text)
    for index in itertools.product(*(range(n) for n in shape.dims)):  # type: ignore[union-attr]
        assert got[index] == element_offset(shape, index), (text, index)  # type: ignore[arg-type]


def test_physical_permutations_are_inverse() -> None:
    # indexing.md §(e): for f32[10,20,30]{1,0,2} the physical order is (2, 0, 1) and the
    # physical shape [30, 10, 20].
    shape = parse_shape("f32[10,20,30]{1,0,2}")
    to_phys = logical_to_physical(shape)  # type: ignore[arg-type]
    to_logical = physical_to_logical(shape)  # type: ignore[arg-type]
    assert [v.bounds.hi + 1 for v in to_logical.dims] == [30, 10, 20]
    assert evaluate_map(to_phys, (1, 2, 3)) == (3, 1, 2)
    round_trip = simplify(compose(to_phys, to_logical))
    assert round_trip == IndexingMap.identity(shape.dims)  # type: ignore[union-attr]


def test_operand_offsets_of_a_transpose() -> None:
    module = parse(
        "ENTRY e {\n  p0 = f32[4,6]{0,1} parameter(0)\n"
        "  ROOT t = f32[6,4]{1,0} transpose(p0), dimensions={1,0}\n}\n"
    )
    comp = module.entry
    assert comp is not None
    p0 = comp["p0"].shape
    (oi,) = output_to_input(OpContext(comp["t"], comp, module)).maps[0]
    physical = physical_operand_indexing(oi, p0)  # type: ignore[arg-type]
    assert physical.map.num_results == 1
    for a, b in itertools.product(range(6), range(4)):
        # Output (a, b) reads p0 (b, a), stored column-major.
        assert evaluate_map(physical.map, (a, b)) == (element_offset(p0, (b, a)),)  # type: ignore[arg-type]


def test_every_corpus_layout_has_offsets() -> None:
    """Every array layout printed in the corpus (tiles, `*`, memory spaces) gives an offset map
    that agrees with the layout engine at the first and the last index."""
    checked = 0
    for p in hlo_files():
        module = parse_file(p)
        shapes = {i.shape for c in module.computations for i in c.instructions}
        for shape in shapes:
            if not isinstance(shape, ArrayShape) or shape.is_dynamic or shape.num_elements == 0:
                continue
            m = element_offset_map(shape)
            corner = tuple(n - 1 for n in shape.dims)
            for index in (tuple(0 for _ in shape.dims), corner):
                assert evaluate_map(m, index)[0] == element_offset(shape, index), shape
            checked += 1
    assert checked > 100
