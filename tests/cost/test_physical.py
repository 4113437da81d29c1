"""Physical bytes: the same analysis at the layouts' real size — never below XLA's logical
figure, and above it where tiles pad (what the hardware moves against what it uses)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from hlo_layout.cost import HloCostAnalysis
from hlo_layout.cost.model import module_cost
from hlo_layout.cost.sizes import physical_shape_size, xla_shape_size
from hlo_layout.layout.size import physical_bytes
from hlo_layout.syntax import parse, parse_shape
from hlo_layout.syntax.shape import ArrayShape
from tests.support import corpus_id, corpus_modules, hlo_files
from tests.syntax.strategies import array_shapes


@settings(max_examples=300, deadline=None)
@given(array_shapes())
def test_physical_size_is_never_below_the_logical_one(shape: ArrayShape) -> None:
    assert physical_shape_size(shape) >= xla_shape_size(shape)


def test_sizes_of_known_shapes() -> None:
    padded = parse_shape("bf16[3,5]{1,0:T(8,128)(2,1)}")
    assert (xla_shape_size(padded), physical_shape_size(padded)) == (30, 2048)
    packed = parse_shape("s4[256]{0:T(1024)(128)(4,1)E(4)}")
    assert (xla_shape_size(packed), physical_shape_size(packed)) == (128, physical_bytes(packed))
    assert xla_shape_size(parse_shape("(f32[2], s32[9])")) == 16  # a pointer table
    dynamic = parse_shape("f32[<=10,3]")
    assert xla_shape_size(dynamic) == 4 * 30 + 2 * 4  # XLA:CPU's size metadata


PADDED = """HloModule m
fused {
  a = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(0)
  b = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(1)
  ROOT s = bf16[3,5]{1,0:T(8,128)(2,1)} add(a, b)
}
ENTRY e {
  a = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(0)
  b = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(1)
  ROOT f = bf16[3,5]{1,0:T(8,128)(2,1)} fusion(a, b), kind=kLoop, calls=fused
}"""


def test_padding_inflates_what_a_fusion_moves() -> None:
    (row,) = module_cost(parse(PADDED)).instructions
    assert (row.per_execution.bytes_accessed, row.per_execution.physical_bytes_accessed) == (
        3 * 30,
        3 * 2048,
    )
    traffic = row.operand_traffic()
    assert [(t.name, t.used_bytes, t.moved_bytes) for t in traffic] == [
        ("a", 30, 2048),
        ("b", 30, 2048),
    ]


TPU = [p for p in hlo_files() if "libtpu" in p.as_posix() and "after_optimizations" in p.name]


@pytest.mark.parametrize("path", TPU, ids=corpus_id)
def test_tpu_dumps_move_at_least_what_they_use(path) -> None:  # type: ignore[no-untyped-def]
    module = corpus_modules(path)[0]
    cost = module_cost(module)
    assert cost.total.physical_bytes_accessed >= cost.total.bytes_accessed
    for row in cost.instructions:
        assert row.per_execution.physical_bytes_accessed >= row.per_execution.bytes_accessed
    physical = HloCostAnalysis(module, physical_shape_size).properties()
    assert physical.get("flops", 0) == cost.xla_properties.get("flops", 0)


def test_tpu_corpus_has_padded_traffic() -> None:
    """At least one real TPU program moves measurably more than it uses."""
    inflated = []
    for path in TPU:
        cost = module_cost(corpus_modules(path)[0])
        if cost.total.physical_bytes_accessed > 1.01 * cost.total.bytes_accessed:
            inflated.append(path.name)
    assert inflated, [p.name for p in TPU]
