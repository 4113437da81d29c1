"""`hlo-layout indexing`: JSON keys, XLA's text, directions, physical offsets, target errors."""

from __future__ import annotations

from pathlib import Path

from hlo_layout.indexing import same_text
from hlo_layout.layout.tiling import element_offset
from hlo_layout.syntax import parse_shape
from tests.indexing.xla_data import analysis_cases
from tests.support import SAMPLES, Cli, CliProcess

TPU = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"


def _case_file(tmp_path: Path, name: str) -> tuple[Path, dict]:
    case = next(c for c in analysis_cases() if c["name"] == name)
    path = tmp_path / f"{name}.hlo"
    path.write_text(case["hlo"])
    return path, case


def test_json_schema_and_xla_text(cli: Cli, tmp_path: Path) -> None:
    path, case = _case_file(tmp_path, "FusionOpWithSoftmax")
    doc = cli.json("indexing", str(path), "--fusion", "fusion", "--format", "json")
    assert doc["schema_version"] == 1
    assert (doc["instruction"], doc["kind"], doc["direction"]) == ("fusion", "fusion", "out2in")
    (operand,) = doc["operands"]
    assert set(operand) >= {"index", "name", "shape", "unknown", "maps"}
    assert operand["unknown"] is False and operand["shape"] == "f32[2,65,125]{2,1,0}"
    texts = sorted(m["text"] for m in operand["maps"])
    want = sorted(case["expected"][0]["maps_oneline"])
    assert len(texts) == len(want) and all(same_text(a, b) for a, b in zip(texts, want))
    m = next(m for m in operand["maps"] if m["range_vars"])
    assert m["dims"][0] == {"name": "d0", "range": [0, 1]}
    assert m["range_vars"] == [{"name": "s0", "range": [0, 124]}]
    assert m["results"] == ["d0", "d1", "s0"]
    assert doc["summary"] == {"maps": 2, "exact": 2, "unknown": 0, "known_empty": 0}


def test_runtime_variables_and_replica_in_json(cli: Cli, tmp_path: Path) -> None:
    path, _ = _case_file(tmp_path, "FusionOpWithPadAndDynamicSlice")
    doc = cli.json("indexing", str(path), "--fusion", "fusion", "--format", "json")
    (m,) = doc["operands"][0]["maps"]
    assert m["rt_vars"] == [{"name": "rt0", "range": [0, 4096]}]
    assert m["runtime_variables"][0]["reads"] == "bitcast.4"
    assert m["constraints"] == [{"expr": "d1 + rt0", "lo": 4096, "hi": 8191}]
    path, _ = _case_file(tmp_path, "AllGatherOp")
    doc = cli.json("indexing", str(path), "--instruction", "all-gather", "--format", "json")
    (m,) = doc["operands"][0]["maps"]
    assert m["replica_id"]["text"].startswith("(d0, d1) -> (d1 / 128)")


def test_unknown_operands_are_flagged(cli: Cli, tmp_path: Path) -> None:
    path, _ = _case_file(tmp_path, "FusionWithUnsupportedOp")
    doc = cli.json("indexing", str(path), "--fusion", "fusion", "--format", "json")
    assert [op["unknown"] for op in doc["operands"]] == [False, True, True]
    assert doc["operands"][1]["maps"][0]["state"] == "undefined"
    assert any("triangular-solve" in n for n in doc["notes"])


def test_in2out_and_computation(cli: Cli, tmp_path: Path) -> None:
    path, case = _case_file(tmp_path, "ConcatenateOp.input_to_output.input1")
    doc = cli.json(
        "indexing",
        str(path),
        "--instruction",
        "concat",
        "--direction",
        "in2out",
        "--format",
        "json",
    )
    (m,) = doc["operands"][1]["maps"]
    assert same_text(m["text"], case["expected"][0]["maps_oneline"][0])
    path, _ = _case_file(tmp_path, "FusionOpTensorPlusTransposedTensor")
    doc = cli.json("indexing", str(path), "--computation", "f", "--format", "json")
    assert doc["kind"] == "computation" and doc["operands"][0]["name"] == "p0"
    assert len(doc["operands"][0]["maps"]) == 2


def test_physical_offsets_follow_the_tiles(cli: Cli) -> None:
    doc = cli.json("indexing", str(TPU), "--fusion", "fusion.159", "--physical", "--format", "json")
    assert doc["physical"] is True
    operand = doc["operands"][0]
    (m,) = operand["maps"]
    assert len(m["results"]) == 1
    from hlo_layout.indexing import parse_indexing_map
    from hlo_layout.indexing.map import evaluate_map

    offset = parse_indexing_map(m["text"])
    shape = parse_shape(operand["shape"])
    logical = cli.json("indexing", str(TPU), "--fusion", "fusion.159", "--format", "json")[
        "operands"
    ][0]["maps"][0]
    read = parse_indexing_map(logical["text"])
    for point in [(0, 0, 0), (7, 129, 0), (255, 255, 0), (9, 3, 0)]:
        index = evaluate_map(read, point)
        assert evaluate_map(offset, point) == (element_offset(shape, index),)  # type: ignore[arg-type]


def test_text_view(cli: Cli, tmp_path: Path) -> None:
    path, _ = _case_file(tmp_path, "FusionOpTensorPlusTransposedTensor")
    result = cli("indexing", str(path), "--fusion", "fusion")
    assert result.exit_code == 0, result.output
    assert "operand 0  p0  f32[1000,1000]{1,0}" in result.stdout
    assert "(d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]" in result.stdout
    assert "2 maps: 2 exact, 0 unknown" in result.stdout


def test_missing_target_lists_fusions_exit_2(cli_process: CliProcess) -> None:
    result = cli_process("indexing", str(TPU))
    assert result.returncode == 2
    assert "name what to index" in result.stderr and "candidates" in result.stderr
    assert "fusion.10" in result.stderr and "more" in result.stderr and result.stdout == ""


def test_wrong_name_lists_close_matches_first_exit_2(cli_process: CliProcess) -> None:
    result = cli_process("indexing", str(TPU), "--fusion", "fusion.1599")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "error: no fusion named 'fusion.1599'"
    assert lines[2].strip() == "fusion.159"
    assert "Traceback" not in result.stderr
    wrong_kind = cli_process("indexing", str(TPU), "--fusion", "param_0.388")
    assert wrong_kind.returncode == 2 and "not a fusion" in wrong_kind.stderr


def test_usage_and_input_errors(cli_process: CliProcess, tmp_path: Path) -> None:
    assert (
        cli_process(
            "indexing", str(TPU), "--fusion", "fusion.159", "--direction", "sideways"
        ).returncode
        == 2
    )
    both = cli_process("indexing", str(TPU), "--fusion", "fusion.159", "--computation", "main.10")
    assert both.returncode == 2 and "only one" in both.stderr
    assert cli_process("indexing", str(tmp_path / "missing.txt"), "--fusion", "x").returncode == 3
