"""What a whole-computation walk costs and where it stops (indexing/fusion.py): linear in the
size of wide tuples and concatenates, nested calls followed past Python's stack, a step budget
that ends in explicit unknown maps, the identity short-cut equal to the full composition, the
`ENTRY` name, and a recursion limit reported at its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_indexing import calls_dump, concat_dump, tuple_dump
from hlo_layout.indexing import fusion
from hlo_layout.indexing.fusion import computation_input_to_output, computation_output_to_input
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.report import indexing_model
from hlo_layout.report.indexing_model import IndexingTargetError, find_target, indexing_report
from hlo_layout.syntax import Module, parse
from hlo_layout.syntax.parse import parse_file_modules
from tests.support import SAMPLES, Cli


def _texts(maps: Any) -> list[list[str]]:
    return [sorted(str(oi) for oi in slot) for slot in maps]


def _steps(module: Module, direction: str) -> int:
    """Budget steps one report on the entry computation spends."""
    session: dict[Any, Any] = {}
    entry = module.entry
    assert entry is not None and entry.root is not None
    count = len(entry.parameter_instructions)
    for k in range(count if direction == "in2out" else len(entry.root.operands)):
        if direction == "in2out":
            computation_input_to_output(module, entry, k, session=session)
        else:
            computation_output_to_input(module, entry, k, session=session)
    budget, _ = session[fusion._BUDGET_SIZE]
    return int(budget - session[fusion._BUDGET])


@pytest.mark.parametrize(
    ("make", "direction"),
    [(tuple_dump, "out2in"), (tuple_dump, "in2out"), (concat_dump, "in2out")],
)
def test_walk_work_is_linear_in_width(make: Any, direction: str) -> None:
    """Twice the operands, twice the steps (the walks used to scan every instruction per
    output: four times)."""
    small, large = (_steps(parse(make(n)), direction) for n in (100, 200))
    assert 1.5 * small <= large <= 2.5 * small, (small, large)


@pytest.mark.parametrize("depth", [200, 2000])
def test_nested_calls_are_answered_past_the_python_stack(depth: int) -> None:
    module = parse(calls_dump(depth))
    entry = module.entry
    assert entry is not None
    (o2i,) = _texts(computation_output_to_input(module, entry).maps)
    assert o2i == ["(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"]
    (i2o,) = _texts(computation_input_to_output(module, entry, 0).maps)
    assert i2o == ["(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]"]


def test_the_explicit_stack_gives_what_recursion_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse(calls_dump(40))
    entry = module.entry
    assert entry is not None
    want = _texts(computation_output_to_input(module, entry).maps)
    monkeypatch.setattr(fusion, "MAX_NESTED_WALKS", 3)
    assert _texts(computation_output_to_input(module, entry).maps) == want
    assert _texts(computation_input_to_output(module, entry, 0).maps) == [
        ["(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]"]
    ]


def test_a_long_cycle_of_calls_ends_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fusion, "MAX_NESTED_WALKS", 4)
    n = 30
    body = "  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=c{}\n"
    text = "HloModule m\n" + "".join(
        f"c{i} {{\n" + body.format((i + 1) % n) + "}\n" for i in range(n)
    )
    text += "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=c0\n}\n"
    # The verifier refuses the cycle (tests/syntax/test_call_graph.py); unverified, the walk
    # still ends.
    module = parse(text, verify=False)
    assert module.entry is not None
    result = computation_output_to_input(module, module.entry)
    assert len(result.maps) == 1 and result.maps[0]
    assert all(oi.is_undefined for oi in result.maps[0])
    assert any("call cycle c0 -> c1 -> " in n for n in result.notes)


BUDGET_CASE = """HloModule m
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[4,6] parameter(1)
  c = f32[6] parameter(2)
  t = f32[6,4] transpose(a), dimensions={1,0}
  n = f32[6,4] negate(t)
  m = f32[4,6] multiply(a, b)
  ROOT r = (f32[6,4], f32[4,6]) tuple(n, m)
}
"""


def test_past_the_budget_what_is_read_is_unknown_and_noted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exact = indexing_report([("f", parse(BUDGET_CASE))], computation="e")
    assert exact.counts["unknown"] == 0 and not exact.notes
    monkeypatch.setattr(fusion, "MIN_STEPS", 1)
    monkeypatch.setattr(fusion, "STEPS_PER_INSTRUCTION", 0)
    cut = indexing_report([("f", parse(BUDGET_CASE))], computation="e")
    assert any("stopped composing" in n for n in cut.notes)
    by_name = {op.name: {m.output for m in op.maps} for op in cut.operands}
    # Output 0 reads a, output 1 reads a and b; c is read by nothing and stays empty.
    assert by_name == {"a": {0, 1}, "b": {1}, "c": set()}
    assert all(m.indexing.is_undefined for op in cut.operands for m in op.maps)
    i2o = indexing_report([("f", parse(BUDGET_CASE))], computation="e", direction="in2out")
    assert {op.name: {m.output for m in op.maps} for op in i2o.operands} == by_name


def _all_fusion_texts(module: Module) -> list[Any]:
    out = []
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode not in ("fusion", "call"):
                continue
            for j in range(len(getattr(inst.shape, "elements", ())) or 1):
                out.append(_texts(output_to_input(OpContext(inst, comp, module, {}), j).maps))
            for k in range(len(inst.operands)):
                out.append(_texts(input_to_output(OpContext(inst, comp, module, {}), k).maps))
    return out


def _sample_dumps() -> list[Path]:
    dumps = sorted(p for p in SAMPLES.rglob("*.txt") if "after_optimizations" in p.name)
    shared = Path(__file__).resolve().parents[3] / "shared" / "corpus"
    dumps += sorted(shared.glob("jax-*/*after_optimizations.txt"))
    return dumps


def test_the_identity_short_cut_equals_the_full_composition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Skipping `compose + simplify` with an elementwise identity gives the same maps, on every
    fusion of the samples (and of the jax corpus dumps when ../shared is present)."""
    dumps = _sample_dumps()
    assert dumps, "no sample dumps"
    for path in dumps:
        for module in parse_file_modules(path):
            fast = _all_fusion_texts(module)
            with monkeypatch.context() as m:
                m.setattr(fusion, "_fits", lambda consumer, identity: False)
                full = _all_fusion_texts(module)
            assert fast == full, path


ALIAS = """HloModule m
f {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] fusion(x), kind=kLoop, calls=f
}
"""


def test_entry_names_the_entry_computation_or_its_root() -> None:
    modules = [("f", parse(ALIAS))]
    assert find_target(modules, computation="ENTRY")[2].name == "main"
    _, _, comp, inst = find_target(modules, instruction="ENTRY")
    assert (comp.name, inst and inst.name) == ("main", "r")
    assert find_target(modules, fusion="ENTRY")[3].name == "r"  # type: ignore[union-attr]
    with pytest.raises(IndexingTargetError, match="no computation named 'entry'"):
        find_target(modules, computation="entry")  # the name is ENTRY, as written


def test_a_computation_literally_named_entry_wins() -> None:
    modules = [("f", parse(ALIAS.replace("f {", "ENTRY {").replace("calls=f", "calls=ENTRY")))]
    assert find_target(modules, computation="ENTRY")[2].name == "ENTRY"


def test_fusion_entry_on_a_non_fusion_root_says_what_to_use() -> None:
    modules = [("f", parse(BUDGET_CASE))]
    with pytest.raises(IndexingTargetError, match="--instruction ENTRY"):
        find_target(modules, fusion="ENTRY")


def test_cli_entry_and_a_recursion_limit_with_its_place(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "alias.hlo"
    path.write_text(ALIAS)
    result = cli("indexing", str(path), "--computation", "ENTRY")
    assert result.exit_code == 0, result.output
    assert "computation main" in result.stdout

    def too_deep(*args: Any, **kwargs: Any) -> Any:
        raise RecursionError

    monkeypatch.setattr(indexing_model, "computation_output_to_input", too_deep)
    result = cli("indexing", str(path), "-c", "ENTRY")
    assert result.exit_code == 3
    assert f"{path}:6:1: error: computation 'main' is nested too deeply" in result.stderr
    monkeypatch.setattr(indexing_model, "output_to_input", too_deep)
    result = cli("indexing", str(path), "-i", "r")
    assert result.exit_code == 3
    assert f"{path}:8:3: error: 'r' is nested too deeply" in result.stderr


WHILE = """HloModule m
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT c = pred[] constant(true)
}
body {
  s = (f32[4], f32[4]) parameter(0)
  ROOT t = (f32[4], f32[4]) tuple(s#0, s#1)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  t = (f32[4], f32[4]) tuple(a, b)
  w = (f32[4], f32[4]) while(t), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=1
}
"""


@pytest.mark.parametrize("direction", ["out2in", "in2out"])
def test_a_whole_tuple_read_is_unknown_for_every_element(direction: str) -> None:
    """The while reads all of `t`: both parameters reach `g` in a way we cannot index. (Both
    directions said one of them is not read at all.)"""
    report = indexing_report([("f", parse(WHILE))], computation="e", direction=direction)
    assert [(op.name, op.unknown, len(op.maps)) for op in report.operands] == [
        ("a", True, 1),
        ("b", True, 1),
    ]
