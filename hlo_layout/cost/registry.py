"""The one registry of cost rules, keyed by opcode, and the context every rule reads.

Mirrors the dispatch of XLA's DfsHloVisitor onto HloCostAnalysis's `Handle*` methods: one entry
per opcode. Before a rule runs, `Visit.properties` holds HloCostAnalysis::Preprocess's defaults
(bytes accessed = output + every operand, each operand's bytes and a utilization of 1); the rule
changes them as its `Handle*` does. An opcode without an entry keeps the defaults (XLA's handlers
that only `return OkStatus()`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from hlo_layout.cost.properties import Properties
from hlo_layout.errors import HloSemanticError
from hlo_layout.syntax.opcodes import GET_TUPLE_ELEMENT, Registry
from hlo_layout.syntax.shape import ArrayShape, BufferShape, Shape, TupleShape
from hlo_layout.syntax.tree import Attribute, Instruction, Operand

if TYPE_CHECKING:
    from hlo_layout.cost.analysis import ComputationView, HloCostAnalysis


class CostError(HloSemanticError):
    """A module the cost analysis cannot read (an undefined callee, a call-graph cycle, ...)."""


class SyntheticGte(NamedTuple):
    """The get-tuple-element XLA's parser makes for an operand written `%x#1` (no line of its own
    in the text, so none in our tree): named `x#1` here, costed like any get-tuple-element."""

    name: str
    shape: Shape
    operands: tuple[Operand, ...]
    index: int  # type: ignore[assignment]  # the tuple element number, as Operand.index
    opcode: str = GET_TUPLE_ELEMENT
    attributes: tuple[Attribute, ...] = ()
    span: None = None


#: What a computation holds as XLA sees it: its instructions and the synthesized GTEs.
Node = Instruction | SyntheticGte


def elements(shape: Shape) -> int:
    """ShapeUtil::ElementsIn (an array's element count, `<=N` dimensions at their bound; a
    `b(...)` buffer its array's); 1 for a non-array, whose dimension list is empty."""
    if isinstance(shape, BufferShape):
        shape = shape.element
    return shape.num_elements if isinstance(shape, ArrayShape) else 1


def elements_recursive(shape: Shape) -> int:
    """ShapeUtil::ElementsInRecursive: every array leaf's elements, added."""
    if isinstance(shape, TupleShape):
        return sum(elements_recursive(e) for e in shape.elements)
    return shape.num_elements if isinstance(shape, ArrayShape) else 0


@dataclass(slots=True)
class Visit:
    """One node being costed: XLA's `current_properties_` and what a `Handle*` reads."""

    analysis: HloCostAnalysis
    view: ComputationView
    node: Node
    properties: Properties

    @property
    def shape(self) -> Shape:
        """The node's shape as XLA sets it (ComputationView.shape)."""
        return self.view.shape(self.node)

    def size(self, shape: Shape) -> int:
        """HloCostAnalysis::GetShapeSize with the analysis' shape-size function."""
        return self.analysis.shape_size(shape)

    def operand(self, k: int) -> Node:
        return self.view.operand_node(self.node, k)

    def operand_shape(self, k: int) -> Shape:
        return self.view.operand_shape(self.node, k)

    def attr(self, key: str) -> Attribute | None:
        node = self.node
        return node.attr(key) if isinstance(node, Instruction) else None

    def require(self, key: str) -> Attribute:
        found = self.attr(key)
        if found is None:
            raise CostError(f"{self.node.opcode} '{self.node.name}' has no {key}=", self.node.span)
        return found

    def callee(self, key: str) -> str:
        """The name of the computation attribute `key` names (`to_apply`, `body`, ...)."""
        from hlo_layout.syntax.attrs import computation_names

        node = self.node
        if key in _ONLY_CALLEE and isinstance(node, Instruction):
            # The one callee of a fusion, reduce, map, call...: read without splitting the
            # attributes (a long backend_config would be split for nothing).
            called = node.called_computations
            if len(called) == 1:
                return called[0]
        names = computation_names(self.require(key))
        if not names:
            raise CostError(f"'{self.node.name}': {key}= names no computation", self.node.span)
        return names[0]

    def subcomputation(self, name: str) -> Properties:
        """HloCostAnalysis::ProcessSubcomputation: the summed properties of computation `name`."""
        return self.analysis.computation_properties(name, self.node)


#: Attribute keys that name an instruction's only callee when it has one callee.
_ONLY_CALLEE = frozenset({"calls", "to_apply"})

Rule = Callable[[Visit], None]
#: opcode → rule; filled by hlo_layout.cost.handlers.
RULES: Registry[Rule] = Registry("cost rules")
#: Decorator: `rule` handles `opcodes` (each opcode has one rule).
register = RULES.register


__all__ = [
    "RULES",
    "CostError",
    "Node",
    "Rule",
    "SyntheticGte",
    "Visit",
    "elements",
    "elements_recursive",
    "register",
]
