"""`hlo-layout check`: every rule passes just above and fails just below the real figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from hlo_layout.check.metrics import ModuleMetrics
from hlo_layout.check.policy import PolicyError, load_config
from hlo_layout.check.run import measure_file
from hlo_layout.layout.size import footprint
from hlo_layout.reader.discover import expand, shard
from hlo_layout.syntax import parse_file
from hlo_layout.units import format_bytes as format_size
from hlo_layout.units import parse_size
from tests.support import CORPUS, Cli

V5E = CORPUS / "libtpu-v5e"
V4 = CORPUS / "libtpu-v4"
HOST = V5E / "host_offload" / "host_offload.after_optimizations.txt"
TRANSFORMER = V5E / "transformer" / "transformer.after_optimizations.txt"


def metrics(path: Path) -> ModuleMetrics:
    (m,) = measure_file(path).metrics
    return m


def invoke(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli("check", *args, "-f", "json")
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_sizes() -> None:
    assert parse_size("64MiB") == 64 << 20
    assert parse_size("1.5G") == 3 << 29
    assert parse_size("512KB") == 512_000
    assert parse_size("1048576") == 1 << 20
    assert format_size(3 << 29) == "1.50GiB"
    assert format_size(512) == "512B"
    with pytest.raises(ValueError):
        parse_size("12 parsecs")


def test_argument_bytes_are_the_entry_parameters_footprints() -> None:
    module = parse_file(TRANSFORMER)
    expected = sum(footprint(p.shape).physical_bytes for p in module.entry.parameter_instructions)
    assert metrics(TRANSFORMER).argument_bytes == expected > 0


@pytest.mark.parametrize(
    ("flag", "figure", "fmt"),
    [
        ("--max-argument-bytes", lambda m: m.argument_bytes, str),
        ("--max-output-bytes", lambda m: m.output_bytes, str),
        ("--max-buffer-bytes", lambda m: m.largest[0].physical_bytes, str),
        ("--max-padding-bytes", lambda m: m.padding_bytes, str),
        ("--max-instructions", lambda m: m.instructions, str),
        ("--max-fusions", lambda m: m.fusions, str),
        ("--max-copies", lambda m: m.copies, str),
    ],
)
def test_each_limit_passes_at_and_fails_below_the_figure(cli: Cli, flag, figure, fmt) -> None:
    value = figure(metrics(TRANSFORMER))
    assert value > 0
    code, doc = invoke(cli, str(TRANSFORMER), flag, fmt(value))
    assert code == 0 and doc["passed"], doc["violations"]
    code, doc = invoke(cli, str(TRANSFORMER), flag, fmt(value - 1))
    assert code == 1
    (violation,) = doc["violations"]
    assert violation["rule"] == flag.removeprefix("--")


def test_space_budget_and_forbidden_host_space(cli: Cli) -> None:
    m = metrics(HOST)
    host = m.space_bytes.get(5, 0)
    assert host > 0, "the host-offload program places buffers in S(5)"
    assert invoke(cli, str(HOST), "--max-space-bytes", f"5={host}")[0] == 0
    code, doc = invoke(cli, str(HOST), "--max-space-bytes", f"host={host - 1}")
    assert code == 1 and doc["violations"][0]["where"] == "S(5)"
    code, doc = invoke(cli, str(HOST), "--forbid-space", "S(5)")
    assert code == 1 and doc["violations"][0]["rule"] == "forbid-space"
    assert invoke(cli, str(TRANSFORMER), "--forbid-space", "5")[0] == 0


def test_padding_percent(cli: Cli) -> None:
    m = metrics(TRANSFORMER)
    assert (
        invoke(cli, str(TRANSFORMER), "--max-padding-percent", f"{m.padding_percent + 0.001}")[0]
        == 0
    )
    assert (
        invoke(cli, str(TRANSFORMER), "--max-padding-percent", f"{m.padding_percent - 0.001}")[0]
        == 1
    )


def test_forbidden_opcode_and_min_fusions(cli: Cli) -> None:
    assert invoke(cli, str(TRANSFORMER), "--forbid-opcode", "fusion")[0] == 1
    assert invoke(cli, str(TRANSFORMER), "--forbid-opcode", "sort")[0] == 0
    fusions = metrics(TRANSFORMER).fusions
    assert invoke(cli, str(TRANSFORMER), "--min-fusions", str(fusions))[0] == 0
    assert invoke(cli, str(TRANSFORMER), "--min-fusions", str(fusions + 1))[0] == 1


def test_baseline_growth_between_topologies(cli: Cli) -> None:
    old, new = (
        metrics(V4 / "conv" / "conv.after_optimizations.txt"),
        metrics(V5E / "conv" / "conv.after_optimizations.txt"),
    )
    assert old.module == new.module
    code, doc = invoke(
        cli,
        str(V5E / "conv" / "conv.after_optimizations.txt"),
        "--baseline",
        str(V4 / "conv" / "conv.after_optimizations.txt"),
        "--max-fusion-growth",
        str(max(0, new.fusions - old.fusions)),
    )
    assert code == 0, doc
    if new.physical_bytes != old.physical_bytes:
        grown = 100.0 * (new.physical_bytes - old.physical_bytes) / old.physical_bytes
        code, doc = invoke(
            cli,
            str(V5E / "conv" / "conv.after_optimizations.txt"),
            "--baseline",
            str(V4 / "conv"),
            "--max-growth-percent",
            str(grown - 0.01 if grown > 0 else 1000),
        )
        assert code == (1 if grown > 0 else 0)


def test_junit_and_annotations(cli: Cli, tmp_path: Path, monkeypatch) -> None:
    junit = tmp_path / "report.xml"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = cli(
        "check", str(TRANSFORMER), str(HOST), "--max-fusions", "1", "--junit-xml", str(junit)
    )
    assert result.exit_code == 1
    assert "::error file=" in result.stdout and "title=hlo-layout max-fusions" in result.stdout
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") and suite.get("tests") == "2"
    assert suite.get("failures") == "2" and suite.get("errors") == "0"
    for case in suite.findall("testcase"):
        assert case.get("name") and case.get("classname")
        assert case.find("failure") is not None


def test_unreadable_file_exit_3_others_checked(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule x\nENTRY e {\n  ROOT p = f32[ parameter(0)\n}\n")
    args = ["check", str(bad), str(TRANSFORMER), "--no-rules-ok", "-f", "json"]
    result = cli(*args)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["modules_checked"] == 1 and doc["errors"][0]["file"] == str(bad)


def test_usage_errors_exit_2(cli: Cli, tmp_path: Path) -> None:
    assert cli("check", str(TRANSFORMER), "--max-output-bytes", "lots").exit_code == 2
    assert cli("check", str(TRANSFORMER), "--shard", "3/2").exit_code == 2
    assert cli("check", str(TRANSFORMER), "--forbid-space", "moon").exit_code == 2
    cfg = tmp_path / "hlo-layout.toml"
    cfg.write_text("[check]\nmax-fusion = 3\n")
    assert cli("check", str(TRANSFORMER), "--config", str(cfg)).exit_code == 2


def test_config_file_with_module_globs(cli: Cli, tmp_path: Path) -> None:
    fusions = metrics(TRANSFORMER).fusions
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(
        f"""[tool.hlo-layout.check]
max-fusions = {fusions}
[[tool.hlo-layout.check.modules]]
match = "jit_trans*"
max-fusions = {fusions - 1}
[[tool.hlo-layout.check.modules]]
match = "jit_other"
max-fusions = 0
"""
    )
    policies = load_config(cfg)
    assert policies.for_module("jit_transformer").max_fusions == fusions - 1
    assert policies.for_module("jit_conv").max_fusions == fusions
    assert invoke(cli, str(TRANSFORMER), "--config", str(cfg))[0] == 1
    assert (
        invoke(cli, str(TRANSFORMER), "--config", str(cfg), "--max-fusions", str(fusions))[0] == 0
    )
    with pytest.raises(PolicyError):
        bad = tmp_path / "hlo-layout.toml"
        bad.write_text("[check]\nmax-argument-bytes = 'a lot'\n")
        load_config(bad)


def test_directories_globs_shards_and_jobs(cli: Cli, tmp_path: Path) -> None:
    files = expand([str(V5E)])
    assert files and all("after_optimizations" in f.name for f in files)
    parts = [shard(files, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(p for part in parts for p in part) == sorted(files)
    assert not set(parts[0]) & set(parts[1])
    read = ["--no-rules-ok", "-f", "json"]
    one = cli("check", str(V5E), "-j", "1", *read)
    two = cli("check", str(V5E), "-j", "2", *read)
    assert one.exit_code == two.exit_code == 0
    assert json.loads(one.stdout) == json.loads(two.stdout)
    glob = cli("check", str(V5E / "*" / "*after_optimizations.txt"), *read)
    assert json.loads(glob.stdout)["modules_checked"] == len(files)
    copy = tmp_path / "dump"
    shutil.copytree(V5E / "conv", copy)
    copied = cli("check", str(copy), *read)
    assert json.loads(copied.stdout)["modules_checked"] == 1


GPU = CORPUS / "jax-gpu-h100" / "module_316915.jit_f.sm_9.0a_gpu_after_optimizations.txt"


def test_custom_call_rules_on_a_gpu_dump(cli: Cli) -> None:
    m = metrics(GPU)
    assert m.custom_calls == 2
    assert invoke(cli, str(GPU), "--max-custom-calls", "2")[0] == 0
    assert invoke(cli, str(GPU), "--max-custom-calls", "1")[0] == 1
    code, doc = invoke(cli, str(GPU), "--forbid-custom-call", "__cudnn$convForward")
    assert code == 1 and doc["violations"][0]["where"] == "__cudnn$convForward"
    assert invoke(cli, str(GPU), "--forbid-custom-call", "__cublas$gemm")[0] == 0


def test_allocation_total_is_the_compilers(cli: Cli) -> None:
    from hlo_layout.reader.sidefiles import buffer_assignment_beside, read_buffer_assignment

    total = read_buffer_assignment(buffer_assignment_beside(TRANSFORMER)).total_bytes
    assert metrics(TRANSFORMER).allocation_bytes == total > 0
    assert invoke(cli, str(TRANSFORMER), "--max-allocation-bytes", str(total))[0] == 0
    assert invoke(cli, str(TRANSFORMER), "--max-allocation-bytes", str(total - 1))[0] == 1


def test_expansion_and_required_space(cli: Cli, tmp_path: Path) -> None:
    padded = [b for b in metrics(TRANSFORMER).largest if b.physical_bytes > b.logical_bytes]
    if padded:
        worst = max(b.physical_bytes / b.logical_bytes for b in padded)
        assert invoke(cli, str(TRANSFORMER), "--max-expansion", f"{worst:.6f}")[0] == 0
        assert invoke(cli, str(TRANSFORMER), "--max-expansion", f"{worst * 0.999:.6f}")[0] == 1
    param = metrics(HOST).entry_buffers[0]
    cfg = tmp_path / "hlo-layout.toml"
    cfg.write_text(f'[check]\nrequire-space = {{ "{param.name}" = {param.memory_space} }}\n')
    assert invoke(cli, str(HOST), "--config", str(cfg))[0] == 0
    other = 1 if param.memory_space != 1 else 0
    cfg.write_text(f'[check]\nrequire-space = {{ "{param.name}" = {other} }}\n')
    code, doc = invoke(cli, str(HOST), "--config", str(cfg))
    assert code == 1 and doc["violations"][0]["rule"] == "require-space"
