"""`hlo-layout sharding`: text and JSON output, one instruction in full, exit codes."""

from __future__ import annotations

import json

from tests.support import CORPUS, Cli

BEFORE = CORPUS / "jax-cpu-spmd" / "module_0018.jit_step.before_optimizations.txt"
AFTER = CORPUS / "jax-cpu-spmd" / "module_0018.jit_step.cpu_after_optimizations.txt"
TPU = CORPUS / "libtpu-v5e" / "sharded_mlp" / "sharded_mlp.before_optimizations.txt"


def test_text_view_lists_values_and_devices(cli: Cli) -> None:
    result = cli("sharding", str(BEFORE))
    assert result.exit_code == 0, result.output
    assert "jit_step" in result.output and "8 devices" in result.output
    assert "f32[256,1024]{1,0} → f32[256,256]{1,0}" in result.output
    assert "0-7" in result.output and "1.52MiB" in result.output


def test_json_document(cli: Cli) -> None:
    result = cli("sharding", str(BEFORE), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    (module,) = doc["modules"]
    assert (module["module"], module["num_devices"], module["partitioned"]) == (
        "jit_step",
        8,
        False,
    )
    assert len(module["values"]) == 7
    x = next(v for v in module["values"] if v["instruction"] == "x.1")
    (array,) = x["arrays"]
    assert array["shard_shape"] == "f32[16,256]{1,0}"
    assert array["tile_dims"] == [2, 1] and array["replication"] == 4
    assert array["axe"]["text"] == "S[(2,16,256):(4@device,256@m,1@m)] + R[4:1@device]"
    assert array["cute"] == "(16,256):(256,1)"
    assert "shards" not in array  # only with --instruction
    assert {d["argument_bytes"] for d in module["devices"]} == {1589248}


def test_one_instruction_in_full(cli: Cli) -> None:
    result = cli("sharding", str(TPU), "-i", "fl_1_.1", "-f", "json")
    assert result.exit_code == 0, result.output
    (module,) = json.loads(result.stdout)["modules"]
    (value,) = module["values"]
    (array,) = value["arrays"]
    assert array["shard_shape"] == "bf16[512,1024]{1,0:T(8,128)(2,1)}"
    assert [(s["device"], s["start"]) for s in array["shards"]] == [
        (0, [0, 0]),
        (2, [0, 0]),
        (1, [0, 1024]),
        (3, [0, 1024]),
    ]
    text = cli("sharding", str(TPU), "--instruction", "fl_1_.1")
    assert text.exit_code == 0, text.output
    assert "Tiles" in text.output and "shard as CuTe" in text.output


def test_partitioned_dump_is_detected(cli: Cli) -> None:
    result = cli("sharding", str(AFTER), "-f", "json")
    assert result.exit_code == 0, result.output
    (module,) = json.loads(result.stdout)["modules"]
    assert module["partitioned"] is True
    forced = cli("sharding", str(AFTER), "--global", "-f", "json")
    (again,) = json.loads(forced.stdout)["modules"]
    assert again["partitioned"] is False
    assert again["devices"][0]["argument_bytes"] < module["devices"][0]["argument_bytes"]


def test_exit_codes(cli: Cli) -> None:
    missing = cli("sharding", str(BEFORE), "-i", "no_such_value")
    assert missing.exit_code == 2
    assert "no instruction named 'no_such_value'" in missing.output
    unsharded = cli("sharding", str(BEFORE), "-i", "add.3")
    assert unsharded.exit_code == 2
    absent = cli("sharding", str(BEFORE.with_suffix(".nope")))
    assert absent.exit_code == 3
    assert "Traceback" not in absent.output
