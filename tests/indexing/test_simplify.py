"""XLA's simplifier suite (simplifier_cases.jsonl) and the simplifier examples of indexing.md §(d).

Every case is compared as XLA's tests compare: the printed map with all whitespace removed must
equal the expected text with all whitespace removed. Where XLA asserts the return value of
`Simplify()`/`RescaleSymbols()` (true = the map changed), we assert `result != input`.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from hlo_layout.indexing import (
    IndexingMap,
    Interval,
    compose,
    constraints_satisfied,
    convert_range_variables_to_dimensions,
    convert_symbols_to_dimensions,
    evaluate_map,
    expr_range,
    format_indexing_map,
    parse_expr,
    parse_indexing_map,
    remove_unused_symbols,
    remove_unused_vars,
    rescale_symbols,
    same_text,
    simplify,
)
from hlo_layout.indexing.expr import dim, used_vars
from hlo_layout.indexing.map import point_results
from hlo_layout.indexing.text import strip_whitespace

from .xla_data import simplifier_cases

_INTS = re.compile(r"-?\d+")


def _ints(text: str) -> list[int]:
    return [int(x) for x in _INTS.findall(text)]


def _with_constraint(m: IndexingMap, expr_text: str, lo: int, hi: int) -> IndexingMap:
    """XLA's `AddConstraint` on a copy (the map is rebuilt, so the constraint is normalized)."""
    expr = parse_expr(expr_text)
    return IndexingMap(
        m.results, m.dims, m.range_vars, m.rt_vars, (*m.constraints, (expr, Interval(lo, hi)))
    )


def _check_text(case: dict[str, Any], actual: IndexingMap) -> None:
    expected = case["expected"]
    text = format_indexing_map(actual)
    if case.get("returns") is False and same_text(expected, case["input"]):
        # XLA's test only asserts that Simplify() returned false; the "expected" text is the test's
        # hand-written input. Compare with what our printer makes of that input.
        expected = format_indexing_map(parse_indexing_map(expected))
    assert strip_whitespace(text) == strip_whitespace(expected), f"\n got: {text}\nwant: {expected}"


def _run_simplify(case: dict[str, Any], m: IndexingMap) -> None:
    out = simplify(m)
    if case.get("returns") is not None:
        assert (out != m) is case["returns"], "Simplify() return value"
    if "preserve_point_dims_returns" in case:
        kept = simplify(m, preserve_point_dims=True)
        assert (kept != m) is case["preserve_point_dims_returns"]
    if "second_simplify_returns" in case:
        assert (simplify(out) != out) is case["second_simplify_returns"]
    if case["expected"] is not None:
        _check_text(case, out)


def _run(case: dict[str, Any]) -> None:
    op: str = case["operation"]
    m = parse_indexing_map(case["input"])
    expected = case["expected"]
    if op == "Simplify()":
        _run_simplify(case, m)
    elif op.startswith("RescaleSymbols()"):
        rescaled = rescale_symbols(m)
        assert rescaled != m, "RescaleSymbols() return value"
        if "then Simplify()" in op:
            out = simplify(rescaled)
            assert out != rescaled, "Simplify() return value"
        else:
            out = rescaled
        _check_text(case, out)
    elif op == "RemoveUnusedSymbols()":
        _check_text(case, remove_unused_symbols(m))
    elif op == "RemoveUnusedVars()":
        out = remove_unused_vars(m)
        if "removed_bitvector" in case:  # which of dims + symbols were dropped
            old = m.all_variables()
            assert len(case["removed_bitvector"]) == len(old)
            assert out.num_dims + out.num_symbols == case["removed_bitvector"].count(False)
        _check_text(case, out)
    elif op.startswith(("Parse", "ToString")):
        _check_text(case, m)
    elif op.startswith("AddConstraint"):
        # Built with the C++ API in XLA (where `x mod 1` folds to 0); from text, Simplify() has to
        # reach the same map. test_map.py builds it with our API as well.
        _check_text(case, simplify(m))
    elif op.startswith(("ComposeIndexingMaps", "compose")):
        producer = parse_indexing_map(case["input2"])
        _check_text(case, compose(m, producer))
        if "either order" in op:
            _check_text(case, compose(producer, m))
    elif op == "ConvertSymbolsToDimensions()":
        _check_text(case, convert_symbols_to_dimensions(m))
    elif op.startswith("ConvertRangeVariablesToDimensions"):
        _check_text(case, convert_range_variables_to_dimensions(m, _ints(op)))
    elif op.startswith("Evaluate"):
        dims_text, syms_text = op.split("symbols=")
        assert list(evaluate_map(m, _ints(dims_text), _ints(syms_text))) == expected
    elif op == "ConstraintsSatisfied":
        for key, want in expected.items():
            mm = m
            added = re.match(r"after AddConstraint\((.+), \[(-?\d+), (-?\d+)\]\) ", key)
            if added:
                mm = _with_constraint(m, added.group(1), int(added.group(2)), int(added.group(3)))
            dims_text, syms_text = key.split("syms=")
            point = _ints(dims_text.split("dims=")[1])
            assert constraints_satisfied(mm, point, _ints(syms_text)) is want, key
    elif op.startswith("RangeEvaluator"):
        for key, want in expected.items():
            if key == "IsAlwaysPositiveOrZero":
                for name, positive in want.items():
                    assert (expr_range(parse_expr(name), m).lo >= 0) is positive, name
            else:
                got = expr_range(parse_expr(key), m)
                assert [got.lo, got.hi] == want, key
    else:  # pragma: no cover - a new kind of record in the data
        pytest.fail(f"unknown operation {op!r}")


@pytest.mark.parametrize("case", simplifier_cases(), ids=lambda c: c["name"])
def test_xla_simplifier_suite(case: dict[str, Any]) -> None:
    _run(case)


def test_suite_is_complete() -> None:
    """All 80 records run (a filter or a renamed file would otherwise shrink the suite silently)."""
    assert len(simplifier_cases()) == 80


# -- indexing.md §(d): the simplifier examples of the design notes ----------------------------

# (map, expected) pairs. The expressions and results are quoted from indexing.md §(d); the domains
# (where the notes do not repeat them) are the ones of the XLA tests the notes summarize.
DOC_EXAMPLES = [
    # Stage 1, range rewriting: `e + c in [a, b]` -> `e in [a - c, b - c]`.
    (
        "(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in [50, 54]",
        "(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 in [45, 49]",
    ),
    # Stage 1, a sum split by gcd: the bound of B does not matter.
    (
        "(d0)[s0, s1] -> (d0 * 6 + s0 * 3 + s1), domain: d0 in [0, 1999], s0 in [0, 1], "
        "s1 in [0, 2], d0 * 6 + s0 * 3 + s1 in [0, 599]",
        "(d0)[s0, s1] -> (d0 * 6 + s0 * 3 + s1), domain: d0 in [0, 99], s0 in [0, 1], s1 in [0, 2]",
    ),
    # Stage 2: a variable snapped to its residue class.
    (
        "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [-21, -2], s0 mod 6 in [0, 0]",
        "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [-18, -6], s0 mod 6 in [0, 0]",
    ),
    # Stage 3, mod without wrap-around is a shift.
    ("(d0) -> (d0 mod 42), domain: d0 in [53, 71]", "(d0) -> (d0 - 42), domain: d0 in [53, 71]"),
    ("(d0) -> (d0 mod 5), domain: d0 in [-5, -1]", "(d0) -> (d0 + 5), domain: d0 in [-5, -1]"),
    # Stage 3, gcd extraction from a mod.
    (
        "()[s0, s1, s2, s3] -> ((s0 * 458752 + s1 + s2 * 4 + s3 * 512) mod 20000), "
        "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]",
        "()[s0, s1, s2, s3] -> (((s0 * 114688 + s3 * 128 + s2) mod 5000) * 4 + s1), "
        "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]",
    ),
    # Stage 3, floordiv: gcd rule, one inner division, a point range, and the cases left alone.
    (
        "(d0, d1) -> (((d0 / 3) * 3 + d1 / 2) / 6), domain: d0 in [0, 11], d1 in [0, 5]",
        "(d0, d1) -> (d0 / 6), domain: d0 in [0, 11], d1 in [0, 5]",
    ),
    (
        "()[s0, s1] -> ((s0 * 2 + s1 / 64) / 3), domain: s0 in [0, 1233], s1 in [0, 127]",
        "()[s0, s1] -> ((s0 * 128 + s1) / 192), domain: s0 in [0, 1233], s1 in [0, 127]",
    ),
    (
        "()[s0, s1] -> ((s0 / 3 + s1 / 3) / 6), domain: s0 in [0, 1233], s1 in [0, 127]",
        "()[s0, s1] -> ((s0 / 3 + s1 / 3) / 6), domain: s0 in [0, 1233], s1 in [0, 127]",
    ),
    (
        "()[s0] -> ((s0 * 16 - 497) / 512), domain: s0 in [0, 4]",
        "()[s0] -> (-1), domain: s0 in [0, 4]",
    ),
    # Canonicalization, (X + c) / D with a small remainder (2026-07): tiling offsets cancel.
    (
        "()[s0] -> (-(s0 / 144) + (s0 * 32 + 4639) / 4608), domain: s0 in [0, 10000]",
        "()[s0] -> (1), domain: s0 in [0, 10000]",
    ),
    # Known weakness, pinned: `(-d0) mod 2` is left as it is.
    (
        "(d0) -> ((-d0) mod 2), domain: d0 in [0, 127]",
        "(d0) -> (-d0 mod 2), domain: d0 in [0, 127]",
    ),
]


@pytest.mark.parametrize(("text", "expected"), DOC_EXAMPLES)
def test_indexing_md_examples(text: str, expected: str) -> None:
    assert format_indexing_map(simplify(parse_indexing_map(text))) == expected


def test_negative_divisor_is_not_merged() -> None:
    # indexing.md §(d): `(s0 / 2) / -7` is kept because the outer divisor is negative.
    m = parse_indexing_map("()[s0] -> ((s0 / 2) / -7), domain: s0 in [0, 1233]")
    assert simplify(m) == m


@pytest.mark.parametrize("factor", [3, 8, -3, -8])
@pytest.mark.parametrize(("lo", "hi"), [(14, 33), (-11, -5), (-7, 20), (5, 5)])
def test_constraint_on_product_becomes_exact_bound(factor: int, lo: int, hi: int) -> None:
    """Stage 1: `e * c in [a, b]` -> `e in [ceil(a/c), floor(b/c)]` (flipped for c < 0), checked
    against the values that satisfy the constraint."""
    m = parse_indexing_map(f"(d0) -> (d0), domain: d0 in [-50, 50], d0 * {factor} in [{lo}, {hi}]")
    feasible = [x for x in range(-50, 51) if lo <= x * factor <= hi]
    out = simplify(m)
    if not feasible:
        assert out.is_known_empty
        return
    assert out.constraints == ()
    assert out.dims[0].bounds == Interval(min(feasible), max(feasible))


@pytest.mark.parametrize("divisor", [2, 3, 8])
@pytest.mark.parametrize(("lo", "hi"), [(5, 11), (-11, -5), (-2, 3), (0, 0)])
def test_constraint_on_quotient_becomes_exact_bound(divisor: int, lo: int, hi: int) -> None:
    """Stage 1: `e / c in [a, b]` -> `e in [a*c, (b+1)*c - 1]` for c > 0."""
    m = parse_indexing_map(f"(d0) -> (d0), domain: d0 in [-99, 99], d0 / {divisor} in [{lo}, {hi}]")
    feasible = [x for x in range(-99, 100) if lo <= x // divisor <= hi]
    out = simplify(m)
    assert out.constraints == ()
    assert out.dims[0].bounds == Interval(min(feasible), max(feasible))


def test_point_dims_are_kept_in_preserve_mode() -> None:
    # indexing.md §(d): kPreserve (reshape, bitcast) keeps point dims; kReplace makes constants.
    m = parse_indexing_map("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [3, 3], d1 in [0, 3]")
    assert simplify(m, preserve_point_dims=True) == m
    replaced = simplify(m)
    assert dim(0) not in used_vars(replaced.results)
    assert point_results(replaced) == point_results(m)


def test_simplify_leaves_special_maps_alone() -> None:
    undefined = IndexingMap.undefined()
    empty = IndexingMap.known_empty(num_dims=2, num_results=1)
    assert simplify(undefined) is undefined
    assert simplify(empty) is empty
