"""Collectives and loops with a known access pattern: all-gather and scan.

Mirrors XLA's `ComputeOutputToInputAllGatherOpIndexing` and
`ComputeOutputToInputScanOpIndexing` (indexing_analysis.cc).
"""

from __future__ import annotations

from hlo_layout.indexing.expr import dim
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import InstructionIndexing, OperandIndexing
from hlo_layout.indexing.rules.registry import OpContext, Unsupported, register
from hlo_layout.indexing.rules.shapes import scalar_map
from hlo_layout.syntax.opcodes import ALL_GATHER, ALL_GATHER_START, CONSTANT, IOTA, PARAMETER, SCAN
from hlo_layout.syntax.shape import TupleShape


def _all_gather_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """The gathered dim reads `d mod in_size` of replica `d / in_size`; other dims are the
    identity. `f32[128,128]` gathered on dim 1 into `[128,256]`: `(d0, d1) -> (d0, d1 mod 128)`,
    replica id `(d0, d1) -> (d1 / 128)`.

    An `all-gather-start` result `(input, output)` is indexed through its output element.
    """
    if ctx.num_operands != 1:
        raise Unsupported("variadic all-gather is not covered")
    shape = ctx.instruction.shape
    out = ctx.output_shape(1 if isinstance(shape, TupleShape) else 0)
    dims = ctx.ints("dimensions")
    operand = ctx.operand_shape(0)
    if len(dims) != 1 or not 0 <= dims[0] < out.rank or operand.rank != out.rank:
        raise Unsupported("dimensions= must name one dimension of the result")
    g = dims[0]
    size = operand.dims[g]
    if size <= 0:
        raise Unsupported("the gathered dimension is empty")
    exprs = [dim(i) % size if i == g else dim(i) for i in range(out.rank)]
    replica = IndexingMap.from_tensor_sizes([dim(g).floordiv(size)], out.dims)
    return InstructionIndexing.of(
        OperandIndexing(IndexingMap.from_tensor_sizes(exprs, out.dims), (), replica)
    )


def _scan_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """An array output reads the array inputs at the same index and each carry as a scalar.

    The final carry (a scalar output) gets `() -> ()` for every operand, as XLA gives it
    (ComputeOutputToInputScanOpIndexing): for an array input that is a map with no results for
    a rank-1 operand (it reads every element, which a map of a rank-0 domain cannot say), so
    this rule is exempt from the rank check and a composition through it is unknown
    (`compose_operand_indexing`).
    """
    carries = ctx.int("num_carries")
    out = ctx.output_shape(output_id)
    if not 0 <= carries <= ctx.num_operands:
        raise Unsupported("num_carries= exceeds the operand count")
    inputs = ctx.num_operands - carries
    if any(ctx.operand_shape(k).rank for k in range(inputs, ctx.num_operands)):
        raise Unsupported("only scalar carries are covered")
    if out.rank and any(ctx.operand_shape(k).dims != out.dims for k in range(inputs)):
        raise Unsupported("an array input's shape differs from the output's")
    scalar = scalar_map(out.dims)
    if out.rank == 0:
        return InstructionIndexing.of(*[scalar] * ctx.num_operands)
    identity = IndexingMap.identity(out.dims)
    return InstructionIndexing.of(*([identity] * inputs + [scalar] * carries))


def _no_operands(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """constant, iota, parameter: nothing is read, so there are no operand slots."""
    return InstructionIndexing(())


register((ALL_GATHER, ALL_GATHER_START), output_to_input=_all_gather_output_to_input)
register(SCAN, output_to_input=_scan_output_to_input, check_ranks=False)
register((CONSTANT, IOTA, PARAMETER), output_to_input=_no_operands)
