"""`IndexingMap`: results over dimension, range and runtime variables, plus a constrained domain.

Mirrors XLA's `IndexingMap` (xla/hlo/analysis/indexing_map.{h,cc}) as one frozen value:

* `results`: one expression per output coordinate;
* `dims`, `range_vars`, `rt_vars`: each variable has an inclusive `Interval` and an optional custom
  name (printing falls back to `d<i>`, `s<j>`, `rt<k>`);
* `constraints`: ordered `(expr, interval)` pairs that restrict the domain further;
* `state`: DEFINED, KNOWN_EMPTY (the domain is provably empty) or UNDEFINED (unknown indexing).

Construction normalizes constraints exactly like XLA's constructor and `AddConstraint`: a constraint
on a bare variable narrows that variable, a constant constraint is checked and dropped, a repeated
expression intersects, and any empty interval turns the map KNOWN EMPTY (results become 0, dim and
range intervals `[0, -1]`, constraints cleared, counts kept). Heavy passes (`simplify`, ...) live in
`simplify.py` and return new maps.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Union, cast

from hlo_layout.indexing.errors import IndexingError
from hlo_layout.indexing.expr import (
    AffineExpr,
    ExprKind,
    VarSpace,
    apply_op,
    const,
    evaluate,
    replace_vars,
    used_vars,
    var,
)
from hlo_layout.indexing.interval import Interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class MapState(Enum):
    """Whether a map is usable, provably empty, or unknown (XLA: default-constructed map)."""

    DEFINED = "defined"
    KNOWN_EMPTY = "known empty"
    UNDEFINED = "undefined"


KNOWN_EMPTY = MapState.KNOWN_EMPTY


@dataclass(frozen=True, slots=True)
class Variable:
    """A dimension, range or runtime variable: its bounds and an optional custom name.

    As in XLA, the name does not take part in equality (it only changes how the map prints).
    """

    bounds: Interval
    name: str = field(default="", compare=False)


BoundLike = Union[Interval, tuple[int, int], Variable]  # noqa: UP007 (a runtime alias on 3.10)


def _as_variable(bound: BoundLike) -> Variable:
    if isinstance(bound, Variable):
        return bound
    if isinstance(bound, Interval):
        return Variable(bound)
    if isinstance(bound, tuple) and len(bound) == 2:
        return Variable(Interval(int(bound[0]), int(bound[1])))
    raise IndexingError(f"expected an Interval, a (lo, hi) pair or a Variable, got {bound!r}")


def _space_vars(m: IndexingMap | _Builder, space: VarSpace) -> Sequence[Variable]:
    """The variables of one space (`d`, `s` or `rt`) of a map or of a map being built."""
    if space is VarSpace.DIM:
        return m.dims
    if space is VarSpace.RANGE:
        return m.range_vars
    return m.rt_vars


@dataclass(frozen=True, slots=True, eq=False)
class IndexingMap:
    """An XLA indexing map. Build with `from_exprs`, `identity`, `parse_indexing_map` or `compose`.

    Example (broadcast of a [10] operand into [10, 20], output to input):
    `IndexingMap.from_exprs([dim(0)], [(0, 9), (0, 19)])` prints
    `(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 19]`.
    """

    results: tuple[AffineExpr, ...] = ()
    dims: tuple[Variable, ...] = ()
    range_vars: tuple[Variable, ...] = ()
    rt_vars: tuple[Variable, ...] = ()
    constraints: tuple[tuple[AffineExpr, Interval], ...] = ()
    state: MapState = MapState.DEFINED
    #: The hash, computed on first use: maps are hashed again and again (sets of operand
    #: indexings per instruction, memo keys), and the key builds a frozenset each time.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("results", "dims", "range_vars", "rt_vars", "constraints"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if self.state is MapState.UNDEFINED:
            return
        self._check_variables()
        builder = _Builder.raw(self)
        if self.state is MapState.KNOWN_EMPTY or not builder.verify_variable_intervals():
            builder.reset_to_known_empty()
        else:
            builder.constraints = {}
            for expr, interval in self.constraints:
                builder.add_constraint(expr, interval)
        for name, value in builder.fields().items():
            object.__setattr__(self, name, value)

    def _check_variables(self) -> None:
        counts = {
            VarSpace.DIM: len(self.dims),
            VarSpace.RANGE: len(self.range_vars),
            VarSpace.RT: len(self.rt_vars),
        }
        exprs = list(self.results) + [e for e, _ in self.constraints]
        for v in used_vars(exprs):
            if v.value >= counts[v.space]:
                raise IndexingError(
                    f"variable {v} is not declared (the map has {counts[VarSpace.DIM]} dims, "
                    f"{counts[VarSpace.RANGE]} range vars, {counts[VarSpace.RT]} rt vars)"
                )

    # -- factories ---------------------------------------------------------------------------

    @staticmethod
    def from_exprs(
        results: Iterable[AffineExpr | int],
        dim_bounds: Iterable[BoundLike],
        range_bounds: Iterable[BoundLike] = (),
        rt_bounds: Iterable[BoundLike] = (),
        constraints: Iterable[tuple[AffineExpr, BoundLike]] = (),
    ) -> IndexingMap:
        """Build a map; bounds are `Interval`s, `(lo, hi)` pairs or `Variable`s (for names)."""
        exprs = tuple(r if isinstance(r, AffineExpr) else const(r) for r in results)
        cons = tuple((e, _as_variable(b).bounds) for e, b in constraints)
        return IndexingMap(
            exprs,
            tuple(_as_variable(b) for b in dim_bounds),
            tuple(_as_variable(b) for b in range_bounds),
            tuple(_as_variable(b) for b in rt_bounds),
            cons,
        )

    @staticmethod
    def from_tensor_sizes(
        results: Iterable[AffineExpr | int],
        dim_sizes: Sequence[int],
        range_sizes: Sequence[int] = (),
    ) -> IndexingMap:
        """Dims and range vars spanning `[0, size - 1]` (XLA's `IndexingMap::FromTensorSizes`)."""
        return IndexingMap.from_exprs(
            results,
            [(0, n - 1) for n in dim_sizes],
            [(0, n - 1) for n in range_sizes],
        )

    @staticmethod
    def identity(shape: Sequence[int]) -> IndexingMap:
        """`(d0, ..., dn) -> (d0, ..., dn)` over a shape: what an elementwise op reads. Maps are
        immutable, so one per shape is shared (a walk asks for it at every elementwise op)."""
        return _identity(tuple(shape))

    @staticmethod
    def undefined() -> IndexingMap:
        return UNDEFINED

    @staticmethod
    def known_empty(
        num_dims: int = 0, num_range_vars: int = 0, num_rt_vars: int = 0, num_results: int = 0
    ) -> IndexingMap:
        """The canonical empty map with the given counts (results 0, intervals `[0, -1]`)."""
        empty = Variable(Interval(0, -1))
        return IndexingMap(
            (const(0),) * num_results,
            (empty,) * num_dims,
            (empty,) * num_range_vars,
            (Variable(Interval(0, -1)),) * num_rt_vars,
            (),
            MapState.KNOWN_EMPTY,
        )

    # -- queries -----------------------------------------------------------------------------

    @property
    def is_undefined(self) -> bool:
        return self.state is MapState.UNDEFINED

    @property
    def is_known_empty(self) -> bool:
        return self.state is MapState.KNOWN_EMPTY

    @property
    def num_dims(self) -> int:
        return len(self.dims)

    @property
    def num_range_vars(self) -> int:
        return len(self.range_vars)

    @property
    def num_rt_vars(self) -> int:
        return len(self.rt_vars)

    @property
    def num_symbols(self) -> int:
        return len(self.range_vars) + len(self.rt_vars)

    @property
    def num_results(self) -> int:
        return len(self.results)

    def variables(self, space: VarSpace) -> tuple[Variable, ...]:
        return tuple(_space_vars(self, space))

    def var_bound(self, v: AffineExpr) -> Interval:
        """The interval of a variable expression (`d_i`, `s_j` or `rt_k`)."""
        return self.variables(v.space)[v.value].bounds

    def all_variables(self) -> list[AffineExpr]:
        """Every variable in XLA's global order: dims, then range vars, then rt vars."""
        return [
            var(space, i)
            for space in (VarSpace.DIM, VarSpace.RANGE, VarSpace.RT)
            for i in range(len(self.variables(space)))
        ]

    def constraint_map(self) -> dict[AffineExpr, Interval]:
        return dict(self.constraints)

    # -- equality: XLA's operator== (constraints as a set, names ignored) ---------------------

    def _identity_key(self) -> tuple[object, ...]:
        return (
            self.state,
            self.results,
            self.dims,
            self.range_vars,
            self.rt_vars,
            frozenset(self.constraints),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return self is other or self._identity_key() == other._identity_key()

    def __hash__(self) -> int:
        found = self._hash
        if found is None:
            found = hash(self._identity_key())
            object.__setattr__(self, "_hash", found)
        return found

    def __getstate__(self) -> tuple[object, ...]:
        # Without the cached hash: MapState hashes by name, which differs between processes.
        return tuple(getattr(self, name) for name in _STATE)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(_STATE, state, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_hash", None)

    def __str__(self) -> str:
        from hlo_layout.indexing.text import format_indexing_map

        return format_indexing_map(self)

    def __repr__(self) -> str:
        return f"IndexingMap({self!s})"


_STATE = ("results", "dims", "range_vars", "rt_vars", "constraints", "state")
UNDEFINED = IndexingMap(state=MapState.UNDEFINED)


class _Builder:
    """Mutable working copy of a map used inside the passes (XLA mutates maps in place; we do it on
    a private copy and freeze the result, so callers only ever see new values)."""

    __slots__ = ("constraints", "dims", "known_empty", "range_vars", "results", "rt_vars")

    def __init__(
        self,
        results: list[AffineExpr],
        dims: list[Variable],
        range_vars: list[Variable],
        rt_vars: list[Variable],
        constraints: dict[AffineExpr, Interval],
        known_empty: bool = False,
    ) -> None:
        self.results = results
        self.dims = dims
        self.range_vars = range_vars
        self.rt_vars = rt_vars
        self.constraints = constraints
        self.known_empty = known_empty

    @staticmethod
    def raw(m: IndexingMap) -> _Builder:
        constraints: dict[AffineExpr, Interval] = {}
        for expr, interval in m.constraints:
            constraints[expr] = interval
        return _Builder(
            list(m.results),
            list(m.dims),
            list(m.range_vars),
            list(m.rt_vars),
            constraints,
            m.state is MapState.KNOWN_EMPTY,
        )

    @staticmethod
    def create(
        results: Sequence[AffineExpr],
        dims: Sequence[Variable],
        range_vars: Sequence[Variable],
        rt_vars: Sequence[Variable],
        constraints: Iterable[tuple[AffineExpr, Interval]] = (),
    ) -> _Builder:
        """XLA's constructor: check variable intervals, then `AddConstraint` each constraint."""
        b = _Builder(list(results), list(dims), list(range_vars), list(rt_vars), {})
        if not b.verify_variable_intervals():
            b.reset_to_known_empty()
            return b
        for expr, interval in constraints:
            b.add_constraint(expr, interval)
        return b

    def fields(self) -> dict[str, object]:
        return {
            "results": tuple(self.results),
            "dims": tuple(self.dims),
            "range_vars": tuple(self.range_vars),
            "rt_vars": tuple(self.rt_vars),
            "constraints": tuple(self.constraints.items()),
            "state": MapState.KNOWN_EMPTY if self.known_empty else MapState.DEFINED,
        }

    def freeze(self) -> IndexingMap:
        m = IndexingMap.__new__(IndexingMap)
        for name, value in self.fields().items():
            object.__setattr__(m, name, value)
        object.__setattr__(m, "_hash", None)
        return m

    def _vars(self, space: VarSpace) -> list[Variable]:
        # A builder's own lists (changed in place by its callers), so the cast is exact.
        return cast(list[Variable], _space_vars(self, space))

    def var_bound(self, v: AffineExpr) -> Interval:
        return self._vars(v.space)[v.value].bounds

    def set_var_bound(self, v: AffineExpr, bounds: Interval) -> None:
        variables = self._vars(v.space)
        variables[v.value] = Variable(bounds, variables[v.value].name)

    def verify_variable_intervals(self) -> bool:
        return all(v.bounds.is_feasible for v in (*self.dims, *self.range_vars, *self.rt_vars))

    def reset_to_known_empty(self) -> None:
        """XLA's `ResetToKnownEmpty`: zero results, empty dim/range intervals, no constraints."""
        self.results = [const(0)] * len(self.results)
        self.dims = [Variable(Interval(0, -1), v.name) for v in self.dims]
        self.range_vars = [Variable(Interval(0, -1), v.name) for v in self.range_vars]
        self.constraints = {}
        self.known_empty = True

    def add_constraint(self, expr: AffineExpr, interval: Interval) -> None:
        """XLA's `IndexingMap::AddConstraint` (see the module docstring)."""
        if self.known_empty:
            return
        if not interval.is_feasible:
            self.reset_to_known_empty()
            return
        if expr.kind is ExprKind.VAR:
            narrowed = self.var_bound(expr).intersect(interval)
            self.set_var_bound(expr, narrowed)
            if not narrowed.is_feasible:
                self.reset_to_known_empty()
            return
        if expr.kind is ExprKind.CONST:
            if not interval.contains(expr.value):
                self.reset_to_known_empty()
            return
        current = self.constraints.get(expr)
        if current is None:
            self.constraints[expr] = interval
            return
        narrowed = current.intersect(interval)
        self.constraints[expr] = narrowed
        if not narrowed.is_feasible:
            self.reset_to_known_empty()

    def erase_constraint(self, expr: AffineExpr) -> None:
        self.constraints.pop(expr, None)


@functools.lru_cache(maxsize=4096)
def _identity(shape: tuple[int, ...]) -> IndexingMap:
    results = [var(VarSpace.DIM, i) for i in range(len(shape))]
    return IndexingMap.from_tensor_sizes(results, shape)


# -- composition ------------------------------------------------------------------------------


def compose(consumer: IndexingMap, producer: IndexingMap) -> IndexingMap:
    """`producer ∘ consumer`: from the consumer's domain straight to the producer's results.

    XLA's `ComposeIndexingMaps(first=consumer, second=producer)`. The consumer maps output indices
    to intermediate indices, the producer maps intermediate indices to operand indices. Dims come
    from the consumer; range vars are `[producer's, consumer's]`, then rt vars
    `[producer's, consumer's]`; constraints are the producer's (rewritten through the consumer's
    results), the consumer's, and `consumer.result_k in producer.dim_k` for every k.
    Example: `(d0)[s0] -> (d0, s0)` then `(d0, d1)[s0, s1] -> (d1, d0, s1, s0)` gives
    `(d0)[s0, s1, s2] -> (s2, d0, s1, s0)`.
    """
    if consumer.is_undefined or producer.is_undefined:
        return UNDEFINED
    if consumer.is_known_empty or producer.is_known_empty:
        # What XLA reaches through an empty interval: the composed variables, reset to empty.
        empty = _Builder(
            [const(0)] * producer.num_results,
            list(consumer.dims),
            [*producer.range_vars, *consumer.range_vars],
            [*producer.rt_vars, *consumer.rt_vars],
            {},
        )
        empty.reset_to_known_empty()
        return empty.freeze()
    if consumer.num_results != producer.num_dims:
        raise IndexingError(
            f"cannot compose: the consumer has {consumer.num_results} results but the producer "
            f"has {producer.num_dims} dims"
        )
    range_shift = producer.num_range_vars
    rt_shift = producer.num_rt_vars

    def from_consumer(v: AffineExpr) -> AffineExpr | None:
        if v.space is VarSpace.RANGE:
            return var(VarSpace.RANGE, v.value + range_shift)
        if v.space is VarSpace.RT:
            return var(VarSpace.RT, v.value + rt_shift)
        return None

    # The consumer's symbols move behind the producer's before its results replace the
    # producer's dims (the substitution is simultaneous, as XLA's `ReplaceDimsAndSymbols`).
    consumer_results = [replace_vars(r, from_consumer) for r in consumer.results]

    def from_producer(v: AffineExpr) -> AffineExpr | None:
        return consumer_results[v.value] if v.space is VarSpace.DIM else None

    b = _Builder.create(
        [replace_vars(r, from_producer) for r in producer.results],
        consumer.dims,
        (*producer.range_vars, *consumer.range_vars),
        (*producer.rt_vars, *consumer.rt_vars),
    )
    for expr, interval in producer.constraints:
        b.add_constraint(replace_vars(expr, from_producer), interval)
    for expr, interval in consumer.constraints:
        b.add_constraint(replace_vars(expr, from_consumer), interval)
    for k, result in enumerate(consumer_results):
        b.add_constraint(result, producer.dims[k].bounds)
    return b.freeze()


# -- evaluation -------------------------------------------------------------------------------


def _point_lookup(
    m: IndexingMap, dims: Sequence[int], range_vals: Sequence[int], rt_vals: Sequence[int]
) -> dict[tuple[VarSpace, int], int]:
    if (
        len(dims) != m.num_dims
        or len(range_vals) != m.num_range_vars
        or (len(rt_vals) != m.num_rt_vars)
    ):
        raise IndexingError(
            f"expected {m.num_dims} dims, {m.num_range_vars} range and {m.num_rt_vars} rt values"
        )
    values: dict[tuple[VarSpace, int], int] = {}
    for space, vals in ((VarSpace.DIM, dims), (VarSpace.RANGE, range_vals), (VarSpace.RT, rt_vals)):
        for i, value in enumerate(vals):
            values[(space, i)] = int(value)
    return values


def evaluate_map(
    m: IndexingMap,
    dims: Sequence[int],
    range_vals: Sequence[int] = (),
    rt_vals: Sequence[int] = (),
) -> tuple[int, ...]:
    """The results at one point, ignoring the domain (XLA's `IndexingMap::Evaluate`).

    Example: `(d0, d1)[s0, s1] -> (d1, d0, s1, s0)` at dims (1, 2), symbols (3, 4) is (2, 1, 4, 3).
    """
    if m.is_undefined:
        raise IndexingError("cannot evaluate an UNDEFINED indexing map")
    values = _point_lookup(m, dims, range_vals, rt_vals)
    return tuple(evaluate(r, lambda v: values[(v.space, v.value)]) for r in m.results)


def constraints_satisfied(
    m: IndexingMap,
    dims: Sequence[int],
    range_vals: Sequence[int] = (),
    rt_vals: Sequence[int] = (),
) -> bool:
    """Whether a point meets every constraint; variable intervals are not checked (as in XLA)."""
    if m.is_undefined or m.is_known_empty:
        return False
    values = _point_lookup(m, dims, range_vals, rt_vals)
    return all(
        interval.contains(evaluate(expr, lambda v: values[(v.space, v.value)]))
        for expr, interval in m.constraints
    )


def contains_point(
    m: IndexingMap,
    dims: Sequence[int],
    range_vals: Sequence[int] = (),
    rt_vals: Sequence[int] = (),
) -> bool:
    """Whether a point lies in the domain: inside every variable interval and every constraint."""
    if m.is_undefined or m.is_known_empty:
        return False
    for variables, vals in ((m.dims, dims), (m.range_vars, range_vals), (m.rt_vars, rt_vals)):
        if any(not v.bounds.contains(int(x)) for v, x in zip(variables, vals, strict=True)):
            return False
    return constraints_satisfied(m, dims, range_vals, rt_vals)


def _eval_np(
    expr: AffineExpr, columns: dict[tuple[VarSpace, int], np.ndarray], n: int
) -> np.ndarray:
    import numpy as np  # loaded on first use: building and simplifying maps never needs it

    kind = expr.kind
    if kind is ExprKind.CONST:
        return np.full(n, expr.value, dtype=np.int64)
    if kind is ExprKind.VAR:
        return columns[(expr.space, expr.value)]
    assert expr.lhs is not None and expr.rhs is not None
    a = _eval_np(expr.lhs, columns, n)
    b = _eval_np(expr.rhs, columns, n)
    if kind is ExprKind.ADD:
        return a + b
    if kind is ExprKind.MUL:
        return a * b
    if kind is ExprKind.MIN:
        return np.minimum(a, b)
    if kind is ExprKind.MAX:
        return np.maximum(a, b)
    if np.any(b == 0):
        raise IndexingError(f"{kind.name.lower()} by zero while evaluating {expr}")
    if kind is ExprKind.FLOORDIV:
        return np.floor_divide(a, b)
    if kind is ExprKind.CEILDIV:
        return -np.floor_divide(-a, b)
    if kind is ExprKind.MOD:
        return np.mod(a, np.abs(b))
    raise IndexingError(f"cannot evaluate {expr}")  # pragma: no cover - exhaustive above


def domain_points(m: IndexingMap, *, max_points: int = 1_000_000) -> npt.NDArray[np.int64]:
    """Every point of the domain as rows `(dims..., range vars..., rt vars...)`, in lexicographic
    order: the box of variable intervals, filtered by the constraints. Empty for KNOWN EMPTY."""
    import numpy as np  # loaded on first use: building and simplifying maps never needs it

    variables = [*m.dims, *m.range_vars, *m.rt_vars]
    if m.is_undefined:
        raise IndexingError("an UNDEFINED indexing map has no domain")
    if m.is_known_empty or any(v.bounds.is_empty for v in variables):
        return np.zeros((0, len(variables)), dtype=np.int64)
    total = 1
    for v in variables:
        total *= v.bounds.size
    if total > max_points:
        raise IndexingError(f"domain box has {total} points, more than max_points={max_points}")
    if not variables:
        points = np.zeros((1, 0), dtype=np.int64)
    else:
        axes = [np.arange(v.bounds.lo, v.bounds.hi + 1, dtype=np.int64) for v in variables]
        grids = np.meshgrid(*axes, indexing="ij")
        points = np.stack([g.reshape(-1) for g in grids], axis=1)
    if m.constraints:
        columns = _columns(m, points)
        keep = np.ones(points.shape[0], dtype=bool)
        for expr, interval in m.constraints:
            values = _eval_np(expr, columns, points.shape[0])
            keep &= (values >= interval.lo) & (values <= interval.hi)
        points = points[keep]
    return points


def _columns(m: IndexingMap, points: np.ndarray) -> dict[tuple[VarSpace, int], np.ndarray]:
    columns: dict[tuple[VarSpace, int], np.ndarray] = {}
    col = 0
    for space in (VarSpace.DIM, VarSpace.RANGE, VarSpace.RT):
        for i in range(len(m.variables(space))):
            columns[(space, i)] = points[:, col]
            col += 1
    return columns


def evaluate_domain(
    m: IndexingMap, *, max_points: int = 1_000_000
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """`(points, results)`: the domain points (see `domain_points`) and, row for row, the result
    tuple at each of them. This is the map's meaning; `simplify` must not change it."""
    import numpy as np  # loaded on first use: building and simplifying maps never needs it

    points = domain_points(m, max_points=max_points)
    n = points.shape[0]
    columns = _columns(m, points)
    if not m.results:
        return points, np.zeros((n, 0), dtype=np.int64)
    results = np.stack([_eval_np(r, columns, n) for r in m.results], axis=1)
    return points, results


def point_results(
    m: IndexingMap, *, max_points: int = 1_000_000
) -> dict[tuple[int, ...], tuple[int, ...]]:
    """The map as a Python dict `{domain point: results}`, handy for comparing two maps."""
    points, results = evaluate_domain(m, max_points=max_points)
    return {
        tuple(int(x) for x in p): tuple(int(y) for y in r)
        for p, r in zip(points.tolist(), results.tolist(), strict=True)
    }


__all__ = [
    "KNOWN_EMPTY",
    "UNDEFINED",
    "IndexingMap",
    "MapState",
    "Variable",
    "apply_op",
    "compose",
    "constraints_satisfied",
    "contains_point",
    "domain_points",
    "evaluate_domain",
    "evaluate_map",
    "point_results",
]
