"""Forms the issue lists, each read as XLA means it (small texts; the corpus tests cover scale)."""

from __future__ import annotations

from hlo_layout.syntax import COMBINE, ArrayShape, TupleShape, parse, parse_modules, parse_shape
from hlo_layout.syntax import values as V


def test_doc_example_bare_instruction() -> None:
    m = parse(
        "add.936 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} add(exponential.183, broadcast.3115)"
    )
    (c,) = m.computations
    assert c.synthetic and m.name is None
    (i,) = c.instructions
    assert (i.name, i.opcode, [o.name for o in i.operands]) == (
        "add.936",
        "add",
        ["exponential.183", "broadcast.3115"],
    )
    assert i.shape.layout.minor_to_major == (3, 2, 0, 1)
    assert [t.dims for t in i.shape.layout.tiles] == [(8, 128), (2, 1)]


def test_angle_layout_notation() -> None:
    a = parse_shape("bf16[8,1,1280,16384]<3,2,0,1:T(8,128)(2,1)S(1)>")
    b = parse_shape("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}")
    assert a == b and a.layout.memory_space == 1


def test_every_layout_property_in_any_order() -> None:
    s = parse_shape("u4[3,1024]{1,0:E(4)S(5)L(1024)T(2,128)(4,1)*(s32)#(u32)SC(0:1,2)M(8)}")
    layout = s.layout
    assert layout.element_size_bits == 4 and layout.memory_space == 5
    assert layout.tail_padding_alignment == 1024
    assert layout.index_type == "u32" and layout.pointer_type == "s32"
    assert layout.split_configs[0].dimension == 0 and layout.split_configs[0].split_indices == (
        1,
        2,
    )
    assert layout.dynamic_shape_metadata_prefix_bytes == 8
    assert parse_shape("f32[2,3,4]{2,1,0:T(2,*,128)}").layout.tiles[0].dims == (2, COMBINE, 128)
    assert parse_shape("f32[]{:T(256)}").layout.tiles[0].dims == (256,)


def test_dynamic_dims_tuples_tokens() -> None:
    s = parse_shape("(f32[<=4,?]{1,0}, (token[], s32[]), pred[0])")
    assert isinstance(s, TupleShape)
    first = s.elements[0]
    assert isinstance(first, ArrayShape) and first.dynamic == (True, True)
    assert [index for index, _ in s.leaves()] == [(0,), (1, 1), (2,)]


def test_unknown_opcodes_and_attributes_are_kept() -> None:
    m = parse(
        """HloModule m, some_future_flag={a=[1,2]}
ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT x = f32[4]{0} frobnicate(p), new_attr={k=v, n=[1:2]}, order=TOTAL
}"""
    )
    root = m.entry.root
    assert root.opcode == "frobnicate"
    assert [(a.key, a.raw) for a in root.attributes] == [
        ("new_attr", "{k=v, n=[1:2]}"),
        ("order", "TOTAL"),
    ]
    assert m.attr("some_future_flag").raw == "{a=[1,2]}"
    assert isinstance(root.attr("new_attr").value, V.Group)


def test_tuple_element_shorthand_and_inline_operand_shapes() -> None:
    m = parse(
        """HloModule m
ENTRY e {
  p = (f32[4]{0}, s32[]) parameter(0)
  ROOT n = f32[4]{0} negate(f32[4]{0} %p#0)
}"""
    )
    (operand,) = m.entry.root.operands
    assert (operand.name, operand.index, operand.ref) == ("p", 0, "p#0")
    assert operand.shape == parse_shape("f32[4]{0}")


def test_several_modules_in_one_file() -> None:
    text = "HloModule a\nENTRY e { ROOT p = f32[] parameter(0) }\n" * 2
    assert [m.name for m in parse_modules(text)] == ["a", "a"]


def test_attribute_values_keep_raw_text() -> None:
    m = parse(
        """HloModule m
ENTRY e {
  p = f32[8,8]{1,0} parameter(0), sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  s = f32[4,8]{1,0} slice(p), slice={[0:8:2], [0:8]}
  c = f32[4]{0} constant({-inf, nan, 0x1p3, 1e-3})
  ROOT r = f32[4,8]{1,0} all-reduce(s), replica_groups=[4,2]<=[2,4]T(1,0), to_apply=add,
    metadata={op_name="x" source_file="a.py" source_line=3}
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""
    )
    e = m.entry
    assert e["p"].attr("sharding").raw == "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert e["s"].attr("slice").raw == "{[0:8:2], [0:8]}"
    assert e["c"].literal == "{-inf, nan, 0x1p3, 1e-3}"
    assert e["r"].called_computations == ("add",)
    assert m.kind(m.computation("add")) == "called"
    assert isinstance(e["r"].attr("replica_groups").value, V.Iota)
