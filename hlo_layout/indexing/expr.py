"""Symbolic index expressions: variables, constants and the seven binary operators XLA uses.

Mirrors XLA's `SymbolicExpr` (xla/hlo/analysis/symbolic_expr.cc, the 2026 replacement for
`mlir::AffineExpr`). Two levels of normalization, as in MLIR and XLA (style guide §5):

* the *smart constructor* `binary()` (XLA's `CreateSymbolicBinaryOp`) is cheap: it folds two
  constants, moves a constant to the right of `+ * min max`, drops `+ 0`, `* 1`, folds `* 0` and
  `(x * c1) * c2`. Python operators go through it, so `2 * d0 + 0` builds `d0 * 2`;
* `canonicalize()` (XLA's `SymbolicExpr::Canonicalize`) flattens sums, merges like terms, sorts
  summands in XLA's kind order (§1.3 of indexing.md) and applies the range-free div/mod identities.

Range-aware rewriting lives in `simplify.py`. Expressions are frozen and hashable; equality is
structural, so equal expressions built in different ways compare and hash equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache
from typing import Any, Union

from hlo_layout.indexing.errors import IndexingError


class ExprKind(IntEnum):
    """Expression kinds, in the order XLA sorts them (`SymbolicExprType`): constants sort last."""

    ADD = 0
    MUL = 1
    MOD = 2
    FLOORDIV = 3
    CEILDIV = 4
    MAX = 5
    MIN = 6
    VAR = 7
    CONST = 8


class VarSpace(IntEnum):
    """Which variable list a variable indexes; the order is XLA's global variable order."""

    DIM = 0
    RANGE = 1
    RT = 2


_BINARY_KINDS = frozenset(
    {
        ExprKind.ADD,
        ExprKind.MUL,
        ExprKind.MOD,
        ExprKind.FLOORDIV,
        ExprKind.CEILDIV,
        ExprKind.MAX,
        ExprKind.MIN,
    }
)
_COMMUTATIVE = frozenset({ExprKind.ADD, ExprKind.MUL, ExprKind.MIN, ExprKind.MAX})

ExprLike = Union["AffineExpr", int]


@dataclass(frozen=True, slots=True, eq=False)
class AffineExpr:
    """One node of an index expression. Build through `dim`/`sym`/`rt`/`const` and operators.

    `value` is the constant for CONST and the index within its list for VAR. Ordering (`<`) is
    XLA's `SymbolicExpr::operator<`: by kind, then value (variables: by list, then index), then
    left operand, then right operand.
    """

    kind: ExprKind
    value: int = 0
    space: VarSpace = VarSpace.DIM
    lhs: AffineExpr | None = None
    rhs: AffineExpr | None = None
    _key: tuple[Any, ...] = field(init=False, repr=False)
    _hash: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind is ExprKind.CONST:
            key: tuple[Any, ...] = (int(self.kind), self.value)
        elif self.kind is ExprKind.VAR:
            key = (int(self.kind), int(self.space), self.value)
        else:
            if self.lhs is None or self.rhs is None:
                raise IndexingError(f"binary expression {self.kind.name} needs two operands")
            key = (int(self.kind), self.lhs._key, self.rhs._key)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    # -- identity and order ------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, AffineExpr):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: AffineExpr) -> bool:
        return self._key < other._key

    # -- predicates --------------------------------------------------------------------------

    @property
    def is_const(self) -> bool:
        return self.kind is ExprKind.CONST

    @property
    def is_var(self) -> bool:
        return self.kind is ExprKind.VAR

    @property
    def is_binary(self) -> bool:
        return self.kind in _BINARY_KINDS

    # -- operators (XLA's SymbolicExpr operators: they build, they do not canonicalize) ------

    def __add__(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.ADD, self, _as_expr(other))

    def __radd__(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.ADD, _as_expr(other), self)

    def __neg__(self) -> AffineExpr:
        # XLA: (x * -1).Canonicalize(), so negating a sum distributes and re-sorts it.
        return canonicalize(binary(ExprKind.MUL, self, const(-1)))

    def __sub__(self, other: ExprLike) -> AffineExpr:
        if isinstance(other, int):
            return self + const(-other)
        return self + (-other)

    def __rsub__(self, other: ExprLike) -> AffineExpr:
        return _as_expr(other) + (-self)

    def __mul__(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.MUL, self, _as_expr(other))

    def __rmul__(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.MUL, _as_expr(other), self)

    def __mod__(self, other: ExprLike) -> AffineExpr:
        other = _as_expr(other)
        if other.is_const and abs(other.value) == 1:
            return const(0)
        return binary(ExprKind.MOD, self, other)

    def mod(self, other: ExprLike) -> AffineExpr:
        return self % other

    def floordiv(self, other: ExprLike) -> AffineExpr:
        other = _as_expr(other)
        if other.is_const and other.value == 1:
            return self
        return binary(ExprKind.FLOORDIV, self, other)

    def __floordiv__(self, other: ExprLike) -> AffineExpr:
        return self.floordiv(other)

    def ceildiv(self, other: ExprLike) -> AffineExpr:
        other = _as_expr(other)
        if other.is_const and other.value == 1:
            return self
        return binary(ExprKind.CEILDIV, self, other)

    def min(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.MIN, self, _as_expr(other))

    def max(self, other: ExprLike) -> AffineExpr:
        return binary(ExprKind.MAX, self, _as_expr(other))

    def __str__(self) -> str:
        from hlo_layout.indexing.text import format_expr

        return format_expr(self)

    def __repr__(self) -> str:
        return f"AffineExpr({self!s})"


# The brief and the style guide both use the shorter name.
Expr = AffineExpr


def _as_expr(value: ExprLike) -> AffineExpr:
    if isinstance(value, AffineExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise IndexingError(f"cannot use {value!r} in an index expression")
    return const(value)


# -- leaves -----------------------------------------------------------------------------------


def const(value: int) -> AffineExpr:
    """An integer constant (one shared node per value: rewrites build the same few often)."""
    return _const(int(value))


@lru_cache(maxsize=1 << 12)
def _const(value: int) -> AffineExpr:
    return AffineExpr(ExprKind.CONST, value)


def var(space: VarSpace, index: int) -> AffineExpr:
    if index < 0:
        raise IndexingError(f"variable index must be non-negative, got {index}")
    return _var(space, index)


@lru_cache(maxsize=1 << 12, typed=True)
def _var(space: VarSpace, index: int) -> AffineExpr:
    return AffineExpr(ExprKind.VAR, index, space)


def dim(index: int) -> AffineExpr:
    """Dimension variable `d<index>`."""
    return var(VarSpace.DIM, index)


def sym(index: int) -> AffineExpr:
    """Range variable `s<index>` (XLA's symbol for a loop/reduction variable)."""
    return var(VarSpace.RANGE, index)


def rt(index: int) -> AffineExpr:
    """Runtime variable `rt<index>` (a value read from another operand at run time)."""
    return var(VarSpace.RT, index)


# -- evaluation -------------------------------------------------------------------------------


def apply_op(kind: ExprKind, a: int, b: int) -> int:
    """Integer semantics of a binary operator, as XLA's `SymbolicExpr::Evaluate`.

    Floor division rounds toward minus infinity; `mod` is never negative (XLA adds |b| to the C++
    remainder), which for the positive moduli the analysis uses is the usual floor modulo.
    """
    if kind is ExprKind.ADD:
        return a + b
    if kind is ExprKind.MUL:
        return a * b
    if kind is ExprKind.MAX:
        return max(a, b)
    if kind is ExprKind.MIN:
        return min(a, b)
    if b == 0:
        raise IndexingError(f"{kind.name.lower()} by zero")
    if kind is ExprKind.FLOORDIV:
        return a // b
    if kind is ExprKind.CEILDIV:
        return -((-a) // b)
    if kind is ExprKind.MOD:
        return a % abs(b)
    raise IndexingError(f"not a binary operator: {kind.name}")


def evaluate(expr: AffineExpr, values: Callable[[AffineExpr], int]) -> int:
    """Value of `expr` with every variable replaced by `values(variable)`."""
    if expr.kind is ExprKind.CONST:
        return expr.value
    if expr.kind is ExprKind.VAR:
        return values(expr)
    assert expr.lhs is not None and expr.rhs is not None  # binary by construction
    return apply_op(expr.kind, evaluate(expr.lhs, values), evaluate(expr.rhs, values))


# -- the smart constructor --------------------------------------------------------------------


def _mul_by_const_rhs(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr | None:
    """XLA's `TrySimplifyMulByConstantRHS`: `x * 0`, `x * 1` and `(x * c1) * c2`."""
    if not rhs.is_const:
        return None
    if rhs.value == 0:
        return rhs
    if rhs.value == 1:
        return lhs
    if lhs.kind is ExprKind.MUL and lhs.rhs is not None and lhs.rhs.is_const:
        assert lhs.lhs is not None
        return binary(ExprKind.MUL, lhs.lhs, const(lhs.rhs.value * rhs.value))
    return None


def binary(kind: ExprKind, lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """Build `lhs <kind> rhs` with XLA's cheap normalizations (`CreateSymbolicBinaryOp`).

    Example: `binary(ADD, const(3), dim(0))` is `d0 + 3`;
    `binary(MUL, d0 * 2, const(4))` is `d0 * 8`.
    """
    if kind not in _BINARY_KINDS:
        raise IndexingError(f"not a binary operator: {kind!r}")
    if kind in _COMMUTATIVE and lhs.is_const:
        lhs, rhs = rhs, lhs
    if kind is ExprKind.ADD and rhs.is_const and rhs.value == 0:
        return lhs
    if kind is ExprKind.MUL and rhs.is_const:
        simplified = _mul_by_const_rhs(lhs, rhs)
        if simplified is not None:
            return simplified
    if lhs.is_const and rhs.is_const:
        return const(apply_op(kind, lhs.value, rhs.value))
    return AffineExpr(kind, 0, VarSpace.DIM, lhs, rhs)


# -- structure helpers ------------------------------------------------------------------------


def walk(expr: AffineExpr) -> Iterator[AffineExpr]:
    """Every sub-expression in post-order (children before parents)."""
    if expr.lhs is not None and expr.rhs is not None:
        yield from walk(expr.lhs)
        yield from walk(expr.rhs)
    yield expr


@lru_cache(maxsize=1 << 16)
def expr_vars(expr: AffineExpr) -> frozenset[AffineExpr]:
    """The variables of one expression (cached: simplification asks for the same ones often)."""
    if expr.kind is ExprKind.VAR:
        return frozenset((expr,))
    if expr.lhs is None or expr.rhs is None:
        return frozenset()
    return expr_vars(expr.lhs) | expr_vars(expr.rhs)


@lru_cache(maxsize=1 << 16)
def expr_size(expr: AffineExpr) -> int:
    """Nodes of the expression tree (a shared sub-expression counts each time it occurs)."""
    if expr.lhs is None or expr.rhs is None:
        return 1
    return 1 + expr_size(expr.lhs) + expr_size(expr.rhs)


def used_vars(exprs: AffineExpr | tuple[AffineExpr, ...] | list[AffineExpr]) -> set[AffineExpr]:
    """The variables that occur in one expression or a sequence of them."""
    if isinstance(exprs, AffineExpr):
        return set(expr_vars(exprs))
    found: set[AffineExpr] = set()
    for root in exprs:
        found |= expr_vars(root)
    return found


def replace_vars(
    expr: AffineExpr, substitute: Callable[[AffineExpr], AffineExpr | None]
) -> AffineExpr:
    """Replace variables by `substitute(var)` (None keeps the variable), rebuilding through
    `binary()` exactly as XLA's `ReplaceVariables`: so `d0 + 0`-style results fold, nothing sorts.

    `substitute` is asked once per distinct variable, and sub-expressions without a replaced
    variable are kept as they are (what the rebuild would give them back): compositions mostly
    shift a few symbols in large expressions, or none.
    """
    if expr.kind is ExprKind.CONST:
        return expr
    if expr.kind is ExprKind.VAR:
        replacement = substitute(expr)
        return expr if replacement is None else replacement
    replacements: dict[AffineExpr, AffineExpr] = {}
    for v in expr_vars(expr):
        replacement = substitute(v)
        if replacement is not None and replacement != v:
            replacements[v] = replacement
    return _replace_vars(expr, replacements) if replacements else expr


def _replace_vars(expr: AffineExpr, replacements: dict[AffineExpr, AffineExpr]) -> AffineExpr:
    if expr.kind is ExprKind.VAR:
        return replacements.get(expr, expr)
    if expr.lhs is None or expr.rhs is None or replacements.keys().isdisjoint(expr_vars(expr)):
        return expr
    new_lhs = _replace_vars(expr.lhs, replacements)
    new_rhs = _replace_vars(expr.rhs, replacements)
    if new_lhs == expr.lhs and new_rhs == expr.rhs:
        return expr
    return binary(expr.kind, new_lhs, new_rhs)


def replace(expr: AffineExpr, replacements: Mapping[AffineExpr, AffineExpr]) -> AffineExpr:
    """Sparse replacement of whole sub-expressions (XLA's `SymbolicExpr::Replace`)."""
    found = replacements.get(expr)
    if found is not None:
        return found
    if expr.lhs is None or expr.rhs is None:
        return expr
    new_lhs = replace(expr.lhs, replacements)
    new_rhs = replace(expr.rhs, replacements)
    if new_lhs == expr.lhs and new_rhs == expr.rhs:
        return expr
    return binary(expr.kind, new_lhs, new_rhs)


def largest_known_divisor(expr: AffineExpr) -> int:
    """A divisor of every value `expr` can take (XLA's `GetLargestKnownDivisor`); 0 for `0`."""
    if expr.kind is ExprKind.VAR:
        return 1
    if expr.kind is ExprKind.CONST:
        return abs(expr.value)
    assert expr.lhs is not None and expr.rhs is not None
    lhs = largest_known_divisor(expr.lhs)
    rhs = largest_known_divisor(expr.rhs)
    if expr.kind in (ExprKind.ADD, ExprKind.MOD, ExprKind.MIN, ExprKind.MAX):
        return math.gcd(lhs, rhs)
    if expr.kind is ExprKind.MUL:
        return lhs * rhs
    # floordiv / ceildiv by a constant that divides the known divisor of the dividend.
    if expr.rhs.is_const and expr.rhs.value != 0:
        divisor = abs(expr.rhs.value)
        if lhs % divisor == 0:
            return lhs // divisor
    return 1


def is_multiple_of(expr: AffineExpr, factor: int) -> bool:
    if factor == 0:
        raise IndexingError("is_multiple_of: factor must be non-zero")
    return largest_known_divisor(expr) % abs(factor) == 0


def get_base_and_coeff(expr: AffineExpr) -> tuple[AffineExpr, int]:
    """`expr == base * coeff` with nested constant factors pulled out (`GetBaseAndCoeff`)."""
    if expr.kind is ExprKind.MUL and expr.rhs is not None and expr.rhs.is_const:
        assert expr.lhs is not None
        base, coeff = get_base_and_coeff(expr.lhs)
        return base, coeff * expr.rhs.value
    return expr, 1


def summands(expr: AffineExpr) -> Iterator[AffineExpr]:
    """The summands of an arbitrarily nested sum, left to right (`VisitSummands`)."""
    if expr.kind is ExprKind.ADD:
        assert expr.lhs is not None and expr.rhs is not None
        yield from summands(expr.lhs)
        yield from summands(expr.rhs)
    else:
        yield expr


def map_summands(expr: AffineExpr, fn: Callable[[AffineExpr], AffineExpr]) -> AffineExpr:
    """Apply `fn` to every summand of a nested sum, keeping its shape (`MapSummands`)."""
    if expr.kind is ExprKind.ADD:
        assert expr.lhs is not None and expr.rhs is not None
        lhs = map_summands(expr.lhs, fn)
        rhs = map_summands(expr.rhs, fn)
        if lhs == expr.lhs and rhs == expr.rhs:
            return expr
        return lhs + rhs
    return fn(expr)


# -- canonicalization (range-free) ------------------------------------------------------------


def _combine_floordiv_and_mod(terms: dict[AffineExpr, int]) -> tuple[list[AffineExpr], bool]:
    """`(X / C) * (C * Y) + (X mod C) * Y -> X * Y` over a term map (XLA's
    `ConstructExprsCombiningFloorDivAndMod`); returns the rebuilt terms and whether it fired."""
    changed = False
    exprs: list[AffineExpr] = []
    for base in list(terms):
        coeff = terms[base]
        if coeff == 0 or base.kind is not ExprKind.FLOORDIV:
            continue
        assert base.lhs is not None and base.rhs is not None
        if not base.rhs.is_const:
            continue
        c = base.rhs.value
        if c > 0 and coeff % c == 0:
            y = coeff // c
            mod_expr = canonicalize(base.lhs % base.rhs)
            if terms.get(mod_expr) == y:
                terms[base] = 0
                terms[mod_expr] = 0
                exprs.append(canonicalize(base.lhs * y))
                changed = True
    for base, coeff in terms.items():
        if coeff != 0:
            exprs.append(canonicalize(base * coeff))
    return exprs, changed


def _canonicalize_add(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    terms = sorted(
        (get_base_and_coeff(t) for t in (*summands(lhs), *summands(rhs))),
        key=lambda bc: bc[0]._key,
    )
    term_map: dict[AffineExpr, int] = {}
    const_val = 0
    i = 0
    while i < len(terms):
        base, coeff = terms[i]
        while i + 1 < len(terms) and terms[i + 1][0] == base:
            coeff += terms[i + 1][1]
            i += 1
        i += 1
        if coeff == 0:
            continue
        if base.is_const:
            const_val += base.value * coeff
        else:
            term_map[base] = term_map.get(base, 0) + coeff
    exprs, changed = _combine_floordiv_and_mod(term_map)
    if const_val != 0:
        exprs.append(const(const_val))
    if not exprs:
        return const(0)
    exprs.sort(key=lambda e: e._key)
    result = exprs[0]
    for e in exprs[1:]:
        result = binary(ExprKind.ADD, result, e)
    return canonicalize(result) if changed else result


def _canonicalize_mul(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if rhs.is_const:
        simplified = _mul_by_const_rhs(lhs, rhs)
        if simplified is not None:
            if simplified.is_const or simplified == lhs:
                return simplified
            return canonicalize(simplified)
    if lhs.kind is ExprKind.ADD:
        assert lhs.lhs is not None and lhs.rhs is not None
        return canonicalize(lhs.lhs * rhs + lhs.rhs * rhs)
    if rhs.kind is ExprKind.ADD:
        assert rhs.lhs is not None and rhs.rhs is not None
        return canonicalize(lhs * rhs.lhs + lhs * rhs.rhs)
    return binary(ExprKind.MUL, lhs, rhs)


def _const_difference(lhs: AffineExpr, rhs: AffineExpr) -> int | None:
    diff = canonicalize(lhs - rhs)
    return diff.value if diff.is_const else None


def _canonicalize_min(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    diff = _const_difference(lhs, rhs)
    if diff is not None:  # min(X, X + k)
        return lhs if diff <= 0 else rhs
    return binary(ExprKind.MIN, lhs, rhs)


def _canonicalize_max(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    diff = _const_difference(lhs, rhs)
    if diff is not None:
        return lhs if diff >= 0 else rhs
    return binary(ExprKind.MAX, lhs, rhs)


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (toward zero); only used where the division is exact."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _div_mod_by_gcd(kind: ExprKind, lhs: AffineExpr, divisor: int) -> AffineExpr | None:
    """`(a * c1) op c2` with g = gcd(c1, c2) > 1 (XLA's `TrySimplifyDivModByGCD`)."""
    if lhs.kind is not ExprKind.MUL or lhs.rhs is None or not lhs.rhs.is_const:
        return None
    assert lhs.lhs is not None
    c1 = lhs.rhs.value
    g = math.gcd(c1, divisor)
    if g <= 1:
        return None
    new_lhs = lhs.lhs * _trunc_div(c1, g)
    new_divisor = _trunc_div(divisor, g)
    if kind is ExprKind.FLOORDIV:
        return canonicalize(new_lhs.floordiv(new_divisor))
    if kind is ExprKind.CEILDIV:
        return canonicalize(new_lhs.ceildiv(new_divisor))
    return canonicalize((new_lhs % new_divisor) * g)


def _mod_add_operand(a: AffineExpr, b: AffineExpr, divisor: int) -> AffineExpr | None:
    """`(A + B) mod c -> B mod c` when A is a known multiple of c (`SimplifyModAddOperand`)."""
    if is_multiple_of(a, divisor):
        return canonicalize(b % divisor)
    if is_multiple_of(b, divisor):
        return canonicalize(a % divisor)
    return None


def _floordiv_add_operand(a: AffineExpr, b: AffineExpr, divisor: int) -> AffineExpr | None:
    """`(x * k*c + B) / c -> x * k + B / c` (`SimplifyFloorDivAddOperand`)."""
    if a.kind is ExprKind.MUL and a.rhs is not None and a.rhs.is_const:
        assert a.lhs is not None
        coeff, rest = a.rhs.value, a.lhs
    elif a.is_const:
        coeff, rest = a.value, const(1)
    else:
        return None
    if coeff % divisor != 0:
        return None
    return canonicalize(rest * _trunc_div(coeff, divisor) + b.floordiv(divisor))


def _canonicalize_floordiv(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if lhs.is_const and lhs.value == 0:
        return lhs
    if rhs.is_const:
        divisor = rhs.value
        if divisor == 0:
            raise IndexingError("floor division by zero")
        if divisor == 1:
            return lhs
        if divisor == -1:
            return -lhs
        simplified = _div_mod_by_gcd(ExprKind.FLOORDIV, lhs, divisor)
        if simplified is not None:
            return simplified
        if lhs.kind is ExprKind.ADD:
            assert lhs.lhs is not None and lhs.rhs is not None
            simplified = _floordiv_add_operand(lhs.lhs, lhs.rhs, divisor)
            if simplified is None:
                simplified = _floordiv_add_operand(lhs.rhs, lhs.lhs, divisor)
            if simplified is not None:
                return simplified
            simplified = _floordiv_drop_small_constant(lhs, divisor)
            if simplified is not None:
                return simplified
    return binary(ExprKind.FLOORDIV, lhs, rhs)


def _floordiv_drop_small_constant(lhs: AffineExpr, divisor: int) -> AffineExpr | None:
    """`(X + c) / D -> X / D + floor(c / D)` when `c mod D < gcd(known divisor of X, D)`.

    XLA added this canonicalization in 2026-07 (indexing.md §(d)); it makes tiling offsets cancel:
    `(s0 * 32 + 4639) / 4608` is `s0 / 144 + 1`. Why it holds: with X = g*k, D = g*m and
    c = q*D + r, 0 <= r < g, the remainder r never carries into the quotient. The modulo is the
    floor one (r >= 0), which also covers negative offsets: `(s0 * 2 - 40319) / 630` is
    `s0 / 315 - 64`.
    """
    if divisor <= 0 or lhs.kind is not ExprKind.ADD:
        return None
    assert lhs.lhs is not None and lhs.rhs is not None
    if not lhs.rhs.is_const:
        return None
    x, c = lhs.lhs, lhs.rhs.value
    if c % divisor >= math.gcd(largest_known_divisor(x), divisor):
        return None
    return canonicalize(x.floordiv(divisor) + c // divisor)


def _canonicalize_ceildiv(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if lhs.is_const and lhs.value == 0:
        return lhs
    if rhs.is_const:
        divisor = rhs.value
        if divisor == 0:
            raise IndexingError("ceil division by zero")
        if divisor == 1:
            return lhs
        if divisor == -1:
            return -lhs
        simplified = _div_mod_by_gcd(ExprKind.CEILDIV, lhs, divisor)
        if simplified is not None:
            return simplified
        if divisor > 0:
            return canonicalize(canonicalize(lhs + (divisor - 1)).floordiv(rhs))
        return canonicalize(-(lhs.floordiv(-divisor)))
    return binary(ExprKind.CEILDIV, lhs, rhs)


def _canonicalize_mod(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if lhs.is_const and lhs.value == 0:
        return lhs
    if lhs == rhs:
        return const(0)
    if rhs.is_const:
        divisor = rhs.value
        if divisor == 0:
            raise IndexingError("modulo by zero")
        if divisor in (1, -1):
            return const(0)
        if is_multiple_of(lhs, divisor):
            return const(0)
        simplified = _div_mod_by_gcd(ExprKind.MOD, lhs, divisor)
        if simplified is not None:
            return simplified
        # (x mod a) mod b -> x mod b when b divides a.
        if lhs.kind is ExprKind.MOD and lhs.rhs is not None and lhs.rhs.is_const:
            assert lhs.lhs is not None
            if lhs.rhs.value % divisor == 0:
                return canonicalize(lhs.lhs % divisor)
        if lhs.kind is ExprKind.ADD:
            assert lhs.lhs is not None and lhs.rhs is not None
            simplified = _mod_add_operand(lhs.lhs, lhs.rhs, divisor)
            if simplified is not None:
                return simplified
    return binary(ExprKind.MOD, lhs, rhs)


_CANONICALIZERS: dict[ExprKind, Callable[[AffineExpr, AffineExpr], AffineExpr]] = {
    ExprKind.ADD: _canonicalize_add,
    ExprKind.MUL: _canonicalize_mul,
    ExprKind.MIN: _canonicalize_min,
    ExprKind.MAX: _canonicalize_max,
    ExprKind.FLOORDIV: _canonicalize_floordiv,
    ExprKind.CEILDIV: _canonicalize_ceildiv,
    ExprKind.MOD: _canonicalize_mod,
}


@lru_cache(maxsize=1 << 16)
def canonicalize(expr: AffineExpr) -> AffineExpr:
    """Range-free normal form (XLA's `SymbolicExpr::Canonicalize`).

    Example: `canonicalize(d0 + s0 * 3 + d0)` is `s0 * 3 + d0 * 2` (products sort before variables);
    `canonicalize((d0 * 6) mod 4)` is `((d0 * 3) mod 2) * 2`.
    """
    if not expr.is_binary:
        return expr
    assert expr.lhs is not None and expr.rhs is not None
    lhs = canonicalize(expr.lhs)
    rhs = canonicalize(expr.rhs)
    if lhs.is_const and rhs.is_const:
        return const(apply_op(expr.kind, lhs.value, rhs.value))
    if expr.kind in _COMMUTATIVE and rhs < lhs:
        lhs, rhs = rhs, lhs
    return _CANONICALIZERS[expr.kind](lhs, rhs)
