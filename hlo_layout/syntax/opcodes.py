"""The opcode vocabulary: named families of HLO opcodes, in HLO text spelling.

One place to ask "is this a control-flow op?", "which attributes name called computations?",
like torch.fx's table of node ops. The set of opcodes stays open: an opcode in no family is
still parsed, printed and measured (`Instruction.opcode` is the text as written); the families
only say what the analyses know about an opcode. To teach an analysis a new opcode, add it to
the family here, not a string comparison at the call site.

Sources (openxla/xla): hlo_opcode.h (spellings), HloInstruction::IsOpElementwise,
HloInstruction::called_computations, HloDataflowAnalysis (forwarding), hlo_parser.cc (the
attribute keys that hold computation names).
"""

from __future__ import annotations

PARAMETER = "parameter"
CONSTANT = "constant"
FUSION = "fusion"
CUSTOM_CALL = "custom-call"
GET_TUPLE_ELEMENT = "get-tuple-element"
TUPLE = "tuple"
IOTA = "iota"
CALL = "call"

#: Opcodes that copy a buffer (a layout change or a move between memory spaces): the `copies`
#: count of `check`'s structure metrics. `copy-done` finishes a `copy-start` and is not counted.
COPIES = frozenset({"copy", "copy-start"})

#: Callers whose called computations run as real code with buffers of their own (a fusion's,
#: a reduce's `to_apply`, a sort's comparator are inlined and allocate nothing of their own).
CONTROL_FLOW = frozenset({"while", "conditional", "call"})
#: Callers whose callees hold buffers of their own when called from code that does: control flow
#: and async-start (XLA's GatherComputationsByAllocationType, buffer_assignment.cc).
SEQUENTIAL_CALLERS = CONTROL_FLOW | {"async-start"}

#: Async op triples (`*-start`, `*-update`, `*-done`), by stage. XLA's generic async ops plus the
#: collectives and copies that have their own start/done opcodes.
ASYNC_START = frozenset(
    {
        "async-start",
        "all-reduce-start",
        "all-gather-start",
        "collective-permute-start",
        "copy-start",
        "send",
        "recv",
    }
)
ASYNC_UPDATE = frozenset({"async-update"})
ASYNC_DONE = frozenset(
    {
        "async-done",
        "all-reduce-done",
        "all-gather-done",
        "collective-permute-done",
        "copy-done",
        "send-done",
        "recv-done",
    }
)

#: Cross-device communication (sync forms and the async starts of them).
COLLECTIVES = frozenset(
    {
        "all-reduce",
        "all-reduce-start",
        "all-reduce-done",
        "all-gather",
        "all-gather-start",
        "all-gather-done",
        "all-to-all",
        "collective-broadcast",
        "collective-permute",
        "collective-permute-start",
        "collective-permute-done",
        "reduce-scatter",
        "ragged-all-to-all",
        "send",
        "send-done",
        "recv",
        "recv-done",
    }
)

#: The all-reduce family (sync, and the async start/done pair): on one device, each output reads
#: the same element of its operand.
ALL_REDUCE = frozenset({"all-reduce", "all-reduce-start", "all-reduce-done"})

#: Opcodes whose result is (part of) an operand's buffer, so they define no new value
#: (HloDataflowAnalysis: these ops forward their operands' values).
FORWARDING = frozenset(
    {
        "get-tuple-element",
        "bitcast",
        "tuple",
        "while",
        "call",
        "conditional",
        "optimization-barrier",
        "domain",
        "add-dependency",
    }
    | ASYNC_UPDATE
    | ASYNC_DONE
)

#: XLA's HloInstruction::IsOpElementwise list in HLO text spelling, plus `map`.
ELEMENTWISE = frozenset(
    {
        # unary
        "abs", "acos", "acosh", "asin", "asinh", "atanh", "bitcast-convert", "cbrt", "ceil",
        "clz", "convert", "copy", "cosine", "cosh", "erf", "exponential",
        "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one",
        "logistic", "negate", "not", "popcnt", "real", "reduce-precision",
        "round-nearest-afz", "round-nearest-even", "rsqrt", "sign", "sine", "sinh", "sqrt",
        "tan", "tanh",
        # binary
        "add", "and", "atan2", "compare", "complex", "divide", "maximum", "minimum",
        "multiply", "mulhi", "or", "power", "remainder", "shift-left",
        "shift-right-arithmetic", "shift-right-logical", "stochastic-convert", "subtract",
        "xor",
        # ternary
        "clamp", "select",
        # elementwise by definition
        "map",
    }
)  # fmt: skip

#: Elementwise opcodes counted as transcendentals, not flops (HloCostAnalysis::HandleElementwiseOp:
#: one transcendental per output element; `logistic` because it is built from `exp`/`tanh`). The
#: inverse and hyperbolic trigonometric opcodes are in jaxlib 0.10.2's list (measured on the
#: xla-tests corpus), newer than the sources we read.
TRANSCENDENTAL = frozenset(
    {
        "acos", "acosh", "asin", "asinh", "atan2", "atanh", "cbrt", "cosh", "cosine", "erf",
        "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "power",
        "rsqrt", "sine", "sinh", "sqrt", "tan", "tanh",
    }
)  # fmt: skip

#: Attribute keys whose value names called computations (HloInstruction::called_computations,
#: in the spelling of hlo_parser.cc's attribute table).
CALLED_COMPUTATION_KEYS = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "branch_computations",
    "true_computation",
    "false_computation",
    "scatter",
    "select",
    "async_computation",
    "called_computations",
)


def is_control_flow(opcode: str) -> bool:
    return opcode in CONTROL_FLOW


def is_elementwise(opcode: str) -> bool:
    return opcode in ELEMENTWISE


def elementwise_on_operand(opcode: str, k: int) -> bool:
    """HloInstruction::IsElementwiseOnOperand for a non-fusion instruction: a
    dynamic-update-slice is elementwise on the buffer it updates (operand 0) only. Deviation: a
    bitcast-convert counts as not elementwise (XLA: only when it keeps the element width), as
    the buffer-sharing rules we mirror need."""
    if opcode == "dynamic-update-slice":
        return k == 0
    return opcode in ELEMENTWISE and opcode != "bitcast-convert"


def is_forwarding(opcode: str) -> bool:
    return opcode in FORWARDING


__all__ = [
    "ALL_REDUCE",
    "ASYNC_DONE",
    "ASYNC_START",
    "ASYNC_UPDATE",
    "CALL",
    "CALLED_COMPUTATION_KEYS",
    "COLLECTIVES",
    "CONSTANT",
    "CONTROL_FLOW",
    "COPIES",
    "CUSTOM_CALL",
    "ELEMENTWISE",
    "FORWARDING",
    "FUSION",
    "GET_TUPLE_ELEMENT",
    "IOTA",
    "PARAMETER",
    "SEQUENTIAL_CALLERS",
    "TRANSCENDENTAL",
    "TUPLE",
    "elementwise_on_operand",
    "is_control_flow",
    "is_elementwise",
    "is_forwarding",
]
