"""What changed between two compiles of the same program: figures first, then the structure.

Computations and instructions are matched by name; what is left is matched by structure (the
opcode sequence of a computation; an instruction's opcode and shape, in text order), because a
recompile often renumbers names (`fusion.12` → `fusion.13`) without changing anything real.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hlo_layout.check.metrics import ModuleMetrics
from hlo_layout.memory.footprint import ShapeFacts
from hlo_layout.syntax.tree import Computation, Instruction, Module
from hlo_layout.units import ratio_percent, round_for_people

#: 2: modules are paired by relative path then unique name (`unpaired_old` / `unpaired_new`,
#: `ambiguous`, `warnings`), each module says whether it `changed`; percents are exact.
SCHEMA_VERSION = 2

_FIGURES = (
    "instructions", "computations", "fusions", "copies", "custom_calls", "argument_bytes",
    "output_bytes", "logical_bytes", "physical_bytes", "padding_bytes", "allocation_bytes",
)  # fmt: skip


def _delta(old: float | None, new: float | None) -> dict[str, Any]:
    """old, new, new - old and the change in percent of old (exact for ints of any size,
    rounded to 3 decimals; None when old is 0 or a side is missing)."""
    delta = None if old is None or new is None else new - old
    if isinstance(delta, float):
        delta = round_for_people(delta)
    percent = None
    if delta is not None and old and new is not None:
        percent = ratio_percent(new - old, old)
    return {"old": old, "new": new, "delta": delta, "percent": percent}


def _counter_delta(old: dict[str, int], new: dict[str, int]) -> dict[str, dict[str, Any]]:
    keys = sorted(set(old) | set(new))
    return {k: _delta(old.get(k, 0), new.get(k, 0)) for k in keys if old.get(k, 0) != new.get(k, 0)}


def metrics_diff(old: ModuleMetrics, new: ModuleMetrics) -> dict[str, Any]:
    """Figure by figure, then per memory space, opcode and fusion kind (changed ones only)."""
    figures = {k: _delta(getattr(old, k), getattr(new, k)) for k in _FIGURES}
    figures["padding_percent"] = _delta(
        ratio_percent(old.padding_bytes, old.physical_bytes) or 0.0,
        ratio_percent(new.padding_bytes, new.physical_bytes) or 0.0,
    )
    figures["largest_buffer_bytes"] = _delta(
        old.largest[0].physical_bytes if old.largest else 0,
        new.largest[0].physical_bytes if new.largest else 0,
    )
    spaces = sorted(set(old.space_bytes) | set(new.space_bytes))
    return {
        "figures": figures,
        "space_bytes": {
            str(s): _delta(old.space_bytes.get(s, 0), new.space_bytes.get(s, 0)) for s in spaces
        },
        "opcodes": _counter_delta(old.opcodes, new.opcodes),
        "fusion_kinds": _counter_delta(old.fusion_kinds, new.fusion_kinds),
        "largest_buffers": {
            "old": [(b.name, b.shape, b.physical_bytes) for b in old.largest[:5]],
            "new": [(b.name, b.shape, b.physical_bytes) for b in new.largest[:5]],
        },
    }


def _fingerprint(c: Computation) -> tuple[str, ...]:
    return tuple(i.opcode for i in c.instructions)


def _match(
    old: list[Any], new: list[Any], name: Any, key: Any
) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
    """Pairs matched by name, then by structural key in order; then the unmatched of each."""
    new_by_name = {name(x): x for x in new}
    pairs = []
    left_old = []
    used: set[int] = set()
    for x in old:
        y = new_by_name.get(name(x))
        if y is not None:
            pairs.append((x, y))
            used.add(id(y))
        else:
            left_old.append(x)
    left_new = [y for y in new if id(y) not in used]
    pool: dict[Any, list[Any]] = defaultdict(list)
    for y in left_new:
        pool[key(y)].append(y)
    still_old = []
    for x in left_old:
        candidates = pool.get(key(x))
        if candidates:
            y = candidates.pop(0)
            pairs.append((x, y))
            used.add(id(y))
        else:
            still_old.append(x)
    return pairs, still_old, [y for y in new if id(y) not in used]


def _brief(c: Computation, i: Instruction, text: ShapeFacts) -> dict[str, str]:
    return {"computation": c.name, "name": i.name, "opcode": i.opcode, "shape": text(i.shape)}


def structure_diff(old: Module, new: Module) -> dict[str, Any]:
    """Computations and instructions added, removed, renamed, or with a changed shape/opcode."""
    # Each distinct shape object printed once (the parser shares one per distinct shape text).
    text = ShapeFacts()
    comp_pairs, comp_removed, comp_added = _match(
        list(old.computations), list(new.computations), lambda c: c.name, _fingerprint
    )
    added: list[dict[str, str]] = []
    removed: list[dict[str, str]] = []
    changed: list[dict[str, str]] = []
    renamed: list[dict[str, str]] = []
    for c_old, c_new in comp_pairs:
        pairs, gone, new_ones = _match(
            list(c_old.instructions),
            list(c_new.instructions),
            lambda i: i.name,
            lambda i: (i.opcode, text(i.shape)),
        )
        removed += [_brief(c_old, i, text) for i in gone]
        added += [_brief(c_new, i, text) for i in new_ones]
        for a, b in pairs:
            if a.name != b.name:
                renamed.append({"computation": c_new.name, "old": a.name, "new": b.name})
            if a.opcode != b.opcode or text(a.shape) != text(b.shape):
                changed.append(
                    {
                        "computation": c_new.name,
                        "name": b.name,
                        "old_opcode": a.opcode,
                        "new_opcode": b.opcode,
                        "old_shape": text(a.shape),
                        "new_shape": text(b.shape),
                    }
                )
    return {
        "computations": {
            "added": [c.name for c in comp_added],
            "removed": [c.name for c in comp_removed],
            "renamed": [[a.name, b.name] for a, b in comp_pairs if a.name != b.name],
        },
        "instructions": {
            "added": added,
            "removed": removed,
            "changed": changed,
            "renamed": renamed,
        },
    }


def module_diff(
    old: Module, new: Module, old_metrics: ModuleMetrics, new_metrics: ModuleMetrics
) -> dict[str, Any]:
    figures = metrics_diff(old_metrics, new_metrics)
    structure = structure_diff(old, new)
    changed = (
        any(d["delta"] for d in figures["figures"].values())
        or any(d["delta"] for d in figures["space_bytes"].values())
        or bool(figures["opcodes"] or figures["fusion_kinds"])
        or any(structure["computations"].values())
        or any(structure["instructions"].values())
    )
    return {
        "old_module": old_metrics.module,
        "new_module": new_metrics.module,
        "old_file": old_metrics.file,
        "new_file": new_metrics.file,
        "changed": changed,
        **figures,
        **structure,
    }
