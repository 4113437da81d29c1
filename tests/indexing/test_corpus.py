"""`hlo-layout indexing` over every fusion of every corpus dump: no error, and a count of exact
and unknown maps (every unknown one carries a note saying why)."""

from __future__ import annotations

from collections import Counter

import pytest

from hlo_layout.report.indexing_model import indexing_report
from hlo_layout.syntax import parse_file_modules
from tests.support import corpus_id, hlo_files


def _fusions(path) -> list[str]:
    return sorted(
        {
            i.name
            for m in parse_file_modules(path)
            for c in m.computations
            for i in c.instructions
            if i.opcode == "fusion"
        }
    )


@pytest.mark.parametrize("path", hlo_files(), ids=corpus_id)
def test_every_fusion(path, capsys: pytest.CaptureFixture[str]) -> None:
    modules = [(str(path), m) for m in parse_file_modules(path)]
    counts: Counter[str] = Counter()
    for name in _fusions(path):
        for direction in ("out2in", "in2out"):
            report = indexing_report(modules, fusion=name, direction=direction)  # type: ignore[arg-type]
            for op in report.operands:
                counts[f"{direction} exact"] += sum(not m.indexing.is_undefined for m in op.maps)
                counts[f"{direction} unknown"] += sum(m.indexing.is_undefined for m in op.maps)
                if op.unknown:
                    assert report.notes, f"{name}: operand {op.index} is unknown without a note"
        counts["fusions"] += 1
    with capsys.disabled():
        if counts["fusions"]:
            print(f"\n{corpus_id(path)}: {dict(sorted(counts.items()))}", end="")


def test_corpus_totals(capsys: pytest.CaptureFixture[str]) -> None:
    """Out2in over the whole corpus; most fusion maps are exact."""
    totals: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for path in hlo_files():
        modules = [(str(path), m) for m in parse_file_modules(path)]
        for name in _fusions(path):
            report = indexing_report(modules, fusion=name)
            totals["fusions"] += 1
            counts = report.counts
            totals["maps"] += counts["maps"]
            totals["exact"] += counts["exact"]
            totals["unknown"] += counts["unknown"]
            for note in report.notes:
                reasons[note.split(":", 1)[-1].strip()] += 1
    with capsys.disabled():
        print(f"\ncorpus fusions, output to input: {dict(totals)}")
        for reason, n in reasons.most_common(10):
            print(f"  {n} x {reason}")
    assert totals["fusions"] > 700
    assert totals["exact"] > 0.9 * totals["maps"]
