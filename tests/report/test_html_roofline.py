"""The roofline plot of the HTML report: its data (the chip's roofs, the instructions with flops
as points, ranked by bound time) and, in headless Chromium, the drawn points and roofs equal the
embedded JSON. The browser part is skipped when Chromium is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.cost.roofline import chip_named
from hlo_layout.report.html.data import cost_module
from hlo_layout.syntax import parse_file
from tests.report.test_html_browser import CHROMIUM, DUMPS, dom, report_page
from tests.support import CORPUS, DATA

GPU = DUMPS["gpu"]
LOOPS = DATA / "cost" / "loops" / "nested.looped.txt"


def test_cost_data_of_a_gpu_dump() -> None:
    c = cost_module(parse_file(GPU), str(GPU))
    assert c is not None and c["chip"] == "h100"
    assert c["peaks"] == {k: v for k, v in chip_named("h100").peaks.items() if v is not None}
    assert c["bandwidth"] == chip_named("h100").bandwidth
    points = c["points"]
    assert points and len(points) <= c["points_total"]
    assert [p["seconds"] for p in points] == sorted((p["seconds"] for p in points), reverse=True)
    for p in points:
        assert p["flops"] > 0 and p["bytes"] > 0
        assert p["intensity"] == pytest.approx(p["flops"] / p["bytes"], rel=1e-9)
        peak = c["peaks"][p["type"]]
        assert p["seconds"] == pytest.approx(max(p["flops"] / peak, p["bytes"] / c["bandwidth"]))
    assert sum(p["seconds"] for p in points) <= c["bound_seconds"] * (1 + 1e-9)


def test_a_cpu_dump_has_no_roofs() -> None:
    path = CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt"
    c = cost_module(parse_file(path), str(path))
    assert c is not None and c["chip"] is None and c["points"] == [] and c["peaks"] == {}
    assert "no chip" in c["chip_reason"]


browser = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")


@browser
def test_points_and_roofs_on_the_page_equal_the_json(tmp_path: Path) -> None:
    page, data = report_page(GPU)
    (c,) = data["cost"]["modules"]
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    (plot,) = e.all("roofline")
    assert plot["attrs"]["data-chip"] == "h100"
    drawn = e.all("roofline-point")
    assert [d["attrs"]["data-name"] for d in drawn] == [p["name"] for p in c["points"]]
    for d, p in zip(drawn, c["points"]):
        assert int(d["attrs"]["data-flops"]) == p["flops"]
        assert int(d["attrs"]["data-bytes"]) == p["bytes"]
    roofs = {
        kind: float(r["attrs"]["data-peak"])
        for r in e.all("roof")
        for kind in r["attrs"]["data-type"].split(",")
    }
    assert roofs == pytest.approx(c["peaks"])


@browser
def test_a_cpu_page_says_why_there_is_no_roofline(tmp_path: Path) -> None:
    page, _ = report_page(DUMPS["cpu"])
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok"
    (none,) = e.all("roofline-none")
    assert "--chip" in none["text"]


def test_loop_bodies_count_their_trip_count() -> None:
    c = cost_module(parse_file(LOOPS), str(LOOPS), chip="h100")
    assert c is not None and c["chip"] == "h100"
    (dot,) = [p for p in c["points"] if p["name"] == "ynn_fusion"]
    assert dot["executions"] == 12  # 4 outer × 3 inner iterations
    assert dot["flops"] == 12 * 2 * 64 * 64 * 64
