"""Expressions: the smart constructor, canonical order, evaluation and XLA's expression printer.

Expected strings are quoted from indexing.md §1.2, §1.3 and §(d).
"""

from __future__ import annotations

import pytest

from hlo_layout.indexing import (
    AffineExpr,
    IndexingError,
    Interval,
    canonicalize,
    const,
    dim,
    expr_range,
    format_expr,
    parse_expr,
    rt,
    sym,
)
from hlo_layout.indexing.expr import ExprKind, binary, evaluate, largest_known_divisor

d0, d1, d2 = dim(0), dim(1), dim(2)
s0, s1 = sym(0), sym(1)

# -- printing (indexing.md §1.2) -------------------------------------------------------------

PRINTED = [
    ((d1 - 3).floordiv(7), "(d1 - 3) / 7"),
    ((d0 + 3).floordiv(2), "(d0 + 3) / 2"),
    ((d1 % 2) * 4, "(d1 mod 2) * 4"),
    (d0.floordiv(128) % 128, "(d0 / 128) mod 128"),
    ((s0 % 3) * 4, "(s0 mod 3) * 4"),
    ((s0 * 64).floordiv(715) * 715, "((s0 * 64) / 715) * 715"),
    (d0.floordiv(128).floordiv(128), "d0 / 128 / 128"),
    (d0 - (d1 + d2), "d0 - (d1 + d2)"),
    (binary(ExprKind.ADD, -d1, const(16)), "-d1 + 16"),
    (binary(ExprKind.MOD, -d0, const(2)), "-d0 mod 2"),
    (8 * d0, "d0 * 8"),
    (d0 - 42, "d0 - 42"),
    (d0 - d1 * 3, "d0 - d1 * 3"),
    (d0 * 2 + s0 - 1, "d0 * 2 + s0 - 1"),
    (d1 + rt(0) - 4096, "d1 + rt0 - 4096"),
    (d0.min(d1), "min(d0, d1)"),
    (d0.max(d1 + 1), "max(d0, d1 + 1)"),
    (d0.ceildiv(4), "d0 ceildiv 4"),
    (const(-5), "-5"),
]


@pytest.mark.parametrize(("expr", "text"), PRINTED, ids=[t for _, t in PRINTED])
def test_printer(expr: AffineExpr, text: str) -> None:
    assert format_expr(expr) == text
    assert str(expr) == text


@pytest.mark.parametrize(("expr", "text"), PRINTED, ids=[t for _, t in PRINTED])
def test_printed_expression_parses_back(expr: AffineExpr, text: str) -> None:
    assert format_expr(parse_expr(text)) == text


def test_legacy_printer_uses_floordiv_and_mlir_parentheses() -> None:
    # cases.jsonl notes (AllGatherFusionWithReshape): `d0 / 128 / 128` was printed as
    # `(d0 floordiv 128) floordiv 128` before 2026-06.
    assert (
        format_expr(d0.floordiv(128).floordiv(128), legacy=True) == "(d0 floordiv 128) floordiv 128"
    )
    assert format_expr(d0 - 42, legacy=True) == "d0 - 42"
    assert format_expr(parse_expr("d0 floordiv 8"), legacy=True) == "d0 floordiv 8"


# -- the smart constructor and canonical order (indexing.md §1.2, §1.3) ----------------------


def test_constructor_moves_constants_right_and_folds() -> None:
    assert 2 * d0 + 0 == d0 * 2
    assert (d0 * 2) * 4 == d0 * 8
    assert d0 * 1 == d0
    assert d0 * 0 == const(0)
    assert const(7) + const(5) == const(12)
    assert d0 % 1 == const(0)
    assert d0.floordiv(1) == d0


@pytest.mark.parametrize(
    ("built", "canonical"),
    [
        # §1.3: products before variables, dims before symbols, the constant last.
        (d0 + s0 * 3, "s0 * 3 + d0"),
        (s1 + s0 - 42 + d0 * 4, "d0 * 4 + s0 + s1 - 42"),
        (d0 + s0 % 3, "s0 mod 3 + d0"),
        (
            (s0 * 128) % 715 + (s0 * 64).floordiv(715) * 715,
            "((s0 * 64) / 715) * 715 + (s0 * 128) mod 715",
        ),
        # §(d) canonicalization: gcd of a multiplier and a divisor or modulus.
        ((d0 * 6).floordiv(4), "(d0 * 3) / 2"),
        ((d0 * 6) % 4, "((d0 * 3) mod 2) * 2"),
        # (x mod a) mod b -> x mod b when b divides a; (A + B) mod c -> B mod c.
        ((d0 % 8) % 4, "d0 mod 4"),
        ((d0 * 4 + d1) % 4, "d1 mod 4"),
        # Like terms merge; (X / C) * C + X mod C -> X.
        (d0 + d0 + d1 - d0, "d0 + d1"),
        (d0.floordiv(16) * 16 + d0 % 16, "d0"),
        # min/max of expressions that differ by a constant.
        (d0.min(d0 + 1), "d0"),
        (d0.max(d0 - 1), "d0"),
        # x/-1, 0/x, 0 mod x, x mod x.
        (binary(ExprKind.FLOORDIV, d0, const(-1)), "-d0"),
        (binary(ExprKind.FLOORDIV, const(0), d0), "0"),
        (binary(ExprKind.MOD, const(0), d0), "0"),
        (binary(ExprKind.MOD, d0, d0), "0"),
    ],
)
def test_canonicalize(built: AffineExpr, canonical: str) -> None:
    assert format_expr(canonicalize(built)) == canonical


def test_canonicalize_floordiv_drops_small_offset() -> None:
    # indexing.md §(d) (added 2026-07): (X + c) / D -> X / D + floor(c / D) when c mod D is below
    # gcd(known divisor of X, D); here gcd(32, 4608) = 32 and 4639 mod 4608 = 31.
    assert format_expr(canonicalize((s0 * 32 + 4639).floordiv(4608))) == "s0 / 144 + 1"
    # 9 mod 18 = 9 is not below gcd(6, 18) = 6: left for the range-aware simplifier.
    kept = (s0 * 6 + 9).floordiv(18)
    assert canonicalize(kept) == kept


def test_ordering_is_by_kind_then_operands() -> None:
    order = [d0 + d1, d0 * 2, d0 % 3, d0.floordiv(3), d0.ceildiv(3), d0.max(d1), d0.min(d1), d0]
    order += [s0, rt(0), const(1)]
    assert sorted(reversed(order)) == order


# -- evaluation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        # Floor semantics: division rounds toward minus infinity, mod has the divisor's sign
        # (indexing.md §1.2); XLA's Evaluate makes a negative modulus non-negative as well.
        (const(-7).floordiv(2), -4),
        (const(-7).ceildiv(2), -3),
        (binary(ExprKind.MOD, const(-7), const(3)), 2),
        (binary(ExprKind.MOD, const(7), const(-3)), 1),
    ],
)
def test_constant_folding_uses_floor_semantics(expr: AffineExpr, value: int) -> None:
    assert expr == const(value)


def test_evaluate_and_errors() -> None:
    values = {d0: 7, d1: -3}
    assert evaluate(d0 * 2 + d1.floordiv(2), values.__getitem__) == 12
    with pytest.raises(IndexingError, match="by zero"):
        evaluate(binary(ExprKind.MOD, d0, d1 + 3), values.__getitem__)
    with pytest.raises(IndexingError):
        dim(-1)


def test_largest_known_divisor() -> None:
    assert largest_known_divisor(d0 * 6 + s0 * 4) == 2
    assert largest_known_divisor((d0 * 12).floordiv(3)) == 4
    assert largest_known_divisor(d0 + 1) == 1


def test_expr_range_from_xla_range_evaluator_test() -> None:
    # XLA's RangeEvaluatorTest: d0 in [0, 9], d1 in [-10, -1] gives d0 * 2 + d1 in [-10, 17].
    bounds = {d0: Interval(0, 9), d1: Interval(-10, -1)}
    assert expr_range(d0 * 2 + d1, bounds) == Interval(-10, 17)
    assert expr_range(d0.min(d1), bounds) == Interval(-10, -1)
    assert expr_range(d0.max(d1), bounds) == Interval(0, 9)
    with pytest.raises(IndexingError, match="no bounds"):
        expr_range(d2, bounds)
