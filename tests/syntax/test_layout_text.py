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
from tests.support import Cli

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


@pytest.mark.parametrize("text", ["f32[8,128]{1,0:T(8,*)}", "f32[8,128]{1,0:T(8,128)(2,*)}"])
def test_trailing_star_reads_in_a_dump_and_in_layout_alike(cli: Cli, tmp_path, text: str) -> None:
    """XLA's ParseTiles reads `*` in any entry (Tile::kCombineDimension): both the `layout`
    command and a dump read a tile ending in `*`, and both give the same figures: logical bytes,
    physical unknown with the one reason from layout_text.tile_problem."""
    import json

    from hlo_layout.layout.size import array_bytes
    from hlo_layout.syntax.layout_text import tile_problem

    shape = parse_shape(text)
    assert isinstance(shape, ArrayShape) and print_shape(shape) == text
    assert fast_shape(text) == shape
    assert shape.layout is not None
    reason = tile_problem(shape.layout.tiles[-1].dims)
    assert reason is not None and "ends in *" in reason
    in_dump = array_bytes(shape)
    # XLA sizes an array by its first tile: a later tile ending in `*` leaves that size known
    physical = None if text.endswith("T(8,*)}") else 4096
    assert (in_dump.logical_bytes, in_dump.physical_bytes) == (4096, physical)
    alone = cli("layout", text, "-f", "json")
    assert alone.exit_code == 0, alone.output
    (item,) = json.loads(alone.stdout)["shapes"]
    assert (item["logical_bytes"], item["physical_bytes"], item["note"]) == (4096, physical, reason)
    dump = tmp_path / "d.hlo"
    dump.write_text(f"HloModule m\nENTRY e {{\n  ROOT p = {text} parameter(0)\n}}\n")
    inspected = cli("inspect", str(dump), "-f", "json")
    assert inspected.exit_code == 0, inspected.output
    (row,) = json.loads(inspected.stdout)["modules"][0]["entry_parameters"]
    assert (row["logical_bytes"], row["physical_bytes"]) == (4096, physical)


def test_a_star_before_the_last_entry_is_sized() -> None:
    from hlo_layout.layout.size import array_bytes

    shape = parse_shape("bf16[2,3,1004]{2,1,0:T(2,*,128)}")
    assert isinstance(shape, ArrayShape)
    assert array_bytes(shape).physical_bytes == 2 * 3072 * 2  # [2, 3·1004 → 3072] bf16
