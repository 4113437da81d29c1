"""XLA's indexing-analysis suite (122 cases of cases.jsonl) against our analysis.

Each case is compared as XLA's tests compare (whitespace-free text, maps of one operand as a
set; see tests/indexing/conformance.py). Every case must match: output-to-input (95 cases: 84
per instruction, 8 grouped over a fusion, 3 with physical layouts) and input-to-output (27: 22
per instruction, 3 with physical layouts, 2 epilogues); the summary tests count each side and
print every failure with why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.indexing.conformance import Outcome, check_case
from tests.indexing.xla_data import analysis_cases


def _cases() -> list[Any]:
    return [pytest.param(c, id=c["name"]) for c in analysis_cases()]


@pytest.mark.parametrize("case", _cases())
def test_case(case: dict[str, Any]) -> None:
    outcome = check_case(case)
    assert outcome.text, "\n".join(outcome.why)


def _kind(case: dict[str, Any]) -> str:
    if case.get("use_physical_layout"):
        return "physical"
    return case.get("target_kind", "instruction")


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        ("output_to_input", {"instruction": 84, "grouped": 8, "physical": 3}),
        ("input_to_output", {"instruction": 22, "physical": 3, "epilogue": 2}),
    ],
)
def test_summary_every_case_of_a_direction_matches(
    direction: str, expected: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [c for c in analysis_cases() if c["direction"] == direction]
    outcomes: list[tuple[dict[str, Any], Outcome]] = [(c, check_case(c)) for c in cases]
    total = Counter(_kind(c) for c, _ in outcomes)
    matched = Counter(_kind(c) for c, o in outcomes if o.text)
    by_meaning = Counter(_kind(c) for c, o in outcomes if o.meaning)
    with capsys.disabled():
        counts = ", ".join(f"{kind} {matched[kind]}/{n}" for kind, n in sorted(total.items()))
        print(
            f"\nXLA indexing suite, {direction}: {sum(matched.values())}/{len(cases)} match as "
            f"text, {sum(by_meaning.values())}/{len(cases)} by meaning ({counts})"
        )
        for _, o in outcomes:
            if not o.text:
                print(f"  {o.name}:\n    " + "\n    ".join(o.why))
    assert dict(total) == expected
    assert matched == total
