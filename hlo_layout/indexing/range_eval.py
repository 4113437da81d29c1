"""Interval evaluation of expressions over a box of variable bounds.

Mirrors XLA's `RangeEvaluator::ComputeExpressionRange`: plain interval arithmetic, optionally
narrowed by constraints (a sub-expression that is the key of a constraint has its range intersected
with that constraint's interval). The result always contains every value the expression takes on
the box, which a property test checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hlo_layout.indexing.errors import IndexingError
from hlo_layout.indexing.expr import AffineExpr, ExprKind, VarSpace
from hlo_layout.indexing.interval import Interval

if TYPE_CHECKING:
    from hlo_layout.indexing.map import IndexingMap

# Stand-in for "unbounded" when a divisor's range contains zero (XLA would CHECK-fail there).
_BIG = 1 << 62


class RangeEvaluator:
    """Evaluates expression ranges against live variable bounds (a callable, so a map that is being
    simplified can tighten its bounds between calls) and optional constraints.

    With `memo`, each sub-expression's range is computed once (a simplification pass asks for
    the same sub-expressions again and again, each ask recursing to the leaves); whoever changes
    the bounds or constraints calls `forget()` before asking again."""

    __slots__ = ("_bounds", "_constraints", "_memo")

    def __init__(
        self,
        bounds: Callable[[AffineExpr], Interval],
        constraints: Mapping[AffineExpr, Interval] | None = None,
        *,
        memo: bool = False,
    ) -> None:
        self._bounds = bounds
        self._constraints = constraints
        self._memo: dict[AffineExpr, Interval] | None = {} if memo else None

    def forget(self) -> None:
        """Drop memoized ranges: the bounds or constraints changed."""
        if self._memo is not None:
            self._memo = {}

    def range(self, expr: AffineExpr) -> Interval:
        memo = self._memo
        if memo is not None:
            found = memo.get(expr)
            if found is None:
                found = memo[expr] = self._compute(expr)
            return found
        return self._compute(expr)

    def _compute(self, expr: AffineExpr) -> Interval:
        kind = expr.kind
        if kind is ExprKind.CONST:
            return Interval(expr.value, expr.value)
        if kind is ExprKind.VAR:
            return self._bounds(expr)
        assert expr.lhs is not None and expr.rhs is not None
        lhs = self.range(expr.lhs)
        rhs = self.range(expr.rhs)
        result = _binary_range(kind, lhs, rhs)
        if self._constraints:
            constraint = self._constraints.get(expr)
            if constraint is not None:
                return result.intersect(constraint)
        return result

    def is_always_positive_or_zero(self, expr: AffineExpr) -> bool:
        return self.range(expr).lo >= 0


def _binary_range(kind: ExprKind, lhs: Interval, rhs: Interval) -> Interval:
    if kind is ExprKind.ADD:
        return lhs + rhs
    if kind is ExprKind.MUL:
        return lhs * rhs
    if kind is ExprKind.MIN:
        return Interval(min(lhs.lo, rhs.lo), min(lhs.hi, rhs.hi))
    if kind is ExprKind.MAX:
        return Interval(max(lhs.lo, rhs.lo), max(lhs.hi, rhs.hi))
    if kind is ExprKind.MOD:
        if rhs.is_point:
            m = rhs.lo
            if m > 0 and lhs.lo >= 0 and lhs.hi < m:
                return lhs
            if m == 0:
                raise IndexingError("modulo by zero")
            return Interval(0, abs(m) - 1)
        # A symbolic modulus: the result lies in [0, max|m| - 1] (values are never negative).
        return Interval(0, max(abs(rhs.lo), abs(rhs.hi)) - 1)
    if kind in (ExprKind.FLOORDIV, ExprKind.CEILDIV):
        if rhs.lo <= 0 <= rhs.hi:
            if rhs.is_point:
                raise IndexingError("division by zero")
            return Interval(-_BIG, _BIG)
        if kind is ExprKind.FLOORDIV:
            values = [a // b for a in (lhs.lo, lhs.hi) for b in (rhs.lo, rhs.hi)]
        else:
            values = [-((-a) // b) for a in (lhs.lo, lhs.hi) for b in (rhs.lo, rhs.hi)]
        return Interval(min(values), max(values))
    raise IndexingError(f"not a binary operator: {kind!r}")


def expr_range(
    expr: AffineExpr,
    var_bounds: IndexingMap | Mapping[AffineExpr, Interval],
    *,
    use_constraints: bool = False,
) -> Interval:
    """Interval containing every value of `expr` when each variable ranges over its bounds.

    `var_bounds` is an `IndexingMap` (its dim/range/rt intervals; with `use_constraints=True` its
    constraints narrow matching sub-expressions, as XLA does when simplifying results) or a mapping
    from variable expressions to intervals.
    Example: with d0 in [0, 9] and d1 in [-10, -1], `d0 * 2 + d1` is in [-10, 17].
    """
    from hlo_layout.indexing.map import IndexingMap

    if isinstance(var_bounds, IndexingMap):
        m = var_bounds
        constraints = dict(m.constraints) if use_constraints else None
        return RangeEvaluator(m.var_bound, constraints).range(expr)

    def lookup(v: AffineExpr) -> Interval:
        found = var_bounds.get(v)
        if found is None:
            raise IndexingError(f"no bounds given for variable {v}")
        return found

    return RangeEvaluator(lookup).range(expr)


__all__ = ["RangeEvaluator", "VarSpace", "expr_range"]
