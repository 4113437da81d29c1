"""The shape XLA gives an instruction written without one (`ROOT n = negate(a)`).

Mirrors the rules of openxla/xla `xla/service/shape_inference.cc` (ShapeInference::Infer*Shape)
for the opcodes `hlo_parser.cc` `CanInferShape` accepts, as `HloParserImpl::CreateInstruction`
applies them: elementwise unary/binary/ternary ops, compare, tuple, get-tuple-element, broadcast
of a scalar-free `dimensions` map, transpose, reduce, reduce-window, dot, convolution,
concatenate, pad, call/while/conditional/map (from the callee's root), sort, after-all, ...

Layouts follow what XLA's parser ends up with: an inferred array shape gets the descending
default layout unless the rule keeps an operand's shape whole (elementwise ops keep the first
operand's layout, as ShapeInference returns the operand shape itself).

Pure computation on the syntax tree: no I/O, no Rich. An instruction whose shape cannot be
inferred (an opcode XLA requires a shape for, a missing operand, an attribute that does not fit)
raises HloSemanticError at the instruction.

NOTE: [send/recv shapes] `send`, `recv`, `send-done`, `recv-done` and `outfeed` have their shape
worked out from their operands by XLA's parser, whatever the text says (so do `add-dependency`,
operand 0's shape, and `after-all`, a token), and a `constant` takes its shape from its literal,
which drops an array layout's `E(n)` (literal.cc `SetShape`). The parser gives the instruction
XLA's shape (`with_xla_shapes`, run on every module read); the text's stays available as
`Computation.written_shape(instruction)`. In a dump a compiler wrote the two agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from hlo_layout.errors import HloLayoutError, HloSemanticError
from hlo_layout.syntax import attrs as A
from hlo_layout.syntax.opcodes import (
    ABS,
    ACOS,
    ACOSH,
    ADD,
    ADD_DEPENDENCY,
    AFTER_ALL,
    AND,
    ASIN,
    ASINH,
    ATAN2,
    ATANH,
    BATCH_NORM_GRAD,
    BATCH_NORM_INFERENCE,
    BATCH_NORM_TRAINING,
    BROADCAST,
    CALL,
    CBRT,
    CEIL,
    CHOLESKY,
    CLAMP,
    COMPARE,
    COMPLEX,
    CONCATENATE,
    CONDITIONAL,
    CONSTANT,
    CONVOLUTION,
    COPY,
    COSH,
    COSINE,
    COUNT_LEADING_ZEROS,
    DIVIDE,
    DOMAIN,
    DOT,
    ERF,
    EXPONENTIAL,
    EXPONENTIAL_MINUS_ONE,
    FLOOR,
    GET_DIMENSION_SIZE,
    GET_TUPLE_ELEMENT,
    IMAG,
    IS_FINITE,
    LOG,
    LOG_PLUS_ONE,
    LOGISTIC,
    MAP,
    MAXIMUM,
    MINIMUM,
    MULTIPLY,
    NEGATE,
    NOT,
    OPT_BARRIER,
    OR,
    OUTFEED,
    PAD,
    PARAMETER,
    PARTITION_ID,
    POPCNT,
    POWER,
    REAL,
    RECV,
    RECV_DONE,
    REDUCE,
    REDUCE_WINDOW,
    REMAINDER,
    REPLICA_ID,
    REVERSE,
    ROUND_NEAREST_AFZ,
    ROUND_NEAREST_EVEN,
    RSQRT,
    SCATTER,
    SELECT,
    SELECT_AND_SCATTER,
    SEND,
    SEND_DONE,
    SET_DIMENSION_SIZE,
    SHIFT_LEFT,
    SHIFT_RIGHT_ARITHMETIC,
    SHIFT_RIGHT_LOGICAL,
    SIGN,
    SINE,
    SINH,
    SORT,
    SQRT,
    SUBTRACT,
    TAN,
    TANH,
    TRANSPOSE,
    TRIANGULAR_SOLVE,
    TUPLE,
    WHILE,
    XOR,
    Registry,
)  # fmt: skip
from hlo_layout.syntax.shape import (
    ArrayShape,
    Layout,
    Shape,
    TokenShape,
    TupleShape,
)
from hlo_layout.syntax.tree import Attribute, Computation, Instruction, Module

_COMPLEX_PART = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF = {"f32": "c64", "f64": "c128"}


class _CannotInfer(Exception):
    """This instruction's shape cannot be worked out; the message says why."""


def _array(shape: Shape | None, what: str) -> ArrayShape:
    if not isinstance(shape, ArrayShape):
        raise _CannotInfer(f"{what} is not an array")
    return shape


def _fresh(element_type: str, dims: tuple[int, ...], dynamic: tuple[bool, ...] = ()) -> ArrayShape:
    """A new array shape with XLA's default (descending) layout, which the printer fills in."""
    if not any(dynamic):
        dynamic = ()
    return ArrayShape(element_type, dims, dynamic, None)


def _dyn(shape: ArrayShape, i: int) -> bool:
    return bool(shape.dynamic) and shape.dynamic[i]


def _attr_ints(instruction: Instruction, key: str) -> tuple[int, ...]:
    attr = instruction.attr(key)
    if attr is None:
        raise _CannotInfer(f"needs {key}=")
    return A.int_list(attr)


# (overflow exponent, significand width) of each floating-point type, for HigherPrecisionType.
_FLOAT_RANGE = {
    "f64": (1024, 53), "f32": (128, 24), "bf16": (128, 8), "f16": (16, 11),
    "f8e5m2": (16, 3), "f8e5m2fnuz": (16, 3), "f8e4m3fn": (9, 4), "f8e4m3": (8, 4),
    "f8e4m3fnuz": (8, 4), "f8e4m3b11fnuz": (5, 4), "f8e3m4": (4, 5), "f4e2m1fn": (3, 2),
    "f8e8m0fnu": (128, 1),
}  # fmt: skip


def _bit_width(element_type: str) -> int:
    if element_type == "pred":
        return 1
    if element_type in ("f64", "f32", "bf16", "f16"):
        return {"f64": 64, "f32": 32}.get(element_type, 16)
    if element_type in _FLOAT_RANGE:
        return 4 if element_type.startswith("f4") else 8
    digits = element_type.lstrip("su")
    return int(digits) if digits.isdigit() else 0


def _type_rank(element_type: str) -> tuple[bool, int, int, int, bool]:
    """primitive_util::HigherPrecisionType's ordering key: complex first, then float range,
    float precision, bit width, signedness."""
    component = _COMPLEX_PART.get(element_type, element_type)
    exponent, significand = _FLOAT_RANGE.get(component, (-1, -1))
    return (
        element_type in _COMPLEX_PART,
        exponent,
        significand,
        _bit_width(component),
        component.startswith("s"),
    )


def _higher_precision(a: str, b: str) -> str:
    """ShapeUtil::HigherPrecisionElementType."""
    return a if _type_rank(a) > _type_rank(b) else b


def _binary(operands: list[Shape | None]) -> ArrayShape:
    """ShapeInference::InferElementwiseBinaryOpShape for HLO (no broadcast_dimensions): equal
    dimensions keep the lhs shape with its layout; otherwise a scalar or size-1 dimensions are
    broadcast and the result gets the default layout."""
    if len(operands) != 2:
        raise _CannotInfer("needs two operands")
    lhs = _array(operands[0], "operand 0")
    rhs = _array(operands[1], "operand 1")
    element_type = _higher_precision(lhs.element_type, rhs.element_type)
    if lhs.dims == rhs.dims:
        dynamic = tuple(_dyn(lhs, i) or _dyn(rhs, i) for i in range(lhs.rank))
        return dataclasses.replace(
            lhs, element_type=element_type, dynamic=dynamic if any(dynamic) else ()
        )
    if lhs.rank != rhs.rank:
        if lhs.rank and rhs.rank:
            raise _CannotInfer("operands of different ranks need a broadcast")
        larger = lhs if lhs.rank else rhs
        return _fresh(element_type, larger.dims, larger.dynamic)
    dims = []
    dynamic_dims = []
    for i, (a, b) in enumerate(zip(lhs.dims, rhs.dims)):
        if a != 1 and b != 1:
            raise _CannotInfer(f"dimension {i} differs ({a} and {b})")
        dims.append(b if a == 1 else a)
        dynamic_dims.append(_dyn(rhs, i) if a == 1 else _dyn(lhs, i))
    return _fresh(element_type, tuple(dims), tuple(dynamic_dims))


#: How one opcode's shape is inferred: from the instruction (its attributes), its operands'
#: shapes (None where unknown) and `callee_root(name)`, the root shape of a called computation.
Infer = Callable[[Instruction, list[Shape | None], Callable[[str], Shape]], Shape]
#: opcode -> its rule (ShapeInference::Infer*Shape as HloParserImpl::CreateInstruction applies
#: them); an opcode without one needs its shape written.
RULES: Registry[Infer] = Registry("shape inference")
_rule = RULES.register


def _operand(operands: list[Shape | None]) -> ArrayShape:
    return _array(operands[0] if operands else None, "operand")


@_rule(
    ABS, ACOS, ACOSH, ASIN, ASINH, ATANH, CBRT, CEIL, COUNT_LEADING_ZEROS, COPY, COSINE, COSH, ERF,
    EXPONENTIAL, EXPONENTIAL_MINUS_ONE, FLOOR, LOG, LOG_PLUS_ONE, LOGISTIC, NEGATE, NOT, POPCNT,
    REVERSE, ROUND_NEAREST_AFZ, ROUND_NEAREST_EVEN, RSQRT, SIGN, SINE, SINH, SQRT, TAN, TANH,
    OPT_BARRIER, DOMAIN, CHOLESKY,
)  # fmt: skip
def _unary(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    """ShapeInference::InferUnaryOpShape: the operand's shape (a complex `abs` gives its
    component type)."""
    if not operands or operands[0] is None:
        raise _CannotInfer("needs an operand")
    first = operands[0]
    if instruction.opcode == ABS and isinstance(first, ArrayShape):
        part = _COMPLEX_PART.get(first.element_type)
        if part is not None:
            return dataclasses.replace(first, element_type=part)
    return first


@_rule(
    ADD, AND, ATAN2, DIVIDE, MAXIMUM, MINIMUM, MULTIPLY, OR, POWER, REMAINDER, SHIFT_LEFT,
    SHIFT_RIGHT_ARITHMETIC, SHIFT_RIGHT_LOGICAL, SUBTRACT, XOR,
)  # fmt: skip
def _binary_rule(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    return _binary(operands)


@_rule(REAL, IMAG)
def _complex_part(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    x = _operand(operands)
    return dataclasses.replace(x, element_type=_COMPLEX_PART.get(x.element_type, x.element_type))


@_rule(IS_FINITE)
def _is_finite(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    return dataclasses.replace(_operand(operands), element_type="pred")


@_rule(COMPLEX)
def _complex(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    pair = _binary(operands)
    return dataclasses.replace(pair, element_type=_COMPLEX_OF.get(pair.element_type, "c64"))


@_rule(COMPARE)
def _compare(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    return dataclasses.replace(_binary(operands), element_type="pred")


@_rule(SELECT)
def _select(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if len(operands) != 3:
        raise _CannotInfer("needs three operands")
    return _binary(operands[1:])


@_rule(CLAMP)
def _clamp(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if len(operands) != 3:
        raise _CannotInfer("needs three operands")
    lo, x, hi = (_array(s, "operand") for s in operands)
    return x if x.rank or not (lo.rank or hi.rank) else (lo if lo.rank else hi)


@_rule(TUPLE)
def _tuple(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if any(s is None for s in operands):
        raise _CannotInfer("an operand has no shape")
    return TupleShape(tuple(s for s in operands if s is not None))


@_rule(GET_TUPLE_ELEMENT)
def _get_tuple_element(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    t = operands[0] if operands else None
    if not isinstance(t, TupleShape):
        raise _CannotInfer("operand is not a tuple")
    index = A.int_value(_need(instruction, "index"))
    if not 0 <= index < len(t.elements):
        raise _CannotInfer(f"index {index} is out of range")
    return t.elements[index]


@_rule(AFTER_ALL)
def _token(_i: Instruction, _o: list[Shape | None], _: object) -> Shape:
    return TokenShape()


@_rule(PARTITION_ID, REPLICA_ID)
def _id(_i: Instruction, _o: list[Shape | None], _: object) -> Shape:
    return _fresh("u32", ())


@_rule(GET_DIMENSION_SIZE)
def _dimension_size(_i: Instruction, _o: list[Shape | None], _: object) -> Shape:
    return _fresh("s32", ())


@_rule(ADD_DEPENDENCY)
def _add_dependency(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if not operands or operands[0] is None:
        raise _CannotInfer("needs an operand")
    return operands[0]


@_rule(TRANSPOSE)
def _transpose(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    x = _operand(operands)
    perm = _attr_ints(instruction, "dimensions")
    if sorted(perm) != list(range(x.rank)):
        raise _CannotInfer("dimensions= is not a permutation of the operand's dimensions")
    # ShapeUtil::PermuteDimensions: the layout is permuted with the dimensions, so the
    # transpose is a bitcast of its operand.
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    dynamic = tuple(_dyn(x, p) for p in perm)
    return ArrayShape(
        x.element_type,
        tuple(x.dims[p] for p in perm),
        dynamic if any(dynamic) else (),
        Layout(tuple(inverse[d] for d in x.minor_to_major)),
    )


@_rule(BROADCAST)
def _broadcast(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    # hlo_parser.cc passes `dimensions` to InferBroadcastShape as the sizes of new major
    # dimensions (not as the operand-to-result map the instruction uses); we do the same.
    x = _operand(operands)
    attr = instruction.attr("dimensions")
    sizes = A.int_list(attr) if attr is not None else ()
    if attr is None and x.rank:
        raise _CannotInfer("needs dimensions=")
    if any(d < 0 for d in sizes):
        raise _CannotInfer("a broadcast size is negative")
    return _fresh(
        x.element_type,
        (*sizes, *x.dims),
        (*(False,) * len(sizes), *(_dyn(x, i) for i in range(x.rank))),
    )


@_rule(SET_DIMENSION_SIZE)
def _set_dimension_size(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    x = _operand(operands)
    (dim,) = _attr_ints(instruction, "dimensions")
    if not 0 <= dim < x.rank:
        raise _CannotInfer(f"dimension {dim} is out of range")
    flags = [_dyn(x, i) for i in range(x.rank)]
    flags[dim] = True
    return dataclasses.replace(x, dynamic=tuple(flags))


@_rule(BATCH_NORM_TRAINING, BATCH_NORM_GRAD)
def _batch_norm(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    x = _operand(operands)
    feature = A.int_value(_need(instruction, "feature_index"))
    if not 0 <= feature < x.rank:
        raise _CannotInfer(f"feature_index {feature} is out of range")
    vector = _fresh(x.element_type, (x.dims[feature],))
    return TupleShape((x, vector, vector))


@_rule(BATCH_NORM_INFERENCE, SELECT_AND_SCATTER)
def _operand_0(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    return _operand(operands)


@_rule(TRIANGULAR_SOLVE)
def _triangular_solve(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if len(operands) != 2:
        raise _CannotInfer("needs two operands")
    return _array(operands[1], "b")


@_rule(SCATTER)
def _scatter(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    n = (len(operands) - 1) // 2
    if n < 1 or any(s is None for s in operands[:n]):
        raise _CannotInfer("needs operands, indices and updates")
    shapes = tuple(s for s in operands[:n] if s is not None)
    return shapes[0] if n == 1 else TupleShape(shapes)


@_rule(CONCATENATE)
def _concatenate(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    arrays = [_array(s, "operand") for s in operands]
    if not arrays:
        raise _CannotInfer("needs operands")
    (dim,) = _attr_ints(instruction, "dimensions")
    first = arrays[0]
    if not 0 <= dim < first.rank:
        raise _CannotInfer(f"dimension {dim} is out of range")
    dims = list(first.dims)
    dims[dim] = sum(a.dims[dim] for a in arrays)
    return _fresh(first.element_type, tuple(dims))


@_rule(PAD)
def _pad(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    x = _operand(operands)
    config = A.padding_config(_need(instruction, "padding"))
    if len(config) != x.rank:
        raise _CannotInfer("padding= does not match the operand's rank")
    padded = tuple(p.low + p.high + d + max(d - 1, 0) * p.interior for d, p in zip(x.dims, config))
    return _fresh(x.element_type, padded)


@_rule(CALL)
def _call(
    instruction: Instruction, _o: list[Shape | None], callee_root: Callable[[str], Shape]
) -> Shape:
    return callee_root(_callee(instruction, "to_apply"))


@_rule(WHILE)
def _while(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    # ShapeInference::InferWhileShape: the init operand's shape (the body must agree).
    _callee(instruction, "body")
    if len(operands) != 1 or operands[0] is None:
        raise _CannotInfer("needs one operand")
    return operands[0]


@_rule(CONDITIONAL)
def _conditional(
    instruction: Instruction, _o: list[Shape | None], callee_root: Callable[[str], Shape]
) -> Shape:
    attr = instruction.attr("branch_computations") or instruction.attr("true_computation")
    if attr is None:
        raise _CannotInfer("needs branch_computations=")
    names = A.computation_names(attr)
    if not names:
        raise _CannotInfer("needs branch computations")
    return callee_root(names[0])


@_rule(MAP)
def _map(
    instruction: Instruction, operands: list[Shape | None], callee_root: Callable[[str], Shape]
) -> Shape:
    x = _operand(operands)
    root = _array(callee_root(_callee(instruction, "to_apply")), "the mapped root")
    return _fresh(root.element_type, x.dims)


@_rule(SORT)
def _sort(_i: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if any(s is None for s in operands) or not operands:
        raise _CannotInfer("needs operands")
    shapes = tuple(s for s in operands if s is not None)
    return shapes[0] if len(shapes) == 1 else TupleShape(shapes)


def _infer_one(
    instruction: Instruction,
    operands: list[Shape | None],
    callee_root: Callable[[str], Shape],
) -> Shape:
    rule = RULES.get(instruction.opcode)
    if rule is None:
        raise _CannotInfer("XLA infers no shape for this opcode")
    return rule(instruction, operands, callee_root)


def _need(instruction: Instruction, key: str) -> Attribute:
    attr = instruction.attr(key)
    if attr is None:
        raise _CannotInfer(f"needs {key}=")
    return attr


def _callee(instruction: Instruction, key: str) -> str:
    names = A.computation_names(_need(instruction, key))
    if len(names) != 1:
        raise _CannotInfer(f"{key}= names no computation")
    return names[0]


DotDims = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def dot_dimensions(instruction: Instruction) -> DotDims:
    """(lhs batch, lhs contracting, rhs batch, rhs contracting) dimension numbers of a dot."""

    def dims(key: str) -> tuple[int, ...]:
        attr = instruction.attr(key)
        return A.int_list(attr) if attr is not None else ()

    return (
        dims("lhs_batch_dims"),
        dims("lhs_contracting_dims"),
        dims("rhs_batch_dims"),
        dims("rhs_contracting_dims"),
    )


def dot_dimensions_problem(numbers: DotDims, lhs_rank: int, rhs_rank: int) -> str | None:
    """Why a dot's dimension numbers do not fit its operands' ranks, or None
    (ShapeInference::ValidateDotDimensionNumbers: every number in range and none repeated on
    a side, as many batch dimensions on both sides, as many contracting ones)."""
    lb, lc, rb, rc = numbers
    for side, rank, batch, contracting in (("lhs", lhs_rank, lb, lc), ("rhs", rhs_rank, rb, rc)):
        both = (*batch, *contracting)
        wrong = next((d for d in both if not 0 <= d < rank), None)
        if wrong is not None:
            return f"{side} dimension number {wrong} is out of range (the {side} has rank {rank})"
        if len(set(both)) != len(both):
            return f"a {side} dimension number is repeated in the dot's dimension numbers"
    if len(lb) != len(rb):
        return "the lhs and the rhs have different numbers of batch dimensions"
    if len(lc) != len(rc):
        return "the lhs and the rhs have different numbers of contracting dimensions"
    return None


@_rule(DOT)
def _dot(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    """ShapeInference::InferDotOpShape: batch dims, then lhs free dims, then rhs free dims."""
    if len(operands) < 2:
        raise _CannotInfer("needs two operands")
    lhs = _array(operands[0], "lhs")
    rhs = _array(operands[1], "rhs")
    numbers = dot_dimensions(instruction)
    problem = dot_dimensions_problem(numbers, lhs.rank, rhs.rank)
    if problem is not None:
        raise _CannotInfer(problem)
    lb, lc, rb, rc = numbers
    out = [lhs.dims[d] for d in lb]
    out += [lhs.dims[d] for d in range(lhs.rank) if d not in lb and d not in lc]
    out += [rhs.dims[d] for d in range(rhs.rank) if d not in rb and d not in rc]
    return _fresh(_higher_precision(lhs.element_type, rhs.element_type), tuple(out))


@_rule(REDUCE)
def _reduce(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    """ShapeInference::InferReduceShape: the inputs' dims minus `dimensions`, one result per
    input (a tuple when there are several)."""
    if not operands or len(operands) % 2:
        raise _CannotInfer("needs inputs and as many init values")
    n = len(operands) // 2
    inputs = [_array(s, "input") for s in operands[:n]]
    reduced = set(_attr_ints(instruction, "dimensions"))
    results = []
    for x, init in zip(inputs, operands[n:]):
        init_array = _array(init, "init value")
        keep = [d for d in range(x.rank) if d not in reduced]
        results.append(
            _fresh(
                init_array.element_type,
                tuple(x.dims[d] for d in keep),
                tuple(_dyn(x, d) for d in keep),
            )
        )
    return results[0] if n == 1 else TupleShape(tuple(results))


def _window_out(size: int, w: A.WindowDim) -> int:
    """ShapeInference's InferWindowOutputShape for one dimension."""
    base = (size - 1) * w.base_dilation + 1 if size else 0
    padded = base + w.padding_low + w.padding_high
    window = (w.size - 1) * w.window_dilation + 1
    if padded < window:
        return 0
    return (padded - window) // w.stride + 1


@_rule(REDUCE_WINDOW)
def _reduce_window(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    if not operands or len(operands) % 2:
        raise _CannotInfer("needs inputs and as many init values")
    n = len(operands) // 2
    win = A.window(_need(instruction, "window"))
    results = []
    for x, init in zip(operands[:n], operands[n:]):
        xa = _array(x, "input")
        if len(win) != xa.rank:
            raise _CannotInfer("window= does not match the input's rank")
        dims = tuple(_window_out(d, w) for d, w in zip(xa.dims, win))
        results.append(_fresh(_array(init, "init value").element_type, dims))
    return results[0] if n == 1 else TupleShape(tuple(results))


@_rule(CONVOLUTION)
def _convolution(instruction: Instruction, operands: list[Shape | None], _: object) -> Shape:
    """ShapeInference::InferConvolveShape (feature_group_count and batch_group_count included)."""
    if len(operands) != 2:
        raise _CannotInfer("needs two operands")
    lhs = _array(operands[0], "lhs")
    rhs = _array(operands[1], "rhs")
    dn = A.conv_dimension_numbers(_need(instruction, "dim_labels"))
    win_attr = instruction.attr("window")
    win = A.window(win_attr) if win_attr is not None else ()
    spatial = len(dn.input_spatial)
    if len(win) != spatial:
        if spatial == 0 and not win:
            win = ()
        else:
            raise _CannotInfer("window= does not match the spatial dimensions")
    batch_groups = 1
    attr = instruction.attr("batch_group_count")
    if attr is not None:
        batch_groups = A.int_value(attr)
    out = [0] * (spatial + 2)
    out[dn.output_batch] = lhs.dims[dn.input_batch] // max(batch_groups, 1)
    out[dn.output_feature] = rhs.dims[dn.kernel_output_feature]
    for i in range(spatial):
        out[dn.output_spatial[i]] = _window_out(lhs.dims[dn.input_spatial[i]], win[i])
    return _fresh(lhs.element_type, tuple(out))


def _infer_computation(
    computation: Computation, callee_root: Callable[[str], Shape], params: dict[int, Shape]
) -> Computation:
    """`computation` with every missing shape filled in, in dependency order."""
    by_name = {i.name: i for i in computation.instructions}
    shapes: dict[str, Shape | None] = {}
    for i in computation.instructions:
        shapes[i.name] = i.shape
        if i.shape is not None and i.opcode in XLA_SHAPED_OPCODES:

            def operand_shape(n: int, i: Instruction = i) -> Shape | None:
                return shapes.get(i.operands[n].name) if n < len(i.operands) else None

            shapes[i.name] = xla_shape(i, operand_shape)
    done: dict[str, Instruction] = {}
    for start in computation.instructions:
        if start.shape is not None or start.name in done:
            continue
        stack = [start]
        on_stack = {start.name}
        while stack:
            instruction = stack[-1]
            pending = [
                by_name[o.name]
                for o in instruction.operands
                if shapes.get(o.name, 0) is None and o.name not in on_stack
            ]
            if pending:
                stack.append(pending[0])
                on_stack.add(pending[0].name)
                continue
            stack.pop()
            on_stack.discard(instruction.name)
            done[instruction.name] = _infer_instruction(instruction, shapes, callee_root, params)
            shapes[instruction.name] = done[instruction.name].shape
    if not done:
        return computation
    instructions = tuple(done.get(i.name, i) if i.shape is None else i
                         for i in computation.instructions)  # fmt: skip
    return dataclasses.replace(computation, instructions=instructions)


def _infer_instruction(
    instruction: Instruction,
    shapes: dict[str, Shape | None],
    callee_root: Callable[[str], Shape],
    params: dict[int, Shape],
) -> Instruction:
    try:
        if instruction.opcode == PARAMETER and instruction.parameter_number in params:
            shape: Shape = params[instruction.parameter_number]
        else:
            operand_shapes: list[Shape | None] = []
            for o in instruction.operands:
                s = shapes.get(o.name)
                if s is not None and o.index is not None:
                    s = (
                        s.elements[o.index]
                        if isinstance(s, TupleShape) and o.index < len(s.elements)
                        else None
                    )
                operand_shapes.append(s)
            shape = _infer_one(instruction, operand_shapes, callee_root)
    except _CannotInfer as e:
        raise HloSemanticError(
            f"cannot infer the shape of '{instruction.name}' ({instruction.opcode}): {e}; "
            "write the shape",
            instruction.span,
        ) from None
    except (HloLayoutError, IndexError, ValueError) as e:
        if isinstance(e, HloSemanticError):
            raise
        raise HloSemanticError(
            f"cannot infer the shape of '{instruction.name}' ({instruction.opcode}): "
            f"its operands or attributes do not fit ({e})",
            instruction.span,
        ) from None
    return instruction._replace(shape=shape, shape_inferred=True)


def infer_shapes(module: Module) -> Module:
    """`module` with the shape of every instruction written without one filled in."""
    if not any(i.shape is None for c in module.computations for i in c.instructions):
        return module
    by_name = {c.name: c for c in module.computations}
    finished: dict[str, Computation] = {}
    active: set[str] = set()

    def finish(computation: Computation) -> Computation:
        if computation.name in finished:
            return finished[computation.name]
        active.add(computation.name)
        params = {
            n: p.shape for n, p in enumerate(computation.parameters or ()) if p.shape is not None
        }
        result = _infer_computation(computation, callee_root, params)
        active.discard(computation.name)
        finished[computation.name] = result
        return result

    def callee_root(name: str) -> Shape:
        callee = by_name.get(name)
        if callee is None:
            raise _CannotInfer(f"calls unknown computation '{name}'")
        if name in active:
            raise _CannotInfer(f"computation '{name}' calls itself")
        root = finish(callee).root
        if root is None or root.shape is None:
            raise _CannotInfer(f"computation '{name}' has no root")
        return root.shape

    computations = tuple(finish(c) if not c.synthetic else c for c in module.computations)
    computations = tuple(
        _infer_computation(c, callee_root, {}) if c.synthetic else c for c in computations
    )
    return dataclasses.replace(module, computations=computations)


#: Operand k's shape (None where unknown), for the rules below.
OperandShape = Callable[[int], "Shape | None"]
#: opcode -> the shape XLA's parser gives it whatever the text says (None: the text's), worked
#: out from the instruction and its operands' shapes as hlo_parser.cc does.
XLA_SHAPES: Registry[Callable[[Instruction, OperandShape], Shape | None]] = Registry(
    "XLA's parser shapes"
)
_xla = XLA_SHAPES.register
_U32 = _fresh("u32", ())


@_xla(SEND)
def _send(_i: Instruction, operand_shape: OperandShape) -> Shape | None:
    data = operand_shape(0)
    return TupleShape((data, _U32, TokenShape())) if data is not None else None


@_xla(RECV)
def _recv(instruction: Instruction, _o: OperandShape) -> Shape | None:
    data = _recv_data(instruction)
    return TupleShape((data, _U32, TokenShape())) if data is not None else None


@_xla(SEND_DONE, OUTFEED, AFTER_ALL)
def _token_result(_i: Instruction, _o: OperandShape) -> Shape | None:
    return TokenShape()


@_xla(RECV_DONE)
def _recv_done(_i: Instruction, operand_shape: OperandShape) -> Shape | None:
    start = operand_shape(0)
    if isinstance(start, TupleShape) and start.elements:
        return TupleShape((start.elements[0], TokenShape()))
    return None


@_xla(ADD_DEPENDENCY)
def _data_operand(_i: Instruction, operand_shape: OperandShape) -> Shape | None:
    return operand_shape(0)


@_xla(CONSTANT)
def _literal_shape(instruction: Instruction, _o: OperandShape) -> Shape | None:
    shape = instruction.shape
    if (
        isinstance(shape, ArrayShape)
        and shape.layout is not None
        and shape.layout.element_size_bits
    ):
        return dataclasses.replace(
            shape, layout=dataclasses.replace(shape.layout, element_size_bits=0)
        )
    return None


#: Opcodes whose shape XLA's parser works out from the operands, ignoring the text's.
XLA_SHAPED_OPCODES = frozenset(XLA_SHAPES)


def xla_shape(instruction: Instruction, operand_shape: OperandShape) -> Shape:
    """The shape XLA's parser gives `send`/`recv`/`send-done`/`recv-done`/`outfeed`, worked
    out from operand 0 as hlo_parser.cc does (it ignores the text's shape for these opcodes), and
    a `constant` (its literal's shape: no `E(n)`); any other instruction's own shape.
    `operand_shape(i)` is the shape of operand i."""
    rule = XLA_SHAPES.get(instruction.opcode)
    shape = rule(instruction, operand_shape) if rule is not None else None
    return shape if shape is not None else instruction.shape


def with_xla_shapes(module: Module) -> Module:
    """`module` with the shape XLA's parser gives every instruction (`xla_shape`) in place of
    the text's, which each computation keeps (`Computation.written_shape`); `module` itself when
    they agree, as they do in every dump a compiler wrote."""
    changed = False
    computations = []
    for computation in module.computations:
        fixed = _xla_shaped(computation)
        changed |= fixed is not computation
        computations.append(fixed)
    return dataclasses.replace(module, computations=tuple(computations)) if changed else module


def _xla_shaped(computation: Computation) -> Computation:
    instructions = computation.instructions
    shaped = XLA_SHAPED_OPCODES
    if not any(i.opcode in shaped for i in instructions):
        return computation
    now: dict[str, Shape] = {}  # the shapes given so far, for the operands of later ones
    written: dict[str, Shape] = {}
    out = list(instructions)
    for k, instruction in enumerate(instructions):
        if instruction.opcode not in shaped:
            continue

        def operand_shape(n: int, instruction: Instruction = instruction) -> Shape | None:
            if n >= len(instruction.operands):
                return None
            operand = instruction.operands[n]
            producer = computation.get(operand.name)
            if producer is None:
                return operand.shape
            shape = now.get(producer.name, producer.shape)
            if operand.index is not None:
                if not isinstance(shape, TupleShape) or operand.index >= len(shape.elements):
                    return None
                shape = shape.elements[operand.index]
            return shape

        shape = xla_shape(instruction, operand_shape)
        if shape != instruction.shape:
            now[instruction.name] = shape
            written[instruction.name] = instruction.shape
            out[k] = instruction._replace(shape=shape)
    if not written:
        return computation
    return dataclasses.replace(computation, instructions=tuple(out), written_shapes=written)


def _recv_data(instruction: Instruction) -> Shape | None:
    shape = instruction.shape
    if isinstance(shape, TupleShape) and shape.elements:
        return shape.elements[0]
    return None
