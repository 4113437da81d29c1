"""Loops nested in a loop body: the body's trial evaluation (pass 1 of `DataflowAnalysis._while`)
must leave nothing behind. It used to leave the inner loops' value sets, holding phis it had
deleted, in `while_sets`: AliasAnalysis then indexed past the values (exit 4 on XLA's
copy_insertion_test.cc:2347 and memory_bound_loop_optimizer_test.cc:1614) or, where the ids had
been reused, joined unrelated values."""

from __future__ import annotations

import json

import pytest

from hlo_layout.memory import analyze_memory
from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.dataflow import DataflowAnalysis
from hlo_layout.syntax import parse
from tests.memory.helpers import evaluations
from tests.support import Cli

# copy_insertion_test.cc:2347: the outer body's ROOT is its own parameter; `while` and `not`
# are names in two computations.
OUTER_ROOT_IS_PARAM = """HloModule TestModule

cond.inner {
  ROOT param.cond.inner = pred[] parameter(0)
}

body.inner {
  param.body.inner = pred[] parameter(0)
  ROOT not = pred[] not(param.body.inner)
}

cond.outer {
  ROOT param.cond.outer = pred[] parameter(0)
}

body.outer {
  ROOT param.cond.outer = pred[] parameter(0)
  while = pred[] while(param.cond.outer), condition=cond.inner, body=body.inner
  after-all = token[] after-all()
  outfeed = token[] outfeed(while, after-all)
}

ENTRY TestComputation {
  entry_param = pred[] parameter(0)
  while = pred[] while(entry_param), condition=cond.outer, body=body.outer
  ROOT not = pred[] not(while)
}
"""

# Two loops in a scheduled loop body, carrying tuples (memory_bound_loop_optimizer_test.cc:1614
# in small).
TWO_INNER_LOOPS = """HloModule m, is_scheduled=true

inner_cond {
  p = (f32[4], pred[]) parameter(0)
  ROOT c = pred[] get-tuple-element(p), index=1
}

inner_body {
  p = (f32[4], pred[]) parameter(0)
  x = f32[4] get-tuple-element(p), index=0
  b = pred[] get-tuple-element(p), index=1
  n = f32[4] negate(x)
  ROOT t = (f32[4], pred[]) tuple(n, b)
}

outer_cond {
  p = (f32[4], pred[]) parameter(0)
  ROOT c = pred[] get-tuple-element(p), index=1
}

outer_body {
  p = (f32[4], pred[]) parameter(0)
  w1 = (f32[4], pred[]) while(p), condition=inner_cond, body=inner_body
  ROOT w2 = (f32[4], pred[]) while(w1), condition=inner_cond, body=inner_body
}

ENTRY e {
  a = f32[4] parameter(0)
  b = pred[] parameter(1)
  t = (f32[4], pred[]) tuple(a, b)
  ROOT w = (f32[4], pred[]) while(t), condition=outer_cond, body=outer_body
}
"""


@pytest.mark.parametrize("text", [OUTER_ROOT_IS_PARAM, TWO_INNER_LOOPS], ids=["root", "two"])
def test_loop_sets_hold_only_live_values(text: str) -> None:
    df = DataflowAnalysis(parse(text))
    loops = sum(1 for c in df.module.computations for i in c.instructions if i.opcode == "while")
    assert len(df.while_sets) == loops  # one record per loop: pass 1 recorded none
    for sets in df.while_sets:
        for vs in sets:
            for values in vs.values():
                assert all(df.values[v.id] is v for v in values)
    AliasAnalysis(df)


def test_inner_loop_carry_is_one_buffer() -> None:
    """XLA's alias rule for a loop: init, body parameter, body root and result of an element
    share a buffer. The inner loops' f32 carry joins the outer one's (all negate in place)."""
    df = DataflowAnalysis(parse(TWO_INNER_LOOPS))
    alias = AliasAnalysis(df)
    (outer,) = [s for s in df.while_sets if s[4] and s[4][(0,)][0].computation.name == "e"]
    inner = [s for s in df.while_sets if s is not outer]
    assert len(inner) == 2
    buffer = {alias.buffer_of[v.id] for s in inner for vs in s for v in vs.get((0,), ())}
    assert len(buffer) == 1


@pytest.mark.parametrize("text", [OUTER_ROOT_IS_PARAM, TWO_INNER_LOOPS], ids=["root", "two"])
def test_memory_command_reads_nested_loops(cli: Cli, text: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "nested.hlo"
    path.write_text(text)
    result = cli("memory", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    (m,) = json.loads(result.stdout)["modules"]
    assert m["peak_bytes"] == analyze_memory(parse(text)).peak_bytes


class _PassOneEverywhere(DataflowAnalysis):
    """The analysis as it was before `_through` (NOTE: [one pass]): pass 1 evaluated in full at
    every loop, every time (nested loops included), two evaluations per level of nesting."""

    @property  # type: ignore[override]
    def _trials(self) -> int:
        return 0

    @_trials.setter
    def _trials(self, value: int) -> None:
        pass

    def _through(self, body, param, shape):  # type: ignore[no-untyped-def]
        self._through_memo.clear()
        return (yield from super()._through(body, param, shape))


def _facts(df: DataflowAnalysis) -> list:
    """Everything the later analyses read of a dataflow analysis, by names and ids."""
    positions, uses = df.positions_and_uses()
    values = [
        (
            v.id,
            v.label,
            v.computation.name,
            v.is_phi,
            [(c.name, i.name, index) for c, i, index in positions[v.id]],
            [(c.name, i.name, k, index) for c, i, k, index in uses[v.id]],
        )
        for v in df.values
    ]
    sets = {
        (c, name): sorted((index, [v.id for v in vs]) for index, vs in s.items())
        for c, by_name in df.sets.items()
        for name, s in by_name.items()
    }
    loops = [
        [sorted((index, [v.id for v in vs]) for index, vs in s.items()) for s in record]
        for record in df.while_sets
    ]
    return [values, sets, loops, sorted(df.callee_of)]


def _nest(depth: int, *, extra: str = "") -> str:
    """`depth` loops, each body running the next; the carried tuple's element 0 is passed
    through, element 1 negated, element 2 replaced by a conditional's result."""
    shape = "(f32[4], f32[4], f32[4], s32[])"
    parts = ["HloModule m, is_scheduled=true\n", extra]
    parts.append(
        "b_true {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
        "b_false {\n  ROOT p = f32[4] parameter(0)\n}\n"
    )
    for k in range(depth):
        parts.append(
            f"cond{k} {{\n  p = {shape} parameter(0)\n  i = s32[] get-tuple-element(p), index=3\n"
            f"  z = s32[] constant(4)\n  ROOT c = pred[] compare(i, z), direction=LT\n}}\n"
        )
        inner = (
            f"  w = {shape} while(p), condition=cond{k - 1}, body=body{k - 1}\n"
            f"  q = {shape} copy(w)\n"
            if k
            else f"  q = {shape} copy(p)\n"
        )
        parts.append(
            f"body{k} {{\n  p = {shape} parameter(0)\n{inner}"
            "  a = f32[4] get-tuple-element(q), index=0\n"
            "  b = f32[4] get-tuple-element(q), index=1\n"
            "  c = f32[4] get-tuple-element(q), index=2\n"
            "  i = s32[] get-tuple-element(q), index=3\n"
            "  nb = f32[4] negate(b)\n"
            "  t = pred[] constant(true)\n"
            "  x = f32[4] conditional(t, c, c), true_computation=b_true, "
            "false_computation=b_false\n"
            f"  ROOT r = {shape} tuple(a, nb, x, i)\n}}\n"
        )
    parts.append(
        f"ENTRY e {{\n  a = f32[4] parameter(0)\n  i = s32[] constant(0)\n"
        f"  t = {shape} tuple(a, a, a, i)\n"
        f"  ROOT w = {shape} while(t), condition=cond{depth - 1}, body=body{depth - 1}\n}}\n"
    )
    return "".join(parts)


def _while_dumps() -> list:
    from tests.support import DATA, hlo_files

    found = [p for p in hlo_files() if "while(" in p.read_text()]
    found += [p for p in sorted((DATA / "xla-tests").glob("*.txt")) if "while(" in p.read_text()]
    return found


@pytest.mark.parametrize(
    "text",
    [OUTER_ROOT_IS_PARAM, TWO_INNER_LOOPS, _nest(1), _nest(3), _nest(6)],
    ids=["root", "two", "nest1", "nest3", "nest6"],
)
def test_one_pass_one_gives_what_pass_one_everywhere_gave(text: str) -> None:
    module = parse(text)
    assert _facts(DataflowAnalysis(module)) == _facts(_PassOneEverywhere(module))


@pytest.mark.parametrize("path", _while_dumps(), ids=lambda p: p.name[:60])
def test_one_pass_one_on_dumps_with_loops(path) -> None:  # type: ignore[no-untyped-def]
    from hlo_layout.syntax import parse_file_modules

    for module in parse_file_modules(path):
        if module.entry is not None:
            assert _facts(DataflowAnalysis(module)) == _facts(_PassOneEverywhere(module))


def test_nested_loops_cost_one_evaluation_per_body(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each body is evaluated once by pass 1 and once by pass 2: 2n evaluations for n nested
    loops (pass 1 everywhere took 2^(n+1) - 2)."""
    seen = evaluations(monkeypatch)
    DataflowAnalysis(parse(_nest(12)))
    bodies = [name for name in seen if name.startswith("body")]
    assert len(bodies) == 2 * 12
