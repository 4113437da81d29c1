"""Loop-aware totals on datagen's loop pairs (tests/data/cost-loops/: each program compiled with
a loop and unrolled in Python, with XLA's HloCostAnalysis of both dumps beside them).

- Our XLA-convention figures equal XLA's on every dump (loop and unrolled).
- Our loop-aware flops and transcendentals of the looped dump equal XLA's of the unrolled one
  within 1 %, including the three loops XLA gives no `known_trip_count` (a bound computed in the
  graph, an `s32[1]` counter, an f32 counter past XLA's brute-force limit), except two pairs
  whose difference is by design and is checked as such:
  - `fori_cond`: a `lax.cond` inside the loop; the totals count the costliest branch at every
    step (the issue's rule), so they are at least the unrolled program's and at most twice it;
  - `reductions`: the unrolled program's first step scales by `1.0`, which XLA simplifies away;
    the loop's body multiplies at every step (one 64 × 128 multiply more in all, 4.4 %).
"""

from __future__ import annotations

import json

import pytest

from hlo_layout.cost.model import module_cost
from hlo_layout.syntax import parse_file_modules
from tests.support import DATA

PAIRS_DIR = DATA / "cost-loops"
PAIRS = json.loads((PAIRS_DIR / "pairs.json").read_text())
BY_DESIGN = {"fori_cond", "reductions"}


@pytest.mark.parametrize("variant", ["loop", "unrolled"])
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_xla_convention_equals_xla(pair: str, variant: str) -> None:
    side = PAIRS[pair][variant]
    cost = module_cost(parse_file_modules(PAIRS_DIR / side["dump"])[0])
    xla = side["hlo_module_cost_analysis"]
    assert cost.xla.flops == xla["flops"]
    assert cost.xla.transcendentals == (xla.get("transcendentals") or 0)
    assert cost.xla.bytes_accessed == xla["bytes accessed"]


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_loop_aware_total_is_the_unrolled_program(pair: str) -> None:
    loop, unrolled = PAIRS[pair]["loop"], PAIRS[pair]["unrolled"]["hlo_module_cost_analysis"]
    cost = module_cost(parse_file_modules(PAIRS_DIR / loop["dump"])[0])
    assert len(cost.loops) == loop["whiles"]
    assert all(found.trip_count is not None for found in cost.loops), cost.loops
    # Where XLA annotated the loop, our count is its count (nested: inner first in the text).
    counts = sorted(found.trip_count for found in cost.loops if found.how == "known_trip_count")
    assert counts == sorted(n for n in loop["known_trip_count"] if n is not None)
    assert sorted(found.trip_count for found in cost.loops) == sorted(PAIRS[pair]["trip_counts"])
    transcendentals = unrolled.get("transcendentals") or 0
    if pair == "fori_cond":
        assert unrolled["flops"] <= cost.total.flops <= 2 * unrolled["flops"]
        assert cost.branches
    elif pair == "reductions":
        assert cost.total.flops - unrolled["flops"] == pytest.approx(64 * 128, rel=0.05)
    else:
        assert cost.total.flops == pytest.approx(unrolled["flops"], rel=0.01)
    if pair not in BY_DESIGN or transcendentals:
        assert cost.total.transcendentals == pytest.approx(transcendentals, rel=0.01)


def test_loops_xla_leaves_unannotated_are_counted_here() -> None:
    """The three loops without `known_trip_count`: found by running the loop from its start."""
    for pair, trips in (("iota_bound", 5), ("array_counter", 12), ("float_counter", 200)):
        loop = PAIRS[pair]["loop"]
        assert loop["known_trip_count"] == [None]
        (found,) = module_cost(parse_file_modules(PAIRS_DIR / loop["dump"])[0]).loops
        assert found.trip_count == trips
        assert found.how.startswith("evaluated step by step")
