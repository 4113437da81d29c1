"""Structural pairing (`check/structure.py`): what survives recompilation pairs, names do not.

The law: renumbering a dump (every computation and instruction renamed, consistently) changes
nothing structural, and pairs every instruction with its renamed self (or with one structurally
identical). Checked on real dumps of every backend, with random renamings, and on two real
compiles of one program whose ids differ (tests/data/diff/renumber-*)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_layout.check.structure import match_modules, structure_diff
from hlo_layout.syntax import parse, parse_file
from tests.support import CORPUS, DATA

DUMPS = [
    CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt",
    CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt",
    CORPUS / "jax-gpu-h100" / "module_51652.jit_step.sm_9.0a_gpu_after_optimizations.txt",
    DATA / "memory" / "cpu-gen3" / "module_0004.jit_grad_accum_scan.cpu_after_optimizations.txt",
    *sorted(
        (DATA / "frontends" / "tensorflow" / "rnn_while_loop").glob("*after_optimizations.txt")
    ),
    *sorted(
        (DATA / "frontends" / "torch-xla" / "inplace_donation").glob("*after_optimizations.txt")
    ),
]
PAIRS = DATA / "diff"

_NAME = re.compile(r"%([A-Za-z_][A-Za-z0-9_.\-]*)")
_HEADER_PARAM = re.compile(r"(?<=[(,] )([A-Za-z_][A-Za-z0-9_.\-]*)(?=: )")


def renumbered(text: str, seed: int) -> tuple[str, dict[str, str]]:
    """`text` with every `%name` (and header parameter name) renamed by a random one-to-one map
    that keeps each name's stem and draws a new number, as a recompile does."""
    rng = random.Random(seed)
    names = sorted(set(_NAME.findall(text)))
    numbers = rng.sample(range(10_000, 10_000 + 4 * len(names) + 10), len(names))
    mapping = {n: f"{n.rsplit('.', 1)[0]}.{k}" for n, k in zip(names, numbers, strict=True)}
    out = _NAME.sub(lambda m: "%" + mapping[m.group(1)], text)
    lines = [
        _HEADER_PARAM.sub(lambda m: mapping.get(m.group(1), m.group(1)), line)
        if line[:1] not in (" ", "\t")
        else line
        for line in out.split("\n")
    ]
    return "\n".join(lines), mapping


def _no_change(d: dict) -> bool:
    return not (
        d["computations"]["added"]
        or d["computations"]["removed"]
        or any(d["instructions"][k] for k in ("added", "removed", "changed"))
    )


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_renumbering_changes_nothing_and_pairs_each_instruction_with_itself(
    path: Path, seed: int
) -> None:
    text = path.read_text()
    old = parse(text)
    new_text, mapping = renumbered(text, seed)
    new = parse(new_text)
    d = structure_diff(old, new)
    assert _no_change(d), {k: v[:3] for k, v in d["instructions"].items()}
    m = match_modules(old, new)
    assert len(m.computations) == len(old.computations)
    for c_old, c_new in m.computations:
        assert mapping.get(c_old.name, c_old.name) == c_new.name or (
            m.sides[0][c_old.name].id == m.sides[1][c_new.name].id
        )
        p = m.instructions[c_old.name]
        for a, b in enumerate(p.of_old):
            assert b >= 0
            same = mapping[p.old.instructions[a].name] == p.new.instructions[b].name
            assert same or p.old.ids[a] == p.new.ids[b]


def test_two_compiles_that_differ_only_in_numbering_show_no_structural_change() -> None:
    # One program compiled twice for TPU v5e and CPU; the second trace held dead code that XLA
    # removed, so ids (and stack-frame ids) shifted.
    for pair in sorted(PAIRS.glob("renumber-*")):
        old = parse_file(next((pair / "old").glob("*after_optimizations.txt")))
        new = parse_file(next((pair / "new").glob("*after_optimizations.txt")))
        d = structure_diff(old, new)
        assert _no_change(d), (pair.name, {k: v[:3] for k, v in d["instructions"].items()})


def test_changes_are_found_and_named() -> None:
    old = parse(
        """HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (p: f32[8,128]) -> f32[128] {
  %p = f32[8,128]{1,0} parameter(0)
  %n.1 = f32[8,128]{1,0} negate(%p), metadata={op_name="jit(f)/neg" source_file="m.py"
source_line=3}
  %z = f32[] constant(0)
  ROOT %r.1 = f32[128]{0} reduce(%n.1, %z), dimensions={0}, to_apply=%add
}"""
    )
    new = parse(
        """HloModule m
%add.9 (a.2: f32[], b.2: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.2 = f32[] parameter(1)
  ROOT %s.2 = f32[] maximum(%a.2, %b.2)
}
ENTRY %e.4 (p.3: bf16[8,128]) -> f32[128] {
  %p.3 = bf16[8,128]{1,0} parameter(0)
  %c.7 = f32[8,128]{1,0} convert(%p.3), metadata={op_name="jit(f)/convert" source_line=2}
  %n.7 = f32[8,128]{0,1} negate(%c.7), metadata={op_name="jit(f)/neg" source_file="m.py"
source_line=3}
  %z.3 = f32[] constant(0)
  ROOT %r.7 = f32[128]{0} reduce(%n.7, %z.3), dimensions={0}, to_apply=%add.9
}"""
    )
    d = structure_diff(old, new)
    assert d["computations"]["renamed"] == [["e", "e.4"], ["add", "add.9"]]
    assert not d["computations"]["added"] and not d["computations"]["removed"]
    changed = {c["old_name"]: c for c in d["instructions"]["changed"]}
    assert changed["p"]["what"] == ["shape"]  # f32 → bf16
    assert changed["n.1"]["what"] == ["shape", "operands"]  # layout, and reads the convert
    assert changed["n.1"]["source"] == "m.py:3"
    assert set(changed) == {"p", "n.1"}  # the reduce calls its counterpart: not changed itself
    # The reducer's add became a maximum: removed and added inside the paired reducer.
    added = {a["opcode"]: a for a in d["instructions"]["added"]}
    assert sorted(added) == ["convert", "maximum"]
    assert added["convert"]["op_name"] == "jit(f)/convert"
    assert added["maximum"]["computation"] == "add.9"
    assert [r["opcode"] for r in d["instructions"]["removed"]] == ["add"]
