"""One entry per rule: its flag, its config key and its violations' `rule` are the same name,
and both spellings of a rule give the same policy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from hlo_layout.check.policy import load_config
from hlo_layout.check.rule_spec import Kind
from hlo_layout.check.rules import RULES, RULES_BY_KEY
from tests.support import CORPUS, Cli

STEP = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"

#: A value per kind, as a flag and as TOML.
SAMPLES = {
    Kind.SIZE: (["1KiB"], '"1KiB"'),
    Kind.COUNT: (["0"], "0"),
    Kind.NUMBER: (["0"], "0"),
    Kind.SPACES: (["0"], "[0]"),
    Kind.NAMES: (["fusion"], '["fusion"]'),
    Kind.SPACE_SIZES: (["0=1KiB"], '{ 0 = "1KiB" }'),
    Kind.PATTERN_SPACES: ([], '{ "*" = 5 }'),
    Kind.MODULE_OR_SPACE_SIZES: (["1KiB", "0=1KiB"], '{ module = "1KiB", 0 = "1KiB" }'),
    Kind.MODULE_OR_SPACE_NUMBERS: (["0", "hbm=0"], "{ module = 0, hbm = 0 }"),
}


def test_keys_are_unique_kebab_case() -> None:
    keys = [r.key for r in RULES]
    assert len(keys) == len(set(keys))
    for r in RULES:
        assert r.key == r.key.lower() and "_" not in r.key
        assert r.flag == f"--{r.key}" and r.param == r.key.replace("-", "_")
    assert RULES_BY_KEY["max-padding-growth-points"].key == "max-padding-growth"  # old spelling


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.key)
def test_flag_and_config_give_the_same_policy_and_violation_id(
    cli: Cli, rule, tmp_path: Path
) -> None:
    flag_values, toml = SAMPLES[rule.kind]
    cfg = tmp_path / "hlo-layout.toml"
    cfg.write_text(f"[check]\n{rule.key} = {toml}\n")
    from_config = load_config(cfg).for_module("jit_step").get(rule.key)
    assert from_config == rule.parse(tomllib.loads(f"x = {toml}")["x"])
    if flag_values:
        raw = flag_values if rule.kind.repeatable else flag_values[0]
        assert rule.parse(raw) == from_config
    base = ["--baseline", str(STEP)] if rule.needs_baseline else []
    for args in (["--config", str(cfg)], *([[rule.flag, v] for v in flag_values])):
        if rule.evaluate is None or (args[0] != "--config" and not rule.on_command_line):
            continue
        result = cli("check", str(STEP), *base, *args, "-f", "json")
        assert result.exit_code in (0, 1), result.output
        doc = json.loads(result.stdout)
        assert {v["rule"] for v in doc["violations"]} <= {rule.key}


def test_per_space_rules_are_one_entry(cli: Cli) -> None:
    # `--max-space-bytes SPACE=SIZE`: the form `--max-peak-bytes` / `--max-temp-bytes` will use.
    spec = RULES_BY_KEY["max-space-bytes"]
    assert spec.kind is Kind.SPACE_SIZES and spec.metavar == "SPACE=SIZE"
    assert spec.parse(["1=16MiB", "vmem=1KiB", "S(5)=2"]) == {1: 1024, 5: 2}
    result = cli("check", str(STEP), "--max-space-bytes", "0=1KiB", "--max-space-bytes", "5=1",
                 "-f", "json")  # fmt: skip
    (v,) = json.loads(result.stdout)["violations"]
    assert v["rule"] == "max-space-bytes" and v["where"] == "S(0)" and v["limit_bytes"] == 1024
