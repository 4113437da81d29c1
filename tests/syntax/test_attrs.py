"""Typed attribute decoders (syntax/attrs.py), each against hlo_parser.cc's reading of the text."""

from __future__ import annotations

import pytest

from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax import parse
from hlo_layout.syntax.attrs import (
    ConvDimensionNumbers,
    PaddingDim,
    SliceRange,
    WindowDim,
    conv_dimension_numbers,
    int_list,
    int_value,
    padding_config,
    slice_ranges,
    window,
)
from hlo_layout.syntax.tree import Attribute
from tests.support import corpus_modules, hlo_files


def attr(key: str, raw: str) -> Attribute:
    return Attribute(key, raw)


def test_int_list() -> None:
    assert int_list(attr("dimensions", "{3,1}")) == (3, 1)
    assert int_list(attr("dimensions", "{}")) == ()
    assert int_list(attr("lhs_batch_dims", "{ 5, 1 }")) == (5, 1)
    with pytest.raises(HloSemanticError):
        int_list(attr("dimensions", "3"))
    with pytest.raises(HloSemanticError):
        int_list(attr("dimensions", "{a,b}"))


def test_int_value() -> None:
    assert int_value(attr("index", "2")) == 2
    assert int_value(attr("feature_group_count", "-1")) == -1
    with pytest.raises(HloSemanticError):
        int_value(attr("index", "two"))


def test_slice_ranges() -> None:
    assert slice_ranges(attr("slice", "{[5:10:1], [3:20:7], [0:50:2]}")) == (
        SliceRange(5, 10, 1),
        SliceRange(3, 20, 7),
        SliceRange(0, 50, 2),
    )
    assert slice_ranges(attr("slice", "{[0:3]}")) == (SliceRange(0, 3, 1),)
    with pytest.raises(HloSemanticError):
        slice_ranges(attr("slice", "{[0]}"))


def test_padding_config() -> None:
    assert padding_config(attr("padding", "1_4_1x4_8_0")) == (
        PaddingDim(1, 4, 1),
        PaddingDim(4, 8, 0),
    )
    assert padding_config(attr("padding", "-3_-5_1")) == (PaddingDim(-3, -5, 1),)
    assert padding_config(attr("padding", "0_0x4096_0")) == (PaddingDim(0, 0), PaddingDim(4096, 0))
    with pytest.raises(HloSemanticError):
        padding_config(attr("padding", "1x2"))


def test_window() -> None:
    dims = window(
        attr("window", "{size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=1x2 rhs_reversal=1x0}")
    )
    assert dims == (
        WindowDim(3, 2, 1, 1, 1, 1, True),
        WindowDim(2, 1, 0, 1, 1, 2, False),
    )
    assert window(attr("window", "{size=1x512 pad=0_0x0_0 rhs_dilate=3x1}"))[0].window_dilation == 3
    assert window(attr("window", "{}")) == ()
    with pytest.raises(HloSemanticError):
        window(attr("window", "{size=3x2 stride=2}"))
    with pytest.raises(HloSemanticError):
        window(attr("window", "{stride=2}"))


def test_conv_dimension_numbers() -> None:
    assert conv_dimension_numbers(attr("dim_labels", "b01f_i01o->b01f")) == ConvDimensionNumbers(
        0, 3, (1, 2), 0, 3, (1, 2), 0, 3, (1, 2)
    )
    dn = conv_dimension_numbers(attr("dim_labels", "bf0123_oi0123->bf0123"))
    assert (dn.input_feature, dn.kernel_input_feature, dn.kernel_output_feature) == (1, 1, 0)
    assert dn.input_spatial == (2, 3, 4, 5)
    assert conv_dimension_numbers(attr("dim_labels", "bf_io->bf")).input_spatial == ()
    # The digit is the spatial index, not the position.
    assert conv_dimension_numbers(attr("dim_labels", "b10f_o10i->f10b")).input_spatial == (2, 1)
    with pytest.raises(HloSemanticError):
        conv_dimension_numbers(attr("dim_labels", "b01f_i01o"))
    with pytest.raises(HloSemanticError):
        conv_dimension_numbers(attr("dim_labels", "b0f_i01o->b01f"))


_DECODERS = {
    "slice": slice_ranges,
    "padding": padding_config,
    "window": window,
    "dim_labels": conv_dimension_numbers,
    "dimensions": int_list,
    "dynamic_slice_sizes": int_list,
    "lhs_contracting_dims": int_list,
    "offset_dims": int_list,
    "start_index_map": int_list,
    "slice_sizes": int_list,
    "index": int_value,
    "feature_group_count": int_value,
}


def test_every_corpus_attribute_decodes() -> None:
    """Every attribute of the kinds above, in every corpus dump, decodes without error."""
    from collections import Counter

    seen: Counter[str] = Counter()
    for path in hlo_files():
        for module in corpus_modules(path):
            for computation in module.computations:
                for instruction in computation.instructions:
                    for a in instruction.attributes:
                        decode = _DECODERS.get(a.key)
                        if decode is not None:
                            decode(a)
                            seen[a.key] += 1
    # The corpus has convolutions, pads, slices and windows: each decoder ran on real text.
    assert all(seen[key] > 0 for key in ("slice", "padding", "window", "dim_labels")), seen


def test_decoders_on_parsed_instruction() -> None:
    module = parse(
        "ENTRY e {\n  p = f32[4,4] parameter(0)\n  c = f32[] constant(0)\n"
        "  ROOT r = f32[12,16] pad(p, c), padding=1_4_1x4_8_0\n}\n"
    )
    root = module.entry.root
    assert root is not None
    found = root.attr("padding")
    assert found is not None and padding_config(found)[0] == PaddingDim(1, 4, 1)
