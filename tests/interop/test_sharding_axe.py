"""Sharded arrays against XLA's SPMD partitioner, and the Axe view against the shard list.

Oracles (compiler outputs committed in the corpus):
- `jax-cpu-spmd/`: the program before optimizations carries the shardings, the optimized
  (partitioned) program the per-device shapes XLA made, and its buffer assignment the bytes;
- `libtpu-v5e/sharded_mlp/`: the same for the TPU compiler, with tiled layouts, plus
  `memory_analysis.json` (`argument_size_in_bytes` is the per-device size of the arguments).
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from hlo_layout.interop.axe import parse_axe
from hlo_layout.interop.sharding_axe import (
    TILE,
    device_iters,
    module_sharding,
    shard_array,
    shard_value,
)
from hlo_layout.layout import element_offset
from hlo_layout.reader.sidefiles import read_buffer_assignment
from hlo_layout.syntax import ArrayShape, Layout, Tile, parse_file, parse_shape
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.sharding import (
    REPLICATED,
    TUPLE,
    Sharding,
    TileAssignment,
    instruction_sharding,
    parse_sharding,
)
from tests.support import CORPUS, corpus_modules, hlo_files

CPU = CORPUS / "jax-cpu-spmd"
TPU = CORPUS / "libtpu-v5e" / "sharded_mlp"
PAIRS = [
    (
        CPU / "module_0018.jit_step.before_optimizations.txt",
        CPU / "module_0018.jit_step.cpu_after_optimizations.txt",
        CPU / "module_0018.jit_step.cpu_after_optimizations-buffer-assignment.txt",
    ),
    (
        TPU / "sharded_mlp.before_optimizations.txt",
        TPU / "sharded_mlp.after_optimizations.txt",
        TPU / "sharded_mlp.buffer-assignment.txt",
    ),
]


@pytest.mark.parametrize("before,after,buffers", PAIRS, ids=["cpu", "tpu"])
def test_shard_shapes_are_the_partitioners(before: Path, after: Path, buffers: Path) -> None:
    """Every sharded instruction of the program before partitioning: our per-device shape is the
    shape of the same parameter in the partitioned program (dims and, where the header gives
    it, the layout), and its physical bytes are what the buffer assignment allocated."""
    report = module_sharding(parse_file(before))
    partitioned = parse_file(after)
    assert not report.partitioned
    assert partitioned.entry is not None and partitioned.entry.name.endswith("_spmd")
    params = {p.parameter_number: p for p in partitioned.entry.parameter_instructions}
    allocations = {
        a.parameter_number: a.size
        for a in read_buffer_assignment(buffers).allocations
        if a.parameter_number is not None
    }
    assert report.values
    for value in report.values:
        assert value.error is None
        (array,) = value.arrays
        theirs = params[value.parameter_number].shape
        assert isinstance(theirs, ArrayShape)
        assert array.shard_shape.dims == theirs.dims, value.instruction
        assert array.shard_shape.element_type == theirs.element_type
        if array.shard_shape.layout is not None and array.shard_shape.layout.tiles:
            assert print_shape(array.shard_shape) == print_shape(theirs)
        assert array.shard_physical_bytes == allocations[value.parameter_number]


def test_cpu_spmd_shardings_cover_every_device() -> None:
    report = module_sharding(parse_file(PAIRS[0][0]))
    assert report.num_devices == 8
    for value in report.values:
        (array,) = value.arrays
        s = array.sharding
        # each device holds one tile; each tile is on `replication` devices
        assert array.devices == tuple(range(8))
        tiles = {s.tile for s in array.shards}
        assert len(tiles) == math.prod(array.tile_dims)
        assert len(array.shards) == len(tiles) * s.replication


def test_tpu_per_device_arguments_are_the_compilers() -> None:
    analysis = json.loads((CORPUS / "libtpu-v5e" / "memory_analysis.json").read_text())
    expected = analysis["memory_analysis"]["sharded_mlp"]["argument_size_in_bytes"]
    report = module_sharding(parse_file(PAIRS[1][0]))
    assert {d.argument_bytes for d in report.devices} == {expected}


def test_cpu_per_device_arguments_are_the_buffer_assignments() -> None:
    allocations = read_buffer_assignment(PAIRS[0][2]).allocations
    expected = sum(a.size for a in allocations if a.parameter_number is not None)
    for path in PAIRS[0][:2]:  # before (global shapes) and after (already per device)
        report = module_sharding(parse_file(path))
        assert {d.argument_bytes for d in report.devices} == {expected}, path.name
        for d in report.devices:
            assert sum(v.bytes_on(d.device) for v in report.values) == d.annotated_bytes


def test_partitioned_module_is_detected_and_not_sharded_twice() -> None:
    report = module_sharding(parse_file(PAIRS[0][1]))
    assert report.partitioned
    for value in report.values:
        (array,) = value.arrays
        assert array.shard_shape == value.shape


# --- the Axe document's mesh examples from HLO shardings ---------------------------------------


def gpu_of(device: int) -> tuple[int, int]:
    """Device d of a 2×2 mesh written as iota [2,2]: row-major (gpu_y, gpu_x)."""
    return divmod(device, 2)


@pytest.mark.parametrize(
    "sharding,axe",
    [
        ("{devices=[2,2]<=[4]}", "S[(2,32,2,64):(1@gpu_y,64@m,1@gpu_x,1@m)]"),
        (
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
            "S[(2,32,128):(1@gpu_y,128@m,1@m)] + R[2:1@gpu_x]",
        ),
    ],
    ids=["split-split", "split-replicate"],
)
def test_hlo_shardings_give_the_axe_mesh_examples(sharding: str, axe: str) -> None:
    shape = parse_shape("f32[64,128]{1,0}")
    assert isinstance(shape, ArrayShape)
    array = shard_array(shape, parse_sharding(sharding), num_devices=4)
    document = parse_axe(axe, (64, 128))
    for x in itertools.product(range(64), range(128)):
        ours = sorted((gpu_of(d), m) for d, m in array.holders(x))
        theirs = sorted(
            ((c["gpu_y"], c["gpu_x"]), c["m"]) for c in (p.as_dict() for p in document.forward(x))
        )
        assert ours == theirs, x


def test_docstring_example_axe_text() -> None:
    shape = parse_shape("f32[256,1024]{1,0}")
    assert isinstance(shape, ArrayShape)
    s = parse_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    array = shard_array(shape, s, num_devices=8)
    assert str(array.axe) == "S[(256,4,256):(256@m,1@device,1@m)] + R[2:4@device]"


# --- the law: the Axe layout places every element where the shard list says ------------------


def factorizations(n: int) -> list[tuple[int, ...]]:
    out = [(n,)]
    for f in range(2, n):
        if n % f == 0:
            out += [(f, *rest) for rest in factorizations(n // f)]
    return out


@st.composite
def sharded_arrays(draw: st.DrawFn) -> tuple[ArrayShape, Sharding]:
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles: tuple[Tile, ...] = ()
    if draw(st.booleans()):
        k = draw(st.integers(1, rank))
        tiles = (Tile(tuple(draw(st.sampled_from([1, 2, 4])) for _ in range(k))),)
    shape = ArrayShape("f32", dims, layout=Layout(m2m, tiles))
    tile_dims = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    replicas = draw(st.integers(1, 3))
    ta_dims = tile_dims + ((replicas,) if replicas > 1 else ())
    n = math.prod(ta_dims)
    how = draw(st.sampled_from(["iota", "transposed", "explicit"]))
    if how == "explicit":
        ta = TileAssignment(ta_dims, devices=tuple(draw(st.permutations(range(n)))))
    else:
        reshape = draw(st.sampled_from(factorizations(n))) if how == "transposed" else (n,)
        perm = tuple(draw(st.permutations(range(len(reshape))))) if len(reshape) > 1 else ()
        ta = TileAssignment(ta_dims, iota_reshape=reshape, iota_transpose=perm)
    return shape, Sharding("tiled", tile_assignment=ta, last_tile_dim_replicate=replicas > 1)


@settings(max_examples=200, deadline=None)
@given(sharded_arrays())
def test_axe_layout_agrees_with_the_shards(case: tuple[ArrayShape, Sharding]) -> None:
    shape, sharding = case
    note(f"{shape} {sharding}")
    array = shard_array(shape, sharding, num_devices=sharding.tile_assignment.num_tiles)
    assert array.axe is not None
    for x in itertools.product(*(range(d) for d in shape.dims)):
        expected = sorted(
            (s.device, element_offset(array.shard_shape, tuple(i - b for i, b in zip(x, s.start))))
            for s in array.shards
            if all(b <= i < b + e for i, b, e in zip(x, s.start, s.extent))
        )
        assert len(expected) == sharding.replication
        assert sorted(array.holders(x)) == expected, x
        for point in array.axe.forward(array.axe_coordinate(x)):
            assert array.axe.backward(point) == array.axe_coordinate(x)
    # iota assignments always have a device-axis form; explicit ones when they are affine
    axes = array.axe.axes
    if sharding.tile_assignment.is_iota and device_iters(sharding.tile_assignment) is not None:
        assert TILE not in axes
    if TILE in axes:
        assert array.device_table == sharding.tile_assignment.device_list()


def test_iota_refinement_handles_splits_across_tile_dims() -> None:
    # [8]<=[2,4]T(1,0): the flat position f = 2a + b holds device 4b + a: one tile dim, two
    # device strides.
    ta = TileAssignment((8,), iota_reshape=(2, 4), iota_transpose=(1, 0))
    assert device_iters(ta) == ([[(4, 1), (2, 4)]], 0)
    # 6 as [2,3] against an iota transposed to [3,2]: the factorizations do not nest.
    assert device_iters(TileAssignment((2, 3), iota_reshape=(2, 3), iota_transpose=(1, 0))) is None


def test_uneven_split_pads_the_last_shard() -> None:
    shape = parse_shape("f32[10]{0}")
    assert isinstance(shape, ArrayShape)
    array = shard_array(shape, parse_sharding("{devices=[4]<=[4]}"), num_devices=4)
    assert array.shard_shape.dims == (3,)
    assert [s.extent for s in array.shards] == [(3,), (3,), (3,), (1,)]
    assert array.axe is not None and array.axe.shape == (12,)


def test_replicated_maximal_and_tuple_shardings() -> None:
    shape = parse_shape("(f32[4,4]{1,0}, s32[]{:T(128)}, token[])")
    s = parse_sharding("{{replicated}, {maximal device=2}, {replicated}}")
    assert s.kind == TUPLE
    arrays = shard_value(shape, s, num_devices=4)
    assert [a.index for a in arrays] == [(0,), (1,)]
    assert arrays[0].devices == (0, 1, 2, 3)
    assert str(arrays[0].axe) == "S[(4,4):(4@m,1@m)] + R[4:1@device]"
    assert arrays[1].devices == (2,)
    assert str(arrays[1].axe) == "S[():()] + O[2@device]"
    assert arrays[1].shard_physical_bytes == 512  # s32[]{:T(128)}: 128 elements
    one = shard_value(parse_shape("(f32[2], f32[3])"), Sharding(REPLICATED), num_devices=2)
    assert len(one) == 2


def test_every_sharded_corpus_instruction_has_shards() -> None:
    """Across the whole corpus (partitioned or not), every sharding decodes to shards and, where
    the layout has a CuTe form, an Axe layout."""
    count = 0
    for path in hlo_files():
        for module in corpus_modules(path):
            if not any(
                instruction_sharding(i) for c in module.computations for i in c.instructions
            ):
                continue
            report = module_sharding(module)
            for value in report.values:
                assert value.error is None, (path.name, value.instruction, value.error)
                for array in value.arrays:
                    assert array.shards
                    assert array.axe is not None, (path.name, value.instruction, array.note)
                    count += 1
    assert count > 400
