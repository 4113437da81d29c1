"""`cost_diff`: the cost change between two compiles, instructions paired by what they compute
(op_name, opcode, shape), so renumbered names pair and a changed loop shows where."""

from __future__ import annotations

import re

from hlo_layout.cost.diff import cost_diff
from hlo_layout.syntax import parse
from tests.support import CORPUS, DATA

STEP = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"
FORI = DATA / "cost" / "loops" / "fori_matmul.looped.txt"


def test_the_same_program_has_no_change() -> None:
    module = parse(STEP.read_text())
    d = cost_diff(module, module)
    assert d.changes == () and d.hidden == 0
    assert all(v["delta"] == 0 for v in d.to_dict()["total"].values())


def test_renumbered_names_pair() -> None:
    text = STEP.read_text()
    renamed = re.sub(
        r"%([A-Za-z_][\w-]*)\.(\d+)\b", lambda m: f"%{m.group(1)}.{int(m.group(2)) + 1000}", text
    )
    assert renamed != text
    d = cost_diff(parse(text), parse(renamed))
    assert d.changes == ()
    assert d.old_total == d.new_total


def test_a_longer_loop_shows_in_the_totals_and_the_body() -> None:
    text = FORI.read_text()
    longer = text.replace('"known_trip_count":{"n":"10"}', '"known_trip_count":{"n":"25"}')
    assert longer != text
    d = cost_diff(parse(text), parse(longer), top=3)
    assert d.new_xla == d.old_xla  # XLA counts the body once either way
    assert d.new_total.flops > 2 * d.old_total.flops
    top = d.changes[0]
    assert top.opcode == "fusion" and "dot_general" in top.op_name
    assert top.new is not None and top.old is not None
    assert top.new.flops == 25 * top.old.flops // 10
    doc = d.to_dict()
    assert doc["total"]["flops"]["percent"] > 100
    assert doc["changes"][0]["flops_delta"] == top.flops_delta
