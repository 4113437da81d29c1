"""One table of layout properties: the fast reader, the grammar and the printer agree on it."""

from __future__ import annotations

import pytest

from hlo_layout.errors import Source
from hlo_layout.layout.padding import tiling_pattern
from hlo_layout.syntax.fast_shape import fast_shape
from hlo_layout.syntax.fragments import lark_parse, parse_shape
from hlo_layout.syntax.layout_text import LAYOUT_PROPERTIES, PADDING_PROPERTIES
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape

#: A value in XLA's spelling for each kind of property.
_SAMPLES = {
    "tiles": "(8,128)(2,1)",
    "int": "(4)",
    "type": "(s32)",
    "splits": "(0:2,4)",
    "shape": "(u8[64]{0})",
    "names": "(D,C)",
}


@pytest.mark.parametrize("prop", LAYOUT_PROPERTIES, ids=lambda p: p.letter)
def test_every_property_reads_and_prints_back(prop) -> None:
    text = f"f32[8,128]{{1,0:{prop.letter}{_SAMPLES[prop.kind]}}}"
    if prop.kind == "names":  # dim level types go on a rank-2 shape as two letters
        text = "f32[8,128]{1,0:D(D,C)}"
    by_grammar = lark_parse(text, Source(text, "<shape>"), start="shape")
    assert getattr(by_grammar.layout, prop.field), prop  # the grammar fills the table's field
    by_fast = fast_shape(text)
    if by_fast is not None:  # the fast reader may decline, never disagree
        assert by_fast == by_grammar
    assert print_shape(by_grammar) == text


def test_printing_order_is_the_table_order() -> None:
    text = "f32[8,128]{1,0:T(8,128)L(2)#(s32)*(s64)E(4)S(1)SC(0:2)M(8)}"
    shape = parse_shape(text)
    assert print_shape(shape) == text
    letters = [p.letter for p in LAYOUT_PROPERTIES if p.letter not in ("D", "P")]
    positions = [text.index(letter + "(") for letter in letters]
    assert positions == sorted(positions)


def test_tiling_pattern_is_the_padding_properties() -> None:
    shape = parse_shape("f32[8,128]{1,0:T(8,128)(2,1)L(2)E(4)S(1)}")
    assert isinstance(shape, ArrayShape)
    assert tiling_pattern(shape) == "T(8,128)(2,1)L(2)E(4)"
    assert [p.letter for p in PADDING_PROPERTIES] == ["T", "L", "E"]
    assert tiling_pattern(parse_shape("f32[8]{0:S(1)}")) == "untiled"  # type: ignore[arg-type]
