"""Byte sizes: the documented examples (layout_rules.md §2.6, XLA's docs), every element type,
tuples, tokens, dynamic dims, and the laws padded ≥ unpadded and nested ≥ first-tile."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given, settings

from hlo_layout.layout import (
    BIT_WIDTH,
    LayoutError,
    array_bytes,
    footprint,
    logical_bits,
    logical_bytes,
    physical_bytes,
    physical_elements,
    pointer_table_bytes,
    tiled_elements,
)
from hlo_layout.syntax import ArrayShape, Layout, parse_shape
from tests.support import CORPUS
from tests.syntax.strategies import array_shapes

GiB = 2**30


def array(text: str) -> ArrayShape:
    shape = parse_shape(text)
    assert isinstance(shape, ArrayShape)
    return shape


def test_tpu_oom_shape_is_1_gib_logical_32_gib_physical() -> None:
    # flowpm#27, quoted in the issue: the minor dim 4 is padded to 128.
    shape = array("s32[8388608,8,4]{2,1,0:T(8,128)}")
    assert logical_bytes(shape) == 1 * GiB
    assert physical_bytes(shape) == 32 * GiB


# (shape, physical bytes, logical bytes) from layout_rules.md §2.6 "Worked examples".
DOCUMENTED = [
    ("bf16[3,5]{1,0:T(8,128)(2,1)}", 2048, 30),
    ("f32[3,5]{1,0:T(2,2)}", 96, 60),
    ("pred[3,5]{1,0:T(32,128)(32,1)}", 4096, 15),
    ("pred[3,5]{1,0:T(32,128)(32,1)E(1)}", 512, 15),
    ("pred[3,5]{1,0:T(8,128)(4,1)}", 1024, 15),
    ("pred[3,5]{1,0:T(8,128)E(32)}", 4096, 15),
    ("pred[64,512,2048]{2,1,0:T(8,128)E(32)}", 268_435_456, 67_108_864),
    ("f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}", 536_870_912, 42_467_328),
    ("u32[12582912,1]{1,0:T(8,128)}", 6_442_450_944, 48 * 2**20),
    ("f32[1024,245,64]{1,2,0:T(8,128)}", 67_108_864, 64_225_280),
    ("bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}", 4 * GiB, 1 * GiB),
    ("bf16[16,1280,40]{2,1,0:T(8,128)(2,1)}", 5_242_880, 1_638_400),
    ("bf16[16,1280,40]{1,2,0:T(8,128)(2,1)}", 1_638_400, 1_638_400),
    ("u8[327680,327680]{1,0:T(8,128)(4,1)}", 107_374_182_400, 107_374_182_400),
    ("s4[9216,6144]{1,0:T(64,128)(8,1)E(4)}", 9216 * 6144 // 2, 9216 * 6144 // 2),
    ("s32[]{:T(128)}", 512, 4),
    ("f32[]{:T(256)}", 1024, 4),
    ("bf16[]{:T(512)}", 1024, 2),
    ("bf16[]{:T(512)(2,1)}", 1024, 2),  # ArraySize: first tile only
    ("bf16[4096]{0:T(1024)(128)(2,1)}", 8192, 8192),
    ("bf16[10]{0:T(512)(128)(2,1)}", 1024, 20),
    ("f32[100]{0:L(128)}", 512, 400),
    ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", 49_728, 49_280),
    ("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}", 335_544_320, 335_544_320),
    ("s32[6]{0:T(128)S(1)SC(0:3)}", 512, 12),  # split: the largest piece, both figures
]


@pytest.mark.parametrize(("text", "physical", "logical"), DOCUMENTED)
def test_documented_examples(text: str, physical: int, logical: int) -> None:
    shape = array(text)
    assert physical_bytes(shape) == physical
    assert logical_bytes(shape) == logical


def test_nested_rule_differs_only_where_documented() -> None:
    assert tiled_elements(array("bf16[]{:T(512)(2,1)}")) == 1024
    assert physical_elements(array("bf16[]{:T(512)(2,1)}")) == 512


def test_xla_docs_size_mismatch_error() -> None:
    # docs error_0102, in the corpus: "expected parameter ... of size N (shape) but got buffer with
    # incompatible size M (shape)", and an allocation of size=N for shape = '...'.
    text = (CORPUS / "public" / "oom-reports").joinpath(
        "010_xla_docs_size_mismatch_and_alloc_ground_truth.txt"
    )
    pairs = re.findall(r"size (\d+) \((\S+?\})\)", text.read_text())
    pairs += re.findall(r"size=(\d+)\).*?shape = '([^']+)'", text.read_text())
    assert len(pairs) == 3
    for size, shape in pairs:
        assert physical_bytes(array(shape)) == int(size)


# --- element types -------------------------------------------------------------------------

F8_F4 = sorted(t for t in BIT_WIDTH if t.startswith(("f8", "f4")))


def test_every_f8_and_f4_type_is_known() -> None:
    # layout_rules.md §4: seven f8 types of 8 bits, the MX scale f8e8m0fnu, and f4e2m1fn.
    assert set(F8_F4) == {
        "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz", "f8e4m3fnuz",
        "f8e8m0fnu", "f4e2m1fn",
    }  # fmt: skip


@pytest.mark.parametrize("element_type", F8_F4)
def test_f8_and_f4_sizes(element_type: str) -> None:
    # Without E every f8/f4 element takes one byte (ByteWidth); E(n) packs it.
    shape = array(f"{element_type}[1000]{{0}}")
    assert physical_bytes(shape) == 1000
    packed = array(f"{element_type}[1000]{{0:E({BIT_WIDTH[element_type]})}}")
    assert physical_bytes(packed) == 1000 * BIT_WIDTH[element_type] // 8


@pytest.mark.parametrize("element_type", ["s1", "u1", "s2", "u2", "s4", "u4", "pred"])
def test_sub_byte_types_take_a_byte_unless_packed(element_type: str) -> None:
    assert physical_bytes(array(f"{element_type}[64,128]{{1,0}}")) == 64 * 128
    bits = BIT_WIDTH[element_type]
    assert physical_bytes(array(f"{element_type}[64,128]{{1,0:E({bits})}}")) == 64 * 128 * bits // 8


def test_pred_counts_one_byte_of_data() -> None:
    # The TPU OOM "Unpadded size" counts a pred as one byte, so E(32) pred is 4.0x.
    assert logical_bits("pred") == 8
    shape = array("pred[64,512,2048]{2,1,0:T(8,128)E(32)}")
    assert physical_bytes(shape) == 4 * logical_bytes(shape)


def test_unknown_element_type_is_an_error_not_a_guess() -> None:
    shape = array("f99[4]{0}")
    with pytest.raises(LayoutError):
        physical_bytes(shape)
    assert array_bytes(shape).physical_bytes is None
    assert "f99" in (array_bytes(shape).unknown or "")


# --- tuples, tokens, dynamic shapes ---------------------------------------------------------


def test_tuple_sums_leaves_and_keeps_the_pointer_table_apart() -> None:
    shape = parse_shape("(f32[]{:T(128)}, (bf16[3,5]{1,0:T(8,128)(2,1)}, token[]), s32[4]{0:S(1)})")
    fp = footprint(shape)
    assert [a.index for a in fp.arrays] == [(0,), (1, 0), (2,)]
    assert fp.physical_bytes == 512 + 2048 + 16
    assert fp.logical_bytes == 4 + 30 + 16
    assert fp.padding_bytes == fp.physical_bytes - fp.logical_bytes
    # ShapeUtil::ByteSizeOf(tuple): 8 B per element, per tuple node (3 + 2 elements).
    assert fp.pointer_table_bytes == 8 * 5
    assert pointer_table_bytes(shape, alignment=512) == 512 * 2
    assert fp.memory_space is None  # the leaves live in S(0) and S(1)


def test_token_is_zero_bytes() -> None:
    fp = footprint(parse_shape("token[]"))
    assert (fp.physical_bytes, fp.logical_bytes, fp.arrays) == (0, 0, ())


def test_dynamic_dims_count_at_their_bound() -> None:
    assert physical_bytes(array("f32[<=16,3]{1,0}")) == physical_bytes(array("f32[16,3]{1,0}"))
    unbounded = array("f32[?,3]{1,0}")
    with pytest.raises(LayoutError):
        physical_bytes(unbounded)
    assert footprint(unbounded).physical_bytes is None


# --- laws -----------------------------------------------------------------------------------


def _sizable(shape: ArrayShape) -> bool:
    layout = shape.layout
    if shape.is_unbounded or shape.element_type not in BIT_WIDTH:
        return False
    if layout is not None:
        if layout.element_size_bits and layout.element_size_bits < logical_bits(shape.element_type):
            return False  # E narrower than the data: not a layout XLA makes
        if any(t.dims[-1] < 0 for t in layout.tiles):
            return False  # a trailing `*` has nothing to merge into
    return True


@settings(max_examples=400, deadline=None)
@given(array_shapes(max_rank=4, max_dim=64))
def test_padded_bytes_are_never_below_unpadded(shape: ArrayShape) -> None:
    assume(_sizable(shape))
    assert physical_bytes(shape) >= logical_bytes(shape)
    assert array_bytes(shape).padding_bytes >= 0


@settings(max_examples=400, deadline=None)
@given(array_shapes(max_rank=4, max_dim=64))
def test_first_tile_count_bounds(shape: ArrayShape) -> None:
    # Tiling only adds slots; later tiles can only add more (ArraySize ≤ strict nested count).
    assume(_sizable(shape) and not (shape.layout and shape.layout.split_configs))
    n = physical_elements(shape)
    assert n >= math.prod(shape.dims)
    layout = shape.layout or Layout(shape.minor_to_major)
    assert n % layout.tail_padding_alignment == 0
    if layout.tail_padding_alignment == 1:
        assert tiled_elements(shape) >= n
