"""Indexing through whole computations: fusions, calls, grouped clusters and epilogues.

Mirrors XLA's `ComputeGroupedOutputToInputIndexing`, `ComputeOutputToInputFusionOpIndexing` and
`ComputeEpilogueInputToOutputIndexing` (xla/hlo/analysis/indexing_analysis.cc; indexing.md §(c)).
Starting from the identity on the start instruction, users are visited before producers; each
producer's own output-to-input maps are composed with every map that reached it, simplified,
stripped of unused symbols, and collected in a set per operand, so identical maps reached along
different paths count once.

Beyond XLA: `call` is composed like a fusion; a `get-tuple-element` (or an `x#i` operand) of a
multi-output instruction asks that instruction for output i (XLA always asks for output 0); and
`computation_input_to_output` follows every use path forward, where XLA has no fusion rule.

Cost: a walk visits only the instructions its start reaches (a heap in post-order), and an
analysis may spend at most `step_budget(module)` steps (rule applications and compositions), a
fixed multiple of the module's size; past it, what is left is reported unknown with a note
(`BUDGET_NOTE`), never computed for minutes. Nesting (a fusion in a call in a call ...) is
followed by recursion up to `MAX_NESTED_WALKS` levels, then by an explicit stack of pending
computations, deepest first (`_run`), so a chain of 2,000 nested calls is answered.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hlo_layout.indexing.errors import IndexingError
from hlo_layout.indexing.expr import ExprKind, VarSpace, expr_size
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import (
    NO_MAPS,
    UNKNOWN,
    InstructionIndexing,
    OperandIndexing,
    compose_operand_indexing,
    exact_key,
    simplify_operand_indexing,
)
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.syntax import index as syntax_index
from hlo_layout.syntax.attrs import int_value
from hlo_layout.syntax.opcodes import CALL, FUSION, GET_TUPLE_ELEMENT, PARAMETER, TUPLE
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: More distinct maps than this for one operand is treated as unknown: the set is exact but no
#: longer useful, and composing it further is quadratic.
MAX_MAPS_PER_OPERAND = 256

#: Steps an analysis may spend per instruction of the module, and at least. Applying a rule
#: at an instruction costs VISIT_STEPS plus the size of the maps it built; composing two maps
#: costs one step per expression node of the two (simplification time follows their size:
#: 0.02 ms for 5 nodes, 2.6 ms for 100), or one step when the producer is an elementwise
#: identity (nothing to simplify). A whole-computation walk costs one walk per output over
#: everything that output reads, which for a training step's ENTRY (a thousand outputs, each
#: reading 30,000 instructions) is hours; the budget keeps `indexing --computation` within a
#: small multiple of reading the file (one step is 20-40 µs).
STEPS_PER_INSTRUCTION = 5
MIN_STEPS = 30_000
VISIT_STEPS = 1

#: Nested fusion/call walks followed by plain recursion before the explicit stack takes over.
MAX_NESTED_WALKS = 32

BUDGET_NOTE = (
    "stopped composing: the analysis may spend {steps} steps on a module of {size} "
    "instructions (shared among the outputs); maps not computed are unknown; index a smaller "
    "target (--fusion, --instruction, or --computation of a called computation)"
)

_UNKNOWN_SLOT = frozenset({UNKNOWN})
_BUDGET = "indexing_steps_left"
_BUDGET_SIZE = "indexing_steps_size"
_DEPTH = "indexing_nesting_depth"
_PARTS = "indexing_budget_parts"
_FLOOR = "indexing_budget_floor"
_COMPOSED = "indexing_composed"
_PRODUCED = "indexing_produced"


class BudgetExhausted(Exception):
    """The analysis spent its step budget; each computation walk turns it into unknown maps
    for what its start reaches (never escapes `computation_*_to_*`)."""


class _TooDeep(Exception):
    """A nested walk past MAX_NESTED_WALKS: `task` is run first by the outermost `_run`."""

    def __init__(self, task: _Task) -> None:
        super().__init__(task.key)
        self.task = task


def _module_size(module: Module | None) -> int:
    return 0 if module is None else sum(len(c.instructions) for c in module.computations)


def step_budget(module: Module | None) -> int:
    """Steps one analysis may spend on `module` (STEPS_PER_INSTRUCTION per instruction)."""
    return max(MIN_STEPS, STEPS_PER_INSTRUCTION * _module_size(module))


def _budget_left(session: dict[Any, Any], module: Module | None) -> int:
    left = session.get(_BUDGET)
    if left is None:
        size = _module_size(module)
        session[_BUDGET_SIZE] = (max(MIN_STEPS, STEPS_PER_INSTRUCTION * size), size)
        left = session[_BUDGET] = session[_BUDGET_SIZE][0]
    return left  # type: ignore[no-any-return]


def _spend(session: dict[Any, Any], module: Module | None, steps: int) -> None:
    left = _budget_left(session, module) - steps
    session[_BUDGET] = left
    if left < session.get(_FLOOR, 0):
        raise BudgetExhausted()


def share_budget(session: dict[Any, Any], module: Module | None, parts: int) -> None:
    """Split what is left of the step budget over the next `parts` whole-computation walks
    (e.g. one per output of the target): each may spend its share plus what the walks before it
    left unspent, so a few expensive outputs cannot leave the cheap ones unknown."""
    _budget_left(session, module)
    session[_PARTS] = max(1, parts)


def _budget_note(session: dict[Any, Any], module: Module | None) -> str:
    steps, size = session.get(_BUDGET_SIZE) or (step_budget(module), _module_size(module))
    return BUDGET_NOTE.format(steps=steps, size=size)


@dataclass(slots=True)
class _Facts:
    """What walks of one computation look up again and again (cached per session)."""

    order: list[Instruction]
    position: dict[str, int]
    root: Instruction | None
    params: tuple[Instruction, ...]
    #: Per post-order position, a bit set of the parameters (slot k = bit k) it reads; built
    #: only when the budget runs out.
    reach: list[int] | None = None
    _slots: dict[str, int] | None = None

    def slot_of(self) -> dict[str, int]:
        """Parameter name → its slot (parameter number order)."""
        if self._slots is None:
            self._slots = {p.name: k for k, p in enumerate(self.params)}
        return self._slots

    def reads(self, name: str, element: int | None) -> int:
        """The parameters instruction `name` (element `element` of a tuple) reads, as bits."""
        if self.reach is None:
            self.reach = _reach(self)
        at = self.position.get(name)
        if at is None:
            return 0
        node = self.order[at]
        if node.opcode == TUPLE and element is not None and element < len(node.operands):
            inner = self.position.get(node.operands[element].name)
            return 0 if inner is None else self.reach[inner]
        return self.reach[at]


def _reach(facts: _Facts) -> list[int]:
    slot = facts.slot_of()
    reach: list[int] = []
    position = facts.position
    for node in facts.order:
        bits = 1 << slot[node.name] if node.opcode == PARAMETER and node.name in slot else 0
        for operand in node.operands:
            at = position.get(operand.name)
            if at is not None and at < len(reach):
                bits |= reach[at]
        reach.append(bits)
    return reach


def _facts(computation: Computation, session: dict[Any, Any]) -> _Facts:
    key = ("facts", id(computation))
    found = session.get(key)
    if found is None:
        order = syntax_index.post_order(computation)
        found = session[key] = _Facts(
            order,
            {node.name: k for k, node in enumerate(order)},
            computation.root,
            computation.parameter_instructions,
        )
    return found  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True, order=True)
class NodeRef:
    """An instruction of a computation, or one element of its tuple result (`element`)."""

    computation: str
    name: str
    element: int | None = None

    def __str__(self) -> str:
        return self.name if self.element is None else f"{self.name}#{self.element}"


@dataclass(frozen=True, slots=True)
class Cluster:
    """The instructions walked together (XLA's `HloFusionAdaptor`).

    `members` None means every instruction of `computation`. With a `caller` (a fusion or call
    instruction and its computation), the computation's parameters stand for the caller's
    operands.
    """

    computation: Computation
    members: frozenset[str] | None = None
    caller: tuple[Computation, Instruction] | None = None

    def contains(self, name: str) -> bool:
        return name in self.computation and (self.members is None or name in self.members)


@dataclass(frozen=True, slots=True)
class GroupedIndexing:
    """Maps from the start instruction to every instruction reached, and why some are unknown."""

    maps: dict[NodeRef, frozenset[OperandIndexing]]
    notes: tuple[str, ...] = ()


@dataclass
class _Walk:
    """Mutable state of one composition walk (private; results are returned frozen).

    Instructions of `computation` that get their first map are queued on `heap` by post-order
    position (negated for output-to-input walks, which run users before producers), so a walk
    visits only what its start reaches."""

    module: Module | None
    session: dict[Any, Any]
    maps: dict[NodeRef, set[OperandIndexing]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The keys of `maps` by (computation, name): a visit finds its keys without a scan.
    keys: dict[tuple[str, str], list[NodeRef]] = field(default_factory=dict)
    computation: str | None = None
    position: dict[str, int] = field(default_factory=dict)
    heap: list[int] = field(default_factory=list)
    #: -1 for output-to-input walks (highest position first), 1 for input-to-output.
    sign: int = -1
    #: Which names may be queued (None: every instruction of `computation`).
    members: Callable[[str], bool] | None = None
    #: (tuple, user) pairs already made unknown by `_whole_tuple_read`.
    whole_reads: set[tuple[str, str]] = field(default_factory=set)

    def keys_of(self, computation: str, name: str) -> list[NodeRef]:
        return self.keys.get((computation, name), [])

    def add(self, key: NodeRef, indexings: Iterable[OperandIndexing]) -> None:
        slot = self.maps.get(key)
        if slot is None:
            found = set(indexings)
            if not found:
                return  # nothing reaches it along this path: no key, no visit
            slot = self.maps[key] = found
            same = self.keys.setdefault((key.computation, key.name), [])
            same.append(key)
            if len(same) == 1 and key.computation == self.computation:
                at = self.position.get(key.name)
                if at is not None and (self.members is None or self.members(key.name)):
                    heapq.heappush(self.heap, self.sign * at)
        else:
            slot.update(indexings)
        if len(slot) > MAX_MAPS_PER_OPERAND:
            self.notes.append(f"{key}: more than {MAX_MAPS_PER_OPERAND} distinct maps")
            slot.clear()
            slot.add(UNKNOWN)

    def pending(self) -> Iterable[int]:
        """Post-order positions of queued instructions, in walk order, each once."""
        heap, sign = self.heap, self.sign
        while heap:
            yield sign * heapq.heappop(heap)

    def compose(self, consumer: OperandIndexing, producer: OperandIndexing) -> OperandIndexing:
        """`producer ∘ consumer`, simplified, unused symbols removed; unknown (with a note) if
        the two do not fit, which a rule's own rank check should already have prevented."""
        if consumer.is_undefined or producer.is_undefined:
            return UNKNOWN
        if _is_plain_identity(producer) and _fits(consumer, producer):
            _spend(self.session, self.module, 1)
            return consumer
        _spend(self.session, self.module, 1 + _size(consumer) + _size(producer))
        # The same pair recurs (a layer's fusions read alike; one producer meets every consumer
        # that reached it): compose and simplify each exact pair once per session. The budget
        # is spent above all the same, so what is unknown does not depend on the memo.
        memo = self.session.get(_COMPOSED)
        if memo is None:
            memo = self.session[_COMPOSED] = {}
        key = (exact_key(consumer), exact_key(producer))
        found = memo.get(key)
        if found is None:
            try:
                found = simplify_operand_indexing(compose_operand_indexing(consumer, producer))
            except IndexingError as e:
                found = f"cannot compose: {e}"
            memo[key] = found
        if isinstance(found, str):
            self.note([found])
            return UNKNOWN
        return found

    def note(self, notes: Iterable[str]) -> None:
        for n in notes:
            if n not in self.notes:
                self.notes.append(n)


def _rule_output_to_input(
    session: dict[Any, Any], ctx: OpContext, output: int
) -> tuple[InstructionIndexing, int]:
    """`output_to_input(ctx, output)` and its `_visit_steps`, once per instruction and output in
    a session: every output of a whole-computation walk visits what it reads, so the instructions
    shared among outputs are asked again and again. A rule depends only on its instruction and
    module; fusion and call, which walk their computation (cached per session already) and refuse
    a computation that calls itself, are asked each time."""
    if ctx.instruction.opcode in (FUSION, CALL):
        produced = output_to_input(ctx, output)
        return produced, _visit_steps(produced)
    memo = session.get(_PRODUCED)
    if memo is None:
        memo = session[_PRODUCED] = {}
    key = (id(ctx.instruction), output)
    found = memo.get(key)
    if found is None or found[0] is not ctx.instruction:
        produced = output_to_input(ctx, output)
        found = memo[key] = (ctx.instruction, produced, _visit_steps(produced))
    return found[1], found[2]


def _visit_steps(produced: InstructionIndexing) -> int:
    """What applying a rule cost: VISIT_STEPS plus the size of the maps it built (a bitcast
    between tiled layouts builds large ones)."""
    return VISIT_STEPS + sum(_size(oi) for _, slot in produced.nonempty() for oi in slot)


def _size(oi: OperandIndexing) -> int:
    """Expression nodes of a map's results and constraints (and its runtime variables' maps):
    what composing and simplifying it costs, in budget steps."""
    maps = [oi.map, *(rv.map for rv in oi.rt_vars)]
    count = 0
    for m in maps:
        for e in m.results:
            count += expr_size(e)
        for e, _ in m.constraints:
            count += expr_size(e)
    return count


def _is_plain_identity(oi: OperandIndexing) -> bool:
    """`(d0, ..., dn) -> (d0, ..., dn)` over a box from 0, nothing else (an elementwise read)."""
    m = oi.map
    if oi.rt_vars or oi.replica_id is not None or m.range_vars or m.rt_vars or m.constraints:
        return False
    if len(m.results) != len(m.dims):
        return False
    for k, r in enumerate(m.results):
        if r.kind is not ExprKind.VAR or r.space is not VarSpace.DIM or r.value != k:
            return False
        if m.dims[k].bounds.lo != 0:
            return False
    return True


def _fits(consumer: OperandIndexing, identity: OperandIndexing) -> bool:
    """Whether every result of the consumer map is a variable (over more than one point) or a
    constant already inside the identity's box, so composing adds nothing: the composition would
    only add always-true constraints, which simplification removes. Checked against the full
    composition over the corpus (tests/indexing/test_walk_cost.py)."""
    m = consumer.map
    if m.is_known_empty or len(m.results) != len(identity.map.dims):
        return False
    for r, box in zip(m.results, identity.map.dims):
        bounds = box.bounds
        if r.kind is ExprKind.CONST:
            value = r.value
            if not bounds.lo <= value <= bounds.hi:
                return False
        elif r.kind is ExprKind.VAR:
            var_range = m.var_bound(r)
            # A variable over one point is a constant to the simplifier (and a seed's identity
            # is not simplified yet): let the composition do that rewrite.
            if not bounds.lo <= var_range.lo < var_range.hi <= bounds.hi:
                return False
        else:
            return False
    return True


def _shape_element(shape: Shape, element: int | None) -> Shape:
    if element is not None and isinstance(shape, TupleShape) and element < len(shape.elements):
        return shape.elements[element]
    return shape


def _seed(shape: Shape, element: int | None) -> OperandIndexing:
    """The identity over an instruction's shape (XLA's `CreateIdentityMap`: a tuple uses its
    first element unless an element is named)."""
    shape = _shape_element(shape, element)
    if isinstance(shape, TupleShape) and shape.elements:
        shape = shape.elements[0]
    if not isinstance(shape, ArrayShape):
        return UNKNOWN
    return OperandIndexing(IndexingMap.identity(shape.dims))


def _operand_key(computation: Computation, user: Instruction, k: int) -> NodeRef:
    """Where operand k of `user` points; a get-tuple-element of a tuple-shaped producer points at
    that producer's element, so the producer is asked for the right output."""
    operand = user.operands[k]
    if user.opcode == GET_TUPLE_ELEMENT and operand.index is None:
        producer = computation.resolve(operand)
        index = user.attr("index")
        if (
            producer is not None
            and isinstance(producer.shape, TupleShape)
            and index is not None
            and index.raw.strip().isdecimal()
        ):
            return NodeRef(computation.name, operand.name, int_value(index))
    return NodeRef(computation.name, operand.name, operand.index)


def _visit_output_to_input(walk: _Walk, cluster: Cluster, instruction: Instruction) -> None:
    comp = cluster.computation
    keys = walk.keys_of(comp.name, instruction.name)
    if not keys or (instruction.opcode == PARAMETER and cluster.caller is not None):
        return  # a parameter is a leaf: it stands for the caller's operand
    for key in sorted(keys, key=lambda k: (k.element is not None, k.element or 0)):
        consumers = list(walk.maps[key])
        ctx = OpContext(instruction, comp, walk.module, walk.session)
        # A get-tuple-element's element map was keyed on the producer by `_operand_key`; the
        # GTE itself is the identity.
        output = 0 if instruction.opcode == GET_TUPLE_ELEMENT else key.element or 0
        produced, steps = _rule_output_to_input(walk.session, ctx, output)
        _spend(walk.session, walk.module, steps)
        walk.note(produced.notes)
        for k, slot in produced.nonempty():
            target = _operand_key(comp, instruction, k)
            walk.add(target, [walk.compose(c, p) for p in slot for c in consumers])
        if key.element is None and UNKNOWN in walk.maps[key]:
            _whole_tuple_unknown(walk, ctx, output)


def _whole_tuple_unknown(walk: _Walk, ctx: OpContext, asked: int) -> None:
    """An unknown read of a whole tuple-shaped value (a `while` reading its init tuple) reads
    every element, not just the one a tuple's identity stands for (element 0, XLA's
    `CreateIdentityMap`): what the other outputs read is unknown too, never "not read"."""
    shape = ctx.instruction.shape
    if not isinstance(shape, TupleShape) or ctx.opcode == GET_TUPLE_ELEMENT:
        return
    for j in range(len(shape.elements)):
        if j == asked:
            continue
        produced = output_to_input(ctx, j)
        _spend(walk.session, walk.module, VISIT_STEPS)
        walk.note(produced.notes)
        for k, _ in produced.nonempty():
            walk.add(_operand_key(ctx.computation, ctx.instruction, k), [UNKNOWN])


def grouped_output_to_input(
    module: Module | None,
    cluster: Cluster,
    start: str,
    output_id: int = 0,
    *,
    session: dict[Any, Any] | None = None,
) -> GroupedIndexing:
    """Maps from `start`'s output index to every instruction it reads, inside `cluster`.

    XLA's `ComputeGroupedOutputToInputIndexing`: keys are the instructions reached (those outside
    the cluster are leaves); with a caller, parameters are reported as the caller's operands.
    Starting at a parameter gives just the identity on the caller's operand; starting outside the
    cluster gives just the identity on `start`. Past the step budget, the parameters `start`
    reads get unknown maps and a note (BUDGET_NOTE).
    """
    session = {} if session is None else session
    comp = cluster.computation
    facts = _facts(comp, session)
    walk = _Walk(module, session, computation=comp.name, position=facts.position)
    if cluster.members is not None:
        walk.members = cluster.contains
    instruction = comp.get(start)
    if instruction is None:
        raise KeyError(start)
    element = output_id if isinstance(instruction.shape, TupleShape) else None
    seed = _seed(instruction.shape, element)
    if cluster.caller is not None and cluster.contains(start) and instruction.opcode == PARAMETER:
        outer = _caller_operand(cluster, instruction)
        return GroupedIndexing({outer: frozenset({seed})} if outer else {})
    if not cluster.contains(start):
        walk.members = _nothing
    walk.add(NodeRef(comp.name, start, element), [seed])
    order = facts.order
    try:
        for at in walk.pending():
            _visit_output_to_input(walk, cluster, order[at])
    except BudgetExhausted:
        walk.maps = {}
        reads = facts.reads(start, element)
        params = facts.params
        while reads:  # the set bits, lowest first (an ENTRY has thousands of parameters)
            low = reads & -reads
            reads ^= low
            k = low.bit_length() - 1
            if k >= len(params):
                break
            walk.maps[NodeRef(comp.name, params[k].name)] = {UNKNOWN}
        walk.note([_budget_note(session, module)])
    if cluster.caller is None:  # keys are unique: nothing to merge
        frozen = {k: frozenset(v) for k, v in walk.maps.items()}
        return GroupedIndexing(frozen, tuple(walk.notes))
    maps: dict[NodeRef, set[OperandIndexing]] = {}
    for key, value in walk.maps.items():
        if cluster.caller is not None and key.computation == comp.name:
            param = comp.get(key.name)
            if param is not None and param.opcode == PARAMETER:
                outer = _caller_operand(cluster, param)
                if outer is not None:
                    maps.setdefault(outer, set()).update(value)
                    continue
        maps.setdefault(key, set()).update(value)
    return GroupedIndexing({k: frozenset(v) for k, v in maps.items()}, tuple(walk.notes))


def _nothing(name: str) -> bool:
    return False


def _caller_operand(cluster: Cluster, parameter: Instruction) -> NodeRef | None:
    if cluster.caller is None or parameter.parameter_number is None:
        return None
    outer_comp, caller = cluster.caller
    if parameter.parameter_number >= len(caller.operands):
        return None
    operand = caller.operands[parameter.parameter_number]
    return NodeRef(outer_comp.name, operand.name, operand.index)


def _root(facts: _Facts, computation: Computation) -> Instruction:
    if facts.root is None:
        raise ValueError(f"computation '{computation.name}' is empty")
    return facts.root


# -- nesting: recursion up to MAX_NESTED_WALKS, then an explicit stack -----------------------


@dataclass(frozen=True, slots=True)
class _Task:
    """One whole-computation walk (`computation_output_to_input` or `..._input_to_output`)."""

    direction: str
    module: Module | None
    computation: Computation
    index: int

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.direction, id(self.computation), self.index)

    def compute(self, session: dict[Any, Any]) -> InstructionIndexing:
        if self.direction == "o2i":
            return _output_to_input(self.module, self.computation, self.index, session)
        return _input_to_output(self.module, self.computation, self.index, session)


def _run(task: _Task, session: dict[Any, Any]) -> InstructionIndexing:
    """The task's result, computed once per session.

    Nested walks (a fusion inside the walked computation asks for its own computation's maps)
    recurse; past MAX_NESTED_WALKS levels the nested walk raises `_TooDeep`, which unwinds to the
    outermost `_run`: that one runs the deep task first, then retries the one it interrupted, whose
    nested walks now find the deep result cached. Depth is the user's (2,000 nested calls); the
    Python stack stays under MAX_NESTED_WALKS levels, the work stays linear (each level is walked
    at most twice).
    """
    cached = session.get(task.key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    depth = session.get(_DEPTH, 0)
    if depth >= MAX_NESTED_WALKS:
        raise _TooDeep(task)
    if depth > 0:
        session[_DEPTH] = depth + 1
        try:
            result = session[task.key] = task.compute(session)
        finally:
            session[_DEPTH] = depth
        return result
    parts = session.get(_PARTS)
    if parts:
        left = _budget_left(session, task.module)
        session[_FLOOR] = left - left // parts
        session[_PARTS] = parts - 1
    stack = [task]
    while stack:
        top = stack[-1]
        if top.key in session:
            stack.pop()
            continue
        session[_DEPTH] = 1
        try:
            session[top.key] = top.compute(session)
            stack.pop()
        except _TooDeep as deeper:
            # Never a task already on the stack: a call cycle stops at `called_computation`.
            stack.append(deeper.task)
        finally:
            session[_DEPTH] = 0
    return session[task.key]  # type: ignore[no-any-return]


def computation_output_to_input(
    module: Module | None,
    computation: Computation,
    output_id: int = 0,
    *,
    session: dict[Any, Any] | None = None,
) -> InstructionIndexing:
    """Per parameter of `computation`, the maps from its result `output_id` (a tuple root's
    element) to that parameter: a fusion's output-to-input indexing (XLA's
    `ComputeOutputToInputFusionOpIndexing`), slot k being parameter k, i.e. operand k of the
    fusion. A parameter the output never reads gets an empty set.
    """
    session = {} if session is None else session
    return _run(_Task("o2i", module, computation, output_id), session)


def _output_to_input(
    module: Module | None, computation: Computation, output_id: int, session: dict[Any, Any]
) -> InstructionIndexing:
    facts = _facts(computation, session)
    root = _root(facts, computation)
    params = facts.params
    if root.opcode == PARAMETER:
        seed = _seed(root.shape, None)
        slots = [frozenset({seed}) if p is root else NO_MAPS for p in params]
        return InstructionIndexing(tuple(slots))
    cluster = Cluster(computation)
    grouped = grouped_output_to_input(module, cluster, root.name, output_id, session=session)
    by_name: dict[str, frozenset[OperandIndexing]] = {}
    name = computation.name
    for key, value in grouped.maps.items():
        if key.computation == name:
            before = by_name.get(key.name)
            by_name[key.name] = value if before is None else before | value
    slots = [NO_MAPS] * len(params)
    slot_of = facts.slot_of()
    for name, found in by_name.items():
        k = slot_of.get(name)
        if k is not None:
            slots[k] = found
    return InstructionIndexing(tuple(slots), grouped.notes)


def called_computation(ctx: OpContext) -> Computation:
    """The computation a fusion or call instruction runs."""
    from hlo_layout.indexing.rules.registry import Unsupported

    names = ctx.instruction.called_computations
    if ctx.module is None or not names:
        raise Unsupported("the called computation is not available")
    called = ctx.module.computation(names[0])
    if called is None:
        raise Unsupported(f"computation '{names[0]}' is not in the module")
    if len(_facts(called, ctx.session).params) != ctx.num_operands:
        raise Unsupported(f"computation '{called.name}' takes a different number of operands")
    cycle = syntax_index.call_cycle(ctx.module)
    if cycle is not None:  # the one call-graph walk found one (the verifier refuses it)
        raise Unsupported(cycle.message)
    return called


def called_parameters(ctx: OpContext) -> tuple[Instruction, ...]:
    """The parameters of the computation a fusion or call runs, by number (cached)."""
    return _facts(called_computation(ctx), ctx.session).params


def fusion_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Output-to-input indexing of a fusion or call: `computation_output_to_input` of the called
    computation, whose parameter k is operand k."""
    called = called_computation(ctx)
    return computation_output_to_input(ctx.module, called, output_id, session=ctx.session)


# -- input to output --------------------------------------------------------------------------


def _users(computation: Computation) -> dict[str, list[Instruction]]:
    return syntax_index.users(computation)  # from the syntax index (cached on the computation)


def computation_input_to_output(
    module: Module | None,
    computation: Computation,
    input_id: int,
    *,
    session: dict[Any, Any] | None = None,
) -> InstructionIndexing:
    """Per output of `computation` (a tuple root's elements), the maps from parameter
    `input_id`'s index to that output's index, along every use path.

    The all-paths form of XLA's `ComputeEpilogueInputToOutputIndexing`: each step composes the
    user's input-to-output map; an op without one makes that path unknown. Past the step budget,
    the outputs that read the parameter get unknown maps and a note (BUDGET_NOTE).
    """
    session = {} if session is None else session
    params = _facts(computation, session).params
    if not 0 <= input_id < len(params):
        raise ValueError(f"computation '{computation.name}' has no parameter {input_id}")
    return _run(_Task("i2o", module, computation, input_id), session)


def _input_to_output(
    module: Module | None, computation: Computation, input_id: int, session: dict[Any, Any]
) -> InstructionIndexing:
    facts = _facts(computation, session)
    root = _root(facts, computation)
    tuple_root = isinstance(root.shape, TupleShape)
    outputs = len(root.shape.elements) if isinstance(root.shape, TupleShape) else 1
    walk = _Walk(module, session, computation=computation.name, position=facts.position, sign=1)
    param = facts.params[input_id]
    walk.add(NodeRef(computation.name, param.name), [_seed(param.shape, None)])
    users = _users(computation)
    order = facts.order
    try:
        for at in walk.pending():
            node = order[at]
            for key in list(walk.keys_of(computation.name, node.name)):
                _visit_input_to_output(walk, computation, node, key, users.get(node.name, ()))
    except BudgetExhausted:
        slots = []
        for j in range(outputs):
            reads = facts.reads(root.name, j if tuple_root else None)
            slots.append(_UNKNOWN_SLOT if reads >> input_id & 1 else NO_MAPS)
        return InstructionIndexing(tuple(slots), (_budget_note(session, module),))
    slots = [NO_MAPS] * outputs
    for key in walk.keys_of(computation.name, root.name):
        out = key.element if tuple_root else 0
        if out is not None and 0 <= out < outputs:
            slots[out] = frozenset(walk.maps[key])
    return InstructionIndexing(tuple(slots), tuple(walk.notes))


def _visit_input_to_output(
    walk: _Walk,
    computation: Computation,
    node: Instruction,
    key: NodeRef,
    users: Iterable[Instruction],
) -> None:
    """Carry the maps that reached `key` (an instruction or one element of its tuple result)
    through each user's input-to-output rule."""
    current = list(walk.maps[key])
    module, session = walk.module, walk.session
    for user in users:
        ctx = OpContext(user, computation, module, session)
        for k, operand in enumerate(user.operands):
            if operand.name != node.name:
                continue
            if user.opcode == GET_TUPLE_ELEMENT:
                index = user.attr("index")
                if key.element is None or index is None or index.raw != str(key.element):
                    continue
                walk.add(NodeRef(computation.name, user.name), current)
                continue
            if operand.index != key.element:
                if operand.index is None and key.element is not None:
                    _whole_tuple_read(walk, computation, node, user)
                continue
            produced = input_to_output(ctx, k)
            _spend(session, module, _visit_steps(produced))
            walk.note(produced.notes)
            tuple_result = isinstance(user.shape, TupleShape)
            for j, slot in produced.nonempty():
                target = NodeRef(computation.name, user.name, j if tuple_result else None)
                walk.add(target, [walk.compose(c, p) for p in slot for c in current])


def _whole_tuple_read(
    walk: _Walk, computation: Computation, node: Instruction, user: Instruction
) -> None:
    """`user` reads all of tuple `node`, one element of which carries maps: rules index arrays,
    so what the element reaches through `user` is unknown (never dropped)."""
    if (node.name, user.name) in walk.whole_reads:
        return
    walk.whole_reads.add((node.name, user.name))
    walk.note([f"{user.opcode} '{user.name}' reads all of tuple '{node.name}': unknown"])
    shape = user.shape
    if isinstance(shape, TupleShape):
        for j in range(len(shape.elements)):
            walk.add(NodeRef(computation.name, user.name, j), [UNKNOWN])
    else:
        walk.add(NodeRef(computation.name, user.name), [UNKNOWN])


def fusion_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Input-to-output indexing of a fusion or call through its computation (not in XLA)."""
    called = called_computation(ctx)
    return computation_input_to_output(ctx.module, called, input_id, session=ctx.session)


def use_chain(computation: Computation, start: str, end: str) -> list[Instruction]:
    """One path of users from `start` to `end`, both included (XLA's `HloFindUseChain`)."""
    users = _users(computation)
    first = computation.get(start)
    if first is None:
        return []
    path = [first]
    seen: set[str] = set()

    def search(node: Instruction) -> bool:
        if node.name == end:
            return True
        seen.add(node.name)
        for user in users.get(node.name, ()):
            if user.name in seen:
                continue
            path.append(user)
            if search(user):
                return True
            path.pop()
        return False

    return path if search(first) else []


def epilogue_input_to_output(
    module: Module | None, computation: Computation, hero: str, root: str
) -> OperandIndexing:
    """Input-to-output map from `hero` to `root` along one use chain, simplified at each step
    (XLA's `ComputeEpilogueInputToOutputIndexing`). `t -> bitcast -> log` with `t` a transposed
    `[1000, 1000]{0,1}` gives `(d0, d1) -> (d1 * 1000 + d0)`."""
    chain = use_chain(computation, hero, root)
    if not chain:
        raise ValueError(f"no use chain from '{hero}' to '{root}'")
    current = _seed(chain[0].shape, None)
    session: dict[Any, Any] = {}
    for producer, user in itertools.pairwise(chain):
        k = next(i for i, o in enumerate(user.operands) if o.name == producer.name)
        produced = input_to_output(OpContext(user, computation, module, session), k)
        slot = produced.maps[k if user.opcode == TUPLE else 0] if produced.maps else frozenset()
        if not slot:
            return UNKNOWN
        step = sorted(slot, key=str)[0]
        current = simplify_operand_indexing(compose_operand_indexing(current, step))
    return current
