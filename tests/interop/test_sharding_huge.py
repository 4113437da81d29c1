"""Huge declared device counts (issue 16): the sharding report answers in ranges and iota forms,
its cost following the file; the lazy forms agree with the materialized ones where both exist."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.interop.sharding_axe import id_ranges, module_sharding, shard_array
from hlo_layout.syntax import parse_modules, parse_shape
from hlo_layout.syntax.sharding import TileAssignment, parse_sharding
from tests.support import Cli


@st.composite
def iotas(draw: st.DrawFn) -> TileAssignment:
    reshape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    perm = tuple(draw(st.permutations(range(len(reshape)))))
    n = math.prod(reshape)
    dims = draw(st.sampled_from([(n,), (1, n), (n, 1)] + ([(2, n // 2)] if n % 2 == 0 else [])))
    return TileAssignment(dims, iota_reshape=reshape, iota_transpose=perm)


@settings(max_examples=200, deadline=None)
@given(iotas())
def test_iota_arithmetic_is_the_materialized_array(ta: TileAssignment) -> None:
    devices = ta.device_list()
    assert [ta.device_at_flat(i) for i in range(ta.num_tiles)] == list(devices)
    assert [ta.flat_of_device(d) for d in devices] == list(range(ta.num_tiles))
    assert ta.max_device == max(devices)


@settings(max_examples=100, deadline=None)
@given(iotas(), st.booleans())
def test_lazy_shards_are_the_materialized_ones(ta: TileAssignment, replicate: bool) -> None:
    rank = len(ta.dims) - (1 if replicate and len(ta.dims) > 1 else 0)
    tail = " last_tile_dim_replicate" if rank < len(ta.dims) else ""
    sharding = parse_sharding(f"{{devices={ta}{tail}}}")
    shape = parse_shape("f32[" + ",".join(str(3 * d) for d in ta.dims[:rank]) + "]")
    array = shard_array(shape, sharding)
    shards = list(array.shards)
    assert [s.device for s in shards] == list(ta.device_list())
    assert list(array.shards_by_device) == sorted(shards, key=lambda s: s.device)
    assert list(array.device_ids) == sorted({s.device for s in shards})


def test_id_ranges() -> None:
    assert id_ranges(range(0, 5)) == ((0, 4),)
    assert id_ranges((0, 1, 2, 5, 7, 8)) == ((0, 2), (5, 5), (7, 8))
    assert id_ranges(()) == ()


def _module(body: str, header: str = "HloModule m") -> str:
    return f"{header}\nENTRY e {{\n{body}\n}}\n"


def test_billion_partitions_are_one_group() -> None:
    (module,) = parse_modules(
        _module(
            "  ROOT p = f32[8] parameter(0), sharding={replicated}",
            "HloModule m, num_partitions=1000000000",
        )
    )
    found = module_sharding(module)
    assert found.num_devices == 10**9
    assert [(g.first, g.last, g.argument_bytes) for g in found.device_groups] == [
        (0, 10**9 - 1, 32)
    ]
    assert found.devices[123456789].argument_bytes == 32 and len(found.devices) == 10**9


def test_maximal_device_far_away_splits_the_groups() -> None:
    (module,) = parse_modules(
        _module(
            "  p = f32[8] parameter(0), sharding={maximal device=200000000}\n"
            "  q = f32[4] parameter(1)\n"
            "  ROOT t = (f32[8], f32[4]) tuple(p, q)"
        )
    )
    groups = module_sharding(module).device_groups
    assert [(g.first, g.last, g.argument_bytes, g.annotated_bytes) for g in groups] == [
        (0, 199_999_999, 16, 0),
        (200_000_000, 200_000_000, 48, 32),
    ]


def test_huge_iota_json_is_compact(cli: Cli, tmp_path) -> None:
    path = tmp_path / "d.hlo"
    path.write_text(
        _module(
            "  ROOT p = f32[8,8] parameter(0), "
            "sharding={devices=[2,2,1048576]<=[4194304] last_tile_dim_replicate}"
        )
    )
    result = cli("sharding", str(path), "-f", "json", "-i", "p")
    assert result.exit_code == 0, result.output
    (module,) = json.loads(result.stdout)["modules"]
    (array,) = module["values"][0]["arrays"]
    assert array["devices"] is None and array["shards"] is None and module["devices"] is None
    assert array["device_count"] == 4194304 and array["device_ranges"] == [[0, 4194303]]
    assert array["replication"] == 1048576 and array["shard_shape"] == "f32[4,4]{1,0}"
    assert module["device_groups"] == [
        {"first": 0, "last": 4194303, "argument_bytes": 64, "annotated_bytes": 64}
    ]
    assert len(result.stdout) < 10_000
    text = cli("sharding", str(path), "-i", "p", "--top", "3")
    assert text.exit_code == 0 and "4,194,301 more" in text.output


def test_small_json_still_lists_devices(cli: Cli, tmp_path) -> None:
    path = tmp_path / "d.hlo"
    path.write_text(
        _module(
            "  ROOT p = f32[8,8] parameter(0), sharding={devices=[2,1,2]0,2,1,3 "
            "last_tile_dim_replicate}"
        )
    )
    result = cli("sharding", str(path), "-f", "json")
    (module,) = json.loads(result.stdout)["modules"]
    (array,) = module["values"][0]["arrays"]
    assert array["devices"] == [0, 1, 2, 3] and array["device_ranges"] == [[0, 3]]
    assert [d["device"] for d in module["devices"]] == [0, 1, 2, 3]
