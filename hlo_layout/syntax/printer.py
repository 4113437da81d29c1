"""The one canonical printer of shapes, layouts and modules, mirroring XLA's text form.

`print_shape` writes what XLA's ShapeUtil::HumanStringWithLayout writes (layout properties in
XLA's current order, `/*index=N*/` before every fifth tuple element); `print_module` writes HLO
text that parses back to an equal tree (tests/syntax/test_roundtrip.py).
"""

from __future__ import annotations

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


def print_layout(layout: Layout) -> str:
    """`{m2m:props}` with properties in XLA's printing order (layout_rules.md §1.3)."""
    out = ["{", ",".join(map(str, layout.minor_to_major))]
    props: list[str] = []
    if layout.dim_level_types:
        props.append("D(" + ",".join(layout.dim_level_types) + ")")
    if layout.tiles:
        props.append("T" + "".join(str(t) for t in layout.tiles))
    if layout.tail_padding_alignment != 1:
        props.append(f"L({layout.tail_padding_alignment})")
    if layout.index_type:
        props.append(f"#({layout.index_type})")
    if layout.pointer_type:
        props.append(f"*({layout.pointer_type})")
    if layout.element_size_bits:
        props.append(f"E({layout.element_size_bits})")
    if layout.memory_space:
        props.append(f"S({layout.memory_space})")
    if layout.split_configs:
        props.append("SC" + "".join(str(s) for s in layout.split_configs))
    if layout.physical_shape is not None:
        props.append(f"P({print_shape(layout.physical_shape)})")
    if layout.dynamic_shape_metadata_prefix_bytes:
        props.append(f"M({layout.dynamic_shape_metadata_prefix_bytes})")
    props.extend(layout.unknown_props)
    if props:
        out.append(":" + "".join(props))
    out.append("}")
    return "".join(out)


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
    if instruction.opcode == "constant" and instruction.literal is not None:
        args = instruction.literal
    elif instruction.opcode == "parameter" and instruction.parameter_number is not None:
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
