"""Indexing rules per opcode: one registry (`RULES`), two entry points.

`output_to_input(ctx, output_id)` and `input_to_output(ctx, input_id)` mirror XLA's
`ComputeOutputToInputIndexing` and `ComputeInputToOutputIndexing`. The rule modules register
themselves on import:

* `elementwise` — IsOpElementwise opcodes, map, all-reduce;
* `movement` — broadcast, transpose, reverse, slice, concatenate, pad, reshape, bitcast, tuple,
  get-tuple-element;
* `reduction` — reduce, reduce-window, convolution, dot, scaled-dot;
* `dynamic` — dynamic-slice, dynamic-update-slice, gather (runtime variables);
* `collective` — all-gather, scan, and the operand-less constant/iota/parameter;
* `composite` — fusion and call, composed through the called computation.
"""

from hlo_layout.indexing.rules import (  # noqa: F401  (imported to register their rules)
    collective,
    composite,
    dynamic,
    elementwise,
    movement,
    reduction,
)
from hlo_layout.indexing.rules.registry import (
    RULES,
    OpContext,
    Rule,
    Unsupported,
    input_to_output,
    output_to_input,
    register,
)

__all__ = [
    "RULES",
    "OpContext",
    "Rule",
    "Unsupported",
    "input_to_output",
    "output_to_input",
    "register",
]
