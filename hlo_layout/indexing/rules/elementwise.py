"""Elementwise ops, `map` and single-device `all-reduce`: every operand is read at the output index.

Mirrors XLA's `ComputeOutputToInputCwiseOpIndexing` / `ComputeInputToOutputCwiseOpIndexing`
(indexing_analysis.cc) for the opcodes of `HloInstruction::IsOpElementwise`, `map` (whose
`dimensions` attribute does nothing) and the all-reduce family (on one device an all-reduce reads
the same element of every replica). The opcode lists are the vocabulary's
(`syntax/opcodes.ELEMENTWISE`, `ALL_REDUCES`).
"""

from __future__ import annotations

from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import NO_MAPS, InstructionIndexing
from hlo_layout.indexing.rules.registry import OpContext, register
from hlo_layout.indexing.rules.shapes import scalar_map, spread_map
from hlo_layout.syntax.opcodes import ALL_REDUCES, ASYNC_DONES, ELEMENTWISE


def _cwise_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Identity for every operand; a rank-0 operand of an op with a non-scalar result (select's
    predicate, clamp's bounds) gets `(d0, ...) -> ()`."""
    out = ctx.output_shape(output_id)
    identity = IndexingMap.identity(out.dims)
    maps = []
    for k in range(ctx.num_operands):
        if ctx.operand_shape(k).rank == 0 and out.rank != 0:
            maps.append(scalar_map(out.dims))
        else:
            maps.append(identity)
    return InstructionIndexing.of(*maps)


def _cwise_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Identity over the output shape (XLA). A rank-0 operand feeding a non-scalar result reaches
    every output element: `()[s0, s1] -> (s0, s1)` (XLA would give the identity, over the wrong
    domain)."""
    out = ctx.output_shape(0)
    if ctx.operand_shape(input_id).rank == 0 and out.rank != 0:
        return InstructionIndexing.of(spread_map(out.dims))
    return InstructionIndexing.of(IndexingMap.identity(out.dims))


def _all_reduce_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Output k reads operand k at the same index; a single-result all-reduce is elementwise."""
    if ctx.num_outputs == 1 or ctx.opcode in ASYNC_DONES:
        return _cwise_output_to_input(ctx, output_id)
    identity = IndexingMap.identity(ctx.output_shape(output_id).dims)
    slots = [NO_MAPS] * ctx.num_operands
    if output_id < len(slots):
        slots[output_id] = InstructionIndexing.of(identity).maps[0]
    return InstructionIndexing(tuple(slots))


def _all_reduce_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    if ctx.num_outputs == 1 or ctx.opcode in ASYNC_DONES:
        return _cwise_input_to_output(ctx, input_id)
    identity = IndexingMap.identity(ctx.operand_shape(input_id).dims)
    slots = [NO_MAPS] * ctx.num_outputs
    if input_id < len(slots):
        slots[input_id] = InstructionIndexing.of(identity).maps[0]
    return InstructionIndexing(tuple(slots))


register(
    sorted(ELEMENTWISE),
    output_to_input=_cwise_output_to_input,
    input_to_output=_cwise_input_to_output,
)
register(
    sorted(ALL_REDUCES),
    output_to_input=_all_reduce_output_to_input,
    input_to_output=_all_reduce_input_to_output,
)
