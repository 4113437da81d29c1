"""`hlo-layout inspect`: JSON keys, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from hlo_layout.cli import app
from hlo_layout.syntax import parse_file
from tests.conftest import CORPUS, SAMPLES

runner = CliRunner()
SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
GPU = next((CORPUS / "jax-gpu-h100").glob("*.txt"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hlo_layout", *args], capture_output=True, text=True, timeout=120
    )


def test_inspect_text_view() -> None:
    result = runner.invoke(app, ["inspect", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert "jit_transformer" in result.output


def test_inspect_json_schema() -> None:
    result = runner.invoke(app, ["inspect", str(SAMPLE), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    (module,) = doc["modules"]
    assert module["module"] == "jit_transformer"
    tree = parse_file(SAMPLE)
    assert [c["name"] for c in module["computations"]] == [c.name for c in tree.computations]
    kinds = {c["kind"] for c in module["computations"]}
    assert {"entry", "fusion"} <= kinds
    instruction = module["computations"][0]["instructions"][0]
    assert set(instruction) >= {"name", "opcode", "shape", "operands", "is_root", "attributes"}
    n = sum(len(c["instructions"]) for c in module["computations"])
    assert n == tree.instruction_count


def test_json_keeps_tuple_element_refs() -> None:
    files = [p for p in (CORPUS / "jax-gpu-h100").glob("*after_optimizations.txt")]
    refs = []
    for path in files:
        doc = json.loads(runner.invoke(app, ["inspect", str(path), "-f", "json"]).stdout)
        for c in doc["modules"][0]["computations"]:
            for i in c["instructions"]:
                refs.extend(o for o in i["operands"] if "#" in o)
    assert refs, "the GPU corpus uses the x#N shorthand"
    assert not any(r.startswith("%") for r in refs)


def test_syntax_error_exit_3_with_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0 parameter(0)\n}\n")
    result = run("inspect", str(bad))
    assert result.returncode == 3
    assert f"{bad}:3:21: error:" in result.stderr
    assert "^" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_missing_file_and_directory_exit_3(tmp_path: Path) -> None:
    for target in (tmp_path / "nope.txt", tmp_path):
        result = run("inspect", str(target))
        assert result.returncode == 3, result.stderr
        assert "error:" in result.stderr and "Traceback" not in result.stderr


def test_binary_file_exit_3(tmp_path: Path) -> None:
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 10)
    result = run("inspect", str(binary))
    assert result.returncode == 3 and "binary" in result.stderr


def test_usage_errors_exit_2() -> None:
    assert run("inspect").returncode == 2
    assert run("inspect", str(SAMPLE), "--format", "yaml").returncode == 2
    assert run("no-such-command").returncode == 2


def test_gzip_input(tmp_path: Path) -> None:
    import gzip

    gz = tmp_path / "dump.txt.gz"
    gz.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    result = runner.invoke(app, ["inspect", str(gz), "-f", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["modules"][0]["module"] == "jit_transformer"


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("hlo-layout ")
