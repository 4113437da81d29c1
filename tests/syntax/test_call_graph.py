"""The one call-graph walk (`index.walk_calls`, `computation_post_order`): each computation once,
after its callees; a cycle is refused by the verifier at the call that closes it, for every
command and for the streamed reader (XLA's parser only names computations already defined, so
XLA never builds a cyclic call graph)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloSemanticError
from hlo_layout.memory import analyze_memory
from hlo_layout.syntax import parse
from hlo_layout.syntax.index import (
    CallCycleError,
    call_cycle,
    computation_post_order,
    walk_calls,
)
from tests.support import Cli

_ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
_COND = "cond {\n  p = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"

#: name -> (module text, line:col of the call closing the cycle, the cycle as the error gives it)
CYCLES = {
    "call to itself": (
        "HloModule m\nENTRY main {\n  p = f32[4] parameter(0)\n"
        "  ROOT r = f32[4] call(p), to_apply=main\n}\n",
        "4:3",
        "main -> main",
    ),
    "while body reaching its caller": (
        "HloModule m\n" + _COND + "a {\n  p = f32[4] parameter(0)\n"
        "  ROOT r = f32[4] call(p), to_apply=b\n}\n"
        "b {\n  p = f32[4] parameter(0)\n"
        "  ROOT w = f32[4] while(p), condition=cond, body=a\n}\n"
        "ENTRY main {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=a\n}\n",
        "12:3",
        "a -> b -> a",
    ),
    "conditional branch": (
        "HloModule m\nbranch {\n  p = f32[4] parameter(0)\n"
        "  i = s32[] constant(0)\n"
        "  ROOT c = f32[4] conditional(i, p, p), branch_computations={branch, branch}\n}\n"
        "ENTRY main {\n  p = f32[4] parameter(0)\n"
        "  ROOT r = f32[4] call(p), to_apply=branch\n}\n",
        "5:3",
        "branch -> branch",
    ),
    "async-start calls=": (
        "HloModule m\nwrapped {\n  p = f32[4] parameter(0)\n"
        "  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped\n"
        "  ROOT d = f32[4] async-done(s)\n}\n"
        "ENTRY main {\n  p = f32[4] parameter(0)\n"
        "  ROOT r = f32[4] call(p), to_apply=wrapped\n}\n",
        "4:3",
        "wrapped -> wrapped",
    ),
    "reducer through a fusion": (
        "HloModule m\n"
        "red {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT f = f32[] fusion(a, b), kind=kLoop, calls=fused\n}\n"
        "fused {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=red\n}\n"
        "ENTRY main {\n  p = f32[4] parameter(0)\n"
        "  ROOT f = f32[] fusion(p), kind=kLoop, calls=fused\n}\n",
        "5:3",
        "fused -> red -> fused",
    ),
}

COMMANDS = [
    ["inspect", "{}"],
    ["inspect", "{}", "-f", "json"],
    ["inspect", "{}", "-f", "json", "--stream"],
    ["memory", "{}"],
    ["sharding", "{}"],
    ["check", "{}", "--no-rules-ok"],
    ["diff", "{}", "{}"],
    ["indexing", "{}", "--computation", "main"],
    ["report", "{}", "-o", "{out}"],
]


@pytest.mark.parametrize("name", CYCLES)
def test_a_cycle_is_refused_at_the_call_closing_it(name: str) -> None:
    text, where, ring = CYCLES[name]
    with pytest.raises(HloSemanticError) as caught:
        parse(text, "m.hlo")
    error = caught.value
    assert f"{error.span.line}:{error.span.column}" == where
    assert f"call cycle {ring}" in error.message


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_every_command_refuses_a_cycle(cli: Cli, tmp_path: Path, args: list[str]) -> None:
    text, where, _ = CYCLES["while body reaching its caller"]
    path = tmp_path / "m.hlo"
    path.write_text(text)
    argv = [a.replace("{}", str(path)).replace("{out}", str(tmp_path / "r.html")) for a in args]
    result = cli(*argv)
    assert result.exit_code == 3, result.output
    assert f"{path}:{where}: error: " in result.stderr
    assert "call cycle a -> b -> a" in result.stderr


def test_an_unverified_module_is_refused_by_the_analyses_too() -> None:
    text = CYCLES["call to itself"][0]
    module = parse(text, verify=False)
    assert call_cycle(module) is not None
    with pytest.raises(CallCycleError):
        computation_post_order(module)
    with pytest.raises(CallCycleError):
        analyze_memory(module)


def test_post_order_of_a_module() -> None:
    text = (
        "HloModule m\n" + _ADD + _COND + "body {\n  p = f32[4] parameter(0)\n"
        "  z = f32[] constant(0)\n  r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
        "  ROOT n = f32[4] negate(p)\n}\n"
        "unused {\n  ROOT p = f32[] parameter(0)\n}\n"
        "ENTRY main {\n  p = f32[4] parameter(0)\n"
        "  w = f32[4] while(p), condition=cond, body=body\n"
        "  ROOT c = f32[4] call(w), to_apply=body\n}\n"
    )
    order = [c.name for c in computation_post_order(parse(text))]
    # the entry's callees first (each once, body before its caller), then the others
    assert order == ["cond", "add", "body", "main", "unused"]


@st.composite
def _graphs(draw: st.DrawFn) -> dict[str, list[tuple[int, list[str]]]]:
    n = draw(st.integers(1, 8))
    names = [f"c{k}" for k in range(n)]
    edges: dict[str, list[tuple[int, list[str]]]] = {}
    site = 0
    for name in names:
        for _ in range(draw(st.integers(0, 3))):
            callees = draw(st.lists(st.sampled_from([*names, "missing"]), min_size=1, max_size=3))
            edges.setdefault(name, []).append((site, callees))
            site += 1
    return edges


def _has_cycle(names: list[str], edges: dict[str, list[tuple[int, list[str]]]]) -> bool:
    reach = {a: {b for _, bs in edges.get(a, ()) for b in bs if b in names} for a in names}
    for _ in names:  # transitive closure by repeated steps
        for a in names:
            reach[a] = reach[a].union(*(reach[b] for b in reach[a]))
    return any(a in reach[a] for a in names)


@settings(max_examples=300, deadline=None)
@given(_graphs())
def test_walk_visits_each_computation_once_after_its_callees(edges: dict) -> None:
    names = sorted({*edges, *(b for calls in edges.values() for _, bs in calls for b in bs)})
    names = [n for n in names if n != "missing"]
    found = walk_calls(names, edges, set(names))
    if _has_cycle(names, edges):
        assert not isinstance(found, list)
        site, callee, cycle = found
        # the reported call closes the reported cycle: callee ... caller, caller calls callee
        assert cycle[0] == callee
        assert any(s == site and callee in bs for s, bs in edges[cycle[-1]])
        for a, b in itertools.pairwise(cycle):
            assert any(b in bs for _, bs in edges.get(a, ()))
        return
    assert isinstance(found, list)
    assert sorted(found) == names  # each once
    position = {n: k for k, n in enumerate(found)}
    for caller, calls in edges.items():
        for _, callees in calls:
            for callee in callees:
                if callee in position:
                    assert position[callee] < position[caller]
