"""memory/schedule.py: the get-tuple-elements newer printers fold into `%x#N` operands, put back
where XLA scheduled them (NOTE: [folded get-tuple-elements]).

XLA:CPU's schedule is BFSMemoryScheduler's: the replay must give back, for every computation of
every older CPU dump (printed with its get-tuple-elements), the compiler's own sequence once those
are folded away. Times are what matter: the order within a run of get-tuple-elements changes none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.memory.schedule import scheduled_sequence
from hlo_layout.syntax import parse, parse_file
from hlo_layout.syntax.index import computation_kinds
from hlo_layout.syntax.tree import Computation, Operand
from tests.memory.helpers import CORPUS, CPU_GENERATED

GTE = "get-tuple-element"


def _folded(c: Computation) -> Computation | None:
    """`c` as the compact printer writes it: every get-tuple-element of a non-tuple-element
    instruction gone, its users reading `%x#N`; None when there is nothing to fold (or a root or
    a nested get-tuple-element, which it does not fold)."""
    gtes: dict[str, tuple[str, int]] = {}
    for i in c.instructions:
        if i.opcode != GTE:
            continue
        x = c.get(i.operands[0].name)
        a = i.attr("index")
        if i.is_root or x is None or x.opcode == GTE or a is None:
            return None
        key = (x.name, int(a.raw))
        if key in gtes.values():
            return None
        gtes[i.name] = key
    if not gtes:
        return None
    kept = [
        i._replace(
            operands=tuple(Operand(*gtes[o.name]) if o.name in gtes else o for o in i.operands)
        )
        for i in c.instructions
        if i.name not in gtes
    ]
    return Computation(c.name, tuple(kept), is_entry=c.is_entry)


def _times(names: list[str]) -> list[object]:
    """A sequence with each run of get-tuple-elements (`x#N`) as a set: what times depend on."""
    out: list[object] = []
    run: set[str] = set()
    for n in names:
        if "#" in n:
            run.add(n)
            continue
        if run:
            out.append(frozenset(run))
            run = set()
        out.append(n)
    if run:
        out.append(frozenset(run))
    return out


CPU_DUMPS = sorted(
    [
        *(CORPUS / "jax-cpu").glob("*after_optimizations.txt"),
        *(p for folder in CPU_GENERATED for p in folder.glob("*after_optimizations.txt")),
    ]
)


@pytest.mark.parametrize("dump", CPU_DUMPS, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_bfs_replay_gives_back_the_cpu_schedule(dump: Path) -> None:
    module = parse_file(dump)
    kinds = computation_kinds(module)
    for c in module.computations:
        if kinds.get(c.name) != "global":
            continue
        folded = _folded(c)
        if folded is None:
            continue
        want = [
            f"{i.operands[0].name}#{i.attr('index').raw}" if i.opcode == GTE else i.name  # type: ignore[union-attr]
            for i in c.instructions
        ]
        got = [i.name for i in scheduled_sequence(folded, "bfs")]
        assert _times(got) == _times(want), c.name


def test_bfs_replay_cases_were_checked() -> None:
    """The parametrized test above is not vacuous: many computations fold."""
    count = 0
    for dump in CPU_DUMPS:
        module = parse_file(dump)
        kinds = computation_kinds(module)
        count += sum(1 for c in module.computations if kinds.get(c.name) == "global" and _folded(c))
    assert count >= 100


LOOP = """
HloModule m, is_scheduled=true

%body (p: (s32[], f32[4], f32[4])) -> (s32[], f32[4], f32[4]) {
  %p = (s32[], f32[4], f32[4]) parameter(0)
  %one = s32[] constant(1)
  %i = s32[] add(%p#0, %one)
  %a = f32[4] negate(%p#2)
  %b = f32[4] add(%p#1, %a)
  ROOT %t = (s32[], f32[4], f32[4]) tuple(%i, %b, %a)
}

%cond (q: (s32[], f32[4], f32[4])) -> pred[] {
  %q = (s32[], f32[4], f32[4]) parameter(0)
  %n = s32[] constant(9)
  ROOT %lt = pred[] compare(%q#0, %n), direction=LT
}

ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4], f32[4]) tuple(%zero, %x, %x)
  %w = (s32[], f32[4], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[4] add(%w#1, %w#2)
}
"""


def test_bfs_places_a_tuples_elements_in_its_batch() -> None:
    """BFS: the parameter, then the constant (both ready at the start), then the parameter's
    get-tuple-elements (made ready by it), then what those make ready, in that order."""
    module = parse(LOOP)
    body = module.computation("body")
    assert body is not None
    names = [i.name for i in scheduled_sequence(body, "bfs")]
    assert names[:2] == ["p", "one"]
    assert set(names[2:5]) == {"p#0", "p#1", "p#2"}
    assert names[5:] == ["i", "a", "b", "t"]
    entry = module.computation("e")
    assert entry is not None
    assert [i.name for i in scheduled_sequence(entry, "bfs")][-3:-1] in (
        ["w#1", "w#2"],
        ["w#2", "w#1"],
    )


def test_the_tuple_lives_until_its_last_element_is_read() -> None:
    """The restored get-tuple-elements use the tuple's top-level value (HloValue's
    MayUseOperandValue), so the while result's tuple table lives until they run."""
    from hlo_layout.memory import analyze_memory

    ma = analyze_memory(parse(LOOP), "cpu")
    rows = {(v.name, v.index): (v.start, v.end) for v in ma.values}
    steps = ma.sequence
    assert steps[-3:] in (["w#1", "w#2", "r"], ["w#2", "w#1", "r"])
    assert rows[("w", ())][1] == len(steps) - 2  # the last get-tuple-element's step


def test_unfolded_computations_are_their_own_sequence() -> None:
    """Nothing folded: the computation's own instruction tuple, no copy made."""
    plain = parse(
        "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(a)\n}\n"
    )
    c = plain.computations[0]
    assert scheduled_sequence(c, "bfs") is c.instructions
    assert scheduled_sequence(c, "before_first_user") is c.instructions
