"""Axe layouts: the Axe document's examples, and backward ∘ forward = identity.

The examples (Hou et al. 2026, §Axe layout; notation as the TIRx documentation writes it):
- an 8×16 tile over 2 warps × 32 lanes × 2 registers, replicated over a second warp group and
  placed at warp offset 5: element (2,9) is at {warp:6, lane:8, reg:1} and {warp:10, lane:8, reg:1};
- a 64×128 matrix over a 2×2 GPU mesh, rows split over one mesh axis and columns over the other
  (split/split), or rows split and columns replicated (split/replicate).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.interop.axe import AxeLayout, HwCoord, Iter, parse_axe
from hlo_layout.interop.errors import InteropError

WARP_TILE = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + O[5@warp]"
SPLIT_SPLIT = "S[(2,32,2,64):(1@gpu_y,64@m,1@gpu_x,1@m)]"
SPLIT_REPLICATE = "S[(2,32,128):(1@gpu_y,128@m,1@m)] + R[2:1@gpu_x]"


def all_coords(layout: AxeLayout) -> itertools.product:
    return itertools.product(*(range(n) for n in layout.shape))


def test_warp_tile_example_element_2_9() -> None:
    layout = parse_axe(WARP_TILE, (8, 16))
    assert [c.as_dict() for c in layout.forward((2, 9))] == [
        {"warp": 6, "lane": 8, "reg": 1},
        {"warp": 10, "lane": 8, "reg": 1},
    ]


def test_warp_tile_example_fills_its_threads() -> None:
    # 128 elements on 2 warps × 32 lanes × 2 registers, once per replica: every (warp, lane, reg)
    # of warps 5-6 and 9-10 holds exactly one element.
    layout = parse_axe(WARP_TILE, (8, 16))
    places = [c.items for x in all_coords(layout) for c in layout.forward(x)]
    assert len(places) == len(set(places)) == 256
    warps = {dict(p)["warp"] for p in places}
    assert warps == {5, 6, 9, 10}
    assert {dict(p)["lane"] for p in places} == set(range(32))
    assert {dict(p)["reg"] for p in places} == {0, 1}


def test_warp_tile_prints_as_written() -> None:
    assert str(parse_axe(WARP_TILE, (8, 16))) == WARP_TILE


def gpu_blocks(layout: AxeLayout) -> dict[tuple[int, int], dict[tuple[int, int], int]]:
    """For each GPU (y, x): which element is at which memory offset."""
    out: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    for x in all_coords(layout):
        for c in layout.forward(x):
            d = c.as_dict()
            out.setdefault((d["gpu_y"], d["gpu_x"]), {})[x] = d["m"]
    return out


def test_mesh_split_split() -> None:
    layout = parse_axe(SPLIT_SPLIT, (64, 128))
    blocks = gpu_blocks(layout)
    assert sorted(blocks) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for (gy, gx), elements in blocks.items():
        # GPU (y, x) holds rows 32y.. and columns 64x.., row-major in its own 32×64 buffer.
        assert set(elements) == {
            (r, c) for r in range(32 * gy, 32 * gy + 32) for c in range(64 * gx, 64 * gx + 64)
        }
        assert all(m == (r % 32) * 64 + c % 64 for (r, c), m in elements.items())
    assert all(len(layout.forward(x)) == 1 for x in all_coords(layout))


def test_mesh_split_replicate() -> None:
    layout = parse_axe(SPLIT_REPLICATE, (64, 128))
    blocks = gpu_blocks(layout)
    for (gy, _gx), elements in blocks.items():
        assert set(elements) == {(r, c) for r in range(32 * gy, 32 * gy + 32) for c in range(128)}
        assert sorted(elements.values()) == list(range(32 * 128))
    assert all(len(layout.forward(x)) == 2 for x in all_coords(layout))


@pytest.mark.parametrize("text,shape", [(WARP_TILE, (8, 16)), (SPLIT_SPLIT, (64, 128)),
                                         (SPLIT_REPLICATE, (64, 128))])  # fmt: skip
def test_backward_inverts_forward_on_the_examples(text: str, shape: tuple[int, int]) -> None:
    layout = parse_axe(text, shape)
    for x in all_coords(layout):
        for c in layout.forward(x):
            assert layout.backward(c) == x


def test_backward_of_an_empty_place_is_none() -> None:
    layout = parse_axe(WARP_TILE, (8, 16))
    assert layout.backward({"warp": 0, "lane": 0, "reg": 0}) is None  # below the offset
    assert layout.backward({"warp": 7, "lane": 0, "reg": 0}) is None  # between the replicas
    assert layout.backward({"warp": 6, "lane": 8, "reg": 1, "gpu": 1}) is None  # unknown axis
    assert layout.backward(HwCoord((("warp", 6), ("lane", 8), ("reg", 1)))) == (2, 9)


def test_layout_checks_its_sizes() -> None:
    with pytest.raises(InteropError, match="hold"):
        AxeLayout((8, 16), (Iter(8, 1), Iter(8, 8)))
    with pytest.raises(InteropError):
        parse_axe("R[2:1@x]")
    with pytest.raises(InteropError):
        parse_axe(WARP_TILE, (8, 16)).forward((8, 0))


def test_json_keys() -> None:
    doc = parse_axe(WARP_TILE, (8, 16)).to_json()
    assert doc["shape"] == [8, 16]
    assert doc["D"][0] == {"extent": 8, "stride": 4, "axis": "lane"}
    assert doc["R"] == [{"extent": 2, "stride": 4, "axis": "warp"}]
    assert doc["O"] == {"warp": 5}
    assert doc["text"] == WARP_TILE


@st.composite
def axe_layouts(draw: st.DrawFn) -> AxeLayout:
    """Random layouts whose D is one-to-one on each axis and whose replicas lie beyond it."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    extents: list[int] = []
    for n in shape:  # split each dimension into factors
        rest = n
        parts = []
        for f in (2, 3, 5):
            while rest % f == 0 and draw(st.booleans()):
                parts.append(f)
                rest //= f
        parts.append(rest)
        extents += parts
    axes = [draw(st.sampled_from(["m", "lane", "warp"])) for _ in extents]
    strides = [0] * len(extents)
    span = {"m": 1, "lane": 1, "warp": 1}
    for k in draw(st.permutations(range(len(extents)))):  # positional strides, random order
        strides[k] = span[axes[k]] * draw(st.sampled_from([1, 1, 2]))
        span[axes[k]] = strides[k] * extents[k]
    replica = []
    for _ in range(draw(st.integers(0, 2))):
        axis = draw(st.sampled_from(["m", "lane", "warp", "gpu"]))
        extent = draw(st.integers(1, 3))
        replica.append(Iter(extent, span.get(axis, 1), axis))
        span[axis] = span.get(axis, 1) * extent
    offset = tuple(
        (a, draw(st.integers(0, 3))) for a in draw(st.sets(st.sampled_from(["m", "warp"])))
    )
    return AxeLayout(shape, tuple(Iter(e, s, a) for e, s, a in zip(extents, strides, axes)),
                     tuple(replica), tuple(sorted(offset)))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(axe_layouts())
def test_backward_inverts_forward(layout: AxeLayout) -> None:
    seen = set()
    for x in all_coords(layout):
        places = layout.forward(x)
        assert len(places) == layout.replicas
        for c in places:
            assert layout.backward(c) == x
            assert c.items not in seen
            seen.add(c.items)
    assert parse_axe(str(layout), layout.shape) == layout
