"""The report model of `inspect`: plain, JSON-ready data built from a parsed module.

Both renderers (Rich in `report/inspect_view.py`, JSON in the CLI) read this model; neither looks
at the tree again. Keys are stable and documented in the README (CI users script against them).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: Bumped when a key changes meaning or disappears (adding keys does not bump it).
SCHEMA_VERSION = 1


class _ShapeText:
    """XLA's text for each distinct shape, computed once (a dump repeats a few hundred shapes)."""

    def __init__(self) -> None:
        self._cache: dict[Shape, str] = {}

    def __call__(self, shape: Shape) -> str:
        text = self._cache.get(shape)
        if text is None:
            text = self._cache[shape] = print_shape(shape, default_layout=True)
        return text


def instruction_json(instruction: Instruction, shape_text: _ShapeText) -> dict[str, Any]:
    """One instruction: `name`, `opcode`, `shape` (XLA's spelling, default layouts filled in),
    `operands` (names, `x#1` kept), `is_root`, `attributes` (key → raw text, unknown ones too)."""
    out: dict[str, Any] = {
        "name": instruction.name,
        "opcode": instruction.opcode,
        "shape": shape_text(instruction.shape),
        "operands": [o.ref for o in instruction.operands],
        "is_root": instruction.is_root,
    }
    if instruction.parameter_number is not None:
        out["parameter_number"] = instruction.parameter_number
    if instruction.literal is not None:
        out["literal"] = instruction.literal
    called = instruction.called_computations
    if called:
        out["called_computations"] = list(called)
    out["attributes"] = {a.key: a.raw for a in instruction.attributes}
    return out


def computation_json(
    module: Module, computation: Computation, shape_text: _ShapeText
) -> dict[str, Any]:
    return {
        "name": computation.name,
        "kind": module.kind(computation),
        "is_entry": computation is module.entry,
        "instructions": [instruction_json(i, shape_text) for i in computation.instructions],
    }


def module_json(module: Module, file: str | None = None) -> dict[str, Any]:
    """One module object of `inspect --format json`."""
    shape_text = _ShapeText()
    entry = module.entry
    return {
        "module": module.name,
        "file": file,
        "entry": entry.name if entry is not None else None,
        "attributes": {a.key: a.raw for a in module.attributes},
        "computations": [computation_json(module, c, shape_text) for c in module.computations],
    }


def inspect_json(modules: list[tuple[str, Module]]) -> dict[str, Any]:
    """The whole `inspect --format json` document for (file, module) pairs."""
    return {
        "schema_version": SCHEMA_VERSION,
        "modules": [module_json(m, file) for file, m in modules],
    }


def module_summary(module: Module) -> dict[str, Any]:
    """Counts for the human view: computations by kind, instructions, opcodes, fusion kinds."""
    kinds: Counter[str] = Counter()
    opcodes: Counter[str] = Counter()
    fusion_kinds: Counter[str] = Counter()
    for computation in module.computations:
        kinds[module.kind(computation)] += 1
        for instruction in computation.instructions:
            opcodes[instruction.opcode] += 1
            kind = instruction.fusion_kind
            if kind is not None:
                fusion_kinds[kind] += 1
    entry = module.entry
    shape_text = _ShapeText()
    return {
        "module": module.name,
        "computations": len(module.computations),
        "computations_by_kind": dict(sorted(kinds.items())),
        "instructions": module.instruction_count,
        "opcodes": sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0])),
        "fusions_by_kind": sorted(fusion_kinds.items(), key=lambda kv: (-kv[1], kv[0])),
        "entry": entry.name if entry is not None else None,
        "entry_parameters": [
            (p.name, shape_text(p.shape)) for p in (entry.parameter_instructions if entry else ())
        ],
        "entry_result": shape_text(entry.root.shape) if entry and entry.root else None,
    }
