"""Padding explanations: which dimension grew, from what to what, by which tile entry."""

from __future__ import annotations

from hlo_layout.layout import PaddingExplanation, explain_padding, tiling_pattern
from hlo_layout.syntax import ArrayShape, parse_shape


def explain(text: str) -> PaddingExplanation:
    shape = parse_shape(text)
    assert isinstance(shape, ArrayShape)
    return explain_padding(shape)


def test_oom_report_example_names_both_padded_dims() -> None:
    # The TPU OOM's 12.6x example: dim 4 (most minor) 18 → 128, dim 3 9 → 16 by T(8,128).
    why = explain("f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}")
    grown = {(d.dimensions, d.size, d.padded, d.tile) for d in why.padded_dims}
    assert grown == {((4,), 18, 128, 128), ((3,), 9, 16, 8)}
    assert f"{why.expansion:.1f}" == "12.6"
    assert why.reasons()[0].startswith("dim 4: 18 → 128")


def test_layout_decides_which_dim_pads() -> None:
    # Same array, two layouts (XLA docs error_0102): only the first pads 40 → 128.
    assert [d.dimensions for d in explain("bf16[16,1280,40]{2,1,0:T(8,128)(2,1)}").padded_dims] == [
        (2,)
    ]
    assert explain("bf16[16,1280,40]{1,2,0:T(8,128)(2,1)}").padded_dims == ()


def test_scalar_and_unit_dims_added_by_the_tile() -> None:
    scalar = explain("s32[]{:T(128)}")
    assert [(d.dimensions, d.size, d.padded) for d in scalar.padded_dims] == [((), 1, 128)]
    assert scalar.reasons()[0].startswith("scalar")
    vector = explain("f32[3]{0:T(8,128)}")
    assert {(d.dimensions, d.padded) for d in vector.padded_dims} == {((0,), 128), ((), 8)}


def test_other_causes() -> None:
    assert "L(128)" in explain("f32[100]{0:L(128)}").reasons()[0]
    assert explain("pred[8,128]{1,0:T(8,128)E(32)}").reasons() == (
        "32 bits stored per 8-bit element",
    )
    merged = explain("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    assert [(d.dimensions, d.size, d.padded) for d in merged.padded_dims] == [((3, 4), 110, 111)]
    nested = explain("bf16[]{:T(512)(2,1)}")
    assert any("later tiles" in r for r in nested.reasons())


def test_no_padding_no_reasons() -> None:
    why = explain("bf16[256,256]{1,0:T(8,128)(2,1)}")
    assert why.reasons() == () and why.padding_bytes == 0 and why.expansion == 1.0


def test_tiling_pattern_groups_layout_properties() -> None:
    pattern = {
        "bf16[3,5]{1,0:T(8,128)(2,1)S(1)}": "T(8,128)(2,1)",
        "s4[64,128]{1,0:T(64,128)(8,1)E(4)}": "T(64,128)(8,1)E(4)",
        "f32[100]{0:L(128)}": "L(128)",
        "f32[100]{0}": "untiled",
        "f32[100]": "untiled",
    }
    for text, expected in pattern.items():
        shape = parse_shape(text)
        assert isinstance(shape, ArrayShape)
        assert tiling_pattern(shape) == expected
