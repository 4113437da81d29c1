"""`hlo-layout inspect`: JSON keys, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hlo_layout.syntax import parse_file
from tests.support import CORPUS, SAMPLES, Cli, CliProcess

SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
GPU = next((CORPUS / "jax-gpu-h100").glob("*.txt"))


def test_inspect_text_view(cli: Cli) -> None:
    result = cli("inspect", str(SAMPLE))
    assert result.exit_code == 0, result.output
    assert "jit_transformer" in result.output


def test_inspect_json_schema(cli: Cli) -> None:
    result = cli("inspect", str(SAMPLE), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 2
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


def test_json_keeps_tuple_element_refs(cli: Cli) -> None:
    files = [p for p in (CORPUS / "jax-gpu-h100").glob("*after_optimizations.txt")]
    refs = []
    for path in files:
        doc = json.loads(cli("inspect", str(path), "-f", "json").stdout)
        for c in doc["modules"][0]["computations"]:
            for i in c["instructions"]:
                refs.extend(o for o in i["operands"] if "#" in o)
    assert refs, "the GPU corpus uses the x#N shorthand"
    assert not any(r.startswith("%") for r in refs)


def test_syntax_error_exit_3_with_location(cli_process: CliProcess, tmp_path: Path) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0 parameter(0)\n}\n")
    result = cli_process("inspect", str(bad))
    assert result.returncode == 3
    assert f"{bad}:3:21: error:" in result.stderr
    assert "^" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_missing_file_and_directory_exit_3(cli_process: CliProcess, tmp_path: Path) -> None:
    for target in (tmp_path / "nope.txt", tmp_path):
        result = cli_process("inspect", str(target))
        assert result.returncode == 3, result.stderr
        assert "error:" in result.stderr and "Traceback" not in result.stderr


def test_binary_file_exit_3(cli_process: CliProcess, tmp_path: Path) -> None:
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 10)
    result = cli_process("inspect", str(binary))
    assert result.returncode == 3 and "binary" in result.stderr


def test_usage_errors_exit_2(cli_process: CliProcess) -> None:
    assert cli_process("inspect").returncode == 2
    assert cli_process("inspect", str(SAMPLE), "--format", "yaml").returncode == 2
    assert cli_process("no-such-command").returncode == 2


def test_gzip_input(cli: Cli, tmp_path: Path) -> None:
    import gzip

    gz = tmp_path / "dump.txt.gz"
    gz.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    result = cli("inspect", str(gz), "-f", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["modules"][0]["module"] == "jit_transformer"


def test_version(cli_process: CliProcess) -> None:
    result = cli_process("--version")
    assert result.returncode == 0 and result.stdout.startswith("hlo-layout ")
    from hlo_layout import accel

    active = accel.active()
    assert ("compiled accelerators: none, pure Python" in result.stdout) == (not active)
    assert all(name in result.stdout for name in active)


# --- memory: byte figures, entry signature, totals, buffer assignment ------------------------

LIBTPU_V5E = CORPUS / "libtpu-v5e"


def test_json_instruction_byte_keys(cli: Cli) -> None:
    (module,) = cli.json("inspect", str(SAMPLE), "-f", "json")["modules"]
    for computation in module["computations"]:
        for instruction in computation["instructions"]:
            assert {"logical_bytes", "physical_bytes", "padding_bytes", "memory_space"} <= set(
                instruction
            )
            if instruction["physical_bytes"] is not None:
                assert instruction["padding_bytes"] == (
                    instruction["physical_bytes"] - instruction["logical_bytes"]
                )


def test_json_entry_parameters_equal_memory_analysis(cli: Cli) -> None:
    analysis = json.loads((LIBTPU_V5E / "memory_analysis.json").read_text())["memory_analysis"]
    for program, figures in sorted(analysis.items()):
        dump = LIBTPU_V5E / program / f"{program}.after_optimizations.txt"
        (module,) = cli.json("inspect", str(dump), "-f", "json")["modules"]
        params = module["entry_parameters"]
        assert all({"name", "index", "shape", "memory_space"} <= set(p) for p in params)
        assert sum(p["physical_bytes"] for p in params) == (
            figures["argument_size_in_bytes"] + figures["host_argument_size_in_bytes"]
        )
        outputs = module["entry_outputs"]
        device = sum(o["physical_bytes"] for o in outputs if o["memory_space"] != 5)
        table = module["entry_output_table_bytes"]
        assert device + table == figures["output_size_in_bytes"], program


def test_json_totals_and_buffer_assignment_found_beside_the_dump(cli: Cli) -> None:
    (module,) = cli.json("inspect", str(SAMPLE), "-f", "json")["modules"]
    totals = module["totals"]
    assert [t["memory_space"] for t in totals] == sorted(t["memory_space"] for t in totals)
    assert {t["name"] for t in totals} >= {"default", "fast"}
    ba = module["buffer_assignment"]
    assert ba["file"].endswith("transformer.buffer-assignment.txt")
    assert ba["values_checked"] > 0 and ba["values_matching"] == ba["values_checked"]
    assert ba["total_bytes"] == sum(a["size"] for a in ba["allocations"])


def test_buffers_option_and_its_usage_error(
    cli_process: CliProcess, cli: Cli, tmp_path: Path
) -> None:
    ba = SAMPLE.with_name("transformer.buffer-assignment.txt")
    copy = tmp_path / "dump.txt"
    copy.write_text(SAMPLE.read_text())
    (module,) = cli.json("inspect", str(copy), "-f", "json")["modules"]
    assert "buffer_assignment" not in module  # nothing beside the copy
    (module,) = cli.json("inspect", str(copy), "--buffers", str(ba), "-f", "json")["modules"]
    assert module["buffer_assignment"]["values_matching"] > 0
    assert cli_process("inspect", str(SAMPLE), str(copy), "--buffers", str(ba)).returncode == 2


def test_computation_option(cli_process: CliProcess, cli: Cli) -> None:
    tree = parse_file(SAMPLE)
    fusion = next(c for c in tree.computations if tree.kind(c) == "fusion")
    (module,) = cli.json("inspect", str(SAMPLE), "--computation", fusion.name, "-f", "json")[
        "modules"
    ]
    assert [c["name"] for c in module["computations"]] == [fusion.name]
    assert len(module["entry_parameters"]) == len(fusion.parameter_instructions)
    result = cli_process("inspect", str(SAMPLE), "--computation", "no-such-computation")
    assert result.returncode == 2 and "no-such-computation" in result.stderr


def test_text_view_memory_sections(cli_process: CliProcess) -> None:
    dump = LIBTPU_V5E / "elementwise_odd_shapes" / "elementwise_odd_shapes.after_optimizations.txt"
    result = cli_process("inspect", str(dump), "--top", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    sections = (
        "entry parameters",
        "entry outputs",
        "largest buffers",
        "padding by tiling pattern",
        "values by memory space",
        "compiler allocations",
    )
    for section in sections:
        assert section in out, section
    assert "expansion" in out and "KiB" in out
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


def test_json_goes_to_stdout_while_a_bar_shows_on_a_terminal(
    cli_process: CliProcess, tmp_path: Path
) -> None:
    """With stderr a terminal and a big dump, the bar is drawn on stderr and the JSON still
    goes to stdout (a file here), byte for byte (Rich's progress display swaps sys.stdout for
    a proxy that prints on the terminal unless told not to); with stdout the same terminal, the
    JSON arrives there whole, no bar drawn over its lines."""
    import os
    import pty

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from grow import grow

    from hlo_layout.report.stages import BIG_INPUT_BYTES

    source = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
    dump = tmp_path / "big.after_optimizations.txt"
    dump.write_text(grow(source.read_text(), BIG_INPUT_BYTES + (1 << 20)))
    # The generation given, so that no note about an assumed backend shares the terminal.
    command = ["inspect", str(dump), "-f", "json", "--backend", "tpu-v5e"]
    expected = cli_process(*command)
    assert expected.returncode == 0 and expected.stdout.startswith("{")
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    for stdout_is_a_terminal in (False, True):
        leader, follower = pty.openpty()
        out_path = tmp_path / f"out-{stdout_is_a_terminal}.json"
        with out_path.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hlo_layout", *command],
                stdout=follower if stdout_is_a_terminal else out,
                stderr=follower,
                env=env,
            )
            os.close(follower)
            seen = b""
            while True:
                try:
                    chunk = os.read(leader, 1 << 16)
                except OSError:  # the terminal closed: the process is done
                    break
                if not chunk:
                    break
                seen += chunk
            assert proc.wait(timeout=120) == 0
            os.close(leader)
        bar = "━".encode()  # the bar's line
        if stdout_is_a_terminal:
            assert seen.replace(b"\r\n", b"\n").decode() == expected.stdout
        else:
            assert bar in seen and b"schema_version" not in seen  # the bar, none of the JSON
            assert out_path.read_text() == expected.stdout
