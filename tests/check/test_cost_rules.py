"""`--max-flops`, `--max-bytes-accessed`, `--max-flops-growth-percent`: budgets on the cost
totals (XLA's HloCostAnalysis, loop-aware), set at and just below the figures `cost` prints."""

from __future__ import annotations

import json

import pytest

from hlo_layout.check.run import measure_all
from hlo_layout.cost.model import module_cost
from hlo_layout.reader.discover import DumpFile
from hlo_layout.syntax import parse_file
from tests.support import CORPUS, DATA, Cli

FORI = DATA / "cost" / "loops" / "fori_matmul.looped.txt"
STEP = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"


def _check(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli("check", *args, "-f", "json")
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_flops_is_the_loop_aware_total(cli: Cli, slack: int, code: int) -> None:
    total = module_cost(parse_file(FORI)).total
    assert total.flops > 9 * module_cost(parse_file(FORI)).xla.flops  # the loop counts 10 times
    exit_code, doc = _check(cli, str(FORI), "--max-flops", str(total.flops + slack))
    assert exit_code == code
    if code:
        (v,) = doc["violations"]
        assert (v["rule"], v["value"], v["unit"]) == ("max-flops", total.flops, "flops")
        assert "MFLOP" in v["value_text"]


@pytest.mark.parametrize("slack, code", [(0, 0), (-1, 1)])
def test_max_bytes_accessed(cli: Cli, slack: int, code: int) -> None:
    total = module_cost(parse_file(FORI)).total
    exit_code, doc = _check(
        cli, str(FORI), "--max-bytes-accessed", str(int(total.bytes_accessed) + slack)
    )
    assert exit_code == code
    if code:
        (v,) = doc["violations"]
        assert (v["rule"], v["value_bytes"]) == ("max-bytes-accessed", total.bytes_accessed)


def test_flops_growth_over_a_baseline(cli: Cli) -> None:
    longer = FORI.read_text().replace(
        '"known_trip_count":{"n":"10"}', '"known_trip_count":{"n":"12"}'
    )
    result = cli(
        "check",
        "-",
        "--baseline",
        str(FORI),
        "--max-flops-growth-percent",
        "10",
        "-f",
        "json",
        input=longer,
    )
    assert result.exit_code == 1, result.output
    (v,) = json.loads(result.stdout)["violations"]
    assert v["rule"] == "max-flops-growth-percent" and 19 < v["value"] < 21
    same = cli(
        "check",
        "-",
        "--baseline",
        str(FORI),
        "--max-flops-growth-percent",
        "0",
        "-f",
        "json",
        input=FORI.read_text(),
    )
    assert same.exit_code == 0, same.output


def test_cost_is_measured_only_for_cost_rules() -> None:
    (plain,) = measure_all([DumpFile(STEP, STEP.name)], jobs=1)
    (costed,) = measure_all([DumpFile(STEP, STEP.name)], jobs=1, cost=True)
    assert plain.metrics[0].flops is None
    assert costed.metrics[0].flops == module_cost(parse_file(STEP)).total.flops
