"""`diff` speaks peak memory: on pairs of compiles of one program with one controlled change, its
peak change is the compiler's own (the buffer assignments' totals on CPU, jax's
memory_analysis() on TPU), the attribution rows + explained parts + unattributed bytes add up to
it exactly, a changed line holding the op that grew is the top row, and a compile that only
renumbers shows no change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hlo_layout.check.peak_diff import pair_buffers
from hlo_layout.memory.analysis import LiveBuffer
from tests.support import DATA, Cli

PAIRS = DATA / "diff-pairs"  # the controlled pairs (tests/data/diff-pairs/README.md)
OURS = DATA / "diff"  # pairs whose changed line holds the op that grew

needs_pairs = pytest.mark.skipif(
    not (PAIRS / "pairs.json").exists(), reason="tests/data/diff-pairs is not in this checkout"
)


def _pairs(root: Path) -> dict:
    path = root / "pairs.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _diff(cli: Cli, old: Path, new: Path, *args: str) -> dict:
    result = cli("diff", str(old), str(new), "-f", "json", *args)
    assert result.exit_code == 0, result.output
    (module,) = json.loads(result.stdout)["modules"]
    return module


def _adds_up(peak: dict) -> None:
    for part in (peak, *peak["spaces"]):
        total = sum(r["delta_bytes"] for r in part["attribution"] + part["explained"])
        assert total + part["unattributed_bytes"] == part["delta"], part.get("name", "module")
        assert sum(r["old_bytes"] for r in part["attribution"] + part["explained"]) <= part["old"]


@needs_pairs
@pytest.mark.parametrize("name", sorted(_pairs(PAIRS)))
def test_peak_change_is_the_compilers_and_adds_up(cli: Cli, name: str) -> None:
    info = _pairs(PAIRS)[name]
    m = _diff(cli, PAIRS / info["old"]["dir"], PAIRS / info["new"]["dir"])
    peak = m["peak"]
    # The headline: the compiler's allocations on CPU (its memory-usage report's total), jax's
    # peak on TPU (libtpu's own figure).
    figure = "peak_memory_in_bytes" if info["old"]["platform"].startswith("tpu") else "total_bytes"
    assert (peak["old"], peak["new"]) == (info["old"][figure], info["new"][figure])
    assert peak["delta"] == info["delta"][figure]
    if figure == "total_bytes":
        for space in peak["spaces"]:
            by_color = (info["old"]["total_bytes_by_color"], info["new"]["total_bytes_by_color"])
            key = str(space["memory_space"])
            assert (space["old"], space["new"]) == (by_color[0][key], by_color[1][key])
    _adds_up(peak)


@needs_pairs
def test_a_compile_that_only_renumbers_shows_no_change(cli: Cli) -> None:
    info = _pairs(PAIRS)["renumbered"]
    m = _diff(cli, PAIRS / info["old"]["dir"], PAIRS / info["new"]["dir"])
    assert m["changed"] is False and m["peak"]["delta"] == 0
    assert m["instructions"]["renamed"]  # the numbering did change
    assert not any(m["instructions"][k] for k in ("added", "removed", "changed"))


@needs_pairs
def test_donation_and_remat_are_named(cli: Cli) -> None:
    pairs = _pairs(PAIRS)

    def diff(name: str) -> dict:
        return _diff(cli, PAIRS / pairs[name]["old"]["dir"], PAIRS / pairs[name]["new"]["dir"])

    donation = diff("donation")
    assert donation["aliasing"]["old"] == 0 and donation["aliasing"]["new"] > 0
    remat = diff("remat")
    assert remat["rematerialization"]["checkpoint_instructions"]["new"] > 0
    assert remat["rematerialization"]["checkpoint_instructions"]["old"] == 0


@pytest.mark.parametrize("name", sorted(_pairs(OURS)))
def test_the_changed_line_is_the_top_row(cli: Cli, name: str) -> None:
    info = _pairs(OURS)[name]
    line = f"{info['changed_line']['file']}:{info['changed_line']['line']}"
    m = _diff(cli, OURS / name / "old", OURS / name / "new")
    peak = m["peak"]
    assert peak["delta"] == info["delta"]  # the buffer assignments' totals
    assert peak["attribution"][0]["key"] == line
    assert peak["attribution"][0]["delta_bytes"] > 0
    _adds_up(peak)
    # By op_name, the top row is the op of that line (its source line and op_name agree).
    by_op = _diff(cli, OURS / name / "old", OURS / name / "new", "--by", "op")["peak"]
    top = by_op["attribution"][0]
    ops_of_line = {
        (b["new"] or b["old"])["op_name"]
        for b in peak["buffers"]
        if (b["new"] or b["old"])["source"] == line
    }
    assert top["key"] in ops_of_line
    _adds_up(by_op)


def _buffer(
    name: str, size: int, op: str | None, source: str | None, allocation: str = "temp"
) -> LiveBuffer:
    return LiveBuffer(name, (), "f32[4]{0}", size, size, 0, 0, allocation, 0, 1, op, source)


def test_buffers_pair_by_structure_then_metadata_never_by_name() -> None:
    old = [_buffer("a.1", 16, "neg", "m.py:3"), _buffer("b.1", 32, "exp", "m.py:4"),
           _buffer("p", 8, None, None, "parameter")]  # fmt: skip
    new = [_buffer("b.1", 64, "tanh", "m.py:9"), _buffer("zz.7", 16, "neg", "m.py:3"),
           _buffer("q", 8, None, None, "parameter")]  # fmt: skip
    pairs = pair_buffers(old, new, counterpart={"p": "q"}.get, earlier={"q": "p"}.get)
    how = {(p.old.name if p.old else None, p.new.name if p.new else None): p.how for p in pairs}
    assert how[("p", "q")] == "structure"
    assert how[("a.1", "zz.7")] == "metadata"  # same source, op_name and shape: renumbered
    # `b.1` on both sides is not the same buffer: another line, another size.
    assert how[("b.1", None)] == "removed" and how[(None, "b.1")] == "added"
    assert [p.delta for p in pairs][:2] == [64, -32]  # largest change first
