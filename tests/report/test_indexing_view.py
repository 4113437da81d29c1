"""The `indexing` view on a fixed-width, colourless console, against a snapshot.

Regenerate after an intended change with `HLO_LAYOUT_UPDATE_SNAPSHOTS=1 pytest tests/report`,
then read the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from hlo_layout.report.indexing_model import indexing_report
from hlo_layout.report.indexing_view import render_indexing
from hlo_layout.report.theme import THEME
from hlo_layout.syntax import parse
from tests.indexing.xla_data import analysis_cases

SNAPSHOT = Path(__file__).parent / "snapshots" / "indexing_cases.txt"

#: XLA suite modules that show every part of the view: several maps, runtime variables, a
#: replica id, unknown indexing, a multi-output fusion (an operand not read by one output).
CASES = [
    ("FusionOpWithSoftmax", {"fusion": "fusion"}),
    ("FusionOpWithDynSliceOfDynSlice", {"fusion": "fusion"}),
    ("AllGatherOp", {"instruction": "all-gather"}),
    ("FusionWithUnsupportedOp", {"fusion": "fusion"}),
    ("print_indexing_tool.output0", {"fusion": "fusion"}),
    ("ReshapeOpGenericReshape2DTo3D", {"instruction": "reshape", "direction": "in2out"}),
]


def render(name: str, options: dict[str, str], legacy: bool = False) -> str:
    hlo = next(c["hlo"] for c in analysis_cases() if c["name"] == name)
    report = indexing_report([(f"{name}.hlo", parse(hlo, verify=False))], **options)  # type: ignore[arg-type]
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None, theme=THEME, highlight=False)
    console.print(render_indexing(report, legacy=legacy))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def test_indexing_view_snapshot() -> None:
    text = "".join(f"=== {name}\n" + render(name, options) for name, options in CASES)
    assert "rt0 reads parameter(1)" in text and "replica id: (d0, d1) -> (d1 / 128)" in text
    assert "unknown indexing" in text and "[from output 0]" in text
    if os.environ.get("HLO_LAYOUT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    if not SNAPSHOT.exists():
        pytest.fail(f"no snapshot {SNAPSHOT}; run with HLO_LAYOUT_UPDATE_SNAPSHOTS=1 to write it")
    assert text == SNAPSHOT.read_text()


def test_legacy_format_prints_floordiv() -> None:
    text = render("ReshapeOpGenericReshape2DTo3D", {"instruction": "reshape"}, legacy=True)
    assert "d0 * 2 + d1 floordiv 2" in text and " / " not in text
