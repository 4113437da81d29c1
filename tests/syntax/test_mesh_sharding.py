"""Mesh (Shardy named) shardings: decoded to the tile assignment XLA's
NamedSharding::ToTileAssignment gives, checked against the meaning of the named form itself."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloSemanticError
from hlo_layout.interop.sharding_axe import shard_array
from hlo_layout.syntax import parse_shape
from hlo_layout.syntax.sharding import (
    MAXIMAL,
    NAMED,
    REPLICATED,
    TILED,
    UNREDUCED,
    parse_sharding,
    tile_form,
)

#: Spellings from XLA's tests (xla-tests corpus, named_sharding_test.cc) and what they stand for,
#: by NamedSharding::ToTileAssignment's rules.
CASES = {
    "{mesh['x'=2,'y'=2] [{'x'}, {'y'}]}": "{devices=[2,2]<=[4]}",
    "{mesh['x'=2,'y'=2], [{'y'}, {'x'}]}": "{devices=[2,2]<=[2,2]T(1,0)}",
    "{mesh['replica'=4], [{}, {}]}": "{replicated}",
    "{mesh['a'=2,'b'=8], replicated}": "{replicated}",
    "{mesh['a'=2,'b'=8], manual}": "{manual}",
    "{mesh['a'=2,'b'=8], unreduced}": "{unreduced}",
    "{maximal_mesh[device_id=5]}": "{maximal device=5}",
    "{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{'x'}, {}], replicated={'y'}}": (
        "{devices=[2,1,2]3,2,1,0 last_tile_dim_replicate}"
    ),
    "{mesh['x'=8] [{'x':(1)2, 'x':(4)2}, {}]}": (
        "{devices=[4,1,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}"
    ),
    "{mesh['x'=2,'y'=2] [{?},{'x'}], unreduced={'y'}}": (
        "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}"
    ),
    "{mesh['a'=2,'b'=8,'c'=4], [], unreduced=max{'a', 'b':(4)2}}": (
        "{devices=[4,16]<=[2,4,2,4]T(0,2,1,3) last_tile_dims={unreduced, replicated}}"
    ),
}


@pytest.mark.parametrize("text", list(CASES))
def test_mesh_shardings_decode(text: str) -> None:
    s = parse_sharding(text)
    assert tile_form(s) == CASES[text]
    assert str(s) == text  # prints as written (NamedSharding::ToString)


def test_manual_axes_say_what_is_not_shown() -> None:
    s = parse_sharding("{mesh['a'=2,'b'=4], [{'a'}], manual={'b'}}")
    assert s.kind == NAMED and s.reason and "manual axes" in s.reason
    array = shard_array(parse_shape("f32[8]"), s, num_devices=8)
    assert array.note == s.reason and not array.shards


def test_unknown_axis_is_an_input_error() -> None:
    with pytest.raises(HloSemanticError, match="axis 'z' is not in the mesh"):
        parse_sharding("{mesh['x'=2], [{'z'}]}")


@st.composite
def meshes(draw: st.DrawFn) -> tuple[str, list[int], list[int] | None, list[list[tuple]], list]:
    """A mesh, optional device ids, dimension axis sets (some split into sub-axes) and
    replicated/unreduced axes, every axis piece used at most once."""
    sizes = draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=3))
    pieces = []
    for i, n in enumerate(sizes):
        if n == 4 and draw(st.booleans()):
            pieces += [(i, 1, 2), (i, 2, 2)]
        else:
            pieces.append((i, 1, n))
    pieces = draw(st.permutations(pieces))
    rank = draw(st.integers(1, 3))
    dims: list[list[tuple]] = [[] for _ in range(rank)]
    unreduced: list[tuple] = []
    for p in pieces:
        where = draw(st.integers(-2, rank - 1))
        if where >= 0:
            dims[where].append(p)
        elif where == -1:
            unreduced.append(p)
    ids = draw(st.one_of(st.none(), st.permutations(range(math.prod(sizes)))))
    return sizes, ids, dims, unreduced


def _axis_text(p: tuple, sizes: list[int]) -> str:
    i, pre, size = p
    name = "xyz"[i]
    return f"'{name}'" if (pre, size) == (1, sizes[i]) else f"'{name}':({pre}){size}"


@settings(max_examples=300, deadline=None)
@given(meshes())
def test_decoded_tiles_are_the_named_meaning(case) -> None:
    """Each device's tile, read from the decoded tile assignment, is the tile its mesh
    coordinates name: along a dimension split over axes a1, a2, ... (a1 major) the tile index is
    the mixed-radix number of the device's coordinates on those axes (a sub-axis `x:(p)s` of an
    axis of size n reads (coordinate on x // (n / (p·s))) mod s: p is the size major to it)."""
    sizes, ids, dims, unreduced = case
    mesh = "mesh[" + ",".join(f"'{'xyz'[i]}'={n}" for i, n in enumerate(sizes)) + "]"
    if ids is not None:
        mesh += ", device_ids=(" + ",".join(map(str, ids)) + ")"
    sets = ", ".join("{" + ", ".join(_axis_text(p, sizes) for p in d) + "}" for d in dims)
    text = "{" + mesh + ", [" + sets + "]"
    if unreduced:
        text += ", unreduced={" + ", ".join(_axis_text(p, sizes) for p in unreduced) + "}"
    text += "}"
    s = parse_sharding(text)
    if not any(dims) and not unreduced:
        assert s.kind == REPLICATED
        return
    assert s.kind == TILED, text
    ta = s.tile_assignment
    assert ta is not None
    where: dict[int, tuple[int, ...]] = {}
    for idx in itertools.product(*(range(n) for n in ta.dims)):
        where[ta.device_at(idx)] = idx
    assert sorted(where) == list(range(math.prod(sizes)))
    for flat, coords in enumerate(itertools.product(*(range(n) for n in sizes))):
        device = ids[flat] if ids is not None else flat

        def index(axes: list[tuple], coords: tuple[int, ...] = coords) -> int:
            out = 0
            for i, pre, size in axes:
                minor = sizes[i] // (pre * size)  # a sub-axis' pre-size is what is major to it
                out = out * size + (coords[i] // minor) % size
            return out

        expected = [index(d) for d in dims] + ([index(unreduced)] if unreduced else [])
        assert list(where[device][: len(expected)]) == expected, (text, device)
    if unreduced:
        assert UNREDUCED in s.subgroup_types


def test_maximal_mesh_is_maximal() -> None:
    s = parse_sharding("{maximal_mesh[device_id=3]}")
    assert (s.kind, s.device) == (MAXIMAL, 3)


@pytest.mark.parametrize("comma", [",", ""])
def test_iota_device_ids_read_by_both_parse_tiers(comma: str) -> None:
    """XLA prints a mesh's device_ids as `([4,16]T(1,0))` (an iota with no tile dims) and reads
    it with or without the comma after it; the grammar must too, with the scanner agreeing."""
    from hlo_layout.syntax import parse

    sharding = f"{{mesh['x'=4,'y'=16], device_ids=([4,16]T(1,0)){comma} [{{'x'}}, {{'y'}}]}}"
    root = f"ROOT p = f32[8,8]{{1,0}} parameter(0), sharding={sharding}"
    text = f"HloModule m\n\nENTRY e {{\n  {root}\n}}\n"
    fast = parse(text)
    slow = parse(text, engine="lark")
    assert fast == slow
    decoded = parse_sharding(sharding)
    want = tuple(j * 16 + i for i in range(16) for j in range(4))  # iota [4,16] transposed
    assert tile_form(decoded) == "{devices=[4,16]" + ",".join(map(str, want)) + "}"
