"""Loop-aware totals: while bodies times their trip count, nested loops multiplied through,
calls counted at each call site, a conditional's costliest branch.

XLA's HloCostAnalysis counts a while loop's body once (analysis.py). Here each computation that
runs as code of its own gets an execution count per run of the module:

- a while body runs `trip_count` times per execution of the while, its condition once more;
  the trip count is `known_trip_count` from the while's backend_config, else XLA's own pattern
  match (ComputeWhileLoopTripCount, xla/service/while_loop_analysis.cc: the induction variable,
  its constant start, `i++`, `i < N` or `i <= N`), else the loop run step by step from its start
  (XLA's brute force, further: evaluate.py runs the scalars of the loop state through wrapped
  fusions and calls, f32 and `s32[1]` counters, bounds carried in the state or computed in the
  graph, up to 10,000 steps where XLA stops at 128). A loop whose count cannot be known runs
  once, and is listed with the reason;
- a called or async computation runs once per execution of its caller;
- of a conditional's branches, the costliest (most flops, then most bytes) is counted and named;
  the others count 0.

A computation is costed once (its own instructions' sum) and multiplied: no walk repeats work.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from hlo_layout.cost.evaluate import Evaluator, Value
from hlo_layout.errors import HloSemanticError, Span
from hlo_layout.limits import read_int
from hlo_layout.syntax.attrs import computation_names, int_value
from hlo_layout.syntax.opcodes import (
    ADD,
    BITCAST,
    COMPARE,
    CONSTANT,
    CONVERT,
    COPY,
    GET_TUPLE_ELEMENT,
    RESHAPE,
    SEQUENTIAL_CALLERS,
    TUPLE,
)
from hlo_layout.syntax.shape import ArrayShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: Opcodes whose cost is their called computations' (counted through execution counts here):
#: those whose callees run as code of their own.
CONTROL = SEQUENTIAL_CALLERS
#: XLA's `max_brute_force_iters` default for ComputeWhileLoopTripCount.
MAX_BRUTE_FORCE_ITERATIONS = 128
_INTEGER_TYPES = frozenset({"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"})
_KNOWN_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(-?\d+)"?')


@dataclass(frozen=True, slots=True)
class Loop:
    """A while loop and its trip count (None when it cannot be known) and how it was found."""

    computation: str
    instruction: str
    trip_count: int | None
    how: str
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Branch:
    """A conditional, its branches, and the one the totals count (the costliest)."""

    computation: str
    instruction: str
    branches: tuple[str, ...]
    counted: str


# -- trip counts --------------------------------------------------------------------------------


def trip_count(
    module: Module, computation: Computation, loop: Instruction
) -> tuple[int | None, str]:
    """A while loop's trip count and how it was found (ComputeWhileLoopTripCount after the
    `known_trip_count` XLA's WhileLoopTripCountAnnotator writes into the backend config)."""
    config = loop.attr("backend_config")
    if config is not None:
        found = _KNOWN_TRIP_COUNT.search(config.raw)
        if found is not None:
            count = read_int(found.group(1), "known_trip_count", config.span)
            return max(0, count), "known_trip_count"
    body = _callee(module, loop, "body")
    condition = _callee(module, loop, "condition")
    if body is None or condition is None:
        return None, "unknown: body or condition not found"
    index = _induction_index(computation, loop, body, condition)
    matched = index if isinstance(index, str) else "the induction variable is not an integer"
    if isinstance(index, int):
        init_tuple = computation.resolve(loop.operands[0])
        assert init_tuple is not None  # checked by _induction_index
        start = _constant_value(computation, init_tuple.operands[index].name, depth=8)
        if start is not None:
            pattern = _pattern(body, condition, index, start)
            if isinstance(pattern, tuple):
                return pattern
            matched = pattern
    counted = _step_by_step(module, computation, loop, body, condition)
    if isinstance(counted, int):
        return counted, f"evaluated step by step (not XLA's pattern: {matched})"
    return None, f"unknown: {matched}; {counted}"


def _callee(module: Module, loop: Instruction, key: str) -> Computation | None:
    attr = loop.attr(key)
    names = computation_names(attr) if attr is not None else ()
    return module.computation(names[0]) if names else None


def _tuple_index(instruction: Instruction) -> int | None:
    attr = instruction.attr("index")
    try:
        return int_value(attr) if attr is not None else None
    except HloSemanticError:  # a malformed index: not a pattern XLA matches
        return None


def _gte_operand_index(
    computation: Computation, instruction: Instruction, param: str
) -> int | None:
    """GetGTEOperandIndex: the tuple index N when every non-constant operand of `instruction`
    is `get-tuple-element(param), index=N` (possibly through a copy), for one N."""
    found: int | None = None
    for operand in instruction.operands:
        producer = computation.resolve(operand)
        if operand.index is not None:
            if operand.name != param:
                return None
            index: int | None = operand.index
        else:
            if producer is None:
                return None
            if producer.opcode == CONSTANT:
                continue
            if producer.opcode == COPY and producer.operands:
                producer = computation.resolve(producer.operands[0])
                if producer is None:
                    return None
            if producer.opcode != GET_TUPLE_ELEMENT or not producer.operands:
                return None
            if producer.operands[0].name != param:
                return None
            index = _tuple_index(producer)
        if index is None or (found is not None and index != found):
            return None
        found = index
    return found


def _param0(computation: Computation) -> str | None:
    params = computation.parameter_instructions
    return params[0].name if params and params[0].parameter_number == 0 else None


def _induction_index(
    computation: Computation, loop: Instruction, body: Computation, condition: Computation
) -> int | str:
    """GetLoopInductionVarTupleIdx: the induction variable's tuple index, or why not."""
    cond_root, cond_param = condition.root, _param0(condition)
    if cond_root is None or cond_param is None:
        return "the condition has no root or parameter"
    index = _gte_operand_index(condition, cond_root, cond_param)
    if index is None:
        return "no induction variable in the loop condition"
    body_root, body_param = body.root, _param0(body)
    if body_root is None or body_root.opcode != TUPLE or body_param is None:
        return "the loop body's root is not a tuple"
    if index >= len(body_root.operands):
        return "the induction variable is not in the body's tuple"
    increment = body.resolve(body_root.operands[index])
    if increment is None or _gte_operand_index(body, increment, body_param) != index:
        return "the body does not update the induction variable from itself"
    init = computation.resolve(loop.operands[0]) if loop.operands else None
    if init is None or init.opcode != TUPLE or index >= len(init.operands):
        return "the loop's initial value is not a tuple"
    return index


def _scalar_literal(instruction: Instruction) -> int | None:
    """LiteralAsScalarInt64: an integer effective scalar's value."""
    shape = instruction.shape
    if not isinstance(shape, ArrayShape) or shape.element_type not in _INTEGER_TYPES:
        return None
    if any(d != 1 for d in shape.dims):
        return None
    text = (instruction.literal or "").replace("{", "").replace("}", "").strip()
    try:
        return int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text)
    except ValueError:
        return None


def _constant_value(computation: Computation, name: str, depth: int) -> int | None:
    """The value of `name` when it is an integer scalar constant, or a copy, convert, reshape or
    bitcast of one (what HloEvaluator folds for the loop's start; anything else: None)."""
    instruction = computation.get(name)
    while instruction is not None and depth > 0:
        if instruction.opcode == CONSTANT:
            return _scalar_literal(instruction)
        if instruction.opcode in (COPY, CONVERT, RESHAPE, BITCAST) and instruction.operands:
            instruction = computation.resolve(instruction.operands[0])
            depth -= 1
            continue
        return None
    return None


def _non_constant(computation: Computation, instruction: Instruction) -> str | None:
    """NonConstantOperand: the one operand that is not a constant (by name), else None."""
    found: str | None = None
    for operand in instruction.operands:
        producer = computation.resolve(operand)
        if producer is not None and producer.opcode == CONSTANT:
            continue
        if found is not None and found != operand.ref:
            return None
        found = operand.ref
    return found


def _constant_operand(computation: Computation, instruction: Instruction) -> int | None:
    for operand in instruction.operands:
        producer = computation.resolve(operand)
        if producer is not None and producer.opcode == CONSTANT:
            return _scalar_literal(producer)
    return None


def _pattern(
    body: Computation, condition: Computation, index: int, start: int
) -> tuple[int, str] | str:
    """PatternMatchLoopTripCount: `i = K; i < N; ++i` → N − K, `i <= N` → N − K + 1, or why
    the pattern does not hold."""
    body_root = body.root
    assert body_root is not None
    update = body.resolve(body_root.operands[index])
    if update is None or update.opcode != ADD or len(update.operands) != 2:
        return "the induction variable does not go as i++"
    if _non_constant(body, update) is None or _constant_operand(body, update) != 1:
        return "the induction variable does not go as i++"
    root = condition.root
    assert root is not None
    indvar = _non_constant(condition, root)
    bound = _constant_operand(condition, root)
    if indvar is None or bound is None or len(root.operands) != 2:
        return "the condition is not op(i, N) with a constant N"
    direction = root.attr("direction")
    first_is_indvar = root.operands[0].ref == indvar
    if root.opcode == COMPARE and direction is not None and first_is_indvar:
        if direction.raw == "LT":
            return max(0, bound - start), "pattern: i < N"
        if direction.raw == "LE":
            return max(0, bound - start + 1), "pattern: i <= N"
    return "the condition is not i < N or i <= N"


#: How many steps the fallback runs the loop for before giving up. XLA's brute force stops at
#: MAX_BRUTE_FORCE_ITERATIONS; we go further (a step is a few scalar operations), so a float
#: counter `0.0, 1.0, … < 200.0` or a wrapped `s32[1]` counter gets its count where XLA records
#: none.
STEP_LIMIT = 10_000


def _step_by_step(
    module: Module,
    computation: Computation,
    loop: Instruction,
    body: Computation,
    condition: Computation,
) -> int | str:
    """ComputeWhileLoopTripCount's brute force, further: the loop's state evaluated from its
    initial value (its scalar elements: counters, bounds), then the condition and the body run
    on it until the condition is false (at most STEP_LIMIT steps)."""
    evaluator = Evaluator(module)
    init = computation.resolve(loop.operands[0]) if loop.operands else None
    body_root, cond_root = body.root, condition.root
    if init is None or body_root is None or cond_root is None:
        return "the loop's initial value, body or condition is not found"
    state = _scalars(evaluator.value(computation, init, {}))
    if state is None:
        return "no scalar of the loop's state starts at a constant"
    for count in range(STEP_LIMIT + 1):
        holds = evaluator.value(condition, cond_root, {0: state})
        if not isinstance(holds, bool):
            return "the condition is not evaluated from the loop's start"
        if not holds:
            return count
        after = _scalars(_state_after(evaluator, body, body_root, state))
        if after is None:
            return "the loop's state after a step is not evaluated"
        if after == state:
            return "the loop's state does not change: it does not end"
        state = after
    return f"the condition does not end within {STEP_LIMIT} steps"


def _state_after(evaluator: Evaluator, body: Computation, root: Instruction, state: Value) -> Value:
    """The body's result on `state`: of a tuple, only the scalar elements are evaluated."""
    if root.opcode != TUPLE:
        return evaluator.value(body, root, {0: state})
    memo: dict[str, Value] = {}
    found: dict[int, Value] = {}
    for at, operand in enumerate(root.operands):
        producer = body.resolve(operand)
        shape = producer.shape if producer is not None else None
        if isinstance(shape, ArrayShape) and all(d == 1 for d in shape.dims):
            assert producer is not None
            value = evaluator.value(body, producer, {0: state}, memo)
            if operand.index is not None:
                value = value.get(operand.index) if isinstance(value, dict) else None
            found[at] = value
    return found


def _scalars(value: Value) -> Value:
    """The scalars of a loop state (a scalar, or a tuple's scalar elements by index): arrays are
    left out, so a step costs a few operations."""
    if isinstance(value, dict):
        kept = {k: v for k, v in value.items() if v is not None and not isinstance(v, list)}
        return kept or None
    return None if value is None or isinstance(value, list) else value


def branch_names(module: Module, conditional: Instruction) -> tuple[str, ...]:
    """A conditional's branches in order (`branch_computations`, or true then false)."""
    found = conditional.attr("branch_computations")
    if found is not None:
        return computation_names(found)
    names: list[str] = []
    for key in ("true_computation", "false_computation"):
        attr = conditional.attr(key)
        names.extend(computation_names(attr)[:1] if attr is not None else ())
    return tuple(names)


def known_trip_count_json(count: int) -> str:
    """The backend_config text XLA writes for a known trip count (for tests and tools)."""
    return json.dumps({"known_trip_count": {"n": str(count)}})


__all__ = [
    "CONTROL",
    "MAX_BRUTE_FORCE_ITERATIONS",
    "STEP_LIMIT",
    "Branch",
    "Loop",
    "branch_names",
    "known_trip_count_json",
    "trip_count",
]
