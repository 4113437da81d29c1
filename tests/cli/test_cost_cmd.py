"""`hlo-layout cost`: the JSON is the library's document, folders and stdin, exit codes, errors
without tracebacks, the text view at 80 columns and piped, and the cost line of `inspect`."""

from __future__ import annotations

import json

import hlo_layout
from tests.support import CORPUS, DATA, Cli

STEP = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"
V5E = CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"
GPU = CORPUS / "jax-gpu-h100" / "module_5966.jit_step.sm_9.0a_gpu_after_optimizations.txt"
NESTED = DATA / "cost" / "loops" / "nested.looped.txt"


def test_json_is_the_library_document(cli: Cli) -> None:
    result = cli("cost", str(NESTED), "--chip", "h100", "-f", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    expected = hlo_layout.analyze_cost([NESTED], chip="h100").to_dict()
    assert doc == json.loads(json.dumps(expected))
    (module,) = doc["modules"]
    assert module["total"]["flops"] > 10 * module["xla"]["flops"]
    assert [(loop["trip_count"], loop["how"]) for loop in module["loops"]] == [
        (3, "known_trip_count"),
        (4, "known_trip_count"),
    ]
    rows = module["instructions"]
    assert 10 <= len(rows) <= 20
    assert [r["bound_seconds"] for r in rows] == sorted(
        (r["bound_seconds"] for r in rows), reverse=True
    )
    assert sum(r["bound_seconds"] for r in rows) <= module["roofline"]["bound_seconds"]


def test_default_chip_from_the_dump(cli: Cli) -> None:
    doc = json.loads(cli("cost", str(GPU), str(V5E), str(STEP), "-f", "json").stdout)
    chips = [m["roofline"] and m["roofline"]["chip"] for m in doc["modules"]]
    assert chips == ["h100", "tpu-v5e", None]
    cpu = doc["modules"][2]
    assert all(r["bound_seconds"] is None for r in cpu["instructions"])
    assert any("no chip" in n for n in cpu["notes"])


def test_overrides_and_their_usage_errors(cli: Cli) -> None:
    doc = json.loads(
        cli("cost", str(STEP), "--peak-flops", "1e12", "--bandwidth", "1e9", "-f", "json").stdout
    )  # fmt: skip
    roof = doc["modules"][0]["roofline"]
    figures = (roof["peak_flops_per_second"], roof["memory_bandwidth_bytes_per_second"])
    assert (roof["chip"], figures) == ("custom", (1e12, 1e9))
    for args in (["--chip", "tpu-v9"], ["--peak-flops", "-1"], ["--bandwidth", "0"]):
        result = cli("cost", str(STEP), *args)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output


def test_folder_stdin_and_bad_input(cli: Cli) -> None:
    folder = cli("cost", str(CORPUS / "jax-cpu"), "-f", "json")
    assert folder.exit_code == 0
    assert len(json.loads(folder.stdout)["modules"]) == 4  # the after_optimizations dumps
    piped = cli("cost", "-", "-f", "json", input=NESTED.read_text())
    assert piped.exit_code == 0
    assert json.loads(piped.stdout)["modules"][0]["xla"]["flops"] == 528388
    missing = cli("cost", "no/such/file.txt")
    assert missing.exit_code == 3 and "no such file" in missing.output
    bad = cli("cost", "-", input="HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n")
    assert bad.exit_code == 3 and "Traceback" not in bad.output
    assert ":3:" in bad.output


def test_a_call_graph_cycle_is_an_input_error(cli: Cli) -> None:
    text = (
        "HloModule m\na {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=b\n}\n"
        "b {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=a\n}\n"
        "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=a\n}\n"
    )
    result = cli("cost", "-", input=text)
    assert result.exit_code == 3, result.output
    assert "cycle" in result.output and "Traceback" not in result.output


def test_text_view_at_80_columns_and_piped(cli: Cli) -> None:
    narrow = cli("cost", str(V5E), "--top", "3", env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    # Only a token that must stay whole (the dump's path) may pass the width.
    assert all(len(line) <= 80 or " " not in line.strip() for line in narrow.output.splitlines())
    assert "where time goes" in narrow.output and "tpu-v5e" in narrow.output
    piped = cli("cost", str(V5E), "--top", "3", env={"COLUMNS": None})
    assert "… 76 more" in piped.output
    rows = [line for line in piped.output.splitlines() if line.startswith("fusion.13 ")]
    assert rows and "jit(transformer)" in rows[0]  # one greppable line per row


def test_inspect_shows_one_cost_line(cli: Cli) -> None:
    result = cli("inspect", str(NESTED), env={"COLUMNS": None})
    lines = [line for line in result.output.splitlines() if line.startswith("cost ")]
    assert len(lines) == 1
    assert "528 kFLOP" in lines[0] and "with loops 6.31 MFLOP" in lines[0]
