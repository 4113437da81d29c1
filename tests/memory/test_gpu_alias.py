"""GPU buffer-sharing hints (memory/gpu_alias.py) against XLA's own expectations: the cases and
verdicts of FusionCanShareBufferHintTest (xla/service/gpu/gpu_copy_insertion_test.cc, now
alias_info_test.cc), whose HLO texts are also in the xla-tests corpus."""

# ruff: noqa: E501 (HLO texts, one instruction per line)
from __future__ import annotations

import pytest

from hlo_layout.memory.gpu_alias import gpu_may_alias
from hlo_layout.syntax import parse_modules
from hlo_layout.syntax.tree import Instruction

ADD = "add {\n lhs = s32[] parameter(0)\n rhs = s32[] parameter(1)\n ROOT add = s32[] add(lhs, rhs)\n}\n"


def _hint(text: str, k: int, user_index: tuple[int, ...]) -> bool | None:
    (module,) = parse_modules("HloModule m\n" + text, "case.hlo")
    fusion = module.entry.root
    assert fusion is not None and fusion.opcode == "fusion"
    body = module.computation(fusion.called_computations[0])
    assert body is not None
    users: dict[str, list[Instruction]] = {}
    for i in body.instructions:
        for o in i.operands:
            users.setdefault(o.name, []).append(i)
    operand = module.entry.resolve(fusion.operands[k])
    assert operand is not None
    numbers = [j for j, o in enumerate(fusion.operands) if o.name == operand.name]
    return gpu_may_alias(numbers, operand.shape, fusion, user_index, body, users)


def _entry(root: str, params: str) -> str:
    return f"ENTRY main {{\n{params}\n ROOT fusion = {root}\n}}\n"


P0_F23 = " param_0 = f32[2,3]{1,0} parameter(0)"
P01_F23 = P0_F23 + "\n param_1 = f32[2,3]{1,0} parameter(1)"
SCATTER = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
DUS_PARAMS = " param_0 = s32[6]{0} parameter(0)\n param_1 = s32[] parameter(1)"

CASES = {
    "same shape": (
        "f {\n p = f32[2,3]{1,0} parameter(0)\n neg = f32[2,3]{1,0} negate(p)\n"
        " ROOT mul = f32[2,3]{1,0} multiply(p, neg)\n}\n"
        + _entry("f32[2,3]{1,0} fusion(param_0), kind=kLoop, calls=f", P0_F23),
        [(0, (), True)],
    ),
    "bitcast to another shape": (
        "f {\n p = f32[2,3]{1,0} parameter(0)\n neg = f32[2,3]{1,0} negate(p)\n"
        " mul = f32[2,3]{1,0} multiply(p, neg)\n ROOT b = f32[6]{0} bitcast(mul)\n}\n"
        + _entry("f32[6]{0} fusion(param_0), kind=kLoop, calls=f", P0_F23),
        [(0, (), True)],
    ),
    "convert to the same width": (
        "f {\n p = f32[2,3]{1,0} parameter(0)\n neg = f32[2,3]{1,0} negate(p)\n"
        " mul = f32[2,3]{1,0} multiply(p, neg)\n ROOT c = s32[2,3]{1,0} convert(mul)\n}\n"
        + _entry("s32[2,3]{1,0} fusion(param_0), kind=kLoop, calls=f", P0_F23),
        [(0, (), True)],
    ),
    "convert to another width": (
        "f {\n p = f32[2,3]{1,0} parameter(0)\n neg = f32[2,3]{1,0} negate(p)\n"
        " mul = f32[2,3]{1,0} multiply(p, neg)\n ROOT c = f16[2,3]{1,0} convert(mul)\n}\n"
        + _entry("f16[2,3]{1,0} fusion(param_0), kind=kLoop, calls=f", P0_F23),
        [(0, (), False)],
    ),
    "bitcast-convert": (
        "f {\n p = s32[3]{0} parameter(0)\n neg = s32[3]{0} negate(p)\n"
        " mul = s32[3]{0} multiply(p, neg)\n ROOT c = s16[3,2]{1,0} bitcast-convert(mul)\n}\n"
        + _entry("s16[3,2]{1,0} fusion(param_0), kind=kLoop, calls=f",
                 " param_0 = s32[3]{0} parameter(0)"),
        [(0, (), False)],
    ),
    "multi-output with a transpose": (
        "f {\n p0 = f32[2,3]{1,0} parameter(0)\n p1 = f32[2,3]{1,0} parameter(1)\n"
        " neg = f32[2,3]{1,0} negate(p1)\n mul = f32[2,3]{1,0} multiply(p0, neg)\n"
        " t = f32[3,2]{1,0} transpose(neg), dimensions={1,0}\n"
        " ROOT tuple = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) tuple(mul, neg, t)\n}\n"
        + _entry("(f32[2,3]{1,0}, f32[2,3]{1,0}, f32[3,2]{1,0}) fusion(param_0, param_1), "
                 "kind=kLoop, calls=f", P01_F23),
        [(0, (0,), True), (1, (1,), False), (0, (1,), False)],
    ),
    "multi-output, two outputs reached": (
        "f {\n p0 = f32[2,3]{1,0} parameter(0)\n p1 = f32[2,3]{1,0} parameter(1)\n"
        " neg = f32[2,3]{1,0} negate(p1)\n mul = f32[2,3]{1,0} multiply(p0, neg)\n"
        " ROOT tuple = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(mul, neg)\n}\n"
        + _entry("(f32[2,3]{1,0}, f32[2,3]{1,0}) fusion(param_0, param_1), kind=kLoop, calls=f",
                 P01_F23),
        [(0, (0,), True), (0, (1,), False), (1, (0,), True), (1, (1,), True)],
    ),
    "reduction emitter": (
        "mx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\n"
        "f {\n lhs = f32[3,40] parameter(0)\n rhs = f32[3,40] parameter(1)\n"
        " add = f32[3,40] add(lhs, rhs)\n bc = f32[120] bitcast(add)\n init = f32[] constant(-inf)\n"
        " max = f32[] reduce(bc, init), dimensions={0}, to_apply=mx\n"
        " ROOT r = (f32[], f32[3,40]) tuple(max, add)\n}\n"
        + _entry("(f32[], f32[3,40]) fusion(lhs, rhs), kind=kLoop, calls=f",
                 " lhs = f32[3,40] parameter(0)\n rhs = f32[3,40] parameter(1)"),
        [(0, (1,), True)],
    ),
    "scatter root": (
        ADD + "f {\n p0 = s32[3,3] parameter(0)\n p1 = s32[3] parameter(1)\n"
        " indices = s32[3] add(p1, p1)\n p2 = s32[3,3] parameter(2)\n updates = s32[3,3] add(p2, p2)\n"
        f" ROOT s = s32[3,3] scatter(p0, indices, updates), to_apply=add, {SCATTER}\n}}\n"
        + _entry("s32[3,3] fusion(a, b, c), kind=kInput, calls=f",
                 " a = s32[3,3] parameter(0)\n b = s32[3] parameter(1)\n c = s32[3,3] parameter(2)"),
        [(0, (), True), (1, (), False), (2, (), False)],
    ),
    "scatter root, operand also updates": (
        ADD + "f {\n p0 = s32[3,3] parameter(0)\n p1 = s32[3] parameter(1)\n"
        " indices = s32[3] add(p1, p1)\n updates = s32[3,3] add(p0, p0)\n"
        f" ROOT s = s32[3,3] scatter(p0, indices, updates), to_apply=add, {SCATTER}\n}}\n"
        + _entry("s32[3,3] fusion(a, b), kind=kInput, calls=f",
                 " a = s32[3,3] parameter(0)\n b = s32[3] parameter(1)"),
        [(0, (), False), (1, (), False)],
    ),
    "scatter root, duplicate operand": (
        ADD + "f {\n p0 = s32[3,3] parameter(0)\n p1 = s32[3] parameter(1)\n"
        " indices = s32[3] add(p1, p1)\n"
        f" ROOT s = s32[3,3] scatter(p0, indices, p0), to_apply=add, {SCATTER}\n}}\n"
        + _entry("s32[3,3] fusion(a, b), kind=kInput, calls=f",
                 " a = s32[3,3] parameter(0)\n b = s32[3] parameter(1)"),
        [(0, (), False), (1, (), False)],
    ),
    "scatter in a multi-output fusion": (
        ADD + "f {\n p0 = s32[3,3] parameter(0)\n p1 = s32[3] parameter(1)\n"
        " indices = s32[3] add(p1, p1)\n p2 = s32[3,3] parameter(2)\n updates = s32[3,3] add(p2, p2)\n"
        " add = s32[3,3] add(p0, p0)\n"
        f" s = s32[3,3] scatter(p0, indices, updates), to_apply=add, {SCATTER}\n"
        " ROOT o = (s32[3,3], s32[3,3]) tuple(s, add)\n}\n"
        + _entry("(s32[3,3], s32[3,3]) fusion(a, b, c), kind=kInput, calls=f",
                 " a = s32[3,3] parameter(0)\n b = s32[3] parameter(1)\n c = s32[3,3] parameter(2)"),
        [(k, (j,), False) for k in range(3) for j in range(2)],
    ),
    "copy on the path": (
        "f {\n p = s32[2,3]{0,1} parameter(0)\n copy = s32[2,3]{1,0} copy(p)\n"
        " ROOT neg = s32[2,3]{1,0} negate(copy)\n}\n"
        + _entry("s32[2,3]{1,0} fusion(param_0), kind=kLoop, calls=f",
                 " param_0 = s32[2,3]{0,1} parameter(0)"),
        [(0, (), False)],
    ),
    "transpose on the path": (
        "f {\n p = s32[2,3]{1,0} parameter(0)\n t = s32[3,2]{1,0} transpose(p), dimensions={1,0}\n"
        " ROOT neg = s32[3,2]{1,0} negate(t)\n}\n"
        + _entry("s32[3,2]{1,0} fusion(param_0), kind=kLoop, calls=f",
                 " param_0 = s32[2,3]{1,0} parameter(0)"),
        [(0, (), False)],
    ),
    "reduce of a broadcast": (
        ADD + "f {\n p = s32[3]{0} parameter(0)\n b = s32[3,2]{1,0} broadcast(p), dimensions={0}\n"
        " zero = s32[] constant(0)\n ROOT r = s32[3]{0} reduce(b, zero), to_apply=add, dimensions={1}\n}\n"
        + _entry("s32[3]{0} fusion(param_0), kind=kInput, calls=f",
                 " param_0 = s32[3]{0} parameter(0)"),
        [(0, (), False)],
    ),
    "dynamic-update-slice reads the slice it writes": (
        "f {\n p = s32[6]{0} parameter(0)\n b = s32[2,3]{1,0} bitcast(p)\n zero = s32[] constant(0)\n"
        " i = s32[] parameter(1)\n"
        " ds = s32[1,2]{1,0} dynamic-slice(b, i, zero), dynamic_slice_sizes={1,2}\n"
        " one = s32[] constant(1)\n bc = s32[1,2]{1,0} broadcast(one), dimensions={}\n"
        " add = s32[1,2] add(ds, bc)\n dus = s32[2,3]{1,0} dynamic-update-slice(b, add, i, zero)\n"
        " ROOT r = s32[6]{0} bitcast(dus)\n}\n"
        + _entry("s32[6]{0} fusion(param_0, param_1), kind=kInput, calls=f", DUS_PARAMS),
        [(0, (), True)],
    ),
    "dynamic-update-slice and single elements": (
        "f {\n p = s32[6]{0} parameter(0)\n b = s32[2,3]{1,0} bitcast(p)\n zero = s32[] constant(0)\n"
        " i = s32[] parameter(1)\n"
        " ds = s32[1,1]{1,0} dynamic-slice(b, zero, i), dynamic_slice_sizes={1,1}\n"
        " one = s32[] constant(1)\n bo = s32[1,1]{1,0} bitcast(one)\n add = s32[1,1] add(ds, bo)\n"
        " dus = s32[2,3]{1,0} dynamic-update-slice(b, add, i, zero)\n"
        " ROOT r = s32[6]{0} bitcast(dus)\n}\n"
        + _entry("s32[6]{0} fusion(param_0, param_1), kind=kInput, calls=f", DUS_PARAMS),
        [(0, (), True)],
    ),
    "dynamic-slice of another operand": (
        "f {\n p = s32[6]{0} parameter(0)\n b = s32[2,3]{1,0} bitcast(p)\n zero = s32[] constant(0)\n"
        " i = s32[] parameter(1)\n ds = s32[1]{0} dynamic-slice(p, i), dynamic_slice_sizes={1}\n"
        " one = s32[1]{0} constant({1})\n add = s32[1] add(ds, one)\n ba = s32[1,1]{1,0} bitcast(add)\n"
        " dus = s32[2,3]{1,0} dynamic-update-slice(b, ba, i, zero)\n"
        " ROOT r = s32[6]{0} bitcast(dus)\n}\n"
        + _entry("s32[6]{0} fusion(param_0, param_1), kind=kInput, calls=f", DUS_PARAMS),
        [(0, (), False)],
    ),
    "dynamic-update-slice and another output": (
        "f {\n p = s32[6]{0} parameter(0)\n b = s32[2,3]{1,0} bitcast(p)\n zero = s32[] constant(0)\n"
        " i = s32[] parameter(1)\n"
        " ds = s32[1,2]{1,0} dynamic-slice(b, i, zero), dynamic_slice_sizes={1,2}\n"
        " one = s32[] constant(1)\n bc = s32[1,2]{1,0} broadcast(one), dimensions={}\n"
        " add = s32[1,2] add(ds, bc)\n dus = s32[2,3]{1,0} dynamic-update-slice(b, add, i, zero)\n"
        " b1 = s32[6]{0} bitcast(dus)\n neg = s32[2,3]{1,0} negate(b)\n"
        " ROOT o = (s32[6]{0}, s32[2,3]{1,0}) tuple(b1, neg)\n}\n"
        + _entry("(s32[6]{0}, s32[2,3]{1,0}) fusion(param_0, param_1), kind=kInput, calls=f",
                 DUS_PARAMS),
        [(k, (j,), False) for k in range(2) for j in range(2)],
    ),
    "another output reads through a transpose": (
        "f {\n p0 = f32[100,110,120]{2,1,0} parameter(0)\n p1 = f32[120,110,100]{2,1,0} parameter(1)\n"
        " zero = f32[] constant(0.0)\n b = f32[120,110,100]{2,1,0} broadcast(zero), dimensions={}\n"
        " m = f32[120,110,100]{2,1,0} maximum(b, p1)\n"
        " t = f32[120,110,100]{2,1,0} transpose(p0), dimensions={2,1,0}\n"
        " add = f32[120,110,100]{2,1,0} add(t, m)\n"
        " ROOT r = (f32[120,110,100]{2,1,0}, f32[120,110,100]{2,1,0}) tuple(add, m)\n}\n"
        + _entry("(f32[120,110,100]{2,1,0}, f32[120,110,100]{2,1,0}) fusion(a, c), kind=kInput, "
                 "calls=f",
                 " a = f32[100,110,120]{2,1,0} parameter(0)\n c = f32[120,110,100]{2,1,0} parameter(1)"),
        [(k, (j,), False) for k in range(2) for j in range(2)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_fusion_hint_matches_xla(name: str) -> None:
    text, expectations = CASES[name]
    got = [(k, idx, _hint(text, k, idx)) for k, idx, _ in expectations]
    assert got == expectations


def test_non_fusions_leave_the_generic_rules_to_decide() -> None:
    (module,) = parse_modules(
        "HloModule m\nENTRY e {\n p = f32[4]{0} parameter(0)\n ROOT n = f32[4]{0} negate(p)\n}\n",
        "case.hlo",
    )
    root = module.entry.root
    assert root is not None
    assert gpu_may_alias([0], root.shape, root, (), None, {}) is None


@pytest.mark.parametrize(
    ("config", "numbers", "expected"),
    [
        ('{"gemm_backend_config":{"alpha_real":1,"beta":1}}', [2], True),
        ('{"gemm_backend_config":{"alpha_real":1,"beta":0}}', [2], False),
        ('{"gemm_backend_config":{"alpha_real":1}}', [2], False),
        ('{"gemm_backend_config":{"beta":1}}', [0], False),
    ],
)
def test_cublas_lt_bias_is_overwritten_only_when_beta_is_used(
    config: str, numbers: list[int], expected: bool
) -> None:
    (module,) = parse_modules(
        "HloModule m\nENTRY e {\n a = f32[4,4]{1,0} parameter(0)\n b = f32[4,4]{1,0} parameter(1)\n"
        " c = f32[4,4]{1,0} parameter(2)\n"
        " ROOT g = (f32[4,4]{1,0}, s8[1024]{0}) custom-call(a, b, c),"
        f' custom_call_target="__cublas$lt$matmul", backend_config={config}\n}}\n',
        "case.hlo",
    )
    root = module.entry.root
    assert root is not None
    assert gpu_may_alias(numbers, None, root, (0,), None, {}) is expected
    assert gpu_may_alias(numbers, None, root, (1,), None, {}) is False  # the workspace
