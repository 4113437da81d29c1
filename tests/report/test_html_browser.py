"""The HTML report in headless Chromium: the numbers on the page equal the embedded JSON, the
page makes no network request, and it draws quickly. Skipped when Chromium is not installed.

`python -m tests.report.test_html_browser DIR` writes the README's screenshots into DIR.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from hlo_layout.reader import load
from hlo_layout.report.html import build_report, render_html
from hlo_layout.report.units import human_bytes
from tests.conftest import CORPUS, SAMPLES

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
    """Every element with a `data-test` attribute: its attributes and its text."""

    VOID = frozenset({"wbr", "br", "img", "meta", "input", "hr", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, Any]] = []
        self.root: dict[str, str] = {}
        self._open: list[dict[str, Any] | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "hlo-report" in a.get("class", "").split():
            self.root = a
        if tag in self.VOID:
            return
        item = None
        if "data-test" in a:
            item = {"test": a["data-test"], "attrs": a, "text": ""}
            self.found.append(item)
        self._open.append(item)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
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


@pytest.mark.parametrize("kind", ["tpu", "gpu", "cpu"])
def test_numbers_on_the_page_equal_the_json(kind: str, tmp_path: Path) -> None:
    page, data = report_page(DUMPS[kind])
    (mem,) = data["memory"]["modules"]
    (ins,) = data["inspect"]["modules"]
    e = dom(page, tmp_path)
    assert e.root.get("data-rendered") == "ok", e.all("render-error")
    assert int(e.root["data-loaded-ms"]) < 2000

    (peak,) = e.all("peak-total")
    assert int(peak["attrs"]["data-bytes"]) == mem["peak_bytes"]
    assert peak["text"] == human_bytes(mem["peak_bytes"])
    spaces = {int(s["attrs"]["data-space"]): s for s in e.all("peak-space")}
    assert set(spaces) == {s["memory_space"] for s in mem["spaces"]}
    for s in mem["spaces"]:
        shown = spaces[s["memory_space"]]
        assert int(shown["attrs"]["data-bytes"]) == s["peak_bytes"]
        assert shown["text"] == human_bytes(s["peak_bytes"])
        assert s["live_bytes"] <= s["peak_bytes"]
    assert len(e.all("chart")) == len(mem["timeline"])

    # The buffers live at the peak, largest first, each with its size as XLA prints bytes.
    rows = e.all("live-row")
    expected = sorted(mem["live_at_peak"], key=lambda b: (-b["bytes"], b["name"]))
    assert len(rows) == len(expected)
    for row, b in zip(rows[:20], expected[:20]):
        assert row["attrs"]["data-name"] == b["name"]
        assert int(row["attrs"]["data-bytes"]) == b["bytes"]
        assert human_bytes(b["bytes"]) in row["text"] and b["shape"] in row["text"]
    (card,) = e.all("buffer-card")
    assert card["attrs"]["data-name"] == expected[0]["name"]
    (physical,) = e.all("card-physical")
    assert int(physical["attrs"]["data-bytes"]) == expected[0]["bytes"]
    assert f"{expected[0]['bytes']:,} B" in physical["text"]

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


def test_sorting_by_padding_and_filtering_by_space(tmp_path: Path) -> None:
    page, data = report_page(DUMPS["tpu-padding"])
    (mem,) = data["memory"]["modules"]
    # A space that holds buffers live at the peak (the filter offers only those).
    space = max(b["memory_space"] for b in mem["live_at_peak"])
    e = dom(page, tmp_path, f"#sort=padding&space={space}")
    rows = e.all("live-row")
    expected = sorted(
        (b for b in mem["live_at_peak"] if b["memory_space"] == space),
        key=lambda b: (-b["padding_bytes"], -b["bytes"], b["name"]),
    )
    assert [r["attrs"]["data-name"] for r in rows] == [b["name"] for b in expected]
    assert [int(r["attrs"]["data-padding"]) for r in rows] == [b["padding_bytes"] for b in expected]
    groups = e.all("padding-group")
    assert [g["attrs"]["data-pattern"] for g in groups] == [
        g["pattern"] for g in data["inspect"]["modules"][0]["padding_groups"]
    ]
    assert len(e.all("tile-grid")) == sum(
        1 for g in data["inspect"]["modules"][0]["padding_groups"] if g.get("picture")
    )


def test_page_of_a_module_without_a_peak_says_so(tmp_path: Path) -> None:
    """A module with no peak analysis (one computation's report) still draws, and says why."""
    from hlo_layout.layout.module_memory import memory_report
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
    out.mkdir(parents=True, exist_ok=True)
    shots = [
        ("tpu", "report-tpu.png", 1500, ""),
        ("tpu-padding", "report-padding.png", 1250, "#only=padding-by-tiling-pattern"),
        ("gpu", "report-gpu-live.png", 1000, "#only=buffers-live-at-the-peak"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name, height, anchor in shots:
            page, _ = report_page(DUMPS[kind])
            path = Path(tmp) / f"{kind}.html"
            path.write_text(page)
            chromium(
                [f"--screenshot={out / name}", f"--window-size=1280,{height}"],
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
