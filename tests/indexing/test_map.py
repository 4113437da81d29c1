"""`IndexingMap` values: construction rules, constructors, composition, evaluation, domains."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlo_layout.indexing import (
    IndexingError,
    IndexingMap,
    Interval,
    compose,
    const,
    contains_point,
    dim,
    domain_points,
    evaluate_map,
    format_indexing_map,
    parse_indexing_map,
    sym,
)
from hlo_layout.indexing.map import evaluate_domain


def test_constraint_on_variable_narrows_it() -> None:
    # indexing.md §(d) AddConstraint: a constraint on a bare dim or symbol is intersected into it.
    m = IndexingMap.from_exprs(
        [dim(0) + sym(0)], [(0, 9)], [(0, 7)], constraints=[(sym(0), (2, 20))]
    )
    assert m.range_vars[0].bounds == Interval(2, 7)
    assert m.constraints == ()


def test_duplicate_constraints_intersect() -> None:
    e = dim(0) + sym(0)
    m = IndexingMap.from_exprs([e], [(0, 9)], [(0, 7)], constraints=[(e, (0, 10)), (e, (4, 20))])
    assert m.constraints == ((e, Interval(4, 10)),)
    empty = IndexingMap.from_exprs([e], [(0, 9)], [(0, 7)], constraints=[(e, (0, 3)), (e, (4, 20))])
    assert empty.is_known_empty


def test_constraint_mod_one_built_with_the_api() -> None:
    # XLA's Simplifier_Mod1 builds `(d0 - 5) mod 1` with the C++ operators: `x mod 1` folds to 0,
    # and a constant constraint inside its interval is dropped.
    m = IndexingMap.from_exprs([dim(0)], [(0, 99)], constraints=[((dim(0) - 5) % 1, (0, 0))])
    assert format_indexing_map(m) == "(d0) -> (d0), domain: d0 in [0, 99]"


def test_identity_undefined_known_empty_constructors() -> None:
    ident = IndexingMap.identity([10, 20])
    assert ident.results == (dim(0), dim(1))
    assert [v.bounds for v in ident.dims] == [Interval(0, 9), Interval(0, 19)]
    assert IndexingMap.undefined().is_undefined
    empty = IndexingMap.known_empty(num_dims=1, num_results=2)
    assert empty.is_known_empty and empty.results == (const(0), const(0))
    assert empty.dims[0].bounds == Interval(0, -1)


def test_undeclared_variable_is_rejected() -> None:
    with pytest.raises(IndexingError, match="not declared"):
        IndexingMap.from_exprs([sym(0)], [(0, 3)])


def test_equality_ignores_names_and_constraint_order() -> None:
    a = parse_indexing_map(
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 3], d0 mod 2 in [0, 0], "
        "s0 mod 3 in [0, 0]"
    )
    b = parse_indexing_map(
        "(x)[y] -> (x + y), domain: x in [0, 9], y in [0, 3], y mod 3 in [0, 0], x mod 2 in [0, 0]"
    )
    assert a == b and hash(a) == hash(b)


def test_composition_with_undefined_or_empty() -> None:
    ident = IndexingMap.identity([4])
    assert compose(ident, IndexingMap.undefined()).is_undefined
    assert compose(IndexingMap.undefined(), ident).is_undefined
    empty = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, -1]")
    assert compose(ident, empty).is_known_empty
    assert compose(empty, ident).num_results == 1  # indexing.md §1.1: the result count survives


def test_composition_rank_mismatch_is_an_error() -> None:
    with pytest.raises(IndexingError, match="cannot compose"):
        compose(IndexingMap.identity([4]), IndexingMap.identity([4, 4]))


def test_composition_carries_producer_intervals_forward() -> None:
    # indexing.md §(c).3: `consumer.result_k in producer.interval(dim k)` narrows a variable,
    # checks a constant, or becomes a constraint on the expression.
    consumer = IndexingMap.from_exprs([dim(0) * 8 + dim(1)], [(0, 3), (0, 7)])
    producer = IndexingMap.from_exprs([dim(0) - 2], [(2, 31)])
    composed = compose(consumer, producer)
    assert composed.constraints == ((dim(0) * 8 + dim(1), Interval(2, 31)),)
    assert compose(IndexingMap.from_exprs([5], [(0, 3)]), producer).is_known_empty is False
    assert compose(IndexingMap.from_exprs([40], [(0, 3)]), producer).is_known_empty


def test_evaluate_map_ignores_the_domain() -> None:
    # XLA's EvaluateIgnoresDomainRanges.
    m = parse_indexing_map(
        "(d0, d1)[s0, s1] -> (d1, d0, s1, s0), domain: d0 in [0, 3], d1 in [0, 3], "
        "s0 in [0, 1], s1 in [0, 1]"
    )
    assert evaluate_map(m, [1, 2], [3, 4]) == (2, 1, 4, 3)
    assert not contains_point(m, [1, 2], [3, 4])
    with pytest.raises(IndexingError):
        evaluate_map(m, [1], [3, 4])


def test_domain_points_enumerate_box_and_constraints() -> None:
    m = parse_indexing_map(
        "(d0)[s0] -> (d0 * 3 + s0), domain: d0 in [0, 4], s0 in [-1, 2], (d0 + s0) mod 2 in [0, 0]"
    )
    expected = [(a, b) for a, b in itertools.product(range(0, 5), range(-1, 3)) if (a + b) % 2 == 0]
    points = domain_points(m)
    assert [tuple(p) for p in points.tolist()] == expected
    points, results = evaluate_domain(m)
    assert results[:, 0].tolist() == [a * 3 + b for a, b in expected]
    assert domain_points(IndexingMap.known_empty(num_dims=1)).shape == (0, 1)
    with pytest.raises(IndexingError, match="max_points"):
        domain_points(IndexingMap.identity([1000, 1000]), max_points=1000)


def test_domain_points_of_a_map_without_variables() -> None:
    points, results = evaluate_domain(parse_indexing_map("() -> ()"))
    assert points.shape == (1, 0) and results.shape == (1, 0)
    assert np.array_equal(domain_points(IndexingMap()), np.zeros((1, 0), dtype=np.int64))
