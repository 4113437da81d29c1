"""The small evaluator behind trip counts XLA leaves unannotated (hlo_layout/cost/evaluate.py)."""

from __future__ import annotations

import pytest

from hlo_layout.cost.evaluate import Evaluator
from hlo_layout.syntax import parse


def _root(body: str) -> object:
    module = parse(f"HloModule m\n{body}")
    entry = module.entry
    assert entry is not None and entry.root is not None
    return Evaluator(module).value(entry, entry.root, {0: 7})


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("a = s32[] constant(-7)\n b = s32[] constant(2)\n ROOT d = s32[] divide(a, b)", -3),
        ("a = s8[] constant(127)\n b = s8[] constant(1)\n ROOT d = s8[] add(a, b)", -128),
        ("a = f32[] constant(0.1)\n ROOT c = f64[] convert(a)", 0.10000000149011612),
        ("a = f32[] constant(2.9)\n ROOT c = s32[] convert(a)", 2),
        ("p = s32[] parameter(0)\n c = s32[1] reshape(p)\n ROOT n = s32[1] negate(c)", -7),
        ("a = bf16[] constant(1)\n ROOT n = bf16[] negate(a)", None),
        ("a = f32[100000] parameter(0)\n ROOT n = f32[100000] negate(a)", None),
    ],
)
def test_values(lines: str, expected: object) -> None:
    assert _root(f"ENTRY e {{\n {lines}\n}}") == expected


def test_a_bound_computed_in_the_graph() -> None:
    """`(iota(10) < 5).sum()` inside a fusion, as jax writes a bound computed from an iota."""
    text = """
sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fused {
  i = s32[2,5] iota(), iota_dimension=1
  five = s32[] constant(3)
  b = s32[2,5] broadcast(five), dimensions={}
  lt = pred[2,5] compare(i, b), direction=LT
  c = s32[2,5] convert(lt)
  zero = s32[] constant(0)
  ROOT r = s32[] reduce(c, zero), dimensions={0,1}, to_apply=sum
}
ENTRY e {
  ROOT f = s32[] fusion(), kind=kLoop, calls=fused
}"""
    assert _root(text) == 6
