"""The one canonical printer of shapes, layouts and modules, mirroring XLA's text form.

`print_shape` writes what XLA's ShapeUtil::HumanStringWithLayout writes (layout properties in
XLA's current order, `/*index=N*/` before every fifth tuple element); `print_module` writes HLO
text that parses back to an equal tree (tests/syntax/test_roundtrip.py).
"""

from __future__ import annotations

from hlo_layout.syntax.layout_text import LAYOUT_PROPERTIES, LayoutProperty, property_default
from hlo_layout.syntax.opcodes import CONSTANT, PARAMETER
from hlo_layout.syntax.shape import (
    UNBOUNDED,
    ArrayShape,
    BufferShape,
    Layout,
    OpaqueShape,
    Shape,
    TokenShape,
    TupleShape,
)
from hlo_layout.syntax.tree import Computation, Instruction, Module, Operand


def print_property(layout: Layout, prop: LayoutProperty) -> str:
    """One property as XLA prints it (`T(8,128)(2,1)`, `S(1)`), or "" at its default."""
    value = getattr(layout, prop.field)
    if value == property_default(prop):
        return ""
    kind = prop.kind
    if kind == "tiles" or kind == "splits":
        return prop.letter + "".join(str(v) for v in value)
    if kind == "names":
        return prop.letter + "(" + ",".join(value) + ")"
    if kind == "shape":
        return prop.letter + "(" + print_shape(value) + ")"
    return f"{prop.letter}({value})"


def print_layout(layout: Layout) -> str:
    """`{m2m:props}` with properties in XLA's printing order (LAYOUT_PROPERTIES)."""
    props = [print_property(layout, prop) for prop in LAYOUT_PROPERTIES]
    props.extend(layout.unknown_props)
    text = "".join(props)
    m2m = ",".join(map(str, layout.minor_to_major))
    return "{" + m2m + (":" + text if text else "") + "}"


def _dim(size: int, dynamic: bool) -> str:
    if not dynamic:
        return str(size)
    return "?" if size == UNBOUNDED else f"<={size}"


def print_shape(shape: Shape, *, default_layout: bool = False) -> str:
    """XLA's text for a shape. With `default_layout`, an array printed without a layout gets
    XLA's descending default, as XLA's parser fills it in (the `.xla.json` oracle's view)."""
    if isinstance(shape, ArrayShape):
        dyn = shape.dynamic or (False,) * shape.rank
        text = f"{shape.element_type}[{','.join(_dim(s, d) for s, d in zip(shape.dims, dyn))}]"
        layout = shape.layout
        if layout is None:
            if default_layout and shape.rank:
                text += "{" + ",".join(map(str, shape.minor_to_major)) + "}"
            return text
        if shape.rank == 0 and not layout.has_props and not layout.dim_level_types:
            return text
        return text + print_layout(layout)
    if isinstance(shape, TupleShape):
        parts = []
        for i, element in enumerate(shape.elements):
            prefix = f"/*index={i}*/" if i and i % 5 == 0 else ""
            parts.append(prefix + print_shape(element, default_layout=default_layout))
        return "(" + ", ".join(parts) + ")"
    if isinstance(shape, BufferShape):
        return f"b({print_shape(shape.element, default_layout=default_layout)})"
    if isinstance(shape, TokenShape):
        return "token[]"
    if isinstance(shape, OpaqueShape):
        return "opaque[]"
    raise TypeError(f"not a shape: {shape!r}")


def print_operand(operand: Operand) -> str:
    text = "%" + operand.ref
    if operand.shape is not None:
        return f"{print_shape(operand.shape)} {text}"
    return text


def print_instruction(instruction: Instruction) -> str:
    """One instruction line as XLA prints it (`%` names, operands without inline shapes unless
    the dump had them)."""
    if instruction.opcode == CONSTANT and instruction.literal is not None:
        args = instruction.literal
    elif instruction.opcode == PARAMETER and instruction.parameter_number is not None:
        args = str(instruction.parameter_number)
    else:
        args = ", ".join(print_operand(o) for o in instruction.operands)
    root = "ROOT " if instruction.is_root else ""
    text = (
        f"{root}%{instruction.name} = {print_shape(instruction.shape)} {instruction.opcode}({args})"
    )
    if instruction.attributes:
        text += ", " + ", ".join(str(a) for a in instruction.attributes)
    return text


def print_computation(computation: Computation) -> str:
    lines = []
    if computation.synthetic:
        return "\n".join(print_instruction(i) for i in computation.instructions)
    head = ("ENTRY " if computation.is_entry else "") + "%" + computation.name
    if computation.parameters is not None and computation.result_shape is not None:
        params = ", ".join(f"{p.name}: {print_shape(p.shape)}" for p in computation.parameters)
        head += f" ({params}) -> {print_shape(computation.result_shape)}"
    lines.append(head + " {")
    lines.extend("  " + print_instruction(i) for i in computation.instructions)
    tail = "}"
    if computation.attributes:
        tail += ", " + ", ".join(str(a) for a in computation.attributes)
    lines.append(tail)
    return "\n".join(lines)


def print_module(module: Module) -> str:
    """The whole module as HLO text; parses back to an equal Module."""
    parts = []
    if module.name is not None:
        header = f"HloModule {module.name}"
        if module.attributes:
            header += ", " + ", ".join(str(a) for a in module.attributes)
        parts.append(header)
    for section in module.sections:
        rows = [section.name] + [f"{e.id} {e.raw}" for e in section.entries]
        parts.append("\n".join(rows))
    parts.extend(print_computation(c) for c in module.computations)
    return "\n\n".join(parts) + "\n"
