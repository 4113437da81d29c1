"""A small evaluator of the values a loop's trip count depends on (XLA runs its HloEvaluator for
the same purpose in ComputeWhileLoopTripCount's brute force).

It knows what counters and bounds are made of: constants, tuple elements of a parameter,
elementwise arithmetic and compares, converts, reshapes and copies, `iota`, a scalar
`broadcast`, `select`, a full `reduce`, and fusions or calls wrapping them (XLA:CPU wraps a single
`add` or `compare` in a `wrapped_add` fusion; a bound can be `(iota(10) < 5).sum()`). Values are
Python scalars typed by the instruction's element type (integers wrap, f32 and f16 round; bf16,
fp8 and complex are not evaluated), or flat row-major lists for arrays of at most ARRAY_LIMIT
elements. Anything else evaluates to None: the caller then knows the count cannot be found here.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from typing import Any

from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax.attrs import int_value
from hlo_layout.syntax.opcodes import (
    ABS,
    ADD,
    AND,
    BITCAST,
    BROADCAST,
    CALL,
    COMPARE,
    CONSTANT,
    CONVERT,
    COPY,
    DIVIDE,
    FUSION,
    GET_TUPLE_ELEMENT,
    IOTA,
    MAXIMUM,
    MINIMUM,
    MULTIPLY,
    NEGATE,
    NOT,
    OR,
    PARAMETER,
    REDUCE,
    RESHAPE,
    SELECT,
    SUBTRACT,
    TUPLE,
    XOR,
)
from hlo_layout.syntax.shape import ArrayShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

Scalar = bool | int | float
#: A scalar, a flat array, a tuple as {index: value} (only the elements known), or None.
Value = Scalar | list[Scalar] | dict[int, Any] | None

#: The largest array evaluated (the bound `(iota(10) < 5).sum()` needs ten elements).
ARRAY_LIMIT = 4096
#: How many elements one evaluator computes in all before it gives up (a loop run step by step
#: with an array computed at every step stops here, in well under a second).
WORK_LIMIT = 1_000_000
#: How deep fusions and calls nest before evaluation gives up.
DEPTH_LIMIT = 8

DIRECTIONS: dict[str, Callable[[Any, Any], bool]] = {
    "LT": operator.lt,
    "LE": operator.le,
    "GT": operator.gt,
    "GE": operator.ge,
    "EQ": operator.eq,
    "NE": operator.ne,
}


def _integer_only(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, float) or isinstance(b, float):
            raise ArithmeticError  # a bitwise operation on floats: not evaluated
        return function(a, b)

    return apply


def _divide(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    quotient = abs(a) // abs(b)  # XLA: truncation toward zero
    return quotient if (a < 0) == (b < 0) else -quotient


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    ADD: operator.add,
    SUBTRACT: operator.sub,
    MULTIPLY: operator.mul,
    DIVIDE: _divide,
    MAXIMUM: max,
    MINIMUM: min,
    AND: _integer_only(operator.and_),
    OR: _integer_only(operator.or_),
    XOR: _integer_only(operator.xor),
}
UNARY: dict[str, Callable[[Any], Any]] = {
    NEGATE: operator.neg,
    ABS: abs,
    NOT: lambda a: (not a) if isinstance(a, bool) else ~a,
}
#: Opcodes that keep every element as it is (the type aside), for the evaluator's purposes.
_SAME_ELEMENTS = frozenset({COPY, BITCAST, RESHAPE, CONVERT})
_FLOAT_FORMATS = {"f16": "e", "f32": "f", "f64": "d"}
_INT_BITS = {"s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


class Evaluator:
    """Evaluates instructions of one module; `value(computation, instruction, args)` with
    `args` the computation's parameters by number."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.work = 0  # elements computed so far, against WORK_LIMIT

    def value(
        self,
        computation: Computation,
        instruction: Instruction,
        args: dict[int, Value],
        memo: dict[str, Value] | None = None,
        depth: int = 0,
    ) -> Value:
        """The value of `instruction` (None when it is not evaluated here). `memo` holds the
        values of this invocation of `computation`, by instruction name."""
        memo = {} if memo is None else memo
        name = instruction.name
        if name in memo:
            return memo[name]
        memo[name] = None  # a cycle (malformed text) evaluates to None
        try:
            found = self._evaluate(computation, instruction, args, memo, depth)
        except (ArithmeticError, ValueError, TypeError, IndexError, HloSemanticError):
            found = None
        memo[name] = found
        return found

    def _operands(
        self,
        computation: Computation,
        instruction: Instruction,
        args: dict[int, Value],
        memo: dict[str, Value],
        depth: int,
    ) -> list[Value]:
        out: list[Value] = []
        for operand in instruction.operands:
            producer = computation.resolve(operand)
            found = self.value(computation, producer, args, memo, depth) if producer else None
            if operand.index is not None:
                found = found.get(operand.index) if isinstance(found, dict) else None
            out.append(found)
        return out

    def _call(self, name: str | None, values: list[Value], depth: int) -> Value:
        callee = self.module.computation(name) if name else None
        root = callee.root if callee is not None else None
        if callee is None or root is None or depth >= DEPTH_LIMIT:
            return None
        return self.value(callee, root, dict(enumerate(values)), {}, depth + 1)

    def _evaluate(
        self,
        computation: Computation,
        instruction: Instruction,
        args: dict[int, Value],
        memo: dict[str, Value],
        depth: int,
    ) -> Value:
        opcode, shape = instruction.opcode, instruction.shape
        if opcode == PARAMETER:
            return args.get(instruction.parameter_number or 0)
        if opcode == GET_TUPLE_ELEMENT:
            (whole,) = self._operands(computation, instruction, args, memo, depth)
            attr = instruction.attr("index")
            at = int_value(attr) if attr is not None else None
            return whole.get(at) if isinstance(whole, dict) and at is not None else None
        if opcode == TUPLE:
            values = self._operands(computation, instruction, args, memo, depth)
            return {at: v for at, v in enumerate(values) if v is not None}
        if opcode in (FUSION, CALL):
            callees = instruction.called_computations
            values = self._operands(computation, instruction, args, memo, depth)
            return self._call(callees[0] if callees else None, values, depth)
        if not isinstance(shape, ArrayShape):
            return None
        size = math.prod(shape.dims)
        if size > ARRAY_LIMIT or self.work + size > WORK_LIMIT:
            return None
        self.work += size
        element_type = shape.element_type
        scalar = all(d == 1 for d in shape.dims)
        if opcode == CONSTANT:
            return _typed(_literal(instruction.literal or ""), element_type) if scalar else None
        if opcode == IOTA:
            return _iota(instruction, shape.dims, element_type)
        values = self._operands(computation, instruction, args, memo, depth)
        if any(v is None or isinstance(v, dict) for v in values):
            return None
        if opcode == BROADCAST and values:
            if isinstance(values[0], list):
                return values[0] if len(values[0]) == size else None
            element = _typed(values[0], element_type)
            return element if scalar else [element] * size
        if opcode == REDUCE and len(values) == 2 and scalar:
            return self._reduce(instruction, values, element_type, depth)
        if opcode in _SAME_ELEMENTS and values:
            return _elementwise(lambda a: a, values[:1], element_type)
        if opcode in BINARY and len(values) == 2:
            return _elementwise(BINARY[opcode], values, element_type)
        if opcode in UNARY and len(values) == 1:
            return _elementwise(UNARY[opcode], values, element_type)
        if opcode == COMPARE and len(values) == 2:
            direction = instruction.attr("direction")
            if direction is None or direction.raw not in DIRECTIONS:
                return None
            return _elementwise(DIRECTIONS[direction.raw], values, "pred")
        if opcode == SELECT and len(values) == 3:
            return _elementwise(lambda p, a, b: a if p else b, values, element_type)
        return None

    def _reduce(
        self, instruction: Instruction, values: list[Value], element_type: str, depth: int
    ) -> Value:
        """A reduce of one array to a scalar, folding with `to_apply` element by element."""
        array, accumulator = values
        callees = instruction.called_computations
        if not callees or isinstance(accumulator, list):
            return None
        for element in array if isinstance(array, list) else [array]:
            accumulator = self._call(callees[0], [accumulator, element], depth)
            if accumulator is None or isinstance(accumulator, (list, dict)):
                return None
        return _typed(accumulator, element_type)


def _elementwise(function: Callable[..., Any], values: list[Value], element_type: str) -> Value:
    lists = [v for v in values if isinstance(v, list)]
    if not lists:
        return _typed(function(*values), element_type)
    if len(lists) != len(values) or len({len(v) for v in lists}) != 1:
        return None  # a scalar beside an array: not an HLO elementwise operation
    return [_typed(function(*xs), element_type) for xs in zip(*lists, strict=True)]


def _iota(instruction: Instruction, dims: tuple[int, ...], element_type: str) -> Value:
    attr = instruction.attr("iota_dimension")
    axis = int_value(attr) if attr is not None else 0
    if not 0 <= axis < len(dims):
        return None
    inner = math.prod(dims[axis + 1 :])
    out = [_typed((at // inner) % dims[axis], element_type) for at in range(math.prod(dims))]
    return out[0] if len(out) == 1 else out


def _literal(text: str) -> Scalar:
    text = text.replace("{", "").replace("}", "").strip()
    if text in ("true", "false"):
        return text == "true"
    if text.lower().startswith(("0x", "-0x")):
        return int(text, 0)
    try:
        return int(text)
    except ValueError:
        return float(text)


def _typed(value: Any, element_type: str) -> Scalar:
    """`value` as `element_type` holds it: integers wrap, floats round, pred is a bool."""
    if element_type == "pred":
        return bool(value)
    bits = _INT_BITS.get(element_type)
    if bits is not None:
        value = int(value)  # a float converts by truncation; inf and nan raise
        value &= (1 << bits) - 1
        if element_type.startswith("s") and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    form = _FLOAT_FORMATS.get(element_type)
    if form is None:
        raise ArithmeticError  # bf16, fp8, complex: not evaluated
    return float(struct.unpack(form, struct.pack(form, float(value)))[0])


__all__ = ["ARRAY_LIMIT", "DEPTH_LIMIT", "DIRECTIONS", "WORK_LIMIT", "Evaluator", "Scalar", "Value"]
