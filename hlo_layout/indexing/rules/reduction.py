"""Ops that read many operand elements per output element: reduce, reduce-window, convolution,
dot and scaled-dot. The elements read together become range variables `s_j`.

Each function names the XLA function it mirrors (indexing_analysis.cc,
indexing_analysis_utils.cc).
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_layout.indexing.expr import AffineExpr, VarSpace, dim, replace_vars, sym
from hlo_layout.indexing.interval import Interval
from hlo_layout.indexing.map import IndexingMap, Variable, compose
from hlo_layout.indexing.operand import InstructionIndexing
from hlo_layout.indexing.rules.movement import pad_map
from hlo_layout.indexing.rules.registry import OpContext, Unsupported, register
from hlo_layout.indexing.rules.shapes import scalar_map, spread_map
from hlo_layout.indexing.simplify import remove_unused_symbols, simplify
from hlo_layout.syntax.attrs import WindowDim, conv_dimension_numbers, window
from hlo_layout.syntax.opcodes import CONVOLUTION, DOT, REDUCE, REDUCE_WINDOW, SCALED_DOT

# -- reduce -----------------------------------------------------------------------------------


def _reduce_parts(ctx: OpContext) -> tuple[int, tuple[int, ...]]:
    if ctx.num_operands % 2:
        raise Unsupported("a reduce needs as many init values as inputs")
    dims = ctx.ints("dimensions")
    rank = ctx.operand_shape(0).rank
    if len(set(dims)) != len(dims) or not all(0 <= d < rank for d in dims):
        raise Unsupported("dimensions= names a dimension the input does not have")
    return ctx.num_operands // 2, dims


def reduce_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Kept dims come from the output dims, reduced dims are range vars in input-dim order;
    init values read `(d...) -> ()`; every output gives the same maps (XLA's
    `ComputeReduceInputIndexingMap`). dimensions={3,1} of `[150,20,10,50]`:
    `(d0, d1)[s0, s1] -> (d0, s0, d1, s1)`."""
    arity, dims = _reduce_parts(ctx)
    out = ctx.output_shape(0)
    reduced = set(dims)
    exprs: list[AffineExpr] = []
    sizes: list[int] = []
    kept = 0
    for i, size in enumerate(ctx.operand_shape(0).dims):
        if i in reduced:
            exprs.append(sym(len(sizes)))
            sizes.append(size)
        else:
            exprs.append(dim(kept))
            kept += 1
    inputs = IndexingMap.from_tensor_sizes(exprs, out.dims, sizes)
    inits = scalar_map(out.dims)
    return InstructionIndexing.of(*([inputs] * arity + [inits] * arity))


def reduce_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """A data input drops the reduced dims; an init value reaches every output element,
    `()[s0, s1] -> (s0, s1)` (XLA's `ComputeInputToOutputReduceOpIndexing`)."""
    arity, dims = _reduce_parts(ctx)
    out = ctx.output_shape(0)
    if input_id >= arity:
        return InstructionIndexing.of(*[spread_map(out.dims)] * arity)
    operand = ctx.operand_shape(input_id)
    exprs = [dim(i) for i in range(operand.rank) if i not in set(dims)]
    return InstructionIndexing.of(*[IndexingMap.from_tensor_sizes(exprs, operand.dims)] * arity)


# -- windows ----------------------------------------------------------------------------------


def window_map(
    input_dims: Sequence[int], output_dims: Sequence[int], dims: Sequence[WindowDim]
) -> IndexingMap:
    """Output index → input index of a windowed op (XLA's `ComposeWindowIndexingMap`).

    A pad map (edge padding; base dilation as interior padding) composed with the unpadded window
    map `s_i * window_dilation + d_i * stride`, simplified, unused symbols removed:
    `(d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1 + s1)` with constraints for padding.
    """
    if not len(input_dims) == len(output_dims) == len(dims):
        raise Unsupported("the window rank differs from the operand rank")
    padded: list[int] = []
    padding: list[tuple[int, int, int]] = []
    exprs: list[AffineExpr] = []
    for i, (size, w) in enumerate(zip(input_dims, dims)):
        if w.size <= 0 or w.stride <= 0 or w.base_dilation <= 0 or w.window_dilation <= 0:
            raise Unsupported("window sizes, strides and dilations must be positive")
        padding.append((w.padding_low, w.padding_high, w.base_dilation - 1))
        padded.append(size + w.padding_low + w.padding_high + (size - 1) * (w.base_dilation - 1))
        exprs.append(sym(i) * w.window_dilation + dim(i) * w.stride)
    no_padding = IndexingMap.from_tensor_sizes(exprs, output_dims, [w.size for w in dims])
    composed = compose(no_padding, pad_map(tuple(padded), padding))
    return remove_unused_symbols(simplify(composed))


def _reduce_window_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Inputs through `window_map`, init values `(d...) -> ()` (XLA's
    `ComputeOutputToInputReduceWindowOpIndexing`)."""
    if ctx.num_operands % 2:
        raise Unsupported("a reduce-window needs as many init values as inputs")
    arity = ctx.num_operands // 2
    out = ctx.output_shape(0)
    inputs = window_map(ctx.operand_shape(0).dims, out.dims, window(ctx.require("window")))
    return InstructionIndexing.of(*([inputs] * arity + [scalar_map(out.dims)] * arity))


def _convolution_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Input and kernel maps of a convolution (XLA's
    `ComputeOutputToInputConvolutionOpIndexing`).

    Spatial input dims come from `window_map` (stride, padding, lhs_dilate = base dilation,
    rhs_dilate = window dilation); window positions are range vars shared with the kernel map;
    the input feature is one more range var (split by `feature_group_count`), and
    `batch_group_count` adds a batch-group var to the input only. `rhs_reversal` reads the kernel
    at `(k - 1) - s`. Both maps are simplified and lose their unused range vars.
    """
    if ctx.num_operands != 2:
        raise Unsupported("a convolution has two operands")
    dn = conv_dimension_numbers(ctx.require("dim_labels"))
    lhs, kernel, out = ctx.operand_shape(0), ctx.operand_shape(1), ctx.output_shape()
    rank = out.rank
    if not lhs.rank == kernel.rank == rank == len(dn.input_spatial) + 2:
        raise Unsupported("dim_labels= does not match the operand ranks")
    window_attr = ctx.attr("window")  # a convolution without spatial dims prints no window
    dims = window(window_attr) if window_attr is not None else ()
    spatial_rank = len(dn.input_spatial)
    if len(dims) != spatial_rank:
        raise Unsupported("the window rank differs from the number of spatial dims")
    spatial = window_map(
        [lhs.dims[d] for d in dn.input_spatial], [out.dims[d] for d in dn.output_spatial], dims
    )

    def to_output_dims(v: AffineExpr) -> AffineExpr | None:
        return dim(dn.output_spatial[v.value]) if v.space is VarSpace.DIM else None

    input_exprs: list[AffineExpr | None] = [None] * rank
    for i, d in enumerate(dn.input_spatial):
        input_exprs[d] = replace_vars(spatial.results[i], to_output_dims)
    constraints = [(replace_vars(e, to_output_dims), b) for e, b in spatial.constraints]
    # Simplifying the window map may have moved a constraint into a dim's interval (padding
    # that a size-1 window never reaches); XLA drops those intervals here and reads padding.
    for i, variable in enumerate(spatial.dims):
        if variable.bounds != Interval(0, out.dims[dn.output_spatial[i]] - 1):
            constraints.append((dim(dn.output_spatial[i]), variable.bounds))

    kernel_sizes = [kernel.dims[d] for d in dn.kernel_spatial]
    kernel_exprs: list[AffineExpr | None] = [None] * rank
    for i, d in enumerate(dn.kernel_spatial):
        kernel_exprs[d] = (kernel_sizes[i] - 1) - sym(i) if dims[i].window_reversal else sym(i)
    output_feature = dim(dn.output_feature)
    kernel_exprs[dn.kernel_output_feature] = output_feature

    input_vars: list[Variable] = list(spatial.range_vars)
    kernel_vars = [_range(size) for size in kernel_sizes]
    group_size = kernel.dims[dn.kernel_input_feature]
    input_feature: AffineExpr = sym(len(input_vars))
    kernel_exprs[dn.kernel_input_feature] = sym(len(kernel_vars))
    input_vars.append(_range(group_size))
    kernel_vars.append(_range(group_size))

    feature_groups = ctx.int("feature_group_count", 1)
    if feature_groups > 1:
        per_group = out.dims[dn.output_feature] // feature_groups
        input_feature = output_feature.floordiv(per_group) * group_size + input_feature
    input_exprs[dn.input_feature] = input_feature

    batch = dim(dn.output_batch)
    batch_groups = ctx.int("batch_group_count", 1)
    if batch_groups > 1:
        group = sym(len(input_vars))
        input_vars.append(_range(batch_groups))
        input_exprs[dn.input_batch] = group * out.dims[dn.output_batch] + batch
    else:
        input_exprs[dn.input_batch] = batch
    if any(e is None for e in (*input_exprs, *kernel_exprs)):
        raise Unsupported("dim_labels= leaves a dimension without a role")
    bounds = [(0, n - 1) for n in out.dims]
    input_map = IndexingMap.from_exprs(
        [e for e in input_exprs if e is not None], bounds, input_vars, constraints=constraints
    )
    kernel_map = IndexingMap.from_exprs(
        [e for e in kernel_exprs if e is not None], bounds, kernel_vars
    )
    return InstructionIndexing.of(
        remove_unused_symbols(simplify(input_map)), remove_unused_symbols(simplify(kernel_map))
    )


def _range(size: int) -> Variable:
    return Variable(Interval(0, size - 1))


# -- dot --------------------------------------------------------------------------------------


def _dot_maps(ctx: OpContext) -> tuple[IndexingMap, IndexingMap]:
    """XLA's `ComputeDotOperandsIndexing`: output dims are the batch dims (in lhs_batch_dims
    order), then lhs free dims, then rhs free dims; contracting pair i is the shared range var
    `s_i`, sized by the lhs dim."""
    lhs, rhs, out = ctx.operand_shape(0), ctx.operand_shape(1), ctx.output_shape()
    lhs_batch, rhs_batch = ctx.ints("lhs_batch_dims", ()), ctx.ints("rhs_batch_dims", ())
    lhs_contract = ctx.ints("lhs_contracting_dims", ())
    rhs_contract = ctx.ints("rhs_contracting_dims", ())
    if len(lhs_batch) != len(rhs_batch) or len(lhs_contract) != len(rhs_contract):
        raise Unsupported("batch or contracting dimension lists differ in length")
    lhs_exprs: list[AffineExpr | None] = [None] * lhs.rank
    rhs_exprs: list[AffineExpr | None] = [None] * rhs.rank
    out_dim = 0
    for lb, rb in zip(lhs_batch, rhs_batch):
        lhs_exprs[lb] = rhs_exprs[rb] = dim(out_dim)
        out_dim += 1
    for exprs, batch, contract in (
        (lhs_exprs, lhs_batch, lhs_contract),
        (rhs_exprs, rhs_batch, rhs_contract),
    ):
        for i in range(len(exprs)):
            if i not in batch and i not in contract:
                exprs[i] = dim(out_dim)
                out_dim += 1
    sizes = []
    for i, (lc, rc) in enumerate(zip(lhs_contract, rhs_contract)):
        lhs_exprs[lc] = rhs_exprs[rc] = sym(i)
        sizes.append(lhs.dims[lc])
    if out_dim != out.rank or any(e is None for e in (*lhs_exprs, *rhs_exprs)):
        raise Unsupported("dot dimension numbers do not match the operand and result ranks")
    return (
        IndexingMap.from_tensor_sizes([e for e in lhs_exprs if e is not None], out.dims, sizes),
        IndexingMap.from_tensor_sizes([e for e in rhs_exprs if e is not None], out.dims, sizes),
    )


def _dot_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """(XLA's `ComputeOutputToInputDotOpIndexing`.)"""
    if ctx.num_operands != 2:
        raise Unsupported("a dot with more than two operands (sparse meta) is not covered")
    return InstructionIndexing.of(*_dot_maps(ctx))


def _dot_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Operand index → every output element it feeds: its batch and free dims stay, the other
    operand's free dims become range vars, its contracting dims drop out. For
    `[4,128,256] x [4,256,64]` the lhs gives `(d0, d1, d2)[s0] -> (d0, d1, s0)` (the map
    docs/indexing.md shows; XLA's code has no dot rule in this direction).
    """
    if ctx.num_operands != 2 or input_id not in (0, 1):
        raise Unsupported("a dot with more than two operands (sparse meta) is not covered")
    lhs, rhs, out = ctx.operand_shape(0), ctx.operand_shape(1), ctx.output_shape()
    batch = (ctx.ints("lhs_batch_dims", ()), ctx.ints("rhs_batch_dims", ()))
    contract = (ctx.ints("lhs_contracting_dims", ()), ctx.ints("rhs_contracting_dims", ()))
    shapes = (lhs, rhs)
    free = [
        [i for i in range(s.rank) if i not in batch[n] and i not in contract[n]]
        for n, s in enumerate(shapes)
    ]
    if len(batch[0]) != len(batch[1]) or len(batch[0]) + len(free[0]) + len(free[1]) != out.rank:
        raise Unsupported("dot dimension numbers do not match the operand and result ranks")
    exprs: list[AffineExpr] = [dim(d) for d in batch[input_id]]
    sizes: list[int] = []
    for n in (0, 1):
        for d in free[n]:
            if n == input_id:
                exprs.append(dim(d))
            else:
                exprs.append(sym(len(sizes)))
                sizes.append(shapes[n].dims[d])
    operand = shapes[input_id]
    return InstructionIndexing.of(IndexingMap.from_tensor_sizes(exprs, operand.dims, sizes))


def _rescale(m: IndexingMap, operand_dims: Sequence[int], scale_dims: Sequence[int]) -> IndexingMap:
    """Each result divided by operand_dim / scale_dim where they differ (XLA's
    `RescaleIndexingMap`)."""
    if len(operand_dims) != len(scale_dims):
        raise Unsupported("a scale has a different rank from its operand")
    exprs = []
    for expr, n, s in zip(m.results, operand_dims, scale_dims):
        if s <= 0 or n % s:
            raise Unsupported("a scale dimension does not divide its operand dimension")
        exprs.append(expr if n == s else expr.floordiv(n // s))
    return IndexingMap(tuple(exprs), m.dims, m.range_vars, m.rt_vars, m.constraints)


def _scaled_dot_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Operands 0 and 1 as a dot; the scales 2 and 3 through `_rescale` (XLA's
    `ComputeOutputToInputScaledDotOpIndexing`)."""
    if ctx.num_operands != 4:
        raise Unsupported("a scaled-dot has four operands")
    lhs_map, rhs_map = _dot_maps(ctx)
    lhs_scale = _rescale(lhs_map, ctx.operand_shape(0).dims, ctx.operand_shape(2).dims)
    rhs_scale = _rescale(rhs_map, ctx.operand_shape(1).dims, ctx.operand_shape(3).dims)
    return InstructionIndexing.of(lhs_map, rhs_map, lhs_scale, rhs_scale)


register(REDUCE, output_to_input=reduce_output_to_input, input_to_output=reduce_input_to_output)
register(REDUCE_WINDOW, output_to_input=_reduce_window_output_to_input)
register(CONVOLUTION, output_to_input=_convolution_output_to_input)
register(DOT, output_to_input=_dot_output_to_input, input_to_output=_dot_input_to_output)
register(SCALED_DOT, output_to_input=_scaled_dot_output_to_input)
