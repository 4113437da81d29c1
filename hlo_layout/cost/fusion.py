"""How HloCostAnalysis costs a fusion: its body's flops and transcendentals, and bytes only at
its boundary (HandleFusion and its helpers in xla/service/hlo_cost_analysis.cc).

- Output (FusionProcessOutputBytesAccessed): every array the fusion writes, except that a
  dynamic-update-slice root (or tuple element) writes only its update; a tuple fusion's `out{}`
  is the sum of its elements.
- Constants (FusionCountConstantsMemoryAccess): each fused constant of more than one element is
  read once.
- Operands (FusionProcessOperandBytesRead, FusionParameterReadBytes): a fused parameter costs
  what its users read of it — a slice or dynamic-slice only the slice, a broadcast or reshape the
  whole operand each, every other user one shared read of the whole; a nested fusion asks its
  own parameter, or (when the parameter feeds the nested root directly) the nested fusion's
  slicing users. A tuple parameter is costed leaf by leaf through its get-tuple-elements.
- A kCustom fusion holding a gather or scatter is costed as that gather or scatter alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlo_layout.cost.properties import (
    BYTES_ACCESSED,
    OUTPUT_BYTES,
    Properties,
    operand_bytes_key,
    operand_utilization_key,
    output_bytes_key,
)
from hlo_layout.cost.registry import RULES, Node, Visit, register
from hlo_layout.syntax.opcodes import (
    BROADCAST,
    DYNAMIC_SLICE,
    DYNAMIC_UPDATE_SLICE,
    FUSION,
    GATHER,
    GET_TUPLE_ELEMENT,
    RESHAPE,
    SCATTER,
    SLICE,
    TUPLE,
)
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Instruction

if TYPE_CHECKING:
    from hlo_layout.cost.analysis import ComputationView, HloCostAnalysis


@register(FUSION)
def fusion(v: Visit) -> None:
    """HandleFusion."""
    analysis = v.analysis
    fused = analysis.view(v.callee("calls"), v.node)
    node = v.node
    if isinstance(node, Instruction) and node.fusion_kind == "kCustom":
        for inner in fused.nodes:
            if inner.opcode in (GATHER, SCATTER):
                RULES[inner.opcode](Visit(analysis, fused, inner, v.properties))
                return
    props = dict(v.subcomputation(fused.computation.name))
    props[BYTES_ACCESSED] = 0
    _output_bytes(v, fused, props)
    # FusionCalculateUtilizations: every fused instruction's utilization is 1 (nothing summed).
    for inner in fused.large_constants():
        props[BYTES_ACCESSED] += v.size(fused.shape(inner))
    for i, param in enumerate(fused.parameters):
        operand_size = 0
        if param is not None:
            if not isinstance(param.shape, TupleShape):
                operand_size = analysis.parameter_read_bytes(fused, param)
            else:
                for index, _leaf in _leaf_indices(param.shape):
                    gte: Node = param
                    for sub in index:
                        for user in fused.users(gte.name):
                            if user.opcode == GET_TUPLE_ELEMENT and tuple_index(user) == sub:
                                gte = user
                                break
                    size = analysis.parameter_read_bytes(fused, gte)
                    operand_size += size
                    props[operand_bytes_key(i, index)] = size
        props[BYTES_ACCESSED] += operand_size
        props[operand_bytes_key(i)] = operand_size
        props[operand_utilization_key(i)] = 1.0
    v.properties = props


def _output_bytes(v: Visit, fused: ComputationView, props: Properties) -> None:
    """FusionProcessOutputBytesAccessed."""
    root = fused.root
    shape = v.shape
    for index, sub in _subshapes(shape):
        if not isinstance(sub, ArrayShape):
            continue
        writer: Node | None = root
        if len(index) == 1 and root is not None and root.opcode == TUPLE:
            writer = fused.operand_node(root, index[0]) if index[0] < len(root.operands) else None
        if writer is not None and writer.opcode == DYNAMIC_UPDATE_SLICE:
            size = v.size(fused.operand_shape(writer, 1))
        else:
            size = v.size(sub)
        props[BYTES_ACCESSED] += size
        props[output_bytes_key(index)] = size
    if isinstance(shape, TupleShape):
        props[OUTPUT_BYTES] = 0
        _propagate(props, shape, ())


def _propagate(props: Properties, shape: Shape, index: tuple[int, ...]) -> int | float:
    """A tuple index's output bytes: its own figure if any, else its elements' (XLA's
    propagate_output_size_to_parent)."""
    key = output_bytes_key(index)
    value = props.get(key, 0)
    if value != 0 or not isinstance(shape, TupleShape):
        return value
    for i, element in enumerate(shape.elements):
        value += _propagate(props, element, (*index, i))
    props[key] = value
    return value


def _subshapes(shape: Shape, index: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], Shape]]:
    """ShapeUtil::ForEachSubshape: every subshape, pre-order, tuples included."""
    out: list[tuple[tuple[int, ...], Shape]] = [(index, shape)]
    if isinstance(shape, TupleShape):
        for i, element in enumerate(shape.elements):
            out.extend(_subshapes(element, (*index, i)))
    return out


def _leaf_indices(shape: Shape) -> list[tuple[tuple[int, ...], Shape]]:
    return [(i, s) for i, s in _subshapes(shape) if not isinstance(s, TupleShape)]


def tuple_index(node: Node) -> int | None:
    """A get-tuple-element's `index=`."""
    if isinstance(node, Instruction):
        from hlo_layout.syntax.attrs import int_value

        attr = node.attr("index")
        return int_value(attr) if attr is not None else None
    return node.index


def parameter_read_bytes(analysis: HloCostAnalysis, view: ComputationView, node: Node) -> int:
    """HloCostAnalysis::FusionParameterReadBytes of a fused parameter (or get-tuple-element of
    one): what its users read of it."""
    size_of = analysis.shape_size
    name = node.name
    size = 0
    seen = False
    for user in view.users(name):
        op = user.opcode
        if op == FUSION:
            nested = analysis.view(_calls(user, view), user)
            nested_root = nested.root
            fusion_users = view.users(user.name)
            for idx, operand in enumerate(user.operands):
                if operand.ref != name:
                    continue
                param = nested.parameters[idx] if idx < len(nested.parameters) else None
                simple = nested_root is not None and (
                    not nested_root.operands
                    or (param is not None and nested_root.operands[0].ref == param.name)
                )
                nested_seen = False
                for fu in fusion_users:
                    fop = fu.opcode
                    if simple and fop == SLICE:
                        size += size_of(view.shape(fu))
                    elif simple and fop == DYNAMIC_SLICE:
                        if fu.operands and fu.operands[0].ref == user.name:
                            size += size_of(view.shape(fu))
                        elif not nested_seen:
                            nested_seen = True
                            size += size_of(view.shape(user))
                    elif simple and fop == DYNAMIC_UPDATE_SLICE:
                        if (
                            not (fu.operands and fu.operands[0].ref == user.name)
                            and not nested_seen
                        ):
                            nested_seen = True
                            size += size_of(view.shape(user))
                    elif not nested_seen:
                        nested_seen = True
                        if param is not None:
                            size += analysis.parameter_read_bytes(nested, param)
        elif op == SLICE:
            size += size_of(view.shape(user))
        elif op == DYNAMIC_SLICE:
            if user.operands and user.operands[0].ref == name:
                size += size_of(view.shape(user))
            elif not seen:
                seen = True
                size += size_of(view.shape(node))
        elif op == DYNAMIC_UPDATE_SLICE:
            if not (user.operands and user.operands[0].ref == name) and not seen:
                seen = True
                size += size_of(view.shape(node))
        elif op in (BROADCAST, RESHAPE):
            size += size_of(view.shape(node))
        elif not seen:
            seen = True
            size += size_of(view.shape(node))
    return size


def _calls(user: Node, view: ComputationView) -> str:
    from hlo_layout.cost.registry import CostError

    names = user.called_computations if isinstance(user, Instruction) else ()
    if not names:
        raise CostError(f"fusion '{user.name}' calls no computation", user.span)
    return names[0]


__all__ = ["fusion", "parameter_read_bytes", "tuple_index"]
