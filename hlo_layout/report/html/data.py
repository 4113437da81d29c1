"""The data an HTML report embeds: `{"inspect": ..., "memory": ...}` in bounded, summary form.

The page must stay small (a 17.8 MB dump gives a report under 2 MB), so the documents are
embedded in summary form (README "HTML report" lists what is dropped):

- inspect: each module object keeps every module-level key of `inspect --format json` except
  `computations` (every instruction), which becomes counts (`computations_by_kind`,
  `instructions`, `opcodes`, `fusions_by_kind`); its `padding_groups` gain a tile-grid picture
  per pattern; long lists keep their first `top` rows and say how many there were
  (`<key>_total`).
- memory: each module keeps every key of `memory --format json` but `values` (every value's live
  range), replaced by `values_total`; `live_at_peak`, `by_op_name` and the compiler's
  allocations are cut to `top` rows, with `<key>_total`.
- cost: per module, the chip's roofs (bandwidth, peak per element-type class) and the `top`
  instructions by roofline time as points (flops, physical bytes, intensity, time), with
  `points_total`; no roofs when no chip is known (a CPU dump).

Pure: builds plain dicts, no Rich, no HTML.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.layout.module_memory import MemoryReport, memory_report
from hlo_layout.report.html.grids import pattern_picture
from hlo_layout.report.model import SCHEMA_VERSION, memory_json, module_summary
from hlo_layout.syntax.opcodes import FUSION
from hlo_layout.syntax.tree import Module

#: Version of the embedded data's own keys (`schema_version` of the documents inside is theirs).
REPORT_SCHEMA_VERSION = 1
#: Default rows kept per list (live buffers, allocations, op_names, ...).
DEFAULT_TOP = 200
#: Padding groups kept, rows kept per group, and groups drawn with a tile-grid picture.
PADDING_GROUPS = 20
PADDING_ROWS = 10
PICTURES = 8
#: Compiler allocations keep at most this many values each.
ALLOCATION_VALUES = 8
#: Header attributes longer than this are cut (`entry_computation_layout` can be megabytes).
ATTRIBUTE_CHARS = 300
#: Most schedule steps a timeline may hold; longer ones are max-pooled again.
TIMELINE_POINTS = 2000

MEMORY_UNAVAILABLE = (
    "peak-memory analysis unavailable: this build of hlo-layout has no `hlo_layout.memory` "
    "package, so the chart and the buffers live at the peak are missing"
)


def _cut(obj: dict[str, Any], key: str, top: int) -> None:
    """Keep the first `top` rows of `obj[key]`; record the full count as `<key>_total`."""
    rows = obj.get(key)
    if isinstance(rows, list) and len(rows) > top:
        obj[f"{key}_total"] = len(rows)
        obj[key] = rows[:top]


def _attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in attributes.items():
        if isinstance(value, str) and len(value) > ATTRIBUTE_CHARS:
            value = value[:ATTRIBUTE_CHARS] + f"… ({len(value):,} characters)"
        out[key] = value
    return out


def _counted(counter: Counter[str]) -> list[list[Any]]:
    return [[k, n] for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]


def _bound_padding(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`inspect --format json`'s padding groups, bounded: PADDING_GROUPS patterns of PADDING_ROWS
    shapes (`rows_total` says how many), a tile-grid picture of the worst shape of the first
    PICTURES patterns."""
    out = []
    for n, group in enumerate(groups[:PADDING_GROUPS]):
        g = dict(group)
        _cut(g, "rows", PADDING_ROWS)
        if n < PICTURES and g["rows"]:
            g["picture"] = pattern_picture(g["rows"][0]["shape"])
        out.append(g)
    return out


def _bound_assignment(doc: dict[str, Any], top: int) -> None:
    allocations = doc.get("allocations")
    if not isinstance(allocations, list):
        return
    doc["allocations"] = sorted(allocations, key=lambda a: (-(a.get("size") or 0), a["index"]))
    _cut(doc, "allocations", top)
    for a in doc["allocations"]:
        _cut(a, "values", ALLOCATION_VALUES)


def module_overview(
    module: Module, file: str | None, report: MemoryReport, *, top: int = DEFAULT_TOP
) -> dict[str, Any]:
    """`inspect --format json`'s module object in summary form (see the module docstring), built
    from the parsed module without writing every instruction."""
    summary = module_summary(module)
    out: dict[str, Any] = {
        "module": module.name,
        "file": file,
        "entry": summary.entry,
        "attributes": _attributes({a.key: a.raw for a in module.attributes}),
        **memory_json(report),
        "computations_total": summary.computations,
        "computations_by_kind": summary.computations_by_kind,
        "instructions": summary.instructions,
        "opcodes": [list(kv) for kv in summary.opcodes],
        "fusions_by_kind": [list(kv) for kv in summary.fusions_by_kind],
    }
    return _bound_inspect_module(out, top)


def _bound_inspect_module(out: dict[str, Any], top: int) -> dict[str, Any]:
    for key in ("entry_parameters", "entry_outputs", "largest_buffers", "opcodes"):
        _cut(out, key, top)
    if "buffer_count" in out:
        out["largest_buffers_total"] = out["buffer_count"]
    if isinstance(out.get("padding_groups"), list):
        out["padding_groups"] = _bound_padding(out["padding_groups"])
    assignment = out.get("buffer_assignment")
    if isinstance(assignment, dict):
        _bound_assignment(assignment, top)
    return out


def summarize_inspect_module(obj: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """The same summary from a full `inspect --format json` module object (its `computations`
    replaced by counts); `largest_buffers` / `padding_groups` are kept when the object has them."""
    out = {k: v for k, v in obj.items() if k != "computations"}
    out["attributes"] = _attributes(obj.get("attributes") or {})
    kinds: Counter[str] = Counter()
    opcodes: Counter[str] = Counter()
    fusions: Counter[str] = Counter()
    instructions = 0
    computations = obj.get("computations") or []
    for c in computations:
        kinds[c["kind"]] += 1
        for i in c["instructions"]:
            instructions += 1
            opcodes[i["opcode"]] += 1
            if i["opcode"] == FUSION and "kind" in i.get("attributes", {}):
                fusions[i["attributes"]["kind"]] += 1
    out["computations_total"] = len(computations)
    out["computations_by_kind"] = dict(sorted(kinds.items()))
    out["instructions"] = instructions
    out["opcodes"] = _counted(opcodes)
    out["fusions_by_kind"] = _counted(fusions)
    return _bound_inspect_module(out, top)


def summarize_inspect(document: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """A whole `inspect --format json` document in summary form."""
    return {
        "schema_version": document.get("schema_version", SCHEMA_VERSION),
        "summary": True,
        "modules": [summarize_inspect_module(m, top=top) for m in document.get("modules", [])],
    }


def _pool(live: Sequence[int], bucket: int) -> list[int]:
    """Max of each run of `bucket` steps (the peak survives)."""
    return [max(live[i : i + bucket]) for i in range(0, len(live), bucket)]


def bound_memory_module(obj: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """A `memory --format json` module object without `values`, with lists cut to `top` rows
    and every timeline at most TIMELINE_POINTS numbers."""
    out = dict(obj)
    values = out.pop("values", None)
    if isinstance(values, list):
        out["values_total"] = len(values)
    for key in ("live_at_peak", "by_op_name"):
        _cut(out, key, top)
    timelines = []
    for t in out.get("timeline") or []:
        t = dict(t)
        live = t.get("live_bytes") or []
        if len(live) > TIMELINE_POINTS:
            factor = -(-len(live) // TIMELINE_POINTS)
            t["live_bytes"] = _pool(live, factor)
            t["bucket"] = int(t.get("bucket") or 1) * factor
        timelines.append(t)
    if "timeline" in out:
        out["timeline"] = timelines
    compiler = out.get("compiler")
    if isinstance(compiler, dict):
        compiler = dict(compiler)
        _bound_assignment(compiler, top)
        out["compiler"] = compiler
    return out


def bound_memory(document: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """A whole `memory --format json` document, bounded (see bound_memory_module)."""
    return {
        **{k: v for k, v in document.items() if k != "modules"},
        "modules": [bound_memory_module(m, top=top) for m in document.get("modules", [])],
    }


def memory_document(
    modules: Iterable[tuple[str, Module, BufferAssignment | None]],
    peaks: Sequence[Any] | None = None,
) -> tuple[dict[str, Any] | None, list[str]]:
    """`memory --format json` for (file, module, buffer assignment) triples through
    `hlo_layout.memory.analyze_memory` (given `file=` so it can tell the backend from the dump's
    name), with notes for modules it could not analyze; (None, [why]) when that package is not
    installed. `peaks[n]`, when given and not None, is module n's analysis already made (the
    inspect report's), so it is not made twice."""
    try:
        from hlo_layout.memory import analyze_memory  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError as e:
        if e.name not in ("hlo_layout.memory", "hlo_layout"):
            raise
        return None, [MEMORY_UNAVAILABLE]
    out, notes = [], []
    for n, (file, module, assignment) in enumerate(modules):
        made = peaks[n] if peaks is not None else None
        try:
            if made is None:
                made = analyze_memory(module, buffer_assignment=assignment, file=file)
            d = made.to_dict()
        except ValueError as e:  # e.g. a module with no computation: nothing to analyze
            notes.append(f"{module.name or file}: no peak-memory analysis ({e})")
            continue
        if d.get("file") is None:
            d["file"] = file
        out.append(d)
    return {"schema_version": 1, "modules": out}, notes


def cost_module(
    module: Module, file: str | None, *, top: int = DEFAULT_TOP, chip: str | None = None
) -> dict[str, Any] | None:
    """The roofline plot's data of one module: its totals, the roofs of `chip` (default: the
    chip the dump was compiled for, when known) and the `top` instructions with flops as points;
    None when the module cannot be costed."""
    from hlo_layout.api import default_chip_for
    from hlo_layout.cost.model import module_cost
    from hlo_layout.cost.roofline import roofline, type_class
    from hlo_layout.cost.summary import summarize
    from hlo_layout.errors import HloLayoutError

    name = file or "<string>"
    try:
        cost = module_cost(module, name)
    except HloLayoutError:
        return None
    why = f"--chip {chip}"
    if chip is None:
        chip, why = default_chip_for(module, name)
    roof = roofline(chip) if chip is not None else None
    summary = summarize(cost, roof, top=None, chip_reason=why)
    drawn = [r for r in summary.rows if r.cost.totals.flops > 0 and r.bound_seconds]
    points = []
    for r in drawn[:top]:
        t = r.cost.totals
        points.append({
            "name": r.cost.name,
            "opcode": r.cost.opcode,
            "computation": r.cost.computation,
            "executions": r.cost.executions,
            "flops": t.flops,
            "bytes": round(t.physical_bytes_accessed),
            "intensity": r.arithmetic_intensity,
            "seconds": r.bound_seconds,
            "bound": r.bound,
            "type": type_class(r.cost.element_type),
        })  # fmt: skip
    return {
        "module": module.name,
        "file": file,
        "chip": roof.chip if roof is not None else None,
        "chip_reason": why,
        "bandwidth": roof.bandwidth if roof is not None else None,
        "peaks": dict(roof.peaks) if roof is not None else {},
        "bound_seconds": summary.bound_seconds,
        "flops": cost.total.flops,
        "physical_bytes_accessed": round(cost.total.physical_bytes_accessed),
        "points": points,
        "points_total": len(drawn),
        "notes": list(summary.notes),
    }


def build_report(
    modules: Sequence[tuple[str, Module, BufferAssignment | None]],
    *,
    top: int = DEFAULT_TOP,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """`report_data` for parsed (file, module, buffer assignment) triples: the inspect overview
    of each module and, when `hlo_layout.memory` is installed, its peak-memory analysis."""
    overviews, peaks, costs = [], [], []
    for file, module, assignment in modules:
        report = memory_report(module, assignment=assignment, top=top, progress=progress, file=file)
        overviews.append(module_overview(module, file, report, top=top))
        peaks.append(report.peak)
        costs.append(cost_module(module, file, top=top))
    inspect = {"schema_version": SCHEMA_VERSION, "summary": True, "modules": overviews}
    memory, notes = memory_document(modules, peaks)
    data = report_data(inspect, memory, notes=notes, top=top)
    data["cost"] = {"modules": costs}
    return data


def report_data(
    inspect: dict[str, Any],
    memory: dict[str, Any] | None,
    *,
    notes: Sequence[str] = (),
    title: str | None = None,
    top: int = DEFAULT_TOP,
) -> dict[str, Any]:
    """What `render_html` embeds: the (summarized) inspect document, the bounded memory document
    (or null), report-level `notes` and a `title`. A full inspect document is summarized here;
    one already in summary form (`"summary": true`) is kept."""
    if not inspect.get("summary"):
        inspect = summarize_inspect(inspect, top=top)
    if memory is not None:
        memory = bound_memory(memory, top=top)
    if title is None:
        names = [m.get("module") or "module" for m in inspect.get("modules", [])]
        title = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "title": title,
        "notes": list(notes),
        "inspect": inspect,
        "memory": memory,
        "cost": None,
    }


__all__ = [
    "DEFAULT_TOP",
    "MEMORY_UNAVAILABLE",
    "REPORT_SCHEMA_VERSION",
    "bound_memory",
    "bound_memory_module",
    "build_report",
    "cost_module",
    "memory_document",
    "module_overview",
    "report_data",
    "summarize_inspect",
    "summarize_inspect_module",
]
