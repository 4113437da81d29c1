"""The rule registry: coverage of XLA's opcode list, explicit unknown indexing, refused forms."""

from __future__ import annotations

import pytest

from hlo_layout.indexing.operand import UNKNOWN
from hlo_layout.indexing.rules import RULES, OpContext, input_to_output, output_to_input, register
from hlo_layout.syntax import parse

#: indexing.md §(b): the opcodes XLA's analysis covers output to input (HLO text spelling;
#: the document's `cos` is HLO's `cosine`, its `clz` HLO's `count-leading-zeros`).
XLA_OUTPUT_TO_INPUT = (
    "abs", "acos", "acosh", "asin", "asinh", "atanh", "round-nearest-afz", "round-nearest-even",
    "ceil", "count-leading-zeros", "convert", "bitcast-convert", "copy", "cosine", "cosh",
    "erf", "exponential", "exponential-minus-one", "floor", "imag", "is-finite", "log",
    "log-plus-one", "not", "negate", "popcnt", "real", "reduce-precision", "rsqrt", "logistic",
    "sign", "sine", "sinh", "sqrt", "cbrt", "tan", "tanh", "add", "atan2", "compare", "complex",
    "divide", "maximum", "minimum", "multiply", "mulhi", "power", "remainder", "subtract",
    "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical",
    "stochastic-convert", "select", "clamp", "map", "all-reduce", "bitcast", "broadcast",
    "concatenate", "constant", "iota", "parameter", "convolution", "dot", "scaled-dot",
    "dynamic-slice", "dynamic-update-slice", "gather", "get-tuple-element", "pad", "reduce",
    "reduce-window", "reshape", "reverse", "slice", "transpose", "all-gather", "scan", "fusion",
)  # fmt: skip

#: indexing.md §(b), fact 8: the opcodes XLA covers input to output.
XLA_INPUT_TO_OUTPUT = (
    "add", "exponential", "map", "all-reduce", "bitcast", "broadcast", "concatenate",
    "reduce", "reshape", "reverse", "slice", "transpose", "tuple",
)  # fmt: skip


def _ctx(body: str, target: str = "out") -> OpContext:
    module = parse("HloModule m\nENTRY e {\n" + body + "\n}\n", verify=False)
    assert module.entry is not None
    return OpContext(module.entry[target], module.entry, module)


def test_every_xla_opcode_has_a_rule() -> None:
    missing_o2i = [op for op in XLA_OUTPUT_TO_INPUT if RULES.get(op) is None]
    missing_i2o = [
        op for op in XLA_INPUT_TO_OUTPUT if RULES.get(op) is None or not RULES[op].input_to_output
    ]
    assert not missing_o2i and not missing_i2o


def test_unknown_opcode_gives_unknown_for_every_operand_and_output() -> None:
    ctx = _ctx(
        "p1 = f32[4,4] parameter(0)\np2 = f32[4,3] parameter(1)\n"
        "ROOT out = f32[4,3] triangular-solve(p1, p2), left_side=true, lower=true, "
        "transpose_a=NO_TRANSPOSE, unit_diagonal=true"
    )
    o2i = output_to_input(ctx)
    assert o2i.maps == (frozenset({UNKNOWN}), frozenset({UNKNOWN}))
    assert "no output-to-input indexing rule" in o2i.notes[0]
    i2o = input_to_output(ctx, 1)
    assert i2o.maps == (frozenset({UNKNOWN}),)
    assert o2i.to_string() == "operand id = 0 unknown indexing\noperand id = 1 unknown indexing\n"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(
            "p = f32[6] parameter(0)\nROOT out = f32[4] reshape(p)", "element count", id="reshape"
        ),
        pytest.param(
            "p = f32[10,20] parameter(0)\ni = s32[4,3] parameter(1)\n"
            "ROOT out = f32[4,5] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,5}",
            "simplified gather",
            id="gather-not-simplified",
        ),
        pytest.param(
            "p = f32[10] parameter(0)\no = s32[1] parameter(1)\n"
            "ROOT out = f32[2] dynamic-slice(p, o), dynamic_slice_sizes={2}",
            "old form",
            id="dynamic-slice-vector-offsets",
        ),
        pytest.param(
            "p = f32[4,8] parameter(0)\nc = f32[8] parameter(1)\n"
            "ROOT out = (f32[4,8], f32[8]) scan(p, c), dimensions={0}, num_carries=1, to_apply=r",
            "scalar carries",
            id="scan-array-carry",
        ),
        pytest.param(
            "p = f32[4,8] parameter(0)\nROOT out = f32[8,4] transpose(p), dimensions={0,0}",
            "permutation",
            id="transpose-not-a-permutation",
        ),
    ],
)
def test_forms_a_rule_does_not_cover_are_unknown(body: str, why: str) -> None:
    indexing = output_to_input(_ctx(body))
    assert all(slot == frozenset({UNKNOWN}) for slot in indexing.maps)
    assert why in indexing.notes[0]


def test_operand_less_ops_have_no_slots() -> None:
    for body in ("ROOT out = f32[2,3] constant({{1,2,3},{4,5,6}})",
                 "ROOT out = s32[5] iota(), iota_dimension=0",
                 "ROOT out = f32[5] parameter(0)"):  # fmt: skip
        assert output_to_input(_ctx(body)).maps == ()


def test_xla_has_no_input_to_output_rule_for_these() -> None:
    ctx = _ctx(
        "p = f32[8] parameter(0)\no = s32[] parameter(1)\n"
        "ROOT out = f32[2] dynamic-slice(p, o), dynamic_slice_sizes={2}"
    )
    indexing = input_to_output(ctx, 0)
    assert indexing.maps == (frozenset({UNKNOWN}),)
    assert "no input-to-output indexing rule" in indexing.notes[0]


def test_a_rule_is_registered_once() -> None:
    with pytest.raises(ValueError, match="twice"):
        register("transpose")


def test_maps_that_do_not_fit_the_shapes_are_refused() -> None:
    """A malformed instruction (broadcast dims that do not match) must not yield a map whose
    results cannot index the operand."""
    ctx = _ctx("p = f32[3] parameter(0)\nROOT out = f32[3,4] broadcast(p), dimensions={0,1}")
    indexing = output_to_input(ctx)
    assert indexing.maps == (frozenset({UNKNOWN}),)
