"""The data an HTML report embeds: `{"inspect": ..., "memory": ...}` in bounded, summary form.

The page must stay small (a 17.8 MB dump gives a report under 2 MB), so the documents are
embedded in summary form (README "HTML report" lists what is dropped):

- inspect: each module object keeps every module-level key of `inspect --format json` except
  `computations` (every instruction), which becomes counts (`computations_by_kind`,
  `instructions`, `opcodes`, `fusions_by_kind`); its `padding_groups` gain a tile-grid picture
  per pattern; long lists keep their first `top` rows and say how many there were
  (`<key>_total`).
- memory: each module keeps every key of `memory --format json` but `values` (every value's live
  range), replaced by `values_total`; `live_at_peak`, `by_source`, `by_op_name` and the
  compiler's allocations are cut to `top` rows, with `<key>_total`. The page adds: `legend`, the
  line under the figures; `arguments_group`, the source-line group of the program's arguments
  (a buffer's `source` cell when it has no line and is an `argument`); each space's `label`
  (`S(1) fast (VMEM)`, as the terminal names it); `live_at_peak_space`, the space whose peak
  step those lists are of; and `space_peaks`, the same lists at the peak step of every other
  space with buffers live there (the page's space picker).
- cost: per module, the chip's roofs (bandwidth, peak per element-type class) and the `top`
  instructions by roofline time as points (flops, physical bytes, intensity, time), with
  `points_total`; no roofs when no chip is known (a CPU dump).
- diff (two dumps only): `diff --format json`'s module pair, bounded by `bound_diff`.

Pure: builds plain dicts, no Rich, no HTML.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hlo_layout.layout.memory_space import space_label
from hlo_layout.memory.analysis import SCHEMA_VERSION as MEMORY_SCHEMA_VERSION
from hlo_layout.memory.attribution import ARGUMENTS
from hlo_layout.memory.footprint import MemoryReport, memory_report
from hlo_layout.memory.peak import legend
from hlo_layout.report.html.grids import pattern_picture
from hlo_layout.report.model import SCHEMA_VERSION, memory_json, module_summary
from hlo_layout.syntax.opcodes import FUSION
from hlo_layout.syntax.tree import Module

if TYPE_CHECKING:
    from hlo_layout.memory import MemoryAnalysis
    from hlo_layout.memory.backend import BackendChoice
    from hlo_layout.reader.loader import Dump

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


#: The lists of the buffers live at a peak step (`MemoryAnalysis.peak_lists`), cut to `top`.
PEAK_LISTS = ("live_at_peak", "by_source", "by_op_name")


def bound_memory_module(obj: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """A `memory --format json` module object without `values`, with lists cut to `top` rows
    and every timeline at most TIMELINE_POINTS numbers."""
    out = dict(obj)
    values = out.pop("values", None)
    if isinstance(values, list):
        out["values_total"] = len(values)
    for key in PEAK_LISTS:
        _cut(out, key, top)
    if isinstance(out.get("space_peaks"), list):
        out["space_peaks"] = [dict(p) for p in out["space_peaks"]]
        for p in out["space_peaks"]:
            for key in PEAK_LISTS:
                _cut(p, key, top)
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
    measured: Sequence[tuple[str, MemoryReport]],
) -> tuple[dict[str, Any], list[str]]:
    """`memory --format json` of measured modules (file, memory report): each report's peak
    analysis (`MemoryReport.peak`, made once for the whole page), with the legend the page
    shows under the figures and notes for modules with none (no computation)."""
    out, notes = [], []
    for file, report in measured:
        ma = report.peak
        if ma is None:
            notes.append(f"{file}: no peak-memory analysis (the module has no entry computation)")
            continue
        d = ma.to_dict()
        _page_keys(ma, d)
        if d.get("file") is None:
            d["file"] = file
        out.append(d)
    return {"schema_version": MEMORY_SCHEMA_VERSION, "modules": out}, notes


def cost_module(
    module: Module,
    file: str | None,
    *,
    top: int = DEFAULT_TOP,
    chip: str | None = None,
    backend: BackendChoice | None = None,
    target_arguments: str | None = None,
) -> dict[str, Any] | None:
    """The roofline plot's data of one module: its totals, the roofs of `chip` (default: the
    chip the dump was compiled for, when its backend — `backend` as the reader chose it — and
    the TPU target arguments say) and the `top` instructions with flops as points; None when
    the module cannot be costed."""
    from hlo_layout.cost.model import module_cost
    from hlo_layout.cost.roofline import chip_for, roofline, type_class
    from hlo_layout.cost.summary import summarize
    from hlo_layout.errors import HloLayoutError

    name = file or "<string>"
    try:
        cost = module_cost(module, name)
    except HloLayoutError:
        return None
    why = f"--chip {chip}"
    if chip is None:
        chip, why = chip_for(module, file, backend, target_arguments)
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


def _page_keys(ma: MemoryAnalysis, d: dict[str, Any]) -> None:
    """What the page adds to a module of `memory --format json` (see the module docstring)."""
    tpu = ma.backend == "tpu"
    d["legend"] = legend(tpu)
    d["arguments_group"] = ARGUMENTS
    for space in d["spaces"]:
        space["label"] = space_label(space["memory_space"], tpu)
    shown = ma.peak_space
    d["live_at_peak_space"] = shown.memory_space if shown is not None else None
    d["space_peaks"] = [
        {"memory_space": s.memory_space, **ma.peak_lists(s.memory_space)}
        for s in ma.spaces
        if s is not shown and s.live_bytes
    ]


def build_report(
    dumps: Sequence[Dump],
    *,
    top: int = DEFAULT_TOP,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """`report_data` for dumps read by `hlo_layout.reader.loader`: the inspect overview of each
    module, its peak-memory analysis and its roofline; given exactly two, also `diff`: what
    changed from the first to the second (`diff`'s document for the pair, bounded:
    `bound_diff`)."""
    measured = [
        (
            d.file,
            d.module,
            memory_report(
                d.module,
                assignment=d.assignment,
                top=top,
                progress=progress,
                file=d.file,
                backend=d.backend,
            ),
        )
        for d in dumps
    ]
    data = report_of(measured, top=top)
    if len(dumps) == 2:
        from hlo_layout.check.diff import module_diff
        from hlo_layout.check.metrics import measure_module

        (old, old_memory), (new, new_memory) = (
            measure_module(d, report) for d, (_, _, report) in zip(dumps, measured, strict=True)
        )
        data["diff"] = bound_diff(
            module_diff(dumps[0].module, dumps[1].module, old, new, old_memory, new_memory,
                        top=top),
            top=top,
        )  # fmt: skip
    return data


def bound_diff(m: dict[str, Any], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """A module pair of `diff --format json`, bounded for the page: the attribution's first `top`
    rows (the rest summed in `attribution_rest_bytes`, so the rows still add up), `top` buffer
    pairs, changed/added/removed instructions and changes by kind; renamed ones only counted."""
    out = {k: v for k, v in m.items() if k not in ("instructions", "largest_buffers")}
    peak = m.get("peak")
    if peak is not None:
        peak = dict(peak)
        rows = [r for r in peak["attribution"] if r["delta_bytes"]]
        peak["attribution_rest_bytes"] = sum(r["delta_bytes"] for r in rows[top:])
        peak["attribution_total"] = len(rows)
        peak["attribution"] = rows[:top]
        peak["buffers"] = [b for b in peak["buffers"] if b["delta_bytes"]][:top]
        peak["spaces"] = [
            {k: v for k, v in s.items() if k not in ("attribution", "explained")}
            for s in peak["spaces"]
        ]
        out["peak"] = peak
    inst = m["instructions"]
    kinds = Counter(c["change"] for c in inst["changed"])
    out["instructions"] = {
        "paired": inst["paired"],
        "renamed": len(inst["renamed"]),
        "changes_by_kind": [
            [k, n] for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        ][:top],
        **{k: inst[k][:top] for k in ("changed", "added", "removed")},
        **{f"{k}_total": len(inst[k]) for k in ("changed", "added", "removed")},
    }
    comps = m["computations"]
    out["computations"] = {
        "paired": comps["paired"],
        "added": comps["added"][:top],
        "removed": comps["removed"][:top],
        "renamed": len(comps["renamed"]),
    }
    return out


def report_of(
    measured: Sequence[tuple[str, Module, MemoryReport]], *, top: int = DEFAULT_TOP
) -> dict[str, Any]:
    """`report_data` for modules already measured (file, module, memory report), with each
    module's roofline (`cost_module`, on the chip of the backend its memory report used)."""
    overviews = [
        module_overview(module, file, report, top=top) for file, module, report in measured
    ]
    inspect = {"schema_version": SCHEMA_VERSION, "summary": True, "modules": overviews}
    memory, notes = memory_document([(file, report) for file, _, report in measured])
    data = report_data(inspect, memory, notes=notes, top=top)
    data["cost"] = {
        "modules": [
            cost_module(module, file, top=top, backend=_backend_of(report))
            for file, module, report in measured
        ]
    }
    return data


def _backend_of(report: MemoryReport) -> BackendChoice | None:
    """The backend the memory report's analysis used (as the reader chose it), for the chip."""
    from hlo_layout.memory.backend import BackendChoice, backend_named

    peak = report.peak
    if peak is None:
        return None
    generation = {"v5p": "-v5p", "v6e": "-v6e"}.get(peak.tpu_generation, "")
    try:
        backend = backend_named(
            peak.backend + generation if peak.backend == "tpu" else peak.backend
        )
    except KeyError:
        return None
    return BackendChoice(backend, peak.backend_note or peak.backend, peak.backend_assumed)


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
    "REPORT_SCHEMA_VERSION",
    "bound_diff",
    "bound_memory",
    "bound_memory_module",
    "build_report",
    "cost_module",
    "memory_document",
    "module_overview",
    "report_data",
    "report_of",
    "summarize_inspect",
    "summarize_inspect_module",
]
