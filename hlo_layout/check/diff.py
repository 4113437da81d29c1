"""What changed between two compiles of the same program: figures first, then the structure
(computations and instructions paired by what survives recompilation, never by name:
`check/structure.py`).
"""

from __future__ import annotations

from typing import Any

from hlo_layout.check.metrics import ModuleMetrics
from hlo_layout.check.peak_diff import BY_SOURCE, aliasing, peak_diff, rematerialization
from hlo_layout.check.structure import callees_of, counterparts, match_modules, structure_diff
from hlo_layout.memory.analysis import MemoryAnalysis
from hlo_layout.memory.attribution import Grouping
from hlo_layout.syntax.tree import Module
from hlo_layout.units import ratio_percent, round_for_people

#: 2: modules are paired by relative path then unique name (`unpaired_old` / `unpaired_new`,
#: `ambiguous`, `warnings`), each module says whether it `changed`; percents are exact.
#: 3: `peak` (the headline per space and why it changed), `rematerialization`, `aliasing`,
#: `cost`, `scheduled`, `notes`, `by`; instructions and computations paired by structure
#: (`paired`, `changed` with `old_name`, `what`, `change`, op_name and source).
SCHEMA_VERSION = 3

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


def is_scheduled(module: Module) -> bool:
    """`is_scheduled=true` in the module header: the text order is the compiler's schedule."""
    a = module.attr("is_scheduled")
    return a is not None and a.raw.strip().lower() == "true"


def _before_optimizations(file: str) -> bool:
    return "before_optimizations" in file.rsplit("/", 1)[-1]


def side_notes(old: Module, new: Module, old_file: str, new_file: str) -> list[str]:
    """What comparing these two kinds of dump means: an unscheduled side's peak is an estimate
    (its text order stands in for the schedule), and a dump before XLA's passes against one after
    them shows what the compiler did, not a change of the program."""
    sides = (("OLD", old, old_file), ("NEW", new, new_file))
    unscheduled = [label for label, m, _ in sides if not is_scheduled(m)]
    before = [label for label, _, f in sides if _before_optimizations(f)]
    notes = []
    if len(before) == 1:
        after = "NEW" if before[0] == "OLD" else "OLD"
        estimate = (
            " (not scheduled: its peak and the buffers live at it are estimates)"
            if before[0] in unscheduled
            else ""
        )
        notes.append(
            f"{before[0]} is the program before XLA's passes{estimate} and {after} after them: "
            "the difference is what the compiler did (fusion, layouts, scheduling, buffer "
            "reuse), not a change of the program; compare two after_optimizations dumps for that"
        )
        unscheduled = [label for label in unscheduled if label != before[0]]
    if len(unscheduled) == 2:
        notes.append(
            "neither side is scheduled (no is_scheduled=true): each text order stands in for "
            "the schedule, so both peaks, the buffers live at them and their difference are "
            "estimates, not the compiler's"
        )
    elif unscheduled:
        notes.append(
            f"{unscheduled[0]} is not scheduled (no is_scheduled=true): its text order stands in "
            "for the schedule, so its peak and the buffers live at it are estimates, not the "
            "compiler's; the peak change is only as good as that estimate"
        )
    return notes


def _cost(old: Module, new: Module, top: int | None) -> dict[str, Any] | None:
    """The cost change (hlo_layout.cost.diff), or None where a side cannot be costed (the error
    is the cost command's to report)."""
    from hlo_layout.cost.diff import cost_diff
    from hlo_layout.errors import HloLayoutError

    try:
        return cost_diff(old, new, top=top).to_dict()
    except HloLayoutError:
        return None


def module_diff(
    old: Module,
    new: Module,
    old_metrics: ModuleMetrics,
    new_metrics: ModuleMetrics,
    old_memory: MemoryAnalysis | None = None,
    new_memory: MemoryAnalysis | None = None,
    *,
    grouping: Grouping = BY_SOURCE,
    top: int | None = None,
) -> dict[str, Any]:
    """One element of `diff --format json`'s `modules`: the peak and why it changed (when both
    memory analyses are given), the figures, then the structure."""
    match = match_modules(old, new)
    figures = metrics_diff(old_metrics, new_metrics)
    structure = structure_diff(old, new, match)
    peak = None
    if old_memory is not None and new_memory is not None:
        peak = peak_diff(
            old_memory, new_memory, counterparts=counterparts(match), grouping=grouping, top=top
        )
    changed = (
        bool(peak and peak["delta"])
        or any(d["delta"] for d in figures["figures"].values())
        or any(d["delta"] for d in figures["space_bytes"].values())
        or bool(figures["opcodes"] or figures["fusion_kinds"])
        or bool(structure["computations"]["added"] or structure["computations"]["removed"])
        or any(structure["instructions"][k] for k in ("added", "removed", "changed"))
    )
    return {
        "old_module": old_metrics.module,
        "new_module": new_metrics.module,
        "old_file": old_metrics.file,
        "new_file": new_metrics.file,
        "scheduled": {"old": is_scheduled(old), "new": is_scheduled(new)},
        "notes": side_notes(old, new, old_metrics.file, new_metrics.file),
        "changed": changed,
        "peak": peak,
        "rematerialization": rematerialization(old, new, top, callees_of(match)),
        "aliasing": aliasing(old, new),
        "cost": _cost(old, new, top),
        **figures,
        **structure,
    }
