"""HloCostAnalysis on our syntax tree: flops, transcendentals and bytes accessed per instruction,
fusion, computation and module, in XLA's convention (xla/service/hlo_cost_analysis.cc).

XLA's convention: a module's properties are the sum over the ENTRY computation's instructions; a
while, call, conditional or async-start takes its called computations' summed properties (a while
loop's body counted once, whatever its trip count), a fusion its body's flops with bytes at its
boundary (fusion.py), a reduce or map its applied computation times its count. The module sum
equals jaxlib's `hlo_module_cost_analysis` (CPU client) key by key.

Deviation: each computation is costed once and its sum reused at every call site (XLA re-visits
a computation per call site and gets the same numbers); computations are visited callees first,
so no input can make us recurse deeply or repeat work.

>>> from hlo_layout.syntax import parse
>>> m = parse('''HloModule m
... ENTRY e {
...   a = f32[8,16]{1,0} parameter(0)
...   b = f32[16,4]{1,0} parameter(1)
...   ROOT d = f32[8,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
... }''')
>>> p = HloCostAnalysis(m).properties()
>>> p["flops"], p["bytes accessed"], p["bytes accessed0{}"], p["bytes accessedout{}"]
(1024, 896, 512, 128)
"""

from __future__ import annotations

import functools

from hlo_layout.cost import fusion as _fusion
from hlo_layout.cost import handlers as _handlers
from hlo_layout.cost.properties import (
    BYTES_ACCESSED,
    OPTIMAL_SECONDS,
    OUTPUT_BYTES,
    Properties,
    accumulate,
    operand_bytes_key,
    operand_utilization_key,
)
from hlo_layout.cost.registry import RULES, CostError, Node, SyntheticGte, Visit, elements
from hlo_layout.cost.sizes import ShapeSize, xla_shape_size
from hlo_layout.syntax import index
from hlo_layout.syntax.opcodes import (
    ADD_DEPENDENCY,
    AFTER_ALL,
    ASYNC_STARTS,
    CALL,
    CONDITIONAL,
    CONSTANT,
    CUSTOM_CALL,
    DOMAIN,
    GET_TUPLE_ELEMENT,
    PARAMETER,
    WHILE,
)
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.shape_inference import XLA_SHAPED_OPCODES, xla_shape
from hlo_layout.syntax.tree import Computation, Instruction, Module, Operand

#: Opcodes whose handler clears `current_should_compute_bottleneck_time_`, so that the optimal
#: seconds they set (or take from a subcomputation: -1 per custom-call) are summed as they are.
KEEPS_OPTIMAL_SECONDS = frozenset(
    {
        PARAMETER, CONSTANT, GET_TUPLE_ELEMENT, DOMAIN, AFTER_ALL, ADD_DEPENDENCY,
        CALL, CUSTOM_CALL, WHILE, CONDITIONAL,
    }
)  # fmt: skip


class ComputationView:
    """One computation as XLA's visitor sees it: every node (instructions and the get-tuple-
    elements XLA synthesizes for `%x#1` operands), operands resolved, users, parameters."""

    __slots__ = (
        "_by_name",
        "_constants",
        "_shapes",
        "_signatures",
        "_synthetic",
        "_users",
        "computation",
        "nodes",
        "parameters",
        "root",
    )

    def __init__(self, computation: Computation) -> None:
        self.computation = computation
        by_name = computation._by_name
        self._by_name = by_name
        synthetic: dict[str, SyntheticGte] = {}
        for instruction in computation.instructions:
            for operand in instruction.operands:
                if operand.index is not None and operand.ref not in synthetic:
                    synthetic[operand.ref] = _synthesize(operand, by_name.get(operand.name))
        self._synthetic = synthetic
        self.nodes: tuple[Node, ...] = (*computation.instructions, *synthetic.values())
        self.root: Node | None = computation.root
        params: dict[int, Instruction] = {}
        for instruction in computation.instructions:
            if instruction.opcode == PARAMETER and instruction.parameter_number is not None:
                params.setdefault(instruction.parameter_number, instruction)
        count = max(params) + 1 if params else 0
        self.parameters: tuple[Instruction | None, ...] = tuple(params.get(i) for i in range(count))
        self._users: dict[str, list[Node]] | None = None
        self._shapes: dict[str, Shape] = {}
        for instruction in computation.instructions:
            if instruction.opcode in XLA_SHAPED_OPCODES and _reshaped(instruction):
                self._shapes[instruction.name] = xla_shape(
                    instruction, functools.partial(self._raw_operand_shape, instruction)
                )
        self._constants: list[Node] | None = None
        self._signatures: list[tuple[Shape, tuple[Shape, ...]]] | None = None

    def signatures(self) -> list[tuple[Shape, tuple[Shape, ...]]]:
        """Per node, in order: its shape and its operands' shapes (as XLA sets them); made once,
        shared by the analyses of the module."""
        found = self._signatures
        if found is not None:
            return found
        if self._shapes or self._synthetic:
            shape, operand_shape = self.shape, self.operand_shape
            found = [
                (shape(n), tuple(operand_shape(n, k) for k in range(len(n.operands))))
                for n in self.nodes
            ]
        else:  # the common case, without the lookups that can only matter otherwise
            get = self._by_name.get
            found = []
            append = found.append
            for n in self.nodes:
                operands = []
                for k, o in enumerate(n.operands):
                    producer = get(o.name)
                    operands.append(
                        producer.shape if producer is not None else self.operand_shape(n, k)
                    )
                append((n.shape, tuple(operands)))
        self._signatures = found
        return found

    def large_constants(self) -> list[Node]:
        """The constants of more than one element (a fusion reads them from memory)."""
        found = self._constants
        if found is None:
            found = self._constants = [
                n for n in self.nodes if n.opcode == CONSTANT and elements(n.shape) > 1
            ]
        return found

    def shape(self, node: Node) -> Shape:
        """The node's shape as XLA's parser sets it: the text's, except for the opcodes whose
        shape XLA works out itself (shape_inference.xla_shape: send, recv and their dones,
        outfeed, after-all, add-dependency, a constant's literal)."""
        shapes = self._shapes
        return shapes[node.name] if shapes and node.name in shapes else node.shape

    def _raw_operand_shape(self, node: Node, k: int) -> Shape | None:
        if k >= len(node.operands):
            return None
        found = self.node(node.operands[k])
        return found.shape if found is not None else node.operands[k].shape

    def node(self, operand: Operand) -> Node | None:
        if operand.index is None:
            return self._by_name.get(operand.name)
        return self._synthetic.get(operand.ref)

    def operand_node(self, node: Node, k: int) -> Node:
        found = self.node(node.operands[k])
        if found is None:
            raise CostError(
                f"'{node.name}': operand {k} ('{node.operands[k].ref}') is not defined in "
                f"computation '{self.computation.name}'",
                node.span,
            )
        return found

    def operand_shape(self, node: Node, k: int) -> Shape:
        operand = node.operands[k]
        found = self.node(operand)
        if found is not None:
            return self.shape(found)
        if operand.shape is not None:
            return operand.shape
        return self.operand_node(node, k).shape  # raises

    def users(self, name: str) -> list[Node]:
        """HloInstruction::users of node `name` (`x`, or `x#1` for a synthesized GTE): each user
        once, in text order."""
        users = self._users
        if users is None:
            if not self._synthetic:
                # No `%x#1` operands: the computation's own (cached) users index is XLA's.
                users = index.users(self.computation)  # type: ignore[assignment]
            else:
                users = {}
                for node in self.nodes:
                    for operand in node.operands:
                        found = users.setdefault(operand.ref, [])
                        if not found or found[-1] is not node:
                            found.append(node)
            self._users = users
        assert users is not None
        return users.get(name, [])


def _reshaped(instruction: Instruction) -> bool:
    """Whether XLA's parser gives `instruction` a shape of its own making (only a constant
    with `E(n)` among the constants: its literal's shape drops it)."""
    if instruction.opcode != CONSTANT:
        return True
    shape = instruction.shape
    return isinstance(shape, ArrayShape) and bool(
        shape.layout is not None and shape.layout.element_size_bits
    )


def _synthesize(operand: Operand, producer: Instruction | None) -> SyntheticGte:
    shape: Shape | None = None
    if producer is not None and isinstance(producer.shape, TupleShape):
        elements = producer.shape.elements
        if operand.index is not None and 0 <= operand.index < len(elements):
            shape = elements[operand.index]
    if shape is None:
        shape = operand.shape if operand.shape is not None else TupleShape(())
    return SyntheticGte(operand.ref, shape, (Operand(operand.name),), operand.index or 0)


def callees_first(module: Module, entry: Computation) -> list[tuple[Computation, bool]]:
    """The computations reachable from `entry`, each after every computation it calls (the one
    call-graph walk, `index.walk_calls`), with whether it runs as code of its own (entry, or
    called only by while, conditional, call and async-start from code that does:
    `index.computation_kinds`' `global`; its instructions are reported one by one). Raises
    CostError at the call closing a cycle (the walk's message) or calling an unknown computation."""
    by_name = {c.name: c for c in module.computations}
    edges = index.calls(module)

    def unknown(caller: Instruction, name: str) -> None:
        raise CostError(f"'{caller.name}' calls unknown computation '{name}'", caller.span)

    found = index.walk_calls([entry.name], edges, by_name, unknown)
    if not isinstance(found, list):
        cycle = index.cycle_error(*found)
        raise CostError(cycle.message, cycle.span)
    if entry is module.entry:
        kinds = index.computation_kinds(module)
    else:
        calling = {c: [(i.opcode, names) for i, names in sites] for c, sites in edges.items()}
        kinds = index.kinds_of_calls(entry.name, calling, by_name)
    return [(by_name[name], kinds.get(name) == "global") for name in found]


class HloCostAnalysis:
    """XLA's HloCostAnalysis of one module, with `shape_size` as its Options::shape_size.

    Computes every reachable computation's summed properties once (callees first) and keeps the
    properties of each instruction of the computations that run as code of their own (entry,
    loop bodies and conditions, branches, called and async computations).
    """

    def __init__(
        self,
        module: Module,
        shape_size: ShapeSize = xla_shape_size,
        *,
        share_views_with: HloCostAnalysis | None = None,
    ) -> None:
        entry = module.entry
        if entry is None:
            raise CostError("the module has no computation", module.span)
        self.module = module
        self.shape_size = shape_size
        self.entry = entry
        self._by_name = {c.name: c for c in module.computations}
        # The views hold no sizes: two analyses of one module (logical and physical sizes) share
        # them, and the call graph's walk.
        self._views: dict[str, ComputationView] = (
            share_views_with._views if share_views_with is not None else {}
        )
        self._sums: dict[str, Properties] = {}
        self._instructions: dict[str, dict[str, Properties]] = {}
        self._read_bytes: dict[tuple[str, str], int] = {}
        self.order: list[tuple[Computation, bool]] = (
            share_views_with.order if share_views_with is not None else callees_first(module, entry)
        )
        for computation, runs in self.order:
            self._sums[computation.name] = self._visit(computation, runs)

    # -- results ---------------------------------------------------------------------------

    def properties(self) -> Properties:
        """The module's properties: what `hlo_module_cost_analysis` returns (zeros left out)."""
        return self._sums[self.entry.name]

    def computation_properties(self, name: str, caller: Node | None = None) -> Properties:
        """The summed properties of computation `name` (ProcessSubcomputation)."""
        found = self._sums.get(name)
        if found is None:
            where = caller.span if caller is not None else None
            raise CostError(f"computation '{name}' is not costed (unknown or in a cycle)", where)
        return found

    def instruction_properties(self, computation: str) -> dict[str, Properties]:
        """Each instruction's properties, by name, for a computation that runs as code of its
        own (empty for a fused or applied computation)."""
        return self._instructions.get(computation, {})

    @property
    def running_computations(self) -> list[Computation]:
        """The computations whose instructions are kept, callees first."""
        return [c for c, runs in self.order if runs]

    # -- the walk --------------------------------------------------------------------------

    def views(self) -> list[ComputationView]:
        """The views of every computation costed (synthesized async wrappers included)."""
        return list(self._views.values())

    def view(self, name: str, caller: Node | None = None) -> ComputationView:
        found = self._views.get(name)
        if found is None:
            computation = self._by_name.get(name)
            if computation is None:
                where = caller.span if caller is not None else None
                raise CostError(f"unknown computation '{name}'", where)
            found = self._views[name] = ComputationView(computation)
        return found

    def _visit(self, computation: Computation, keep: bool) -> Properties:
        view = self.view(computation.name)
        total: Properties = {}
        kept: dict[str, Properties] | None = {} if keep else None
        get_rule = RULES.get
        keeps = KEEPS_OPTIMAL_SECONDS
        for node, signature in zip(view.nodes, view.signatures()):
            # HloCostAnalysis::Preprocess, then the opcode's Handle*, then Postprocess.
            props = self._preprocess(signature)
            opcode = node.opcode
            rule = get_rule(opcode)
            if rule is None and opcode.endswith("-start") and opcode not in ASYNC_STARTS:
                rule = _handlers.async_sugar
            if rule is not None:
                visit = Visit(self, view, node, props)
                rule(visit)
                props = visit.properties
            if opcode not in keeps:
                # Postprocess: the bottleneck time is recomputed from the per-second rates,
                # none of which are set, so it is 0 whatever the rule or a subcomputation said.
                props.pop(OPTIMAL_SECONDS, None)
            accumulate(total, props)
            if kept is not None:
                kept[node.name] = props
        if kept is not None:
            self._instructions[computation.name] = kept
        return total

    def preprocess(self, view: ComputationView, node: Node) -> Properties:
        """HloCostAnalysis::Preprocess: bytes accessed = the output and every operand, each
        operand's bytes, a utilization of 1 per operand."""
        shapes = tuple(view.operand_shape(node, k) for k in range(len(node.operands)))
        return self._preprocess((view.shape(node), shapes))

    def _preprocess(self, signature: tuple[Shape, tuple[Shape, ...]]) -> Properties:
        size = self.shape_size
        shape, operands = signature
        out = size(shape) if not isinstance(shape, TupleShape) else self._leaf_bytes(shape)
        props: Properties = {OUTPUT_BYTES: out}
        total = out
        for k, operand in enumerate(operands):
            s = size(operand)
            total += s
            props[operand_bytes_key(k)] = s
            props[operand_utilization_key(k)] = 1.0
        props[BYTES_ACCESSED] = total
        return props

    def _leaf_bytes(self, shape: Shape) -> int:
        """A tuple output's default bytes: its leaves' sizes, no pointer table (what jaxlib's
        XLA counts for a tuple-shaped result, e.g. a variadic reduce or a copy of a tuple)."""
        if isinstance(shape, TupleShape):
            return sum(self._leaf_bytes(e) for e in shape.elements)
        return self.shape_size(shape)

    def async_wrapped_properties(self, view: ComputationView, node: Node) -> Properties:
        """The summed properties of the computation XLA's parser wraps `<op>-start` sugar in:
        a parameter per operand and one `<op>` (opcode without `-start`) of the start's shape
        element {1}, with the sugar's attributes. Costed once per start instruction."""
        name = f"{view.computation.name}/{node.name}.async_wrapped"
        found = self._sums.get(name)
        if found is not None:
            return found
        params = tuple(
            Instruction(f"param_{k}", PARAMETER, view.operand_shape(node, k), parameter_number=k)
            for k in range(len(node.operands))
        )
        shape = view.shape(node)
        if isinstance(shape, TupleShape) and len(shape.elements) > 1:
            shape = shape.elements[1]
        wrapped = Instruction(
            f"{node.name}.wrapped",
            node.opcode.removesuffix("-start"),
            shape,
            tuple(Operand(p.name) for p in params),
            node.attributes,
            is_root=True,
            span=node.span,
        )
        computation = Computation(name, (*params, wrapped))
        self._views[name] = ComputationView(computation)
        found = self._sums[name] = self._visit(computation, keep=False)
        return found

    def parameter_read_bytes(self, view: ComputationView, node: Node) -> int:
        """FusionParameterReadBytes, memoized per computation and node."""
        key = (view.computation.name, node.name)
        found = self._read_bytes.get(key)
        if found is None:
            found = self._read_bytes[key] = _fusion.parameter_read_bytes(self, view, node)
        return found


def module_properties(module: Module, shape_size: ShapeSize = xla_shape_size) -> Properties:
    """`HloCostAnalysis(module).properties()`: the module's summed properties."""
    return HloCostAnalysis(module, shape_size).properties()


__all__ = ["ComputationView", "HloCostAnalysis", "callees_first", "module_properties"]
