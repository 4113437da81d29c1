"""The HTML report in headless Chromium: the numbers on the page equal the embedded JSON, the
page makes no network request, and it draws quickly. Skipped when Chromium is not installed.

`python -m tests.report.test_html_browser DIR` writes the README's screenshots into DIR.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from hlo_layout.memory.peak import legend as peak_legend
from hlo_layout.reader import load
from hlo_layout.report.html import build_report, render_html, report_data, summarize_inspect
from hlo_layout.report.model import inspect_json
from hlo_layout.report.units import human_bytes
from tests.support import CORPUS, DATA, SAMPLES

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)

DUMPS = {
    "tpu": SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt",
    "gpu": CORPUS / "jax-gpu-h100" / "module_51652.jit_step.sm_9.0a_gpu_after_optimizations.txt",
    "cpu": CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt",
    "tpu-padding": CORPUS
    / "libtpu-v5e"
    / "elementwise_odd_shapes"
    / "elementwise_odd_shapes.after_optimizations.txt",
}
#: Flags that keep Chromium from phoning home by itself (so a proxy sees only the page's loads).
QUIET = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-pings",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--hide-scrollbars",
]


def chromium(args: list[str], url: str, timeout: float = 90) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, *QUIET, f"--user-data-dir={profile}", *args, url],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def report_page(dump: Path, fragment: bool = False) -> tuple[str, dict[str, Any]]:
    data = build_report(load(dump).dumps)
    return render_html(data, fragment=fragment), data


class _Elements(HTMLParser):
    """Every element with a `data-test` attribute: its attributes and its text; and the text of
    the whole page (not of its scripts and styles)."""

    VOID = frozenset({"wbr", "br", "img", "meta", "input", "hr", "link", "col", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, Any]] = []
        self.root: dict[str, str] = {}
        self.text = ""
        self._open: list[dict[str, Any] | None] = []
        self._code = 0  # inside <script> or <style>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "hlo-report" in a.get("class", "").split():
            self.root = a
        if tag in self.VOID:
            return
        self._code += tag in ("script", "style")
        item = None
        if "data-test" in a:
            item = {"test": a["data-test"], "attrs": a, "text": ""}
            self.found.append(item)
        self._open.append(item)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self._open:
            self._code -= tag in ("script", "style")
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text += data
        for item in self._open:
            if item is not None:
                item["text"] += data

    def all(self, test: str) -> list[dict[str, Any]]:
        return [e for e in self.found if e["test"] == test]


def dom(page: str, tmp: Path, fragment: str = "") -> _Elements:
    path = tmp / "report.html"
    path.write_text(page)
    parsed = _Elements()
    parsed.feed(chromium(["--dump-dom", "--virtual-time-budget=5000"], path.as_uri() + fragment))
    return parsed


def _peak_lists(mem: dict[str, Any], space: int) -> dict[str, Any]:
    """The embedded lists of the buffers live at `space`'s peak step."""
    if space == mem["live_at_peak_space"]:
        return mem
    (lists,) = [p for p in mem["space_peaks"] if p["memory_space"] == space]
    return lists


def source_key(b: dict[str, Any], mem: dict[str, Any]) -> str:
    """A buffer's source-line group as `by_source` names it (`memory/attribution.py`)."""
    return b["source"] or (mem["arguments_group"] if b["argument"] else "(no source line)")


def _bytes(e: dict[str, Any]) -> int:
    return int(e["attrs"]["data-bytes"])


@pytest.mark.parametrize("kind", ["tpu", "gpu", "cpu"])
def test_numbers_on_the_page_equal_the_json(kind: str, tmp_path: Path) -> None:
    page, data = report_page(DUMPS[kind])
    (mem,) = data["memory"]["modules"]
    (ins,) = data["inspect"]["modules"]
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    assert int(e.root["data-loaded-ms"]) < 2000

    # The headline as `hlo-layout memory` prints it: the peak, its parts, a row per space with
    # its figures, the legend.
    (peak,) = e.all("peak-total")
    assert _bytes(peak) == mem["peak_bytes"]
    assert peak["text"] == human_bytes(mem["peak_bytes"])
    parts = e.all("peak-part")
    assert [(p["attrs"]["data-name"], _bytes(p)) for p in parts] == [
        (p["name"], p["bytes"]) for p in mem["peak_parts"]
    ]
    assert sum(_bytes(p) for p in parts) == mem["peak_bytes"]
    for p in parts:
        assert p["text"] == f"{p['attrs']['data-name']} {human_bytes(_bytes(p))}"
    (legend,) = e.all("legend")
    assert legend["text"] == mem["legend"] == peak_legend(mem["backend"] == "tpu")
    figures = {
        "space-peak": "peak_bytes",
        "space-static": "static_bytes",
        "space-temp": "temp_allocation_bytes",
        "space-heap": "heap_peak_bytes",
        "space-live": "live_bytes",
    }
    for test, key in figures.items():
        shown = {int(x["attrs"]["data-space"]): x for x in e.all(test)}
        assert set(shown) == {s["memory_space"] for s in mem["spaces"]}, test
        for s in mem["spaces"]:
            assert _bytes(shown[s["memory_space"]]) == s[key], (test, s)
            assert shown[s["memory_space"]]["text"] == human_bytes(s[key])
    rows = {int(r["attrs"]["data-space"]): r["text"] for r in e.all("space-row")}
    for s in mem["spaces"]:
        assert rows[s["memory_space"]].startswith(s["label"])
        assert f"{s['peak_step']:,} ({s['peak_instruction']})" in rows[s["memory_space"]]
    # "Peak" is the headline and each space's share of it, nothing else; no live figure on
    # the page is above its space's peak.
    for s in mem["spaces"]:
        assert s["live_bytes"] <= s["peak_bytes"]
    charts = e.all("chart")
    assert len(charts) == len(mem["timeline"])
    space_peak = {s["memory_space"]: s["peak_bytes"] for s in mem["spaces"]}
    for c in charts:
        assert int(c["attrs"]["data-most"]) <= space_peak[int(c["attrs"]["data-space"])]
    assert sorted(_bytes(x) for x in e.all("chart-peak")) == sorted(
        s["peak_bytes"] for s in mem["spaces"] if s["peak_bytes"]
    )
    for x in e.all("chart-peak"):
        assert x["text"] == f"peak {human_bytes(_bytes(x))}"
    for x in e.all("chart-live"):
        assert x["text"].startswith(f"live {human_bytes(_bytes(x))} at step ")
    # Every figure the page calls "peak" is the headline or a space's share of it.
    headline = {human_bytes(mem["peak_bytes"])} | {human_bytes(b) for b in space_peak.values()}
    called_peak = re.findall(r"\bpeak(?: is)? (\d[\d.]*[KMGTPE]?i?B)", e.text, re.I)
    assert called_peak and set(called_peak) <= headline, set(called_peak) - headline

    # The buffers live at the peak step of the space `memory` lists, largest first.
    space = mem["live_at_peak_space"]
    (summary,) = e.all("live-summary")
    assert int(summary["attrs"]["data-space"]) == space
    live = next(s["live_bytes"] for s in mem["spaces"] if s["memory_space"] == space)
    assert _bytes(summary) == live
    rows = e.all("live-row")
    expected = sorted(mem["live_at_peak"], key=lambda b: (-b["bytes"], b["name"]))
    assert len(rows) == len(expected)
    for row, b in zip(rows[:20], expected[:20]):
        assert row["attrs"]["data-name"] == b["name"]
        assert _bytes(row) == b["bytes"]
        assert human_bytes(b["bytes"]) in row["text"] and b["shape"] in row["text"]
        assert (b["op_name"] or "(no op_name)") in row["text"]
        assert source_key(b, mem) in row["text"]
    (card,) = e.all("buffer-card")
    assert card["attrs"]["data-name"] == expected[0]["name"]
    # The first card is this one (the largest buffers' card follows).
    physical = e.all("card-physical")[0]
    assert _bytes(physical) == expected[0]["bytes"]
    assert f"{expected[0]['bytes']:,} B" in physical["text"]
    op = e.all("card-op-name")[0]
    assert op["text"] == (expected[0]["op_name"] or "(no op_name)")
    source = e.all("card-source")[0]
    assert source["text"] == source_key(expected[0], mem)
    vias = e.all("card-via")
    if expected[0]["via"] is None:
        assert vias == []
    else:
        assert [v["text"].split(" — ")[0] for v in vias] == [expected[0]["via"]]

    # Peak by source line and by op_name: the groups of the JSON, the unattributed one named.
    for test, key, none in (
        ("by-source", "source", "(no source line)"),
        ("by-op-name", "op_name", "(no op_name)"),
    ):
        assert len(e.all(test)) == 1
        groups = mem["by_source" if key == "source" else "by_op_name"]
        shown = e.all(f"group-{key}")
        assert [(r["attrs"]["data-key"], _bytes(r)) for r in shown] == [
            (g[key] or "", g["bytes"]) for g in groups
        ]
        for g, r in zip(groups, shown):
            label = g[key] if g[key] is not None else none
            assert r["text"].startswith(label) and human_bytes(g["bytes"]) in r["text"]
        if f"by_{key}_total" not in mem:
            assert sum(g["bytes"] for g in groups) == live

    totals = e.all("totals-row")
    assert [int(t["attrs"]["data-space"]) for t in totals] == [
        t["memory_space"] for t in ins["totals"]
    ]
    for t, ours in zip(totals, ins["totals"]):
        assert human_bytes(ours["physical_bytes"]) in t["text"]
    if ins["fusions_by_kind"]:
        (kinds,) = e.all("fusion-kinds")
        for kind_name, count in ins["fusions_by_kind"][:15]:
            assert kind_name in kinds["text"] and f"{count:,}" in kinds["text"]


def test_the_card_says_where_an_attribution_came_from(tmp_path: Path) -> None:
    # A fusion whose own metadata is empty is attributed to an instruction inside it (`via`):
    # picked by the filter, its card names that instruction.
    page, data = report_page(DUMPS["cpu"])
    (mem,) = data["memory"]["modules"]
    via = [b for b in mem["live_at_peak"] if b["via"]]
    assert via, "the CPU train step has fusions attributed through their bodies"
    b = max(via, key=lambda b: (b["bytes"], b["name"]))
    e = dom(page, tmp_path, "#filter=" + quote(b["name"] + indexed(b)))
    rows = e.all("live-row")
    assert rows and rows[0]["attrs"]["data-name"] == b["name"]
    (card,) = e.all("buffer-card")
    assert card["attrs"]["data-name"] == b["name"]
    (shown,) = e.all("card-via")
    assert shown["text"].startswith(b["via"] + " — ")


def indexed(b: dict[str, Any]) -> str:
    return "{" + ",".join(map(str, b["index"])) + "}" if b["index"] else ""


def test_sorting_by_padding_and_picking_a_space(tmp_path: Path) -> None:
    page, data = report_page(DUMPS["tpu-padding"])
    (mem,) = data["memory"]["modules"]
    # The page offers the peak step of every space with buffers live there; the fragment picks
    # one other than the one `memory` lists.
    spaces = [mem["live_at_peak_space"]] + [p["memory_space"] for p in mem["space_peaks"]]
    assert len(spaces) > 1
    space = max(s for s in spaces if s != mem["live_at_peak_space"])
    e = dom(page, tmp_path, f"#sort=padding&space={space}")
    rows = e.all("live-row")
    lists = _peak_lists(mem, space)
    expected = sorted(
        lists["live_at_peak"], key=lambda b: (-b["padding_bytes"], -b["bytes"], b["name"])
    )
    assert {int(r["attrs"]["data-space"]) for r in rows} == {space}
    assert [r["attrs"]["data-name"] for r in rows] == [b["name"] for b in expected]
    assert [int(r["attrs"]["data-padding"]) for r in rows] == [b["padding_bytes"] for b in expected]
    (summary,) = e.all("live-summary")
    sp = next(s for s in mem["spaces"] if s["memory_space"] == space)
    assert int(summary["attrs"]["data-space"]) == space and _bytes(summary) == sp["live_bytes"]
    assert sum(b["bytes"] for b in lists["live_at_peak"]) == sp["live_bytes"]
    assert [_bytes(r) for r in e.all("group-source")] == [g["bytes"] for g in lists["by_source"]]
    groups = e.all("padding-group")
    assert [g["attrs"]["data-pattern"] for g in groups] == [
        g["pattern"] for g in data["inspect"]["modules"][0]["padding_groups"]
    ]
    assert len(e.all("tile-grid")) == sum(
        1 for g in data["inspect"]["modules"][0]["padding_groups"] if g.get("picture")
    )


def test_filtering_the_buffers(tmp_path: Path) -> None:
    page, data = report_page(DUMPS["gpu"])
    (mem,) = data["memory"]["modules"]
    source = next(g["source"] for g in mem["by_source"] if g["source"])
    e = dom(page, tmp_path, "#filter=" + quote(source))
    names = [r["attrs"]["data-name"] for r in e.all("live-row")]
    expected = [b["name"] for b in mem["live_at_peak"] if source in (b["source"] or "")]
    assert expected and sorted(names) == sorted(expected)


#: The geometry of the tables that must keep each row one line high (see the script).
MEASURE = (Path(__file__).parent / "measure.js").read_text()


def measure(page: str, tmp: Path, width: int, fragment: str = "") -> dict[str, Any]:
    """The geometry MEASURE finds on the page in a `width`-px window (its script allowed by the
    page's Content-Security-Policy, by hash like the report's own)."""
    digest = base64.b64encode(hashlib.sha256(MEASURE.encode()).digest()).decode()
    measured = page.replace("script-src ", f"script-src 'sha256-{digest}' ", 1).replace(
        "</body>", f"<script>{MEASURE}</script></body>", 1
    )
    path = tmp / f"measure-{width}.html"
    path.write_text(measured)
    parsed = _Elements()
    parsed.feed(
        chromium(
            [f"--window-size={width},1000", "--dump-dom", "--virtual-time-budget=5000"],
            path.as_uri() + fragment,
        )
    )
    (found,) = parsed.all("measure")
    result: dict[str, Any] = json.loads(found["text"])
    assert result["innerWidth"] == width
    return result


@pytest.mark.parametrize("kind", ["tpu", "gpu", "cpu"])
def test_rows_are_one_line_and_attribution_in_sight_at_1400_px(kind: str, tmp_path: Path) -> None:
    page, _ = report_page(DUMPS[kind])
    geometry = measure(page, tmp_path, 1400)
    assert geometry["pageWidth"] <= 1400  # no horizontal scroll for the page
    tables = {t["test"]: t for t in geometry["tables"]}
    assert "live-table" in tables
    for test, t in tables.items():
        # Nothing to scroll sideways inside a table's box either.
        assert t["scrollWidth"] <= t["clientWidth"] + 1, test
        assert t["rows"], test
        for row in t["rows"]:
            for cell in row["cells"]:
                # One line: a cell's content is no taller than one line of its text.
                assert cell["content"] < 1.5 * cell["line"], (test, row, cell)
        heights = {round(r["height"]) for r in t["rows"]}
        assert max(heights) - min(heights) <= 1, (test, heights)
    live = tables["live-table"]
    right = live["holder"][1]
    for row in live["rows"]:
        for test in ("live-op", "live-source"):
            (cell,) = [c for c in row["cells"] if c["test"] == test]
            left, cell_right, _, _ = cell["box"]
            # In the table's box, and wide enough to read a path's end or an op_name's last parts.
            assert cell_right <= right + 0.5 and left >= live["holder"][0]
            assert cell_right - left >= 150, (test, cell)


def test_no_sideways_scroll_at_1024_px(tmp_path: Path) -> None:
    page, _ = report_page(DUMPS["tpu"])
    geometry = measure(page, tmp_path, 1024)
    assert geometry["pageWidth"] <= 1024
    for t in geometry["tables"]:
        assert t["scrollWidth"] <= t["clientWidth"] + 1, t["test"]
        for row in t["rows"]:
            for cell in row["cells"]:
                assert cell["content"] < 1.5 * cell["line"], (t["test"], cell)


#: A dump folder (`--xla_dump_to=DIR`): 21 TPU v6e modules.
FOLDER = DATA / "memory" / "tpu-gen3" / "v6e"


def test_a_folder_report_leads_with_a_row_per_module(tmp_path: Path) -> None:
    page, data = report_page(FOLDER)
    mems, inspected = data["memory"]["modules"], data["inspect"]["modules"]
    assert len(mems) == len(inspected) > 1
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    rows = e.all("overview-row")
    assert [int(r["attrs"]["data-module"]) for r in rows] == list(range(1, len(mems) + 1))
    (folder,) = e.all("overview-folder")
    assert folder["text"] == os.path.commonpath([m["file"] for m in mems]) + "/"
    assert folder["text"] == f"{FOLDER}/"
    for n, (mem, ins) in enumerate(zip(mems, inspected), 1):
        assert mem["module"] == ins["module"] and mem["file"] == ins["file"]
        figures = {
            f"overview-{key}": value
            for key, value in (
                ("peak", mem["peak_bytes"]),
                ("static", mem["static_bytes"]),
                ("temp", mem["temp_allocation_bytes"]),
                ("padding", sum(t["padding_bytes"] for t in ins["totals"])),
            )
        }
        for test, value in figures.items():
            shown = [x for x in e.all(test)][n - 1]
            assert _bytes(shown) == value and shown["text"] == human_bytes(value), (n, test)
        row = rows[n - 1]["text"]
        assert row.startswith(f"{n}{mem['module']}")
        assert Path(mem["file"]).name in row
        generation = f" {mem['tpu_generation']}" if mem["tpu_generation"] else ""
        assert row.endswith(mem["backend"].upper() + generation)
    # The first module is shown; `#module=N` shows the N-th, its row marked.
    assert _bytes(e.all("peak-total")[0]) == mems[0]["peak_bytes"]
    n = len(mems) // 2 + 1
    e = dom(page, tmp_path, f"#module={n}")
    (peak,) = e.all("peak-total")
    assert _bytes(peak) == mems[n - 1]["peak_bytes"]
    selected = [r for r in e.all("overview-row") if "selected" in r["attrs"]["class"].split()]
    assert [r["attrs"]["data-module"] for r in selected] == [str(n)]
    (picker,) = e.all("module-picker")
    assert picker["text"].count(" — ") == len(mems)


def test_the_overview_says_when_the_backend_is_assumed(tmp_path: Path) -> None:
    # A module with nothing that names its backend: the row says the backend is assumed.
    plain = tmp_path / "plain.txt"
    plain.write_text(
        "HloModule m, is_scheduled=true\n\nENTRY main {\n  p = f32[1024] parameter(0)\n"
        "  ROOT r = f32[1024] add(p, p)\n}\n"
    )
    data = build_report(load([DUMPS["gpu"], plain]).dumps)
    assert [m["backend_assumed"] for m in data["memory"]["modules"]] == [False, True]
    e = dom(render_html(data), tmp_path)
    rows = e.all("overview-row")
    assert rows[0]["text"].endswith("GPU") and rows[1]["text"].endswith("CPU (assumed)")
    (badge,) = e.all("backend")
    assert badge["text"] == "GPU"


def test_page_without_a_memory_document_says_so(tmp_path: Path) -> None:
    # `report_data(inspect, None, notes=...)` (a caller with no peak analysis, or a module with
    # no entry computation): the page still draws, says the peak is unavailable, shows the notes.
    (d,) = load(DUMPS["gpu"]).dumps
    inspect = summarize_inspect(inspect_json([(d.file, d.module)]))
    note = f"{d.file}: no peak-memory analysis"
    e = dom(render_html(report_data(inspect, None, notes=[note])), tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    assert e.all("peak-unavailable") and not e.all("peak-total") and not e.all("live-row")
    (notes,) = e.all("notes")
    assert note in notes["text"]


def test_page_of_a_module_without_a_peak_says_so(tmp_path: Path) -> None:
    """A module with no peak analysis (one computation's report) still draws, and says why."""
    from hlo_layout.memory.footprint import memory_report
    from hlo_layout.report.html import report_of

    (d,) = load(DUMPS["gpu"]).dumps
    report = memory_report(d.module, computation=d.module.computations[0].name)
    page = render_html(report_of([(d.file, d.module, report)]))
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok"
    (notes,) = e.all("notes")
    assert "no peak-memory analysis" in notes["text"]


#: Hosts Chromium itself calls in the background (component updater, clock, accounts) whatever
#: the page does; every other request through the proxy is the page's.
BROWSER_HOSTS = ("google.com", "googleapis.com", "gvt1.com", "gstatic.com")


def test_two_notebook_fragments_on_one_page_each_draw_their_own_data(tmp_path: Path) -> None:
    # A notebook shows `_repr_html_` outputs side by side: ids repeat, so each script must find
    # the data beside it.
    parts = [report_page(DUMPS[k], fragment=True) for k in ("tpu", "cpu")]
    page = "<!DOCTYPE html><html><body>" + "".join(p for p, _ in parts) + "</body></html>"
    e = dom(page, tmp_path)
    peaks = [int(p["attrs"]["data-bytes"]) for p in e.all("peak-total")]
    assert peaks == [d["memory"]["modules"][0]["peak_bytes"] for _, d in parts]


class _Proxy:
    """A TCP listener used as Chromium's HTTP proxy: records the host of every request made
    through it (an http GET or an https CONNECT, to any host)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.hosts: list[str] = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                line = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
            except OSError:
                line = "? unreadable"
            target = line.split(" ")[1] if " " in line else line
            self.hosts.append(target.split("://")[-1].split("/")[0].split(":")[0])
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


def _page_requests(page: str, tmp: Path) -> list[str]:
    """Hosts the page asked for (Chromium's own background calls left out)."""
    path = tmp / "page.html"
    path.write_text(page)
    proxy = _Proxy()
    try:
        chromium(
            [
                "--dump-dom",
                "--virtual-time-budget=3000",
                f"--proxy-server=http://127.0.0.1:{proxy.port}",
                "--proxy-bypass-list=<-loopback>",
            ],
            path.as_uri(),
        )
    finally:
        proxy.close()
    return [h for h in proxy.hosts if not h.endswith(BROWSER_HOSTS)]


def test_the_page_makes_no_network_request(tmp_path: Path) -> None:
    page, _ = report_page(DUMPS["tpu"])
    assert _page_requests(page, tmp_path) == []
    # The same check sees a page that does load something (so it can fail).
    leaky = "<!DOCTYPE html><html><body><img src='http://example.com/x.png'></body></html>"
    assert "example.com" in _page_requests(leaky, tmp_path)


def screenshots(out: Path) -> None:
    """The README's screenshots (run by hand; see the module docstring)."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    live = "buffers-live-at-the-peak-step,peak-by-source-line,peak-by-op-name"
    shots = [
        (DUMPS["tpu"], "report-tpu.png", 1400, 1500, ""),
        (FOLDER, "report-folder.png", 1400, 900, "#only=modules"),
        (DUMPS["gpu"], "report-gpu-live.png", 1400, 1700, f"#only={live}"),
        (DUMPS["tpu-padding"], "report-padding.png", 1400, 1250, "#only=padding-by-tiling-pattern"),
    ]
    repo = Path(__file__).resolve().parents[2]
    os.chdir(repo)  # the pages then name their files from the repository's root
    with tempfile.TemporaryDirectory() as tmp:
        for n, (dump, name, width, height, anchor) in enumerate(shots):
            page, _ = report_page(dump.relative_to(repo))
            path = Path(tmp) / f"{n}.html"
            path.write_text(page)
            chromium(
                [f"--screenshot={out / name}", f"--window-size={width},{height}"],
                path.as_uri() + anchor,
            )


if __name__ == "__main__":
    screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
    os._exit(0)


FIREFOX = shutil.which("firefox") or shutil.which("firefox-esr")


@pytest.mark.skipif(
    FIREFOX is None, reason="Firefox is not installed (apt-get install firefox-esr)"
)
def test_firefox_draws_the_page(tmp_path: Path) -> None:
    # Firefox headless can only take screenshots: the drawn page (charts, tables, cards) must
    # give a far busier picture than the same page whose script failed at its first line.
    page, _ = report_page(DUMPS["tpu"])
    broken = page.replace("(function () {\n", "(function () { throw new Error('off');\n", 1)
    sizes = []
    for n, text in enumerate((page, broken)):
        html_path, png = tmp_path / f"p{n}.html", tmp_path / f"p{n}.png"
        html_path.write_text(text)
        profile = tmp_path / f"profile{n}"
        profile.mkdir()
        subprocess.run(
            [FIREFOX, "--headless", "--no-remote", "--profile", str(profile),
             "--window-size=1280,1400", "--screenshot", str(png), html_path.as_uri()],
            capture_output=True, timeout=120, check=False,
        )  # fmt: skip
        assert png.exists()
        sizes.append(png.stat().st_size)
    assert sizes[0] > 3 * sizes[1], sizes


def test_two_dumps_give_a_diff_whose_numbers_equal_the_json_and_add_up(tmp_path: Path) -> None:
    """`report OLD NEW`: the diff section's peak and rows are the `diff` document's, and the
    rows shown (with the rest summed) plus unattributed add up to the change."""
    pair = Path(__file__).parents[1] / "data" / "diff" / "keep-alive"
    data = build_report(load([pair / "old", pair / "new"]).dumps)
    diff = data["diff"]
    e = dom(render_html(data), tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    peak = diff["peak"]
    for test, key in (
        ("diff-peak-old", "old"),
        ("diff-peak-new", "new"),
        ("diff-peak-delta", "delta"),
    ):
        (shown,) = e.all(test)
        assert int(shown["attrs"]["data-bytes"]) == peak[key]
    assert peak["delta"] > 0
    rows = e.all("diff-row")
    assert sum(int(r["attrs"]["data-delta"]) for r in rows) == peak["delta"]
    assert rows[0]["attrs"]["data-key"] == "model.py:14"  # the changed line
    assert len(e.all("diff-buffer")) == len(peak["buffers"])
    (structure,) = e.all("diff-structure")
    assert f"{diff['instructions']['changed_total']} changed" in structure["text"]
