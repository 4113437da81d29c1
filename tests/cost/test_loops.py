"""Loop-aware totals: while bodies × their trip count (XLA's annotation, else its pattern match,
else the condition stepped through), nested loops multiplied, calls counted per call site, a
conditional's costliest branch; each computation costed once.

The oracle: programs written twice (tests/data/cost/loops/gen.py: fori_loop, scan, nested loops,
a `<=` while loop, and each unrolled in Python) — our loop-aware flops of the looped program equal
XLA's flops of the unrolled one within 1 %, and our XLA-convention flops equal XLA's of the
looped one.
"""

from __future__ import annotations

import json

import pytest

from hlo_layout.cost import CostError
from hlo_layout.cost.analysis import HloCostAnalysis
from hlo_layout.cost.model import module_cost
from hlo_layout.cost.properties import Properties
from hlo_layout.syntax import parse, parse_file_modules
from hlo_layout.syntax.tree import Computation
from tests.support import DATA

LOOPS = DATA / "cost" / "loops"
EXPECTED = json.loads((LOOPS / "expected.json").read_text())


@pytest.mark.parametrize("kind", ["looped", "looped.before"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_looped_program_costs_the_unrolled_one(name: str, kind: str) -> None:
    cost = module_cost(parse_file_modules(LOOPS / f"{name}.{kind}.txt")[0])
    assert cost.xla.flops == EXPECTED[name][kind]["flops"]
    unrolled = EXPECTED[name]["unrolled"]
    assert cost.total.flops == pytest.approx(unrolled["flops"], rel=0.01)
    assert cost.total.transcendentals == pytest.approx(unrolled.get("transcendentals", 0), rel=0.01)
    assert cost.loops and all(loop.trip_count is not None for loop in cost.loops)
    how = {loop.how for loop in cost.loops}
    assert how == ({"known_trip_count"} if kind == "looped" else how - {"known_trip_count"})


def _module(body_update: str, condition: str, init: str = "0", extra: str = "") -> str:
    return f"""HloModule m
body {{
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  c = s32[] constant(CONST)
  n = s32[] {body_update}
  y = f32[8] multiply(x, x)
  ROOT t = (s32[], f32[8]) tuple(n, y)
}}
cond {{
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s32[] constant(BOUND)
  ROOT lt = pred[] {condition}
}}
ENTRY e {{
  x = f32[8] parameter(0)
  {extra}
  s = s32[] constant({init})
  init = (s32[], f32[8]) tuple(s, x)
  ROOT w = (s32[], f32[8]) while(init), condition=cond, body=body
}}"""


@pytest.mark.parametrize(
    ("update", "step", "condition", "bound", "init", "trips", "how"),
    [
        ("add(i, c)", 1, "compare(i, b), direction=LT", 10, "0", 10, "pattern: i < N"),
        ("add(c, i)", 1, "compare(i, b), direction=LE", 10, "3", 8, "pattern: i <= N"),
        ("add(i, c)", 1, "compare(i, b), direction=LT", 2, "5", 0, "pattern: i < N"),
        ("subtract(i, c)", 1, "compare(i, b), direction=GT", 0, "10", 10, "evaluated"),
        ("add(i, c)", 3, "compare(i, b), direction=LT", 10, "0", 4, "evaluated"),
        ("add(i, c)", 1, "compare(b, i), direction=GT", 7, "0", 7, "evaluated"),
        ("multiply(i, c)", 2, "compare(i, b), direction=LT", 100, "1", 7, "evaluated"),
    ],
)
def test_trip_count_from_the_loop(
    update: str, step: int, condition: str, bound: int, init: str, trips: int, how: str
) -> None:
    text = _module(update, condition, init).replace("CONST", str(step)).replace("BOUND", str(bound))
    cost = module_cost(parse(text))
    (loop,) = cost.loops
    assert loop.trip_count == trips
    assert loop.how.startswith(how)
    # Per iteration the update (1 flop) and the multiply (8); the condition runs once more.
    assert cost.total.flops == trips * 9 + (trips + 1) * 1


def test_unknown_trip_count_counts_once_and_says_why() -> None:
    text = _module("add(i, c)", "compare(i, b), direction=LT", "0").replace("CONST", "1")
    text = text.replace("b = s32[] constant(BOUND)", "b = s32[] constant(0)")
    text = text.replace("s = s32[] constant(0)", "s = s32[] parameter(1)")
    cost = module_cost(parse(text))
    (loop,) = cost.loops
    assert loop.trip_count is None and loop.how.startswith("unknown:")
    assert "constant" in loop.how
    assert cost.total.flops == cost.xla.flops


def test_step_by_step_stops_at_its_limit() -> None:
    text = _module("add(i, c)", "compare(i, b), direction=NE", "0").replace("CONST", "2")
    cost = module_cost(parse(text.replace("BOUND", "7")))
    (loop,) = cost.loops
    assert loop.trip_count is None and "10000 steps" in loop.how


def test_known_trip_count_wins() -> None:
    text = _module("add(i, c)", "compare(i, b), direction=LT", "0")
    text = text.replace("CONST", "1").replace("BOUND", "10")
    text = text.replace("body=body", 'body=body, backend_config={"known_trip_count":{"n":"25"}}')
    (loop,) = module_cost(parse(text)).loops
    assert (loop.trip_count, loop.how) == (25, "known_trip_count")


NESTED_AND_CALLS = """HloModule m
leaf {
  a = f32[16] parameter(0)
  ROOT e = f32[16] exponential(a)
}
inner_body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16] get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  y = f32[16] call(x), to_apply=leaf
  z = f32[16] call(y), to_apply=leaf
  ROOT t = (s32[], f32[16]) tuple(n, z)
}
inner_cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s32[] constant(3)
  ROOT lt = pred[] compare(i, b), direction=LT
}
outer_body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  it = (s32[], f32[16]) tuple(zero, x)
  w = (s32[], f32[16]) while(it), condition=inner_cond, body=inner_body
  y = f32[16] get-tuple-element(w), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[16]) tuple(n, y)
}
outer_cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s32[] constant(5)
  ROOT lt = pred[] compare(i, b), direction=LT
}
cheap {
  a = f32[16] parameter(0)
  ROOT n = f32[16] negate(a)
}
costly {
  a = f32[16] parameter(0)
  m = f32[16] multiply(a, a)
  ROOT s = f32[16] sine(m)
}
ENTRY e {
  x = f32[16] parameter(0)
  zero = s32[] constant(0)
  it = (s32[], f32[16]) tuple(zero, x)
  w = (s32[], f32[16]) while(it), condition=outer_cond, body=outer_body
  y = f32[16] get-tuple-element(w), index=1
  k = s32[] parameter(1)
  ROOT c = f32[16] conditional(k, y, y), branch_computations={cheap, costly}
}"""


def test_nested_loops_multiply_and_calls_count_per_site() -> None:
    cost = module_cost(parse(NESTED_AND_CALLS))
    ex = cost.executions
    assert ex["outer_body"] == 5 and ex["outer_cond"] == 6
    assert ex["inner_body"] == 15 and ex["inner_cond"] == 5 * 4
    assert ex["leaf"] == 2 * 15  # two call sites in the inner body
    assert ex["costly"] == 1 and ex["cheap"] == 0
    (branch,) = cost.branches
    assert (branch.counted, branch.branches) == ("costly", ("cheap", "costly"))
    # 30 leaf calls × 16 exp; the inner counters: 15 adds, 20 compares; outer: 5 + 6;
    # the costly branch: 16 multiplies and 16 sines.
    assert cost.total.transcendentals == 30 * 16 + 16
    assert cost.total.flops == 15 + 20 + 5 + 6 + 16
    assert {(loop.instruction, loop.trip_count) for loop in cost.loops} == {("w", 5), ("w", 3)}


def test_each_computation_is_costed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of 40 computations, each calling the next at two sites: 2**40 paths, each
    computation visited once (the analysis of physical sizes is skipped: nothing is padded), and
    the leaf runs 2**40 times."""
    depth = 40
    parts = ["HloModule m", "c0 {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}"]
    for k in range(1, depth + 1):
        parts.append(
            f"c{k} {{\n  a = f32[4] parameter(0)\n  x = f32[4] call(a), to_apply=c{k - 1}\n"
            f"  ROOT y = f32[4] call(x), to_apply=c{k - 1}\n}}"
        )
    parts.append(
        f"ENTRY e {{\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] call(a), to_apply=c{depth}\n}}"
    )
    visits: list[str] = []
    visit = HloCostAnalysis._visit

    def counted(self: HloCostAnalysis, computation: Computation, keep: bool) -> Properties:
        visits.append(computation.name)
        return visit(self, computation, keep)

    monkeypatch.setattr(HloCostAnalysis, "_visit", counted)
    cost = module_cost(parse("\n".join(parts)))
    names = {f"c{k}" for k in range(depth + 1)} | {"e"}
    assert set(visits) == names and len(visits) == len(names)  # once (no padding: one analysis)
    assert cost.executions["c0"] == 2**depth
    assert cost.total.flops == 4 * 2**depth


def test_a_call_graph_cycle_is_rejected_with_its_location() -> None:
    text = """HloModule m
a {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=b
}
b {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=a
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=a
}"""
    with pytest.raises(CostError) as caught:
        module_cost(parse(text, verify=False))
    assert "cycle" in caught.value.message
    assert caught.value.span is not None and caught.value.span.line in (4, 8)


@pytest.mark.parametrize(
    ("text", "trips", "reason"),
    [
        (  # a loop state that is one scalar, not a tuple (hlo_verifier_test.cc)
            """HloModule m
body { p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(one, p) }
cond { p = s32[] parameter(0)
  five = s32[] constant(5)
  ROOT gt = pred[] compare(five, p), direction=GT }
ENTRY e { z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body }""",
            5,
            "",
        ),
        (  # a flag the body clears (hlo_evaluator_test.cc): one step
            """HloModule m
body { p = (pred[], f32[4]) parameter(0)
  x = f32[4] get-tuple-element(p), index=1
  y = f32[4] add(x, x)
  f = pred[] constant(false)
  ROOT t = (pred[], f32[4]) tuple(f, y) }
cond { p = (pred[], f32[4]) parameter(0)
  ROOT g = pred[] get-tuple-element(p), index=0 }
ENTRY e { x = f32[4] parameter(0)
  t = pred[] constant(true)
  i = (pred[], f32[4]) tuple(t, x)
  ROOT w = (pred[], f32[4]) while(i), condition=cond, body=body }""",
            1,
            "",
        ),
        (  # a bound carried in the loop state and a call returning a tuple
            """HloModule m
pick { p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  lt = pred[] compare(i, n), direction=LT
  ROOT t = (pred[]) tuple(lt) }
body { p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  two = s32[] constant(2)
  j = s32[] add(i, two)
  ROOT t = (s32[], s32[]) tuple(j, n) }
cond { p = (s32[], s32[]) parameter(0)
  c = (pred[]) call(p), to_apply=pick
  ROOT g = pred[] get-tuple-element(c), index=0 }
ENTRY e { z = s32[] constant(0)
  n = s32[] constant(9)
  i = (s32[], s32[]) tuple(z, n)
  ROOT w = (s32[], s32[]) while(i), condition=cond, body=body }""",
            5,
            "",
        ),
        (  # a state that does not change: the loop does not end
            """HloModule m
body { p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ROOT t = (s32[]) tuple(i) }
cond { p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s32[] constant(3)
  ROOT lt = pred[] compare(i, b), direction=LT }
ENTRY e { z = s32[] constant(0)
  i = (s32[]) tuple(z)
  ROOT w = (s32[]) while(i), condition=cond, body=body }""",
            None,
            "does not change",
        ),
    ],
)
def test_loops_run_step_by_step(text: str, trips: int | None, reason: str) -> None:
    (loop,) = module_cost(parse(text)).loops
    assert loop.trip_count == trips, loop.how
    assert loop.how.startswith("evaluated step by step" if trips is not None else "unknown:")
    assert reason in loop.how
