"""Loops nested in a loop body: the body's trial evaluation (pass 1 of `DataflowAnalysis._while`)
must leave nothing behind. It used to leave the inner loops' value sets, holding phis it had
deleted, in `while_sets`: AliasAnalysis then indexed past the values (exit 4 on XLA's
copy_insertion_test.cc:2347 and memory_bound_loop_optimizer_test.cc:1614) or, where the ids had
been reused, joined unrelated values."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hlo_layout.cli import app
from hlo_layout.memory import analyze_memory
from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.dataflow import DataflowAnalysis
from hlo_layout.syntax import parse

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
def test_memory_command_reads_nested_loops(text: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "nested.hlo"
    path.write_text(text)
    result = CliRunner().invoke(app, ["memory", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    (m,) = json.loads(result.stdout)["modules"]
    assert m["peak_bytes"] == analyze_memory(parse(text)).peak_bytes
