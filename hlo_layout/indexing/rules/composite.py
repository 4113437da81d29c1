"""Instructions that run a computation: `fusion` and `call`.

Their indexing is the composition through the called computation (`indexing/fusion.py`, XLA's
`ComputeOutputToInputFusionOpIndexing`). XLA composes fusions only; a `call` has the same meaning
(parameter k is operand k), so it is composed the same way.

The maps index the called computation's parameters, so ranks are checked against those: a
caller whose operand shapes disagree with the parameters (a module the verifier would reject, as
in XLA's print_indexing test) still gets the maps of what the computation reads.
"""

from __future__ import annotations

from hlo_layout.indexing.operand import InstructionIndexing
from hlo_layout.indexing.rules.registry import OpContext, array_shape, check_ranks, register
from hlo_layout.syntax.opcodes import CALL, FUSION
from hlo_layout.syntax.shape import ArrayShape


def _output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    from hlo_layout.indexing.fusion import (  # fusion.py imports the rules
        called_parameters,
        fusion_output_to_input,
    )

    params = called_parameters(ctx)
    result = fusion_output_to_input(ctx, output_id)
    check_ranks(
        result,
        ctx.output_shape(output_id).rank,
        lambda k: params[k].shape.rank if isinstance(params[k].shape, ArrayShape) else None,  # type: ignore[union-attr]
    )
    return result


def _input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    from hlo_layout.indexing.fusion import called_parameters, fusion_input_to_output

    param = called_parameters(ctx)[input_id]
    result = fusion_input_to_output(ctx, input_id)
    check_ranks(
        result, array_shape(param.shape, "parameter").rank, lambda j: ctx.output_shape(j).rank
    )
    return result


register(
    (FUSION, CALL),
    output_to_input=_output_to_input,
    input_to_output=_input_to_output,
    check_ranks=False,
)
