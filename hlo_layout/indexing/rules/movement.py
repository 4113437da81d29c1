"""Data-movement ops: each output element is one operand element (or a padding value).

broadcast, transpose, reverse, slice, concatenate, pad, reshape, bitcast, get-tuple-element,
tuple. Each function names the XLA function it mirrors (indexing_analysis.cc and
indexing_analysis_utils.cc).
"""

from __future__ import annotations

from hlo_layout.indexing.expr import AffineExpr, dim, sym
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import NO_MAPS, InstructionIndexing
from hlo_layout.indexing.rules.registry import OpContext, Unsupported, register
from hlo_layout.indexing.rules.shapes import (
    bitcast_map,
    inverse_permutation,
    permutation_map,
    reshape_map,
    scalar_map,
    spread_map,
)
from hlo_layout.syntax.attrs import padding_config, slice_ranges
from hlo_layout.syntax.opcodes import (
    BITCAST,
    BROADCAST,
    CONCATENATE,
    GET_TUPLE_ELEMENT,
    PAD,
    RESHAPE,
    REVERSE,
    SLICE,
    TRANSPOSE,
    TUPLE,
)
from hlo_layout.syntax.shape import ArrayShape, TupleShape


def _check_permutation(dims: tuple[int, ...], rank: int) -> None:
    if sorted(dims) != list(range(rank)):
        raise Unsupported(f"dimensions={{{','.join(map(str, dims))}}} is not a permutation")


# -- broadcast --------------------------------------------------------------------------------


def _broadcast_dims(ctx: OpContext) -> tuple[int, ...]:
    # A scalar broadcast may leave `dimensions` out (XLA's print_indexing test does).
    operand = ctx.operand_shape(0)
    out = ctx.output_shape()
    dims = ctx.ints("dimensions", () if operand.rank == 0 else None)
    if len(dims) != operand.rank:
        raise Unsupported("dimensions= does not match the operand rank")
    # XLA's ShapeVerifier::HandleBroadcast: each operand dim lands on an output dim of its size.
    for i, d in enumerate(dims):
        if not 0 <= d < out.rank:
            raise Unsupported(f"dimensions= names output dimension {d} of a rank-{out.rank} result")
        if operand.dims[i] != out.dims[d]:
            raise Unsupported(
                f"operand dimension {i} has size {operand.dims[i]} but output dimension {d} "
                f"has size {out.dims[d]}"
            )
    if len(set(dims)) != len(dims):
        raise Unsupported("dimensions= names an output dimension twice")
    return dims


def broadcast_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """`(d0, d1, d2) -> (d1)` for `f32[20]` broadcast into `[10, 20, 30]`, dimensions={1}
    (XLA's `ComputeBroadcastIndexingMap`)."""
    out = ctx.output_shape()
    return InstructionIndexing.of(
        IndexingMap.from_tensor_sizes([dim(d) for d in _broadcast_dims(ctx)], out.dims)
    )


def broadcast_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Operand dim i goes to output dim dims[i]; new output dims become range vars in output
    order: `(d0)[s0, s1] -> (s0, d0, s1)` (XLA's `ComputeInputToOutputBroadcastOpIndexing`)."""
    out = ctx.output_shape()
    operand = ctx.operand_shape(0)
    position = {out_dim: i for i, out_dim in enumerate(_broadcast_dims(ctx))}
    exprs: list[AffineExpr] = []
    added: list[int] = []
    for out_dim, size in enumerate(out.dims):
        if out_dim in position:
            exprs.append(dim(position[out_dim]))
        else:
            exprs.append(sym(len(added)))
            added.append(size)
    return InstructionIndexing.of(IndexingMap.from_tensor_sizes(exprs, operand.dims, added))


# -- transpose / reverse ----------------------------------------------------------------------


def transpose_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Inverse permutation: dimensions={0,2,3,1} gives `(d0, d1, d2, d3) -> (d0, d3, d1, d2)`."""
    out = ctx.output_shape()
    perm = ctx.ints("dimensions")
    _check_permutation(perm, out.rank)
    return InstructionIndexing.of(permutation_map(inverse_permutation(perm), out.dims))


def transpose_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Forward permutation over the operand: `(d0, d1, d2, d3) -> (d0, d2, d3, d1)`."""
    operand = ctx.operand_shape(0)
    perm = ctx.ints("dimensions")
    _check_permutation(perm, operand.rank)
    return InstructionIndexing.of(permutation_map(perm, operand.dims))


def reverse_indexing(ctx: OpContext, _: int) -> InstructionIndexing:
    """`-d_i + (n_i - 1)` on reversed dims, both directions (XLA's `ComputeReverseIndexingMap`)."""
    out = ctx.output_shape()
    reversed_dims = set(ctx.ints("dimensions"))
    exprs = [
        -dim(i) + (size - 1) if i in reversed_dims else dim(i) for i, size in enumerate(out.dims)
    ]
    return InstructionIndexing.of(IndexingMap.from_tensor_sizes(exprs, out.dims))


# -- slice ------------------------------------------------------------------------------------


def _slice(ctx: OpContext) -> tuple[ArrayShape, list[tuple[int, int]]]:
    out = ctx.output_shape()
    ranges = slice_ranges(ctx.require("slice"))
    if len(ranges) != out.rank:
        raise Unsupported("slice= does not match the result rank")
    operand = ctx.operand_shape(0)
    for i, r in enumerate(ranges):  # XLA's ShapeInference::InferSliceShape
        if r.stride <= 0:
            raise Unsupported(f"slice= has stride {r.stride} in dimension {i}; strides are >= 1")
        if not 0 <= r.start <= r.limit or (i < operand.rank and r.limit > operand.dims[i]):
            raise Unsupported(
                f"slice= range [{r.start}:{r.limit}] in dimension {i} is outside the operand"
            )
        if out.dims[i] != -(-(r.limit - r.start) // r.stride):
            raise Unsupported(
                f"slice= gives {-(-(r.limit - r.start) // r.stride)} elements in dimension {i}, "
                f"the result has {out.dims[i]}"
            )
    return out, [(r.start, r.stride) for r in ranges]


def slice_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """`d_i * stride_i + start_i` (XLA's `ComputeSliceIndexingMap`): `(d0 + 5, d1 * 7 + 3)`."""
    out, ranges = _slice(ctx)
    exprs = [dim(i) * stride + start for i, (start, stride) in enumerate(ranges)]
    return InstructionIndexing.of(IndexingMap.from_tensor_sizes(exprs, out.dims))


def slice_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """`(d_i - start_i) / stride_i` over the sliced part of the operand, with
    `(d_i - start_i) mod stride_i in [0, 0]` (XLA's `ComputeInputToOutputSliceOpIndexing`)."""
    out, ranges = _slice(ctx)
    operand = ctx.operand_shape(0)
    exprs = [(dim(i) - start).floordiv(stride) for i, (start, stride) in enumerate(ranges)]
    constraints: list[tuple[AffineExpr, tuple[int, int]]] = []
    for i, (start, stride) in enumerate(ranges):
        constraints.append((dim(i), (start, (out.dims[i] - 1) * stride + start)))
        constraints.append(((dim(i) - start) % stride, (0, 0)))
    return InstructionIndexing.of(
        IndexingMap.from_exprs(exprs, [(0, n - 1) for n in operand.dims], constraints=constraints)
    )


# -- concatenate ------------------------------------------------------------------------------


def _concat_dim(ctx: OpContext) -> int:
    dims = ctx.ints("dimensions")
    if len(dims) != 1 or not 0 <= dims[0] < ctx.output_shape().rank:
        raise Unsupported("dimensions= must name one dimension")
    return dims[0]


def concatenate_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Operand k: identity with `d_c - offset_k` on the concat dim, whose interval is cut to the
    operand's slab (XLA's `ComputeConcatenateIndexing`)."""
    out = ctx.output_shape()
    c = _concat_dim(ctx)
    maps = []
    offset = 0
    for k in range(ctx.num_operands):
        size = ctx.operand_shape(k).dims[c]
        bounds = [(0, n - 1) for n in out.dims]
        bounds[c] = (offset, offset + size - 1)
        exprs = [dim(i) - offset if i == c else dim(i) for i in range(out.rank)]
        maps.append(IndexingMap.from_exprs(exprs, bounds))
        offset += size
    return InstructionIndexing.of(*maps)


def _concat_offset(ctx: OpContext, c: int, k: int) -> int:
    """Where operand k starts on the concat dim: prefix sums kept in the session, so asking for
    every operand of a 2,000-operand concatenate is linear, not quadratic."""
    key = ("concat_offsets", id(ctx.computation), ctx.name)
    offsets: list[int] = ctx.session.setdefault(key, [0])
    while len(offsets) <= k:
        offsets.append(offsets[-1] + ctx.operand_shape(len(offsets) - 1).dims[c])
    return offsets[k]


def concatenate_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """`d_c + offset_k` over operand k (XLA's `ComputeInputToOutputConcatenateOpIndexing`)."""
    c = _concat_dim(ctx)
    offset = _concat_offset(ctx, c, input_id)
    operand = ctx.operand_shape(input_id)
    exprs = [dim(i) + offset if i == c else dim(i) for i in range(operand.rank)]
    return InstructionIndexing.of(IndexingMap.from_tensor_sizes(exprs, operand.dims))


# -- pad --------------------------------------------------------------------------------------


def pad_map(output_dims: tuple[int, ...], padding: list[tuple[int, int, int]]) -> IndexingMap:
    """Output index → operand index of a pad (XLA's `ComputePadIndexingMap`).

    Per dim the interval is `[max(0, lo), min(n-1, n-1-hi)]`; the result is `d - lo`, or with
    interior padding `(d - lo) / (int+1)` and the constraint `(d - lo) mod (int+1) in [0, 0]`.
    """
    exprs: list[AffineExpr] = []
    bounds: list[tuple[int, int]] = []
    constraints: list[tuple[AffineExpr, tuple[int, int]]] = []
    for i, (n, (low, high, interior)) in enumerate(zip(output_dims, padding)):
        bounds.append((max(0, low), min(n - 1, n - 1 - high)))
        if interior == 0:
            exprs.append(dim(i) - low)
        else:
            exprs.append((dim(i) - low).floordiv(interior + 1))
            constraints.append(((dim(i) - low) % (interior + 1), (0, 0)))
    return IndexingMap.from_exprs(exprs, bounds, constraints=constraints)


def pad_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """The operand through `pad_map`; the padding value `(d...) -> ()`
    (XLA's `ComputeOutputToInputPadOpIndexing`)."""
    out = ctx.output_shape()
    config = padding_config(ctx.require("padding"))
    if len(config) != out.rank or any(p.interior < 0 for p in config):
        raise Unsupported("padding= does not match the result rank")
    padding = [(p.low, p.high, p.interior) for p in config]
    return InstructionIndexing.of(pad_map(out.dims, padding), scalar_map(out.dims))


def pad_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """The operand element d lands at `d * (int+1) + lo`, where that is inside the output
    (negative edge padding cuts some off); the padding value reaches every output element,
    the same over-approximation as output to input. (XLA has no pad rule this way round.)"""
    out = ctx.output_shape()
    config = padding_config(ctx.require("padding"))
    if len(config) != out.rank or any(p.interior < 0 for p in config):
        raise Unsupported("padding= does not match the result rank")
    if input_id == 1:
        return InstructionIndexing.of(spread_map(out.dims))
    operand = ctx.operand_shape(0)
    exprs = [dim(i) * (p.interior + 1) + p.low for i, p in enumerate(config)]
    constraints = [(e, (0, n - 1)) for e, n in zip(exprs, out.dims)]
    return InstructionIndexing.of(
        IndexingMap.from_exprs(exprs, [(0, n - 1) for n in operand.dims], constraints=constraints)
    )


# -- reshape / bitcast ------------------------------------------------------------------------


def reshape_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """`[4, 8] -> [32]`: `(d0) -> (d0 / 8, d0 mod 8)` (XLA's
    `ComputeOutputToInputReshapeOpIndexing`)."""
    out, operand = ctx.output_shape(), ctx.operand_shape(0)
    _same_count(out, operand)
    return InstructionIndexing.of(reshape_map(operand.dims, out.dims))


def reshape_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """The same construction with input and output swapped."""
    out, operand = ctx.output_shape(), ctx.operand_shape(0)
    _same_count(out, operand)
    return InstructionIndexing.of(reshape_map(out.dims, operand.dims))


def _same_count(a: ArrayShape, b: ArrayShape) -> None:
    if a.num_elements != b.num_elements:
        raise Unsupported(f"reshape changes the element count ({b} -> {a})")


def bitcast_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Layout-aware (XLA's `ComputeOutputToInputBitcastOpIndexing`): see `bitcast_map`."""
    return InstructionIndexing.of(bitcast_map(ctx.output_shape(), ctx.operand_shape(0)))


def bitcast_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    return InstructionIndexing.of(bitcast_map(ctx.operand_shape(0), ctx.output_shape()))


# -- tuples -----------------------------------------------------------------------------------


def get_tuple_element_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Identity over the element's shape when it matches the tuple's element (XLA's
    `ComputeOutputToInputGetTupleElementOpIndexing`); the map indexes that element."""
    out = ctx.output_shape()
    tuple_shape = ctx.operand_full_shape(0)
    index = ctx.int("index")
    if not isinstance(tuple_shape, TupleShape) or not 0 <= index < len(tuple_shape.elements):
        raise Unsupported("the operand is not a tuple with that element")
    element = tuple_shape.elements[index]
    if not isinstance(element, ArrayShape) or element.dims != out.dims:
        raise Unsupported("the tuple element's shape differs from the result's")
    return InstructionIndexing.of(IndexingMap.identity(out.dims))


def _check_tuple_arity(ctx: OpContext) -> None:
    shape = ctx.instruction.shape
    elements = len(shape.elements) if isinstance(shape, TupleShape) else -1
    if elements != ctx.num_operands:
        raise Unsupported(
            f"the tuple has {ctx.num_operands} operands but its shape has "
            + (f"{elements} elements" if elements >= 0 else "no tuple shape")
        )


def tuple_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Element `output_id` is operand `output_id`, read at the same index; the other operands are
    not read for it. (XLA gives unknown here; fusion roots use the same fact.)"""
    _check_tuple_arity(ctx)
    out = ctx.output_shape(output_id)
    slots = [NO_MAPS] * ctx.num_operands
    slots[output_id] = InstructionIndexing.of(IndexingMap.identity(out.dims)).maps[0]
    return InstructionIndexing(tuple(slots))


def tuple_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Operand k is element k, read at the same index (XLA puts this one map in slot 0; here it
    sits in slot `input_id`, the element it reaches)."""
    _check_tuple_arity(ctx)
    operand = ctx.operand_shape(input_id)
    slots = [NO_MAPS] * ctx.num_outputs
    slots[input_id] = InstructionIndexing.of(IndexingMap.identity(operand.dims)).maps[0]
    return InstructionIndexing(tuple(slots))


register(BROADCAST, output_to_input=broadcast_output_to_input,
         input_to_output=broadcast_input_to_output)  # fmt: skip
register(TRANSPOSE, output_to_input=transpose_output_to_input,
         input_to_output=transpose_input_to_output)  # fmt: skip
register(REVERSE, output_to_input=reverse_indexing, input_to_output=reverse_indexing)
register(SLICE, output_to_input=slice_output_to_input, input_to_output=slice_input_to_output)
register(CONCATENATE, output_to_input=concatenate_output_to_input,
         input_to_output=concatenate_input_to_output)  # fmt: skip
register(PAD, output_to_input=pad_output_to_input, input_to_output=pad_input_to_output)
register(RESHAPE, output_to_input=reshape_output_to_input,
         input_to_output=reshape_input_to_output)  # fmt: skip
register(BITCAST, output_to_input=bitcast_output_to_input,
         input_to_output=bitcast_input_to_output)  # fmt: skip
register(GET_TUPLE_ELEMENT, output_to_input=get_tuple_element_output_to_input)
register(TUPLE, output_to_input=tuple_output_to_input, input_to_output=tuple_input_to_output)
