"""The one registry of indexing rules, keyed by opcode, and the context every rule reads.

Mirrors the dispatch in XLA's `ComputeOutputToInputIndexing` / `ComputeInputToOutputIndexing`
(xla/hlo/analysis/indexing_analysis.cc): one entry per opcode, each with an output-to-input and
an input-to-output function (either may be missing). An opcode without an entry, a missing
direction, or an instruction a rule cannot read gives explicit unknown indexing with a note saying
why, never a guessed map.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hlo_layout.errors import HloLayoutError
from hlo_layout.indexing.operand import InstructionIndexing
from hlo_layout.limits import LimitExceeded
from hlo_layout.syntax.attrs import int_list, int_value
from hlo_layout.syntax.opcodes import Registry
from hlo_layout.syntax.shape import UNBOUNDED, ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Attribute, Computation, Instruction, Module, Operand


class Unsupported(Exception):
    """Raised inside a rule for a form it does not cover (XLA would CHECK-fail or give unknown).

    Never escapes the registry: `output_to_input`/`input_to_output` turn it into unknown indexing.
    """


@dataclass(frozen=True, slots=True)
class OpContext:
    """One instruction in its computation (and module, for called computations).

    `session` is a per-analysis memo shared by nested fusion analyses (plain data, no I/O).
    """

    instruction: Instruction
    computation: Computation
    module: Module | None = None
    session: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def opcode(self) -> str:
        return self.instruction.opcode

    @property
    def name(self) -> str:
        return self.instruction.name

    @property
    def num_operands(self) -> int:
        return len(self.instruction.operands)

    def operand(self, k: int) -> Operand:
        return self.instruction.operands[k]

    def operand_instruction(self, k: int) -> Instruction | None:
        """The instruction operand `k` names (None for `x#i` tuple-element references)."""
        operand = self.instruction.operands[k]
        if operand.index is not None:
            return None
        return self.computation.resolve(operand)

    def operand_full_shape(self, k: int) -> Shape:
        operand = self.instruction.operands[k]
        producer = self.computation.resolve(operand)
        shape: Shape | None = producer.shape if producer is not None else None
        if shape is None:
            if operand.shape is None:
                raise Unsupported(f"operand {k} ('{operand.name}') is not defined")
            return operand.shape
        if operand.index is not None:
            if not isinstance(shape, TupleShape) or operand.index >= len(shape.elements):
                raise Unsupported(f"operand {k} ('{operand.ref}') is not a tuple element")
            shape = shape.elements[operand.index]
        return shape

    def operand_shape(self, k: int) -> ArrayShape:
        """Operand `k`'s array shape (an `x#i` operand gives tuple element i)."""
        return array_shape(self.operand_full_shape(k), f"operand {k}")

    def output_shape(self, output_id: int = 0) -> ArrayShape:
        """The result's array shape, or element `output_id` of a tuple result (`GetOutputShape`)."""
        shape = self.instruction.shape
        if isinstance(shape, TupleShape):
            if not 0 <= output_id < len(shape.elements):
                raise Unsupported(f"output {output_id} does not exist")
            shape = shape.elements[output_id]
        return array_shape(shape, "result")

    def operand_rank(self, k: int) -> int | None:
        """Rank of operand `k`, or None when it is not an array (a tuple read by GTE)."""
        shape = self.operand_full_shape(k)
        return shape.rank if isinstance(shape, ArrayShape) else None

    @property
    def num_outputs(self) -> int:
        shape = self.instruction.shape
        return len(shape.elements) if isinstance(shape, TupleShape) else 1

    def attr(self, key: str) -> Attribute | None:
        return self.instruction.attr(key)

    def require(self, key: str) -> Attribute:
        found = self.instruction.attr(key)
        if found is None:
            raise Unsupported(f"missing attribute {key}=")
        return found

    def ints(self, key: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        found = self.instruction.attr(key)
        if found is None:
            if default is None:
                raise Unsupported(f"missing attribute {key}=")
            return default
        return int_list(found)

    def int(self, key: str, default: int | None = None) -> int:
        found = self.instruction.attr(key)
        if found is None:
            if default is None:
                raise Unsupported(f"missing attribute {key}=")
            return default
        return int_value(found)


def array_shape(shape: Shape, what: str) -> ArrayShape:
    """The shape as an array with static (or bounded) sizes; anything else is unsupported."""
    if not isinstance(shape, ArrayShape):
        raise Unsupported(f"{what} is not an array ({shape})")
    if any(dyn and size == UNBOUNDED for dyn, size in zip(shape.dynamic, shape.dims)):
        raise Unsupported(f"{what} has an unbounded dimension ({shape})")
    return shape


OutputToInput = Callable[[OpContext, int], InstructionIndexing]
InputToOutput = Callable[[OpContext, int], InstructionIndexing]


@dataclass(frozen=True, slots=True)
class Rule:
    """How one opcode reads its operands: output-to-input and input-to-output functions."""

    opcode: str
    output_to_input: OutputToInput | None = None
    input_to_output: InputToOutput | None = None
    #: False for rules that index something other than the operands' own shapes (fusion and
    #: call index the called computation's parameters, and check those themselves).
    check_ranks: bool = True


RULES: Registry[Rule] = Registry("indexing rules")


def register(
    opcodes: str | Iterable[str],
    *,
    output_to_input: OutputToInput | None = None,
    input_to_output: InputToOutput | None = None,
    check_ranks: bool = True,
) -> None:
    """Add the rule for one or more opcodes; an opcode is registered once."""
    for opcode in (opcodes,) if isinstance(opcodes, str) else opcodes:
        RULES.add(opcode, Rule(opcode, output_to_input, input_to_output, check_ranks))


def output_to_input(ctx: OpContext, output_id: int = 0) -> InstructionIndexing:
    """Per operand, the maps from output `output_id`'s index to the operand's index.

    XLA's `ComputeOutputToInputIndexing`. Example: `transpose(p0), dimensions={1,0}` of
    `f32[3,4]` gives `operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 2]`.
    """
    rule = RULES.get(ctx.opcode)
    if rule is None or rule.output_to_input is None:
        return InstructionIndexing.unknown(
            ctx.num_operands, f"{ctx.opcode} '{ctx.name}': no output-to-input indexing rule"
        )
    try:
        result = rule.output_to_input(ctx, output_id)
        if rule.check_ranks:
            check_ranks(result, ctx.output_shape(output_id).rank, ctx.operand_rank)
        return result
    except LimitExceeded:
        raise  # input past a limit is refused by every command, not read as unknown
    except (Unsupported, HloLayoutError) as e:
        return InstructionIndexing.unknown(ctx.num_operands, f"{ctx.opcode} '{ctx.name}': {e}")


def input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Per output, the maps from operand `input_id`'s index to the output's index.

    XLA's `ComputeInputToOutputIndexing`; unsupported opcodes give one unknown map per output.
    """
    rule = RULES.get(ctx.opcode)
    if rule is None or rule.input_to_output is None:
        return InstructionIndexing.unknown(
            ctx.num_outputs, f"{ctx.opcode} '{ctx.name}': no input-to-output indexing rule"
        )
    try:
        result = rule.input_to_output(ctx, input_id)
        if rule.check_ranks:
            check_ranks(result, ctx.operand_rank(input_id), lambda j: ctx.output_shape(j).rank)
        return result
    except LimitExceeded:
        raise
    except (Unsupported, HloLayoutError) as e:
        return InstructionIndexing.unknown(ctx.num_outputs, f"{ctx.opcode} '{ctx.name}': {e}")


def check_ranks(
    result: InstructionIndexing, num_dims: int | None, slot_rank: Callable[[int], int | None]
) -> None:
    """A map whose dims or results do not fit the shapes is a rule bug or a malformed
    instruction; either way it must not reach a composition, so the whole result is refused."""
    maps = result.maps
    for k, slot in itertools.compress(enumerate(maps), maps):  # non-empty slots only (C speed)
        rank = slot_rank(k)
        for oi in slot:
            if oi.is_undefined:
                continue
            if oi.map.num_dims != num_dims or (rank is not None and oi.map.num_results != rank):
                raise Unsupported(
                    f"slot {k}: a map with {oi.map.num_dims} dims and {oi.map.num_results} "
                    f"results does not fit (expected {num_dims} dims, {rank} results)"
                )
