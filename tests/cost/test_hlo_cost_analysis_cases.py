"""The cases of XLA's own hlo_cost_analysis_test.cc, as data (tests/data/cost/
hlo_cost_analysis_test.json: each test's HLO — written as text where the C++ builds it with
XlaBuilder — the instruction it checks and the numbers it expects), checked per instruction.

Each case also holds what jaxlib 0.10.2's HloCostAnalysis gives for the whole module (computed
offline): our module sum must equal it too. Where that newer XLA no longer gives the C++ test's
figure (`newer_xla`: [the test's, jaxlib's] and why), the jaxlib figure is the one we match.
"""

from __future__ import annotations

import json

import pytest

from hlo_layout.cost import HloCostAnalysis
from hlo_layout.cost.properties import (
    BYTES_ACCESSED,
    FLOPS,
    TRANSCENDENTALS,
    operand_bytes_key,
    output_bytes_key,
)
from hlo_layout.syntax import parse
from tests.cost.oracle import differences
from tests.support import DATA

CASES = json.loads((DATA / "cost" / "hlo_cost_analysis_test.json").read_text())["cases"]


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(i) for i in text.split(",")) if text else ()


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_case(case: dict) -> None:
    analysis = HloCostAnalysis(parse(case["hlo"]))
    expect = dict(case["expect"])
    newer = expect.pop("newer_xla", None)
    if newer is not None:
        for key in ("bytes_accessed", "output_bytes"):
            if key in newer:
                expect[key] = newer[key][1]
    module = analysis.properties()
    assert differences(case["jaxlib"], module) == []
    name = case["instruction"]
    props = (
        analysis.instruction_properties(analysis.entry.name)[name] if name is not None else module
    )
    keys = {"flops": FLOPS, "transcendentals": TRANSCENDENTALS, "bytes_accessed": BYTES_ACCESSED}
    for field, key in keys.items():
        if field in expect:
            assert props.get(key, 0) == expect[field], field
    for operand, value in expect.get("operand_bytes", {}).items():
        assert props.get(operand_bytes_key(int(operand)), 0) == value, f"operand {operand}"
    for index, value in expect.get("output_bytes", {}).items():
        assert props.get(output_bytes_key(_index(index)), 0) == value, f"output {{{index}}}"
    if "module_bytes_accessed" in expect:
        assert module.get(BYTES_ACCESSED, 0) == expect["module_bytes_accessed"]


def test_cases_cover_the_handlers() -> None:
    """The cases reach the rules of dot, convolution, reduce-window, fusion (DUS root, nested,
    tuple param and output), infeed/outfeed, scatter, gather and the slices."""
    text = "".join(c["hlo"] for c in CASES)
    for opcode in ("dot(", "convolution(", "reduce-window(", "select-and-scatter(", "fusion(",
                   "infeed(", "outfeed(", "scatter(", "gather(", "dynamic-update-slice(",
                   "dynamic-slice(", "slice(", "map(", "all-reduce(", "domain("):  # fmt: skip
        assert opcode in text, opcode
    assert len(CASES) >= 45
