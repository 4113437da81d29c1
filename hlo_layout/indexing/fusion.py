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
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hlo_layout.indexing.errors import IndexingError
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import (
    UNKNOWN,
    InstructionIndexing,
    OperandIndexing,
    compose_operand_indexing,
    simplify_operand_indexing,
)
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.syntax import index as syntax_index
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: More distinct maps than this for one operand is treated as unknown: the set is exact but no
#: longer useful, and composing it further is quadratic.
MAX_MAPS_PER_OPERAND = 256


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
    """Mutable state of one composition walk (private; results are returned frozen)."""

    module: Module | None
    session: dict[Any, Any]
    maps: dict[NodeRef, set[OperandIndexing]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The keys of `maps` by (computation, name): a visit finds its keys without a scan.
    keys: dict[tuple[str, str], list[NodeRef]] = field(default_factory=dict)

    def keys_of(self, computation: str, name: str) -> list[NodeRef]:
        return self.keys.get((computation, name), [])

    def add(self, key: NodeRef, indexings: Iterable[OperandIndexing]) -> None:
        slot = self.maps.get(key)
        if slot is None:
            slot = self.maps[key] = set()
            self.keys.setdefault((key.computation, key.name), []).append(key)
        slot.update(indexings)
        if len(slot) > MAX_MAPS_PER_OPERAND:
            self.notes.append(f"{key}: more than {MAX_MAPS_PER_OPERAND} distinct maps")
            slot.clear()
            slot.add(UNKNOWN)

    def compose(self, consumer: OperandIndexing, producer: OperandIndexing) -> OperandIndexing:
        """`producer ∘ consumer`, simplified, unused symbols removed; unknown (with a note) if
        the two do not fit, which a rule's own rank check should already have prevented."""
        try:
            return simplify_operand_indexing(compose_operand_indexing(consumer, producer))
        except IndexingError as e:
            self.note([f"cannot compose: {e}"])
            return UNKNOWN

    def note(self, notes: Iterable[str]) -> None:
        for n in notes:
            if n not in self.notes:
                self.notes.append(n)


def _post_order(computation: Computation, session: dict[Any, Any]) -> list[Instruction]:
    """Every instruction after all of its operands (XLA's `MakeInstructionPostOrder`), from the
    syntax index (cached on the computation)."""
    return syntax_index.post_order(computation)


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
    if user.opcode == "get-tuple-element" and operand.index is None:
        producer = computation.resolve(operand)
        index = user.attr("index")
        if producer is not None and isinstance(producer.shape, TupleShape) and index is not None:
            try:
                return NodeRef(computation.name, operand.name, int(index.raw))
            except ValueError:
                pass
    return NodeRef(computation.name, operand.name, operand.index)


def _visit_output_to_input(walk: _Walk, cluster: Cluster, instruction: Instruction) -> None:
    comp = cluster.computation
    keys = walk.keys_of(comp.name, instruction.name)
    if not keys:
        return
    for key in sorted(keys, key=lambda k: (k.element is not None, k.element or 0)):
        consumers = list(walk.maps[key])
        if instruction.opcode == "parameter" and cluster.caller is not None:
            continue  # a leaf: stands for the caller's operand
        ctx = OpContext(instruction, comp, walk.module, walk.session)
        if instruction.opcode == "get-tuple-element":
            # The element map was keyed on the producer by `_operand_key`; GTE is the identity.
            produced = output_to_input(ctx, 0)
        else:
            produced = output_to_input(ctx, key.element or 0)
        walk.note(produced.notes)
        for k, slot in enumerate(produced.maps):
            target = _operand_key(comp, instruction, k)
            walk.add(target, [walk.compose(c, p) for p in slot for c in consumers])


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
    cluster gives just the identity on `start`.
    """
    walk = _Walk(module, {} if session is None else session)
    comp = cluster.computation
    instruction = comp.get(start)
    if instruction is None:
        raise KeyError(start)
    element = output_id if isinstance(instruction.shape, TupleShape) else None
    seed = _seed(instruction.shape, element)
    if cluster.caller is not None and cluster.contains(start) and instruction.opcode == "parameter":
        outer = _caller_operand(cluster, instruction)
        return GroupedIndexing({outer: frozenset({seed})} if outer else {})
    walk.add(NodeRef(comp.name, start, element), [seed])
    if cluster.contains(start):
        for node in reversed(_post_order(comp, walk.session)):
            if cluster.contains(node.name):
                _visit_output_to_input(walk, cluster, node)
    maps: dict[NodeRef, set[OperandIndexing]] = {}
    for key, value in walk.maps.items():
        if cluster.caller is not None and key.computation == comp.name:
            param = comp.get(key.name)
            if param is not None and param.opcode == "parameter":
                outer = _caller_operand(cluster, param)
                if outer is not None:
                    maps.setdefault(outer, set()).update(value)
                    continue
        maps.setdefault(key, set()).update(value)
    return GroupedIndexing({k: frozenset(v) for k, v in maps.items()}, tuple(walk.notes))


def _caller_operand(cluster: Cluster, parameter: Instruction) -> NodeRef | None:
    if cluster.caller is None or parameter.parameter_number is None:
        return None
    outer_comp, caller = cluster.caller
    if parameter.parameter_number >= len(caller.operands):
        return None
    operand = caller.operands[parameter.parameter_number]
    return NodeRef(outer_comp.name, operand.name, operand.index)


def _roots(computation: Computation) -> Instruction:
    root = computation.root
    if root is None:
        raise ValueError(f"computation '{computation.name}' is empty")
    return root


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
    cache_key = ("computation_o2i", id(computation), output_id)
    cached = session.get(cache_key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    root = _roots(computation)
    cluster = Cluster(computation)
    params = computation.parameter_instructions
    if root.opcode == "parameter":
        seed = _seed(root.shape, None)
        slots = [frozenset({seed}) if p is root else frozenset() for p in params]
        result = InstructionIndexing(tuple(slots))
    else:
        grouped = grouped_output_to_input(module, cluster, root.name, output_id, session=session)
        by_name: dict[str, set[OperandIndexing]] = {}
        for key, value in grouped.maps.items():
            if key.computation == computation.name:
                by_name.setdefault(key.name, set()).update(value)
        slots = [frozenset(by_name.get(p.name, ())) for p in params]
        result = InstructionIndexing(tuple(slots), grouped.notes)
    session[cache_key] = result
    return result


def called_computation(ctx: OpContext) -> Computation:
    """The computation a fusion or call instruction runs."""
    from hlo_layout.indexing.rules.registry import Unsupported

    names = ctx.instruction.called_computations
    if ctx.module is None or not names:
        raise Unsupported("the called computation is not available")
    called = ctx.module.computation(names[0])
    if called is None:
        raise Unsupported(f"computation '{names[0]}' is not in the module")
    if len(called.parameter_instructions) != ctx.num_operands:
        raise Unsupported(f"computation '{called.name}' takes a different number of operands")
    if ("calling", called.name) in ctx.session:
        raise Unsupported(f"computation '{called.name}' calls itself")
    return called


def fusion_output_to_input(ctx: OpContext, output_id: int) -> InstructionIndexing:
    """Output-to-input indexing of a fusion or call: `computation_output_to_input` of the called
    computation, whose parameter k is operand k."""
    called = called_computation(ctx)
    ctx.session[("calling", called.name)] = True
    try:
        return computation_output_to_input(ctx.module, called, output_id, session=ctx.session)
    finally:
        del ctx.session[("calling", called.name)]


# -- input to output --------------------------------------------------------------------------


def _users(computation: Computation, session: dict[Any, Any]) -> dict[str, list[Instruction]]:
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
    user's input-to-output map; an op without one makes that path unknown.
    """
    session = {} if session is None else session
    params = computation.parameter_instructions
    root = _roots(computation)
    outputs = len(root.shape.elements) if isinstance(root.shape, TupleShape) else 1
    if not 0 <= input_id < len(params):
        raise ValueError(f"computation '{computation.name}' has no parameter {input_id}")
    walk = _Walk(module, session)
    param = params[input_id]
    walk.add(NodeRef(computation.name, param.name), [_seed(param.shape, None)])
    users = _users(computation, session)
    for node in _post_order(computation, session):
        keys = list(walk.keys_of(computation.name, node.name))
        for key in keys:
            current = list(walk.maps[key])
            for user in users.get(node.name, ()):
                ctx = OpContext(user, computation, module, session)
                for k, operand in enumerate(user.operands):
                    if operand.name != node.name:
                        continue
                    if user.opcode == "get-tuple-element":
                        index = user.attr("index")
                        if key.element is None or index is None or index.raw != str(key.element):
                            continue
                        walk.add(NodeRef(computation.name, user.name), current)
                        continue
                    if operand.index != key.element:
                        continue
                    produced = input_to_output(ctx, k)
                    walk.note(produced.notes)
                    tuple_result = isinstance(user.shape, TupleShape)
                    for j, slot in enumerate(produced.maps):
                        target = NodeRef(computation.name, user.name, j if tuple_result else None)
                        walk.add(target, [walk.compose(c, p) for p in slot for c in current])
    slots = []
    for j in range(outputs):
        element = j if isinstance(root.shape, TupleShape) else None
        slots.append(frozenset(walk.maps.get(NodeRef(computation.name, root.name, element), ())))
    return InstructionIndexing(tuple(slots), tuple(walk.notes))


def fusion_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Input-to-output indexing of a fusion or call through its computation (not in XLA)."""
    called = called_computation(ctx)
    ctx.session[("calling", called.name)] = True
    try:
        return computation_input_to_output(ctx.module, called, input_id, session=ctx.session)
    finally:
        del ctx.session[("calling", called.name)]


def use_chain(computation: Computation, start: str, end: str) -> list[Instruction]:
    """One path of users from `start` to `end`, both included (XLA's `HloFindUseChain`)."""
    users = _users(computation, {})
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
        slot = produced.maps[k if user.opcode == "tuple" else 0] if produced.maps else frozenset()
        if not slot:
            return UNKNOWN
        step = sorted(slot, key=str)[0]
        current = simplify_operand_indexing(compose_operand_indexing(current, step))
    return current
