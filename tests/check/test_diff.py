"""`hlo-layout diff`: figures equal the two sides' own metrics; structure changes are found."""

from __future__ import annotations

import json
from pathlib import Path

from hlo_layout.check.diff import structure_diff
from hlo_layout.check.run import measure_file
from hlo_layout.syntax import parse
from tests.support import CORPUS, Cli

OLD = CORPUS / "libtpu-v4" / "transformer" / "transformer.after_optimizations.txt"
NEW = CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"


def test_figures_are_the_sides_metrics(cli: Cli) -> None:
    result = cli("diff", str(OLD), str(NEW), "-f", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (m,) = doc["modules"]
    (old,) = measure_file(OLD).metrics
    (new,) = measure_file(NEW).metrics
    for key in ("instructions", "fusions", "argument_bytes", "output_bytes", "physical_bytes"):
        figure = m["figures"][key]
        assert (figure["old"], figure["new"]) == (getattr(old, key), getattr(new, key))
        assert figure["delta"] == getattr(new, key) - getattr(old, key)
    for space, d in m["space_bytes"].items():
        assert d["old"] == old.space_bytes.get(int(space), 0)
        assert d["new"] == new.space_bytes.get(int(space), 0)


def test_renames_and_shape_changes() -> None:
    old = parse(
        """HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  a.1 = f32[8]{0} negate(p)
  b = f32[8]{0} exponential(a.1)
  ROOT c = f32[8]{0} add(b, p)
}"""
    )
    new = parse(
        """HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  a.2 = f32[8]{0} negate(p)
  b = f32[4]{0} slice(a.2), slice={[0:4]}
  ROOT c = f32[4]{0} add(b, b)
  d = f32[8]{0} copy(p)
}"""
    )
    d = structure_diff(old, new)["instructions"]
    # Paired by structure, not by name: a.1 → a.2 is the same negate; `b` is another op (an
    # exponential removed, a slice added), and the root reads other operands.
    assert d["renamed"] == [{"computation": "e", "old": "a.1", "new": "a.2"}]
    (c,) = d["changed"]
    assert c["name"] == "c" and c["what"] == ["shape", "operands"]
    assert sorted((a["name"], a["opcode"]) for a in d["added"]) == [("b", "slice"), ("d", "copy")]
    assert [(r["name"], r["opcode"]) for r in d["removed"]] == [("b", "exponential")]


def test_identical_dump_has_no_changes(cli: Cli, tmp_path: Path) -> None:
    result = cli("diff", str(NEW), str(NEW), "-f", "json")
    (m,) = json.loads(result.stdout)["modules"]
    assert all(v["delta"] in (0, None) for v in m["figures"].values())
    assert m["changed"] is False and m["peak"]["delta"] == 0
    assert not any(m["instructions"][k] for k in ("added", "removed", "changed", "renamed"))
    assert not any(m["computations"][k] for k in ("added", "removed", "renamed"))
    assert m["instructions"]["paired"] == parse(NEW.read_text()).instruction_count
    assert cli("diff", str(OLD), str(NEW)).exit_code == 0
