"""The opcode table: everything hlo-layout knows about an HLO opcode, in one place.

Like torch.fx's `Node` docstring and `_legal_ops`: the vocabulary is closed and documented here,
and analyses ask this module, never a string comparison of their own (`tests/syntax/
test_opcode_table.py` fails on an opcode spelled in a comparison anywhere else). The set of
opcodes a dump may hold stays open: an opcode in no family (a newer XLA's, or `<op>-start` sugar)
is still parsed, printed and measured, and the analyses treat it as they treat an opcode they have
no rule for. To teach an analysis an opcode, add the fact here, then a rule in its registry.

Every opcode of xla/hlo/ir/hlo_opcode.h is a constant below (named after its spelling: `COSINE =
"cosine"`, `OPT_BARRIER = "opt-barrier"`), in exactly one family:

==============  ================================================================================
family          what its opcodes do, and what the analyses assume of them
==============  ================================================================================
elementwise     each output element is a function of the operands' elements at the same index
                (HloInstruction::IsOpElementwise, plus `map`); an operand may share the result's
                buffer; `TRANSCENDENTAL` ones cost a transcendental, the others a flop
data movement   move, slice, pad, reorder or select elements without arithmetic (`reshape`,
                `transpose`, `gather`, `dynamic-update-slice`, ...); `bitcast` reinterprets
                a buffer in place
reduction       combine many elements with an applied computation (`to_apply`, run per element)
contraction     dot products and convolutions: flops from the contracted dimensions
numeric kernel  whole library routines (sort, FFT, Cholesky, batch norm, RNG): one rule each
source          read no operand data: parameters, constants, iota, replica and partition ids
tuple           build, read or order values without touching elements (`tuple`,
                `get-tuple-element`, `domain`, `opt-barrier`, `add-dependency`, `after-all`)
control flow    run called computations as code of their own, with buffers of their own
                (`while`, `conditional`, `call`)
fusion          runs its fused computation as one kernel: buffers only at its boundary
custom call     a backend's kernel: only its attributes say what it reads and writes
collective      cross-device communication, sync forms and their start/done pairs
async           `async-start`/`-update`/`-done` wrapping a computation, and `copy-start`/`-done`
host transfer   infeed, outfeed, send and recv with their dones: data to or from the host or
                another program
==============  ================================================================================

Facts that cut across families: `FORWARDING` (defines no value of its own: its result is an
operand's, HloDataflowAnalysis), `SIDE_EFFECTS` (HloInstruction::HasSideEffectNoRecurse),
`ASYNC_STARTS` / `ASYNC_UPDATES` / `ASYNC_DONES` and `ASYNC_DONE_OF` (the pairs),
`SEQUENTIAL_CALLERS` (callees with buffers of their own), `CALLED_COMPUTATION_KEYS`,
`WHILE_KEYS` and `REQUIRED_CALLEES` (which attributes name called computations),
`DEFAULT_IN_PLACE`, `SHARES_OPERAND` and `SHARES_ANY_OPERAND` (the in-place and buffer-sharing
facts XLA hard-codes per opcode), `COPIES`, `ALL_REDUCES`.

Dispatch on opcodes goes through `Registry` (cost rules, indexing rules, shape inference,
dataflow): one entry per opcode, registered once, and only for an opcode of this vocabulary.

>>> family(COSINE), COSINE in TRANSCENDENTAL, family("reduce-scatter-start")
('elementwise', True, None)
>>> ASYNC_DONE_OF[COPY_START], REQUIRED_CALLEES[WHILE]
('copy-done', (('condition', 'body'),))

Sources (openxla/xla): hlo_opcode.h (spellings), HloInstruction::IsOpElementwise,
HasSideEffectNoRecurse and called_computations, HloDataflowAnalysis (forwarding, async stages),
alias_info.cc and HloDataflowAnalysis::CanShareOperandBufferWithUser (in-place operands),
HloCostAnalysis (transcendentals), hlo_parser.cc (the attribute keys naming computations).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

# -- the vocabulary: xla/hlo/ir/hlo_opcode.h, in its order -----------------------------------
ABS = "abs"
ACOS = "acos"
ACOSH = "acosh"
ADD = "add"
ADD_DEPENDENCY = "add-dependency"
AFTER_ALL = "after-all"
ALL_GATHER = "all-gather"
ALL_GATHER_DONE = "all-gather-done"
ALL_GATHER_START = "all-gather-start"
ALL_REDUCE = "all-reduce"
ALL_REDUCE_DONE = "all-reduce-done"
ALL_REDUCE_START = "all-reduce-start"
ALL_TO_ALL = "all-to-all"
AND = "and"
ASIN = "asin"
ASINH = "asinh"
ASYNC_DONE = "async-done"
ASYNC_START = "async-start"
ASYNC_UPDATE = "async-update"
ATAN = "atan"
ATAN2 = "atan2"
ATANH = "atanh"
BATCH_NORM_GRAD = "batch-norm-grad"
BATCH_NORM_INFERENCE = "batch-norm-inference"
BATCH_NORM_TRAINING = "batch-norm-training"
BITCAST = "bitcast"
BITCAST_CONVERT = "bitcast-convert"
BROADCAST = "broadcast"
CALL = "call"
CBRT = "cbrt"
CEIL = "ceil"
CHOLESKY = "cholesky"
CLAMP = "clamp"
COUNT_LEADING_ZEROS = "count-leading-zeros"
COLLECTIVE_BROADCAST = "collective-broadcast"
COLLECTIVE_PERMUTE = "collective-permute"
COLLECTIVE_PERMUTE_DONE = "collective-permute-done"
COLLECTIVE_PERMUTE_START = "collective-permute-start"
COLLECTIVE_REDUCE = "collective-reduce"
COMPARE = "compare"
COMPLEX = "complex"
CONCATENATE = "concatenate"
CONDITIONAL = "conditional"
CONSTANT = "constant"
CONVERT = "convert"
CONVOLUTION = "convolution"
COPY = "copy"
COPY_DONE = "copy-done"
COPY_START = "copy-start"
COSINE = "cosine"
COSH = "cosh"
CUSTOM_CALL = "custom-call"
DIVIDE = "divide"
DOMAIN = "domain"
DOT = "dot"
DYNAMIC_RESHAPE = "dynamic-reshape"
DYNAMIC_SLICE = "dynamic-slice"
DYNAMIC_UPDATE_SLICE = "dynamic-update-slice"
ERF = "erf"
EXPONENTIAL = "exponential"
EXPONENTIAL_MINUS_ONE = "exponential-minus-one"
FFT = "fft"
FLOOR = "floor"
FUSION = "fusion"
GATHER = "gather"
GET_DIMENSION_SIZE = "get-dimension-size"
GET_TUPLE_ELEMENT = "get-tuple-element"
IMAG = "imag"
INFEED = "infeed"
IOTA = "iota"
IS_FINITE = "is-finite"
LOG = "log"
LOG_PLUS_ONE = "log-plus-one"
LOGISTIC = "logistic"
MAP = "map"
MAXIMUM = "maximum"
MINIMUM = "minimum"
MULHI = "mulhi"
MULTIPLY = "multiply"
NEGATE = "negate"
NOT = "not"
OPT_BARRIER = "opt-barrier"
OR = "or"
OUTFEED = "outfeed"
PAD = "pad"
PARAMETER = "parameter"
PARTITION_ID = "partition-id"
POPCNT = "popcnt"
POWER = "power"
RAGGED_ALL_TO_ALL = "ragged-all-to-all"
RAGGED_DOT = "ragged-dot"
REAL = "real"
RECV = "recv"
RECV_DONE = "recv-done"
REDUCE = "reduce"
REDUCE_PRECISION = "reduce-precision"
REDUCE_SCATTER = "reduce-scatter"
REDUCE_WINDOW = "reduce-window"
REMAINDER = "remainder"
REPLICA_ID = "replica-id"
RESHAPE = "reshape"
REVERSE = "reverse"
RNG = "rng"
RNG_BIT_GENERATOR = "rng-bit-generator"
RNG_GET_AND_UPDATE_STATE = "rng-get-and-update-state"
ROUND_NEAREST_AFZ = "round-nearest-afz"
ROUND_NEAREST_EVEN = "round-nearest-even"
RSQRT = "rsqrt"
SCALED_DOT = "scaled-dot"
SCAN = "scan"
SCATTER = "scatter"
SELECT = "select"
SELECT_AND_SCATTER = "select-and-scatter"
SEND = "send"
SEND_DONE = "send-done"
SET_DIMENSION_SIZE = "set-dimension-size"
SHIFT_LEFT = "shift-left"
SHIFT_RIGHT_ARITHMETIC = "shift-right-arithmetic"
SHIFT_RIGHT_LOGICAL = "shift-right-logical"
SHUFFLE = "shuffle"
SIGN = "sign"
SINE = "sine"
SINH = "sinh"
SLICE = "slice"
SORT = "sort"
SQRT = "sqrt"
STOCHASTIC_CONVERT = "stochastic-convert"
SUBTRACT = "subtract"
TAN = "tan"
TANH = "tanh"
TOPK = "topk"
TRANSPOSE = "transpose"
TRIANGULAR_SOLVE = "triangular-solve"
TUPLE = "tuple"
WHILE = "while"
XOR = "xor"

# -- families: each opcode in exactly one (the docstring's table) ----------------------------

#: HloInstruction::IsOpElementwise in HLO text spelling, plus `map`. `atan` (newer than the
#: sources we read) is elementwise by definition.
ELEMENTWISE = frozenset(
    {
        # unary
        ABS, ACOS, ACOSH, ASIN, ASINH, ATAN, ATANH, BITCAST_CONVERT, CBRT, CEIL,
        COUNT_LEADING_ZEROS, CONVERT, COPY, COSINE, COSH, ERF, EXPONENTIAL, EXPONENTIAL_MINUS_ONE,
        FLOOR, IMAG, IS_FINITE, LOG, LOG_PLUS_ONE, LOGISTIC, NEGATE, NOT, POPCNT, REAL,
        REDUCE_PRECISION, ROUND_NEAREST_AFZ, ROUND_NEAREST_EVEN, RSQRT, SIGN, SINE, SINH, SQRT,
        TAN, TANH,
        # binary
        ADD, AND, ATAN2, COMPARE, COMPLEX, DIVIDE, MAXIMUM, MINIMUM, MULTIPLY, MULHI, OR, POWER,
        REMAINDER, SHIFT_LEFT, SHIFT_RIGHT_ARITHMETIC, SHIFT_RIGHT_LOGICAL, STOCHASTIC_CONVERT,
        SUBTRACT, XOR,
        # ternary
        CLAMP, SELECT,
        # elementwise by definition
        MAP,
    }
)  # fmt: skip
DATA_MOVEMENT = frozenset(
    {
        BITCAST, BROADCAST, CONCATENATE, DYNAMIC_RESHAPE, DYNAMIC_SLICE, DYNAMIC_UPDATE_SLICE,
        GATHER, GET_DIMENSION_SIZE, PAD, RESHAPE, REVERSE, SCATTER, SET_DIMENSION_SIZE, SHUFFLE,
        SLICE, TRANSPOSE,
    }
)  # fmt: skip
REDUCTION = frozenset({REDUCE, REDUCE_WINDOW, SELECT_AND_SCATTER, SCAN})
CONTRACTION = frozenset({DOT, CONVOLUTION, RAGGED_DOT, SCALED_DOT})
NUMERIC_KERNEL = frozenset(
    {
        BATCH_NORM_GRAD, BATCH_NORM_INFERENCE, BATCH_NORM_TRAINING, CHOLESKY, FFT, RNG,
        RNG_BIT_GENERATOR, SORT, TOPK, TRIANGULAR_SOLVE,
    }
)  # fmt: skip
SOURCE = frozenset({PARAMETER, CONSTANT, IOTA, PARTITION_ID, REPLICA_ID, RNG_GET_AND_UPDATE_STATE})
TUPLE_FAMILY = frozenset({TUPLE, GET_TUPLE_ELEMENT, DOMAIN, OPT_BARRIER, ADD_DEPENDENCY, AFTER_ALL})
#: Callers whose called computations run as real code with buffers of their own (a fusion's,
#: a reduce's `to_apply`, a sort's comparator are inlined and allocate nothing of their own).
CONTROL_FLOW = frozenset({WHILE, CONDITIONAL, CALL})
FUSION_FAMILY = frozenset({FUSION})
CUSTOM_CALL_FAMILY = frozenset({CUSTOM_CALL})
#: Cross-device communication: the sync forms and the async start/done pairs of them.
COLLECTIVES = frozenset(
    {
        ALL_GATHER, ALL_GATHER_START, ALL_GATHER_DONE, ALL_REDUCE, ALL_REDUCE_START,
        ALL_REDUCE_DONE, ALL_TO_ALL, COLLECTIVE_BROADCAST, COLLECTIVE_PERMUTE,
        COLLECTIVE_PERMUTE_START, COLLECTIVE_PERMUTE_DONE, COLLECTIVE_REDUCE, RAGGED_ALL_TO_ALL,
        REDUCE_SCATTER,
    }
)  # fmt: skip
ASYNC = frozenset({ASYNC_START, ASYNC_UPDATE, ASYNC_DONE, COPY_START, COPY_DONE})
HOST_TRANSFER = frozenset({INFEED, OUTFEED, SEND, SEND_DONE, RECV, RECV_DONE})

#: Family name -> its opcodes, in the docstring's order.
FAMILIES: dict[str, frozenset[str]] = {
    "elementwise": ELEMENTWISE,
    "data movement": DATA_MOVEMENT,
    "reduction": REDUCTION,
    "contraction": CONTRACTION,
    "numeric kernel": NUMERIC_KERNEL,
    "source": SOURCE,
    "tuple": TUPLE_FAMILY,
    "control flow": CONTROL_FLOW,
    "fusion": FUSION_FAMILY,
    "custom call": CUSTOM_CALL_FAMILY,
    "collective": COLLECTIVES,
    "async": ASYNC,
    "host transfer": HOST_TRANSFER,
}
#: Every opcode of the vocabulary.
OPCODES: frozenset[str] = frozenset().union(*FAMILIES.values())
_FAMILY_OF = {opcode: name for name, members in FAMILIES.items() for opcode in members}


def family(opcode: str) -> str | None:
    """The family of `opcode` (the docstring's table), or None for an opcode outside the
    vocabulary."""
    return _FAMILY_OF.get(opcode)


# -- facts across families --------------------------------------------------------------------

#: Elementwise opcodes counted as transcendentals, not flops (HloCostAnalysis::HandleElementwiseOp:
#: one transcendental per output element; `logistic` because it is built from `exp`/`tanh`). The
#: inverse and hyperbolic trigonometric opcodes are in jaxlib 0.10.2's list (measured on the
#: xla-tests corpus), newer than the sources we read; `atan` by analogy (not measured).
TRANSCENDENTAL = frozenset(
    {
        ACOS, ACOSH, ASIN, ASINH, ATAN, ATAN2, ATANH, CBRT, COSH, COSINE, ERF, EXPONENTIAL,
        EXPONENTIAL_MINUS_ONE, LOG, LOG_PLUS_ONE, LOGISTIC, POWER, RSQRT, SINE, SINH, SQRT, TAN,
        TANH,
    }
)  # fmt: skip

#: Opcodes that define no value of their own: their result is (part of) an operand's value
#: (HloDataflowAnalysis::InitializeInstructionValueSets: bitcast, get-tuple-element, while,
#: call, conditional, domain, opt-barrier, add-dependency). Deviation: the dones and
#: `async-update` define none either (XLA defines their tuple nodes, which hold no buffer).
FORWARDING = frozenset(
    {
        BITCAST, GET_TUPLE_ELEMENT, WHILE, CALL, CONDITIONAL, DOMAIN, OPT_BARRIER, ADD_DEPENDENCY,
        COPY_DONE, ALL_REDUCE_DONE, ALL_GATHER_DONE, COLLECTIVE_PERMUTE_DONE, ASYNC_UPDATE,
        SEND_DONE,
    }
)  # fmt: skip

#: HloInstruction::HasSideEffectNoRecurse: opcodes with a side effect whatever their attributes.
SIDE_EFFECTS = frozenset(
    {
        ALL_GATHER_START, ALL_GATHER_DONE, ALL_REDUCE_START, ALL_REDUCE_DONE,
        COLLECTIVE_BROADCAST, COLLECTIVE_PERMUTE_START, COLLECTIVE_PERMUTE_DONE, INFEED, OUTFEED,
        RECV, RECV_DONE, SEND, SEND_DONE,
    }
)  # fmt: skip
#: ... and those with one when their attributes say so (`constrain_layout=true`, a
#: `channel_id` outside SPMD, `custom_call_has_side_effect=true`).
MAY_HAVE_SIDE_EFFECTS = frozenset(
    {ALL_GATHER, ALL_REDUCE, ALL_TO_ALL, REDUCE_SCATTER, COLLECTIVE_PERMUTE, CUSTOM_CALL}
)

#: Async pairs (HloDataflowAnalysis::IsAsynchronousOperationStart/Done): each start opcode and
#: the done opcode that ends it. XLA's generic async ops plus the collectives, copies and
#: host transfers that have their own start/done opcodes.
ASYNC_DONE_OF = {
    ASYNC_START: ASYNC_DONE,
    ALL_REDUCE_START: ALL_REDUCE_DONE,
    ALL_GATHER_START: ALL_GATHER_DONE,
    COLLECTIVE_PERMUTE_START: COLLECTIVE_PERMUTE_DONE,
    COPY_START: COPY_DONE,
    SEND: SEND_DONE,
    RECV: RECV_DONE,
}
ASYNC_STARTS = frozenset(ASYNC_DONE_OF)
ASYNC_UPDATES = frozenset({ASYNC_UPDATE})
ASYNC_DONES = frozenset(ASYNC_DONE_OF.values())
#: The generic async stages, which wrap a computation (`calls=`).
GENERIC_ASYNC = frozenset({ASYNC_START, ASYNC_UPDATE, ASYNC_DONE})

#: Callers whose callees hold buffers of their own when called from code that does: control flow
#: and async-start (XLA's GatherComputationsByAllocationType, buffer_assignment.cc).
SEQUENTIAL_CALLERS = CONTROL_FLOW | {ASYNC_START}

#: Opcodes that copy a buffer (a layout change or a move between memory spaces): the `copies`
#: count of `check`'s structure metrics. `copy-done` finishes a `copy-start` and is not counted.
COPIES = frozenset({COPY, COPY_START})

#: The all-reduce family (sync, and the async start/done pair): on one device, each output reads
#: the same element of its operand.
ALL_REDUCES = frozenset({ALL_REDUCE, ALL_REDUCE_START, ALL_REDUCE_DONE})

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
#: The keys of the computations a loop runs, in XLA's called_computations order (body first).
WHILE_KEYS = ("body", "condition")
#: The attributes naming called computations that XLA's parser requires, per opcode: one of the
#: alternatives, each a set of keys (hlo_parser.cc `required=true`; a conditional takes
#: `branch_computations=` on an s32 index, `true_computation=` and `false_computation=` on a
#: pred). `<op>-start` sugar wraps its computation itself and needs none.
REQUIRED_CALLEES: dict[str, tuple[tuple[str, ...], ...]] = {
    ASYNC_START: (("calls",),),
    CALL: (("to_apply",),),
    FUSION: (("calls",),),
    WHILE: (("condition", "body"),),
    CONDITIONAL: (("branch_computations",), ("true_computation", "false_computation")),
    MAP: (("to_apply",),),
    REDUCE: (("to_apply",),),
    REDUCE_WINDOW: (("to_apply",),),
    SCATTER: (("to_apply",),),
    SELECT_AND_SCATTER: (("select", "scatter"),),
    SORT: (("to_apply",),),
    ALL_REDUCE: (("to_apply",),),
    ALL_REDUCE_START: (("to_apply",),),
    REDUCE_SCATTER: (("to_apply",),),
}

#: AliasInfo::IsDefaultInPlaceOperation: operand k shares output k's buffer (one operand: the
#: whole output), alias_info.cc GetInPlaceInputOutputPairs.
DEFAULT_IN_PLACE = frozenset({DYNAMIC_UPDATE_SLICE, SCATTER, ALL_REDUCE_START})
#: HloDataflowAnalysis::CanShareOperandBufferWithUser: the one operand these users may write in
#: place (any other operand never shares their buffer).
SHARES_OPERAND = {DYNAMIC_UPDATE_SLICE: 0, SCATTER: 0, TRIANGULAR_SOLVE: 1, SET_DIMENSION_SIZE: 0}
#: ... and the users that may share an operand's buffer whatever the operand (the problems are
#: found inside their computations).
SHARES_ANY_OPERAND = frozenset({WHILE, CONDITIONAL})


def elementwise_on_operand(opcode: str, k: int) -> bool:
    """HloInstruction::IsElementwiseOnOperand for a non-fusion instruction: a
    dynamic-update-slice is elementwise on the buffer it updates (operand 0) only. Deviation: a
    bitcast-convert counts as not elementwise (XLA: only when it keeps the element width), as
    the buffer-sharing rules we mirror need."""
    if opcode == DYNAMIC_UPDATE_SLICE:
        return k == 0
    return opcode in ELEMENTWISE and opcode != BITCAST_CONVERT


# -- dispatch ----------------------------------------------------------------------------------

Rule = TypeVar("Rule")


class Registry(dict[str, Rule]):
    """opcode -> rule, for one analysis (XLA's DfsHloVisitor `Handle*` dispatch, as torch.fx's
    Interpreter dispatches on `Node.op`). Each opcode is registered once and must be in the
    vocabulary (a misspelt opcode fails at import, not silently at run time). A plain dict
    otherwise: `registry.get(opcode)` is the lookup, None where the analysis has no rule."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def add(self, opcodes: str | Iterable[str], rule: Rule) -> Rule:
        """Registers `rule` for `opcodes`."""
        for opcode in (opcodes,) if isinstance(opcodes, str) else opcodes:
            if opcode not in OPCODES:
                raise ValueError(f"{self.what}: '{opcode}' is not an HLO opcode")
            if opcode in self:
                raise ValueError(f"{self.what}: '{opcode}' registered twice")
            self[opcode] = rule
        return rule

    def register(self, *opcodes: str) -> Callable[[Rule], Rule]:
        """Decorator: the function handles `opcodes`."""

        def add(rule: Rule) -> Rule:
            return self.add(opcodes, rule)

        return add
