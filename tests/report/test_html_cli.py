"""`hlo-layout report DUMP... -o FILE`: the page it writes and its exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support import CORPUS, SAMPLES, Cli

SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
GPU = CORPUS / "jax-gpu-h100" / "module_5966.jit_step.sm_9.0a_gpu_after_optimizations.txt"


def _data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="hlo-layout-data">(.*?)</script>', page)
    assert m is not None
    return json.loads(m.group(1))


def test_report_writes_one_page_with_both_documents(cli: Cli, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "report.html"
    result = cli("report", str(SAMPLE), str(GPU), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    data = _data(out.read_text())
    names = [m["module"] for m in data["inspect"]["modules"]]
    assert names == ["jit_transformer", "jit_step"]
    assert [m["module"] for m in data["memory"]["modules"]] == names
    tpu = data["inspect"]["modules"][0]
    assert tpu["buffer_assignment"]["file"].endswith("transformer.buffer-assignment.txt")


def test_report_to_stdout(cli: Cli, monkeypatch) -> None:
    result = cli("report", str(SAMPLE), "-o", "-")
    assert result.exit_code == 0
    assert result.stdout.startswith("<!DOCTYPE html>") and _data(result.stdout)["inspect"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["report", str(SAMPLE)], 2, "--output"),
        (["report", "missing.txt", "-o", "{tmp}/r.html"], 3, "missing.txt"),
        (["report", str(SAMPLE), "-o", "{tmp}"], 2, "is a directory"),
        (["report", str(SAMPLE), "-o", f"{SAMPLE}/r.html"], 2, "cannot write"),
        (
            ["report", str(SAMPLE), str(GPU), "-b", str(SAMPLE), "-o", "{tmp}/r.html"],
            2,
            "--buffers",
        ),
    ],
)
def test_report_exit_codes(
    cli: Cli, args: list[str], code: int, message: str, tmp_path: Path
) -> None:
    result = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code == code, result.output
    assert message in result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not (tmp_path / "r.html").exists()


def test_bad_input_is_reported_with_its_position(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "HloModule m\n\nENTRY main {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2 add(p, p)\n}\n"
    )
    result = cli("report", str(bad), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 3
    assert re.search(r"bad\.txt:5:\d+: error:", result.stderr)
    assert not (tmp_path / "r.html").exists()


def test_inspect_html_writes_the_report_commands_page(cli: Cli, tmp_path: Path) -> None:
    """`inspect --html FILE` and `report -o FILE` write the same page (one writer), and inspect
    still prints its text view."""
    ours = tmp_path / "inspect.html"
    theirs = tmp_path / "report.html"
    inspected = cli("inspect", str(SAMPLE), "--html", str(ours), "--top", "7")
    reported = cli("report", str(SAMPLE), "-o", str(theirs), "--top", "7")
    assert inspected.exit_code == reported.exit_code == 0, inspected.output
    assert "peak 19.19MiB" in inspected.stdout
    assert ours.read_text() == theirs.read_text()
    assert f"wrote {ours}" in inspected.stderr
