"""Laws of the indexing core, checked by Hypothesis over small random maps (style guide §13).

Domains are small enough to enumerate, so "same meaning" is checked exactly with numpy: the same
feasible points and, at every one of them, the same results.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_layout.indexing import (
    AffineExpr,
    IndexingMap,
    Variable,
    canonicalize,
    compose,
    contains_point,
    evaluate_map,
    expr_range,
    format_indexing_map,
    parse_indexing_map,
    remove_unused_symbols,
    simplify,
)
from hlo_layout.indexing.expr import VarSpace, evaluate
from hlo_layout.indexing.map import evaluate_domain, point_results

from .strategies import exprs, intervals, maps

# 100 examples per law keeps the default run near half a minute; raise it for a deeper search.
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _values(m: IndexingMap, point: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    nd, nr = m.num_dims, m.num_range_vars
    return list(point[:nd]), list(point[nd : nd + nr]), list(point[nd + nr :])


# -- simplify ----------------------------------------------------------------------------------


@PROPERTY
@given(maps())
def test_simplify_preserves_meaning(m: IndexingMap) -> None:
    """Same feasible set, same results on every feasible point (KNOWN EMPTY only if empty)."""
    before = point_results(m)
    after = point_results(simplify(m))
    assert before == after, f"{m}\n-> {simplify(m)}"


@PROPERTY
@given(maps())
def test_simplify_preserves_meaning_keeping_point_dims(m: IndexingMap) -> None:
    out = simplify(m, preserve_point_dims=True)
    assert point_results(out) == point_results(m)
    assert out.num_dims == m.num_dims


@PROPERTY
@given(maps())
def test_simplify_is_idempotent(m: IndexingMap) -> None:
    once = simplify(m)
    assert simplify(once) == once, f"{m}\n-> {once}\n-> {simplify(once)}"


@PROPERTY
@given(maps())
def test_remove_unused_symbols_keeps_every_point_and_is_idempotent(m: IndexingMap) -> None:
    """Dropping symbols projects the domain: every (dims, results) pair survives. (Constraints on
    unused symbols alone are deleted, as in XLA, so the projection may grow.)"""
    out = remove_unused_symbols(m)
    assert remove_unused_symbols(out) == out
    assert out.num_dims == m.num_dims and out.num_results == m.num_results

    def projected(mm: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
        return {(p[: mm.num_dims], r) for p, r in point_results(mm).items()}

    assert projected(m) <= projected(out)


# -- compose -----------------------------------------------------------------------------------


@st.composite
def _map_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    """(consumer, producer) with consumer.num_results == producer.num_dims.

    The consumer's results become constraints of the composition, so their divisors are positive
    like those of `maps()` (see the NOTE in simplify.py on XLA's negative-divisor rewrite).
    """
    producer = draw(maps(max_dims=2, max_constraints=1))
    k = producer.num_dims
    nd = draw(st.integers(0, 2))
    nr = draw(st.integers(0, 1))
    nrt = draw(st.integers(0, 1))
    result_exprs = exprs(nd, nr, nrt, max_leaves=6, negative_divisors=False)
    results = draw(st.lists(result_exprs, min_size=k, max_size=k))
    bounds = [Variable(draw(intervals(max_size=4))) for _ in range(nd + nr + nrt)]
    consumer = IndexingMap(
        tuple(results),
        tuple(bounds[:nd]),
        tuple(bounds[nd : nd + nr]),
        tuple(bounds[nd + nr :]),
    )
    return consumer, producer


@PROPERTY
@given(_map_pairs(), st.data())
def test_compose_agrees_with_evaluating_in_sequence(
    pair: tuple[IndexingMap, IndexingMap], data: st.DataObject
) -> None:
    consumer, producer = pair
    composed = compose(consumer, producer)
    ints = st.integers(-6, 6)
    dims = data.draw(st.lists(ints, min_size=consumer.num_dims, max_size=consumer.num_dims))
    c_rng = data.draw(
        st.lists(ints, min_size=consumer.num_range_vars, max_size=consumer.num_range_vars)
    )
    c_rt = data.draw(st.lists(ints, min_size=consumer.num_rt_vars, max_size=consumer.num_rt_vars))
    p_rng = data.draw(
        st.lists(ints, min_size=producer.num_range_vars, max_size=producer.num_range_vars)
    )
    p_rt = data.draw(st.lists(ints, min_size=producer.num_rt_vars, max_size=producer.num_rt_vars))

    middle = evaluate_map(consumer, dims, c_rng, c_rt)
    sequential = evaluate_map(producer, middle, p_rng, p_rt)
    # Symbol order of the composition: range vars [producer's, consumer's], then rt vars.
    rng, rts = p_rng + c_rng, p_rt + c_rt
    inside = contains_point(consumer, dims, c_rng, c_rt) and contains_point(
        producer, middle, p_rng, p_rt
    )
    assert contains_point(composed, dims, rng, rts) == inside
    if not composed.is_known_empty:
        assert evaluate_map(composed, dims, rng, rts) == sequential
    else:
        assert not inside


@PROPERTY
@given(_map_pairs())
def test_simplified_composition_has_the_same_meaning(pair: tuple[IndexingMap, IndexingMap]) -> None:
    composed = compose(*pair)
    assert point_results(simplify(composed)) == point_results(composed)


# -- interval arithmetic -----------------------------------------------------------------------


@st.composite
def _expr_in_box(draw: st.DrawFn) -> tuple[AffineExpr, IndexingMap]:
    nd, nr, nrt = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 1))
    expr = draw(exprs(nd, nr, nrt, max_leaves=12, ceildiv=True))
    bounds = [
        Variable(draw(intervals(max_size=6, lo_min=-8, lo_max=8))) for _ in range(nd + nr + nrt)
    ]
    box = IndexingMap(
        (expr,), tuple(bounds[:nd]), tuple(bounds[nd : nd + nr]), tuple(bounds[nd + nr :])
    )
    return expr, box


@PROPERTY
@given(_expr_in_box())
def test_expr_range_is_sound(case: tuple[AffineExpr, IndexingMap]) -> None:
    """Every value an expression takes on the box lies inside its computed range."""
    expr, box = case
    bound = expr_range(expr, box)
    _, values = evaluate_domain(box)
    assert bound.lo <= int(values.min()) and int(values.max()) <= bound.hi, (str(expr), bound)


@PROPERTY
@given(maps())
def test_expr_range_with_constraints_is_sound_on_feasible_points(m: IndexingMap) -> None:
    """With constraints, the range only has to hold where the constraints do."""
    _, values = evaluate_domain(m)
    for k, result in enumerate(m.results):
        bound = expr_range(result, m, use_constraints=True)
        if values.shape[0]:
            column = values[:, k]
            assert bound.lo <= int(column.min()) and int(column.max()) <= bound.hi


# -- canonicalization --------------------------------------------------------------------------


@PROPERTY
@given(
    exprs(2, 2, 1, max_leaves=14, ceildiv=True),
    st.lists(st.integers(-30, 30), min_size=5, max_size=5),
)
def test_canonicalize_preserves_value(expr: AffineExpr, point: list[int]) -> None:
    offset = {VarSpace.DIM: 0, VarSpace.RANGE: 2, VarSpace.RT: 4}

    def value(v: AffineExpr) -> int:
        return point[offset[v.space] + v.value]

    canonical = canonicalize(expr)
    assert evaluate(canonical, value) == evaluate(expr, value), f"{expr} -> {canonical}"
    assert canonicalize(canonical) == canonical


# -- text --------------------------------------------------------------------------------------


@PROPERTY
@given(maps(), st.booleans(), st.booleans())
def test_print_parse_round_trip(m: IndexingMap, legacy: bool, multiline: bool) -> None:
    """parse -> print -> parse is stable, and printing keeps the meaning.

    (Printing is not injective: XLA prints `(-a * b) * -1` as `--a * b`, which parses as `a * b`;
    so the text of an arbitrary map is a fixed point only after one round.)
    """
    parsed = parse_indexing_map(format_indexing_map(m, legacy=legacy, multiline=multiline))
    text = format_indexing_map(parsed, legacy=legacy, multiline=multiline)
    assert parse_indexing_map(text) == parsed
    assert format_indexing_map(parse_indexing_map(text), legacy=legacy, multiline=multiline) == text
    if m.is_known_empty:
        assert parsed.is_known_empty
        return
    assert point_results(parsed) == point_results(m)
    assert [v.bounds for v in parsed.dims] == [v.bounds for v in m.dims]


@PROPERTY
@given(maps())
def test_evaluate_domain_matches_pointwise_evaluation(m: IndexingMap) -> None:
    points, results = evaluate_domain(m)
    for point, row in zip(points.tolist()[:20], results.tolist()[:20], strict=True):
        assert contains_point(m, *_values(m, tuple(point)))
        assert list(evaluate_map(m, *_values(m, tuple(point)))) == row
    assert points.dtype == np.int64


def test_a_negative_lone_multiplier_keeps_its_constraint() -> None:
    """Hypothesis' counterexample: `s1 = 2 * s0` on [0, 1]^2 is the point (0, 0) only."""
    from hlo_layout.indexing import Interval, Variable
    from hlo_layout.indexing.expr import sym

    two = (Variable(Interval(0, 1)), Variable(Interval(0, 1)))
    m = IndexingMap((), (), two, (), ((sym(0) * -2 + sym(1), Interval(0, 0)),))
    for keep in (False, True):
        assert point_results(simplify(m, preserve_point_dims=keep)) == point_results(m)
