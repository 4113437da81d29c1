"""Shapes of instructions written without one, inline operands and inline computations.

The xla-tests conformance test (test_xla_tests.py) checks all of this against XLA's own parser;
these tests state the laws and corner cases on small texts of our own.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax import parse
from hlo_layout.syntax.printer import print_module, print_shape
from hlo_layout.syntax.shape_inference import xla_shape
from tests.support import Cli


def _root(text: str, engine: str = "auto") -> str:
    module = parse(text, engine=engine)
    root = module.entry.root
    assert root is not None and root.shape_inferred
    return print_shape(root.shape, default_layout=True)


def _entry(body: str) -> str:
    return "HloModule m\n\nENTRY e {\n" + body + "\n}\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a = f32[2,3]{0,1} parameter(0)\nROOT n = negate(a)", "f32[2,3]{0,1}"),
        ("a = c64[4] parameter(0)\nROOT n = abs(a)", "f32[4]{0}"),
        ("a = c128[4] parameter(0)\nROOT n = imag(a)", "f64[4]{0}"),
        ("a = f32[2,3]{0,1} parameter(0)\nROOT n = add(a, a)", "f32[2,3]{0,1}"),
        # a scalar or size-1 dimensions are broadcast; the result gets the default layout
        ("a = f32[2,3]{0,1} parameter(0)\nb = f32[] parameter(1)\nROOT n = add(a, b)",
         "f32[2,3]{1,0}"),
        ("a = f32[2,1] parameter(0)\nb = f32[1,3] parameter(1)\nROOT n = multiply(a, b)",
         "f32[2,3]{1,0}"),
        ("a = s32[5] parameter(0)\nROOT c = compare(a, a), direction=LT", "pred[5]{0}"),
        ("p = pred[5] parameter(0)\na = s8[5] parameter(1)\nROOT s = select(p, a, a)",
         "s8[5]{0}"),
        ("a = f32[2] parameter(0)\nb = s32[] parameter(1)\nROOT t = tuple(a, b)",
         "(f32[2]{0}, s32[])"),
        ("a = (f32[2], s32[]) parameter(0)\nROOT g = get-tuple-element(a), index=1", "s32[]"),
        # transpose permutes the layout with the dimensions (it is a bitcast)
        ("a = f32[3,4]{1,0} parameter(0)\nROOT t = transpose(a), dimensions={1,0}",
         "f32[4,3]{0,1}"),
        ("a = f32[8,16] parameter(0)\nb = bf16[16,4] parameter(1)\n"
         "ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[8,4]{1,0}"),
        ("a = f32[2,3,4] parameter(0)\nz = f32[] constant(0)\n"
         "ROOT r = reduce(a, z), dimensions={0,2}, to_apply=add", "f32[3]{0}"),
        ("a = f32[2,3] parameter(0)\nb = f32[2,5] parameter(1)\n"
         "ROOT c = concatenate(a, b), dimensions={1}", "f32[2,8]{1,0}"),
        ("a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT p = pad(a, z), padding=1_2_1",
         "f32[10]{0}"),
        # hlo_parser.cc: `dimensions` are the sizes of new major dimensions
        ("a = f32[3] parameter(0)\nROOT b = broadcast(a), dimensions={2}", "f32[2,3]{1,0}"),
        ("ROOT t = after-all()", "token[]"),
        ("a = f32[10,10] parameter(0)\nz = f32[] constant(0)\n"
         "ROOT w = reduce-window(a, z), window={size=3x3 stride=2x2}, to_apply=add",
         "f32[4,4]{1,0}"),
        ("a = f32[1,8,8,3] parameter(0)\nk = f32[3,3,3,16] parameter(1)\n"
         "ROOT c = convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
         "f32[1,8,8,16]{3,2,1,0}"),
    ],
)  # fmt: skip
def test_inferred_shapes(body: str, expected: str) -> None:
    add = "add {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y)\n}\n"
    text = "HloModule m\n\n" + add + "\nENTRY e {\n" + body + "\n}\n"
    assert _root(text) == expected


def test_call_and_while_take_xla_shapes() -> None:
    text = """HloModule m
f {
  p = f32[2]{0} parameter(0)
  ROOT n = negate(p)
}
c {
  p = f32[2] parameter(0)
  ROOT t = pred[] constant(true)
}
ENTRY e {
  a = f32[2] parameter(0)
  k = call(a), to_apply=f
  ROOT w = while(k), condition=c, body=f
}
"""
    module = parse(text)
    assert print_shape(module.entry["k"].shape) == "f32[2]{0}"  # the callee root's shape
    assert module.entry["w"].shape == module.entry["k"].shape  # the init operand's shape


def test_inferred_shape_in_json_and_only_there() -> None:
    text = _entry("a = f32[2] parameter(0)\nROOT n = negate(a)")
    module = parse(text)
    assert module.entry["n"].shape_inferred and not module.entry["a"].shape_inferred
    # equality ignores the flag: the printed (shape-written) text reads back to an equal tree
    assert parse(print_module(module)) == module


def test_inspect_json_marks_inferred(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.hlo"
    path.write_text(_entry("a = f32[2] parameter(0)\nROOT n = negate(a)"))
    result = cli("inspect", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    (module,) = json.loads(result.stdout)["modules"]
    instructions = {i["name"]: i for c in module["computations"] for i in c["instructions"]}
    assert instructions["n"]["shape_inferred"] is True
    assert "shape_inferred" not in instructions["a"]


@pytest.mark.parametrize(
    "body",
    [
        "a = f32[2] parameter(0)\nROOT r = reshape(a)",  # XLA needs reshape's shape
        "a = f32[2] parameter(0)\nb = f32[3] parameter(1)\nROOT r = add(a, b)",
        "a = f32[2] parameter(0)\nROOT g = get-tuple-element(a), index=0",
        "a = f32[2,3] parameter(0)\nROOT t = transpose(a), dimensions={0,0}",
    ],
)
def test_uninferable_is_an_input_error_with_a_location(body: str) -> None:
    with pytest.raises(HloSemanticError) as info:
        parse(_entry(body))
    assert "cannot infer the shape" in info.value.message
    assert info.value.span is not None


def test_uninferable_exits_3(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.hlo"
    path.write_text(_entry("a = f32[2] parameter(0)\nROOT r = reshape(a)"))
    result = cli("inspect", str(path))
    assert result.exit_code == 3
    assert "m.hlo:5:1: error: cannot infer the shape of 'r'" in result.output


@given(st.permutations(range(4)), st.permutations(range(4)))
def test_transpose_is_a_bitcast(perm: list[int], m2m: list[int]) -> None:
    """The inferred transpose lays out the same dimensions in the same physical order."""
    dims = (2, 3, 5, 7)
    layout = ",".join(map(str, m2m))
    text = _entry(
        f"a = f32[2,3,5,7]{{{layout}}} parameter(0)\n"
        f"ROOT t = transpose(a), dimensions={{{','.join(map(str, perm))}}}"
    )
    t = parse(text).entry.root
    assert t is not None
    shape = t.shape
    assert shape.dims == tuple(dims[p] for p in perm)  # type: ignore[union-attr]
    physical_in = [dims[d] for d in m2m]
    physical_out = [shape.dims[d] for d in shape.minor_to_major]  # type: ignore[union-attr]
    assert physical_out == physical_in


def test_inline_operands_become_named_instructions() -> None:
    text = _entry("ROOT r = f32[] add(f32[] parameter(0), f32[] add(f32[] parameter(1), x))")
    with pytest.raises(HloSemanticError):  # `x` is undefined: verify still runs
        parse(text)
    module = parse(_entry("ROOT r = f32[] add(f32[] parameter(0), f32[] parameter(1))"))
    names = [(i.name, i.opcode, i.parameter_number) for i in module.entry.instructions]
    assert names == [
        ("parameter.anon", "parameter", 0),
        ("parameter.anon.1", "parameter", 1),
        ("r", "add", None),
    ]
    assert [o.name for o in module.entry.root.operands] == ["parameter.anon", "parameter.anon.1"]
    assert parse(print_module(module)) == module


def test_inline_computations_become_named_computations() -> None:
    text = """HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] call(a), to_apply={
    p = f32[2] parameter(0)
    ROOT n = f32[2] negate(p)
  }
  ROOT c = call(b), to_apply=
  {
    q = f32[2] parameter(0)
    ROOT m = exponential(q)
  }
}
"""
    module = parse(text)
    assert [c.name for c in module.computations] == ["_", "_.1", "e"]
    assert module.entry["b"].called_computations == ("_",)
    assert module.entry["c"].called_computations == ("_.1",)
    assert print_shape(module.entry["c"].shape) == "f32[2]"
    assert module.kind(module.computations[0]) == "called"
    assert parse(print_module(module)) == module


def test_xla_shape_of_send_recv_and_constants() -> None:
    text = _entry(
        "t = token[] after-all()\n"
        "d = f32[4]{0} parameter(0)\n"
        "s = (f32[4]{0}, u32[], token[]) send(d, t), channel_id=1\n"
        "r = (f32[4]{0}, u32[], token[]) recv(t), channel_id=2\n"
        "rd = (f32[4]{0}, u32[], token[]) recv-done(r), channel_id=2\n"
        "c = s4[2]{0:E(4)} constant({1, 2})\n"
        "ROOT sd = token[] send-done(s), channel_id=1"
    )
    module = parse(text)
    entry = module.entry

    def view(name: str) -> str:
        i = entry[name]
        return print_shape(
            xla_shape(i, lambda n: entry[i.operands[n].name].shape), default_layout=True
        )

    assert view("s") == "(f32[4]{0}, u32[], token[])"
    assert view("rd") == "(f32[4]{0}, token[])"
    # the tree holds XLA's shape; the text's is kept beside it
    assert print_shape(entry["rd"].shape) == "(f32[4]{0}, token[])"
    assert print_shape(entry.written_shape(entry["rd"])) == "(f32[4]{0}, u32[], token[])"
    assert view("c") == "s4[2]{0}"  # a literal's shape has no E(n)
    assert view("sd") == "token[]"


@pytest.mark.parametrize("engine", ["auto", "lark"])
def test_other_forms_xla_reads(engine: str) -> None:
    text = """HloModule m:
ENTRY e (input f32[2,1]) -> f32[2,1] {
  p = s32 [2,3] parameter(1), sharding={devices=[2,1]0,1}
  q = f32[2,2] parameter(2), sharding={mesh['x'=2,'y'=2] [{'x'}, {'y'}]}
  k = f32[2,1] constant({ {1}
    {2} })
  n = f32[1] constant({nan(0x7fff)})
  ROOT input = f32[2,1] parameter(0), frontend_attributes={_xla_pairs={{0,1}}}
}
"""
    module = parse(text, engine=engine)
    assert module.name == "m"
    assert [d.name for d in module.entry.parameters or ()] == ["input"]
    assert print_shape(module.entry["p"].shape) == "s32[2,3]"
    assert module.entry["q"].attr("sharding") is not None
