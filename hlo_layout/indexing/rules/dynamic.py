"""Ops whose read position depends on values read at run time: dynamic-slice,
dynamic-update-slice and gather. Offsets become runtime variables `rt_k`.

Mirrors XLA's `ComputeOutputToInputDynamicSliceOpIndexing`,
`ComputeOutputToInputDynamicUpdateSliceOpIndexing`, `ComputeOutputToInputGatherOpIndexing` and
`OptimizeHloRTVar` (indexing_analysis.cc). An offset's interval is its clamped range
`[0, operand_dim - slice_size]`.
"""

from __future__ import annotations

from hlo_layout.indexing.expr import AffineExpr, const, dim, rt, sym
from hlo_layout.indexing.interval import Interval
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import (
    InstructionIndexing,
    OperandIndexing,
    RuntimeVar,
    SourceRef,
    remove_unused_operand_symbols,
)
from hlo_layout.indexing.rules.registry import OpContext, Unsupported, register
from hlo_layout.indexing.rules.shapes import scalar_map
from hlo_layout.syntax.attrs import int_value
from hlo_layout.syntax.opcodes import (
    CONSTANT,
    DYNAMIC_SLICE,
    DYNAMIC_UPDATE_SLICE,
    GATHER,
    IOTA,
    PARAMETER,
)
from hlo_layout.syntax.shape import ArrayShape
from hlo_layout.syntax.tree import Instruction


def source_label(instruction: Instruction) -> str:
    """How XLA prints a runtime variable's source (`RuntimeVarIndexing::ToString`, 2026-06):
    `parameter(N)`, `constant(V)` for a scalar constant, `constant`, or the instruction name."""
    if instruction.opcode == PARAMETER:
        return f"parameter({instruction.parameter_number})"
    if instruction.opcode == CONSTANT:
        shape = instruction.shape
        if isinstance(shape, ArrayShape) and shape.rank == 0 and instruction.literal is not None:
            return f"constant({instruction.literal.strip()})"
        return "constant"
    return instruction.name


def _scalar_int(instruction: Instruction) -> int | None:
    literal = (instruction.literal or "").strip()
    try:
        return int(literal)
    except ValueError:
        return None


def fold_runtime_var(
    source: Instruction | None, rv_map: IndexingMap, feasible: Interval
) -> AffineExpr | None:
    """What XLA's `OptimizeHloRTVar` puts in place of a runtime variable, if anything.

    A scalar integer constant inside the feasible range becomes that constant; an iota becomes
    the rt map's result along the iota dimension (XLA does not clamp that one to the feasible
    range, and neither do we, to stay comparable).
    """
    if source is None:
        return None
    shape = source.shape
    if source.opcode == CONSTANT and isinstance(shape, ArrayShape) and shape.rank == 0:
        if all(r.is_const for r in rv_map.results):
            value = _scalar_int(source)
            if value is not None and feasible.contains(value):
                return const(value)
        return None
    if source.opcode == IOTA:
        attr = source.attr("iota_dimension")
        if attr is None:
            return None
        iota_dim = int_value(attr)
        if 0 <= iota_dim < rv_map.num_results:
            return rv_map.results[iota_dim]
    return None


def _source(ctx: OpContext, k: int) -> SourceRef:
    producer = ctx.operand_instruction(k)
    operand = ctx.operand(k)
    label = source_label(producer) if producer is not None else operand.ref
    return SourceRef(ctx.computation.name, operand.ref, label)


class _RuntimeVars:
    """Collects the runtime variables of one operand map, folding the ones XLA folds."""

    def __init__(self, ctx: OpContext) -> None:
        self.ctx = ctx
        self.bounds: list[Interval] = []
        self.vars: list[RuntimeVar] = []

    def offset(self, k: int, rv_map: IndexingMap, feasible: Interval) -> AffineExpr:
        """The expression for a value read from operand `k` through `rv_map`."""
        if not feasible.is_feasible:
            raise Unsupported("the slice is larger than the operand")
        folded = fold_runtime_var(self.ctx.operand_instruction(k), rv_map, feasible)
        if folded is not None:
            return folded
        self.bounds.append(feasible)
        self.vars.append(RuntimeVar(_source(self.ctx, k), rv_map))
        return rt(len(self.vars) - 1)

    def operand_indexing(
        self, exprs: list[AffineExpr], out_dims: tuple[int, ...]
    ) -> OperandIndexing:
        m = IndexingMap.from_exprs(exprs, [(0, n - 1) for n in out_dims], rt_bounds=self.bounds)
        return remove_unused_operand_symbols(OperandIndexing(m, tuple(self.vars)))


def _scalar_offsets(ctx: OpContext, first: int) -> None:
    for k in range(first, ctx.num_operands):
        if ctx.operand_shape(k).rank != 0:
            raise Unsupported("offsets given as one vector (the old form) are not supported")


def _dynamic_slice_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Operand: `d_i + rt_i`, `rt_i in [0, in_i - size_i]`, reading offset operand i+1 through
    `(d...) -> ()`; offsets: `(d...) -> ()`."""
    out, operand = ctx.output_shape(), ctx.operand_shape(0)
    sizes = ctx.ints("dynamic_slice_sizes")
    if len(sizes) != operand.rank or ctx.num_operands != operand.rank + 1:
        raise Unsupported("dynamic_slice_sizes= or the offsets do not match the operand rank")
    _scalar_offsets(ctx, 1)
    offsets = scalar_map(out.dims)
    rts = _RuntimeVars(ctx)
    exprs = [
        dim(i) + rts.offset(i + 1, offsets, Interval(0, operand.dims[i] - size))
        for i, size in enumerate(sizes)
    ]
    first = rts.operand_indexing(exprs, out.dims)
    return InstructionIndexing.of(first, *[offsets] * operand.rank)


def _dynamic_update_slice_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Operand 0: identity (the whole output, updated part included); update: `d_i - rt_i`,
    `rt_i in [0, out_i - upd_i]`; offsets `(d...) -> ()`."""
    out, update = ctx.output_shape(), ctx.operand_shape(1)
    if update.rank != out.rank or ctx.num_operands != out.rank + 2:
        raise Unsupported("the update or the offsets do not match the result rank")
    _scalar_offsets(ctx, 2)
    offsets = scalar_map(out.dims)
    rts = _RuntimeVars(ctx)
    exprs = [
        dim(i) - rts.offset(i + 2, offsets, Interval(0, out.dims[i] - size))
        for i, size in enumerate(update.dims)
    ]
    return InstructionIndexing.of(
        IndexingMap.identity(out.dims), rts.operand_indexing(exprs, out.dims),
        *[offsets] * out.rank,
    )  # fmt: skip


def _gather_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Simplified gathers only (XLA CHECK-fails on others; we give unknown): indices of rank 2
    with `index_vector_dim=1`, no collapsed or batching dims, `offset_dims={1..k}`.

    Operand dim i reads `d_{offset_dims[i]}`, plus `rt_j` when i = start_index_map[j]; rt_j reads
    `indices[d0, j]`. Indices: `(d...)[s0] -> (d0, s0)` over the index vector.
    """
    out, operand, indices = ctx.output_shape(), ctx.operand_shape(0), ctx.operand_shape(1)
    offset_dims = ctx.ints("offset_dims")
    start_index_map = ctx.ints("start_index_map")
    slice_sizes = ctx.ints("slice_sizes")
    simplified = (
        indices.rank == 2
        and ctx.int("index_vector_dim") == 1
        and not ctx.ints("collapsed_slice_dims", ())
        and not ctx.ints("operand_batching_dims", ())
        and offset_dims == tuple(range(1, operand.rank + 1))
        and out.rank == operand.rank + 1
        and len(slice_sizes) == operand.rank
        and len(start_index_map) == indices.dims[1]
    )
    if not simplified:
        raise Unsupported("only the simplified gather form is covered (GatherSimplifier)")
    rts = _RuntimeVars(ctx)
    exprs: list[AffineExpr] = []
    for i, size in enumerate(slice_sizes):
        expr = dim(offset_dims[i])
        if i in start_index_map:
            j = start_index_map.index(i)
            rv_map = IndexingMap.from_tensor_sizes([dim(0), const(j)], out.dims)
            expr = expr + rts.offset(1, rv_map, Interval(0, operand.dims[i] - size))
        exprs.append(expr)
    indices_map = IndexingMap.from_tensor_sizes([dim(0), sym(0)], out.dims, [indices.dims[1]])
    return InstructionIndexing.of(rts.operand_indexing(exprs, out.dims), indices_map)


register(DYNAMIC_SLICE, output_to_input=_dynamic_slice_output_to_input)
register(DYNAMIC_UPDATE_SLICE, output_to_input=_dynamic_update_slice_output_to_input)
register(GATHER, output_to_input=_gather_output_to_input)
