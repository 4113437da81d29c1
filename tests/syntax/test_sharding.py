"""`sharding=` decoding: every sharding string in the corpus, XLA's own spellings, and errors."""

from __future__ import annotations

import math
from functools import cache

import pytest

from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax.sharding import (
    MAXIMAL,
    NAMED,
    REPLICATED,
    TILED,
    TUPLE,
    UNPARSED,
    Sharding,
    TileAssignment,
    instruction_sharding,
    parse_sharding,
)
from tests.support import corpus_modules, hlo_files


@cache
def corpus_shardings() -> dict[str, int]:
    """Every distinct `sharding=` text in the corpus, with how often it occurs."""
    out: dict[str, int] = {}
    for path in hlo_files():
        for module in corpus_modules(path):
            for computation in module.computations:
                for instruction in computation.instructions:
                    attr = instruction.attr("sharding")
                    if attr is not None:
                        out[attr.raw] = out.get(attr.raw, 0) + 1
    return out


def leaves(s: Sharding) -> list[Sharding]:
    return [x for e in s.elements for x in leaves(e)] if s.kind == TUPLE else [s]


def test_every_corpus_sharding_decodes_and_prints_back() -> None:
    texts = corpus_shardings()
    assert len(texts) >= 20 and sum(texts.values()) > 400
    kinds = set()
    for text in texts:
        s = parse_sharding(text)
        assert s.kind not in (UNPARSED, NAMED), text
        assert str(s) == text  # HloSharding::ToString's spelling, /*index=5*/ comments included
        for leaf in leaves(s):
            kinds.add(leaf.kind)
            if leaf.kind == TILED:
                ta = leaf.tile_assignment
                assert ta is not None
                devices = ta.device_list()
                assert sorted(devices) == list(range(ta.num_tiles)), text
                assert math.prod(leaf.tile_dims) * math.prod(leaf.subgroup_dims) == ta.num_tiles
    assert {REPLICATED, TILED} <= kinds


def test_corpus_tuple_shardings_match_their_tuple_shapes() -> None:
    checked = 0
    for path in hlo_files():
        for module in corpus_modules(path):
            for computation in module.computations:
                for instruction in computation.instructions:
                    s = instruction_sharding(instruction)
                    if s is not None and s.kind == TUPLE:
                        assert len(s.elements) == len(instruction.shape.leaves())
                        checked += 1
    assert checked >= 3


def test_iota_tile_assignments() -> None:
    # [2,1,4]<=[8]: iota(8) reshaped; device (i, 0, r) = 4i + r.
    s = parse_sharding("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
    assert (s.tile_dims, s.subgroup_dims, s.replication) == ((2, 1), (4,), 4)
    assert s.tile_assignment is not None
    assert s.tile_assignment.device_at((1, 0, 2)) == 6
    # [1,4,2]<=[2,4]T(1,0): iota(8).reshape(2,4).T, flattened: 0,4,1,5,2,6,3,7.
    t = parse_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert t.tile_assignment is not None
    assert t.tile_assignment.device_list() == (0, 4, 1, 5, 2, 6, 3, 7)


@pytest.mark.parametrize(
    "explicit,iota",
    [
        # XLA's own outputs: ifrt ShardingParamToOpShardingTest (ToString of the same assignment).
        ("{devices=[2,1,3]0,3,1,4,2,5}", "{devices=[2,1,3]<=[2,3]T(1,0)}"),
        ("{devices=[4]0,2,1,3}", "{devices=[4]<=[2,2]T(1,0)}"),
        ("{devices=[2,1,3]0,1,2,3,4,5 last_tile_dim_replicate}",
         "{devices=[2,1,3]<=[6] last_tile_dim_replicate}"),
        # torch_xla's FSDPv2 test: the sharding XLA reports for a (2, 4, 1) mesh.
        ("{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}",
         "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
    ],
)  # fmt: skip
def test_explicit_and_iota_spellings_of_one_assignment(explicit: str, iota: str) -> None:
    a, b = parse_sharding(explicit), parse_sharding(iota)
    assert str(a) == explicit and str(b) == iota
    assert a.tile_assignment is not None and b.tile_assignment is not None
    assert a.tile_assignment.device_list() == b.tile_assignment.device_list()
    assert (a.tile_dims, a.replication) == (b.tile_dims, b.replication)


@pytest.mark.parametrize(
    "text,kind",
    [
        ("{replicated}", REPLICATED),
        ("{maximal device=3}", MAXIMAL),
        ("{manual}", "manual"),
        ("{unknown}", "unknown"),
        ("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}", TILED),
        ("{devices=[2,2]<=[4] shard_as 1}", TILED),
        ('{replicated metadata={op_name="a"}}', REPLICATED),
        ("{{replicated}, {maximal device=0}}", TUPLE),
        ("{}", TUPLE),
    ],
)
def test_every_form_round_trips(text: str, kind: str) -> None:
    s = parse_sharding(text)
    assert s.kind == kind
    assert str(s) == text


def test_last_tile_dims_types() -> None:
    s = parse_sharding("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}")
    assert s.subgroup_types == ("manual", "replicated")
    assert (s.tile_dims, s.subgroup_dims, s.replication) == ((2,), (2, 2), 2)


def test_unknown_forms_are_kept_as_text() -> None:
    named = parse_sharding("{mesh[a=2,b=4], [{a}], manual={b}}")  # see test_mesh_sharding.py
    assert named.kind == NAMED and str(named) == "{mesh[a=2,b=4], [{a}], manual={b}}"
    odd = parse_sharding("{devices=[2]0,1 future_flag}")
    assert odd.kind == UNPARSED and str(odd) == "{devices=[2]0,1 future_flag}"


@pytest.mark.parametrize(
    "text,message",
    [
        ("{replicated devices=[2]0,1}", "should not have any devices"),
        ("{maximal}", "exactly one device"),
        ("{last_tile_dim_replicate}", "tile assignment"),
        ("{devices=[2,2]0,1,2}", "needs 4 devices"),
        ("{devices=[2,2]<=[8]}", "holds 8 devices"),
        ("{devices=[2,2]<=[2,2]T(0,0)}", "not a permutation"),
    ],
)
def test_invalid_shardings_are_semantic_errors(text: str, message: str) -> None:
    with pytest.raises(HloSemanticError, match=message):
        parse_sharding(text)


def test_tile_assignment_validates() -> None:
    with pytest.raises(HloSemanticError):
        TileAssignment((0,), devices=())
