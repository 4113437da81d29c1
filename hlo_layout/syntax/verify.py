"""Whole-module rules the grammar cannot state, checked after the tree is built.

Mirrors the checks XLA's parser makes once a computation is read (hlo_parser.cc: an operand must
name an instruction of the same computation, names are unique within a computation, a called
computation must exist) and that its call graph has no cycle (the parser only names computations
already defined; `index.walk_calls` finds the call closing a cycle). Construction never judges;
`verify` does, so a malformed dump can still be parsed and reported on (torch.fx's `Graph.lint`
split).

NOTE: [duplicate names] XLA uniquifies names module-wide when it reads a dump
(`constant.28871` seen twice becomes `constant.0` for the second), so a name repeated in two
computations is legal text. Only a repeat within one computation is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from hlo_layout.errors import HloSemanticError, Span
from hlo_layout.syntax.index import call_cycle, walk_calls
from hlo_layout.syntax.opcodes import DOT, REQUIRED_CALLEES
from hlo_layout.syntax.shape import ArrayShape, BufferShape, TupleShape
from hlo_layout.syntax.shape_inference import DotDims, dot_dimensions, dot_dimensions_problem
from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Module, Operand


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule, with where it was found."""

    message: str
    computation: str
    instruction: str | None = None
    span: Span | None = None

    def error(self) -> HloSemanticError:
        return HloSemanticError(self.message, self.span)


def computation_problems(computation: Computation) -> list[Problem]:
    """The rules one computation breaks on its own (duplicate instruction names, undefined
    operands, dot dimension numbers that do not fit); the streamed reader runs this on each
    computation as it is read."""
    by_name = computation._by_name
    instructions = computation.instructions
    # Fast path (every parse runs this): names unique when the index holds them all, operands
    # defined when no operand name falls outside it. The loops below only say where.
    unique = len(by_name) == len(instructions)
    if unique and (
        computation.synthetic
        or by_name.keys() >= set(map(_NAME, chain.from_iterable(map(_OPERANDS, instructions))))
    ):
        return _instruction_problems(computation)
    problems: list[Problem] = []
    seen: set[str] = set()
    for instruction in instructions:
        if instruction.name in seen:
            problems.append(
                Problem(
                    f"duplicate instruction name '{instruction.name}' in computation "
                    f"'{computation.name}'",
                    computation.name,
                    instruction.name,
                    instruction.span,
                )
            )
        seen.add(instruction.name)
    # Bare instruction lines (a doc snippet) refer to values defined elsewhere.
    if not computation.synthetic:
        for instruction in instructions:
            for operand in instruction.operands:
                if operand.name not in by_name:
                    problems.append(
                        Problem(
                            f"'{instruction.name}' uses undefined operand '{operand.name}'",
                            computation.name,
                            instruction.name,
                            instruction.span,
                        )
                    )
    problems.extend(_instruction_problems(computation))
    return problems


def _instruction_problems(computation: Computation) -> list[Problem]:
    """Instructions without an attribute naming the computation XLA's parser requires (a call
    without `to_apply=`, an async-start without `calls=`: REQUIRED_CALLEES), and dots whose
    dimension numbers do not fit their operands (HloVerifier's HandleDot, by
    ShapeInference::ValidateDotDimensionNumbers): every analysis indexes dims by them."""
    problems = []
    checked = _CHECKED
    for instruction in computation.instructions:
        opcode = instruction.opcode
        if opcode not in checked:  # most instructions: one set lookup
            continue
        required = REQUIRED_CALLEES.get(opcode)
        if required is not None:
            missing = _missing_callees(instruction.callee_keys, required)
            if missing is not None:
                problems.append(
                    Problem(
                        f"{opcode} '{instruction.name}' has no {missing}: XLA's parser requires "
                        "the computation it calls",
                        computation.name,
                        instruction.name,
                        instruction.span,
                    )
                )
        if opcode != DOT or len(instruction.operands) < 2:
            continue
        ranks = [_rank(computation, operand) for operand in instruction.operands[:2]]
        if None in ranks:
            continue  # an operand that is not an array, or undefined: said elsewhere
        try:
            numbers = _dot_numbers(instruction)
        except HloSemanticError as e:
            problem: str | None = e.message
        else:
            problem = dot_dimensions_problem(numbers, *ranks)  # type: ignore[arg-type]
        if problem is not None:
            problems.append(
                Problem(
                    f"dot '{instruction.name}': {problem}",
                    computation.name,
                    instruction.name,
                    instruction.span,
                )
            )
    return problems


#: Operand.name and Instruction.operands as C-level getters (the check runs on every parse).
_NAME = itemgetter(0)
_OPERANDS = itemgetter(3)
#: `dot_dimensions` by attribute text: a dump's thousands of dots hold a few distinct texts.
_DOT_NUMBERS: dict[str, DotDims] = {}


def _dot_numbers(instruction: Instruction) -> DotDims:
    """`dot_dimensions(instruction)`, read once per distinct attribute text."""
    attributes = instruction.attributes
    if type(attributes) is not LazyAttributes:
        return dot_dimensions(instruction)
    found = _DOT_NUMBERS.get(attributes._text)
    if found is None:
        if len(_DOT_NUMBERS) > 4096:
            _DOT_NUMBERS.clear()
        found = _DOT_NUMBERS[attributes._text] = dot_dimensions(instruction)
    return found


#: The opcodes `_instruction_problems` looks at.
_CHECKED = frozenset(REQUIRED_CALLEES) | {DOT}


def _missing_callees(keys: Sequence[str], required: tuple[tuple[str, ...], ...]) -> str | None:
    """What `keys` lacks of every alternative of `required` (`to_apply=`, `condition= and
    body=`, `branch_computations= or true_computation= and false_computation=`), or None when
    one alternative is there whole."""
    for alternative in required:  # loops, not generators: every fusion and reduce asks
        for key in alternative:
            if key not in keys:
                break
        else:
            return None
    return " or ".join(" and ".join(f"{key}=" for key in keys_) for keys_ in required)


def _rank(computation: Computation, operand: Operand) -> int | None:
    """The rank of an operand's array shape (its inline shape, or its producer's element)."""
    shape = operand.shape
    if shape is None:
        producer = computation.resolve(operand)
        if producer is None:
            return None
        shape = producer.shape
        if operand.index is not None:
            if not isinstance(shape, TupleShape) or operand.index >= len(shape.elements):
                return None
            shape = shape.elements[operand.index]
    if isinstance(shape, BufferShape):
        shape = shape.element
    return shape.rank if isinstance(shape, ArrayShape) else None


class ModuleVerifier:
    """The whole-module rules, fed one computation at a time (in text order).

    One implementation for both readers: `verify` feeds a parsed module's computations; the
    streamed reader feeds each computation as it is read, then drops it (it keeps only names).
    Mirrors XLA's HloParserImpl::ParseComputation ("expects only one ENTRY", a computation name
    used twice) and ParseInstruction (an operand or a called computation that does not exist).
    """

    __slots__ = ("_callees", "_edges", "_entry_seen", "names", "problems")

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.names: set[str] = set()
        self._entry_seen = False
        self._callees: set[str] = set()
        #: Each computation's callees (names only), for `has_cycle`.
        self._edges: dict[str, list[tuple[None, Sequence[str]]]] = {}

    def add(self, computation: Computation) -> None:
        """Check `computation` on its own and against the computations added before it."""
        if computation.name in self.names and not computation.synthetic:
            self.problems.append(
                Problem(
                    f"duplicate computation name '{computation.name}'",
                    computation.name,
                    None,
                    computation.span,
                )
            )
        self.names.add(computation.name)
        if computation.is_entry:
            if self._entry_seen:
                self.problems.append(
                    Problem("expects only one ENTRY", computation.name, None, computation.span)
                )
            self._entry_seen = True
        self.problems.extend(computation_problems(computation))

    def add_callees(self, caller: str, names: Sequence[str]) -> None:
        """The computation names `caller` (a computation added) calls, checked by
        `unknown_callees` and `has_cycle`."""
        self._callees.update(names)
        if names:
            self._edges.setdefault(caller, []).append((None, names))

    def unknown_callees(self) -> set[str]:
        return self._callees - self.names

    def has_cycle(self) -> bool:
        """Whether the calls added close a cycle (`verify` says where)."""
        return not isinstance(walk_calls(self._edges, self._edges, self.names), list)


def verify(module: Module) -> tuple[Problem, ...]:
    """Every rule `module` breaks, in text order (empty when it is well formed)."""
    verifier = ModuleVerifier()
    for computation in module.computations:
        verifier.add(computation)
    problems = verifier.problems
    # A header-less snippet may call computations it does not include. `callers` is cached on
    # the module, so this costs nothing more once anything asks for computation kinds.
    if module.name is not None:
        names = verifier.names
        for callee, sites in module.callers.items():
            if callee not in names:
                for computation, instruction in sites:
                    problems.append(
                        Problem(
                            f"'{instruction.name}' calls unknown computation '{callee}'",
                            computation.name,
                            instruction.name,
                            instruction.span,
                        )
                    )
    cycle = call_cycle(module)
    if cycle is not None:
        problems.append(Problem(cycle.message, cycle.cycle[-1], None, cycle.span))
    if module.name is not None or cycle is not None:
        problems.sort(key=lambda p: p.span.start if p.span is not None else -1)
    return tuple(problems)


def raise_problems(problems: tuple[Problem, ...]) -> None:
    """Raise the first problem as HloSemanticError (noting how many more there are)."""
    if problems:
        error = problems[0].error()
        if len(problems) > 1 and hasattr(error, "add_note"):  # Python 3.11+
            error.add_note(f"{len(problems) - 1} more problem(s) of this kind in the module")
        raise error


def check(module: Module) -> Module:
    """`module` itself when it is well formed; raises the first problem as HloSemanticError."""
    raise_problems(verify(module))
    return module
