"""Hypothesis strategies for expressions and small indexing maps (shared by the property tests).

Maps are kept small on purpose: every variable spans at most a handful of values, so a whole
domain can be enumerated with numpy and compared point by point.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from hlo_layout.indexing import AffineExpr, ExprKind, IndexingMap, Interval, Variable, expr_range
from hlo_layout.indexing.expr import binary, const, dim, rt, sym

_POSITIVE_DIVISORS = st.sampled_from([1, 2, 3, 4, 6, 8, 16])
_ANY_DIVISORS = st.sampled_from([-7, -3, -2, -1, 1, 2, 3, 4, 6, 8, 16])


@functools.cache  # one strategy object per signature: Hypothesis validates each once
def exprs(
    num_dims: int,
    num_syms: int = 0,
    num_rts: int = 0,
    *,
    max_leaves: int = 10,
    negative_divisors: bool = True,
    ceildiv: bool = False,
) -> st.SearchStrategy[AffineExpr]:
    """Random expressions over the given variables, built through the smart constructor.

    Divisors and moduli are non-zero constants (XLA's analysis never divides by a variable).
    Products of two variables appear too: XLA allows them in constraints (`s0 * s2 in [0, 28]`).
    """
    leaves: list[st.SearchStrategy[AffineExpr]] = [st.integers(-12, 12).map(const)]
    if num_dims:
        leaves.append(st.integers(0, num_dims - 1).map(dim))
    if num_syms:
        leaves.append(st.integers(0, num_syms - 1).map(sym))
    if num_rts:
        leaves.append(st.integers(0, num_rts - 1).map(rt))
    divisors = _ANY_DIVISORS if negative_divisors else _POSITIVE_DIVISORS

    def extend(children: st.SearchStrategy[AffineExpr]) -> st.SearchStrategy[AffineExpr]:
        pairs = st.tuples(children, children)
        options = [
            pairs.map(lambda t: t[0] + t[1]),
            pairs.map(lambda t: t[0] - t[1]),
            st.tuples(children, st.integers(-5, 9)).map(lambda t: t[0] * t[1]),
            st.tuples(children, divisors).map(lambda t: t[0].floordiv(t[1])),
            st.tuples(children, divisors).map(lambda t: binary(ExprKind.MOD, t[0], const(t[1]))),
            pairs.map(lambda t: t[0].min(t[1])),
            pairs.map(lambda t: t[0].max(t[1])),
            children.map(lambda e: -e),
            pairs.map(lambda t: binary(ExprKind.MUL, t[0], t[1])),
        ]
        if ceildiv:
            options.append(st.tuples(children, divisors).map(lambda t: t[0].ceildiv(t[1])))
        return st.one_of(options)

    return st.recursive(st.one_of(leaves), extend, max_leaves=max_leaves)


@functools.cache
def intervals(max_size: int = 5, lo_min: int = -4, lo_max: int = 4) -> st.SearchStrategy[Interval]:
    """Small non-empty intervals, sometimes with negative bounds."""
    return st.tuples(st.integers(lo_min, lo_max), st.integers(1, max_size)).map(
        lambda t: Interval(t[0], t[0] + t[1] - 1)
    )


@st.composite
def maps(
    draw: st.DrawFn,
    *,
    max_dims: int = 3,
    max_range_vars: int = 2,
    max_rt_vars: int = 1,
    max_results: int = 3,
    max_constraints: int = 2,
    max_leaves: int = 8,
    max_points: int = 3000,
) -> IndexingMap:
    """A small defined map with constraints whose intervals cut through the expression's range.

    Constraint divisors are positive: XLA's constraint-range rewrite is unsound for a negative
    divisor (kept on purpose, see simplify.py), and the analysis never produces one.
    """
    num_dims = draw(st.integers(0, max_dims))
    num_range = draw(st.integers(0, max_range_vars))
    num_rt = draw(st.integers(0, max_rt_vars))
    total = num_dims + num_range + num_rt
    size = 5 if total <= 4 else 3
    bounds = [draw(intervals(max_size=size)) for _ in range(total)]
    points = 1
    for b in bounds:
        points *= b.size
    if points > max_points:  # keep the domain enumerable
        bounds = [Interval(b.lo, b.lo + 1) for b in bounds]
    result_exprs = exprs(num_dims, num_range, num_rt, max_leaves=max_leaves)
    results = draw(st.lists(result_exprs, min_size=0, max_size=max_results))
    variables = [Variable(b) for b in bounds]
    dims = variables[:num_dims]
    range_vars = variables[num_dims : num_dims + num_range]
    rt_vars = variables[num_dims + num_range :]
    box = IndexingMap(tuple(results), tuple(dims), tuple(range_vars), tuple(rt_vars))
    constraints = []
    for _ in range(draw(st.integers(0, max_constraints))):
        expr = draw(
            exprs(num_dims, num_range, num_rt, max_leaves=max_leaves, negative_divisors=False)
        )
        full = expr_range(expr, box)
        lo = draw(st.integers(full.lo, max(full.lo, min(full.hi, full.lo + 20))))
        hi = draw(st.integers(lo, max(lo, min(full.hi, lo + 20))))
        constraints.append((expr, Interval(lo, hi)))
    return IndexingMap(
        tuple(results), tuple(dims), tuple(range_vars), tuple(rt_vars), tuple(constraints)
    )
