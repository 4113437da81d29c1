"""The human view of `diff`: what each side is, changed figures, then the structure, as tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from rich.console import Group, RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.memory.peak import legend
from hlo_layout.units import format_bytes, format_delta, format_figure, format_number, format_si


def _value(key: str, value: Any) -> str:
    if value is None:
        return "—"
    if key.endswith("bytes") and isinstance(value, int):
        return format_bytes(value)
    return format_figure(value)


def _delta_text(key: str, d: dict[str, Any]) -> Text:
    delta = d["delta"]
    text = format_delta(delta, d["percent"], as_bytes=key.endswith("bytes"))
    return Text(text, style="hlo.padding" if text and delta > 0 else "hlo.ok")


def _table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(box=None, pad_edge=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left")
    return table


def _titled(title: str, table: Table) -> RenderableType:
    """The title on a line of its own above the table (a narrow table would wrap it)."""
    return Group(Text(title, style="table.title"), table)


def _figures_table(
    title: str, rows: dict[str, dict[str, Any]], only_changed: bool, unit_key: str | None = None
) -> RenderableType:
    table = _table("", "old", "new", "change", right=("old", "new", "change"))
    for key, d in rows.items():
        if only_changed and not d["delta"]:
            continue
        unit = unit_key or key
        table.add_row(
            Text(key, style="hlo.name"),
            _value(unit, d["old"]),
            _value(unit, d["new"]),
            _delta_text(unit, d),
        )
    return _titled(title, table)


def _more(table: Table, rows: int, top: int) -> None:
    if rows > top:
        table.caption = f"{format_number(rows - top)} more (--top)"
        table.caption_justify = "left"


def _changes_by_kind(changed: list[dict[str, Any]], top: int) -> RenderableType:
    """How many changed instructions each kind of change has, with one example each."""
    kinds = Counter(c["change"] for c in changed)
    example: dict[str, str] = {}
    for c in changed:
        example.setdefault(c["change"], f"{c['computation']}/{c['name']}")
    table = _table("change", "instructions", "example", right=("instructions",))
    for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        table.add_row(kind, format_number(n), Text(example[kind], style="hlo.muted"))
    _more(table, len(kinds), top)
    return _titled("changes by kind", table)


def _changed_table(changed: list[dict[str, Any]], top: int) -> RenderableType:
    table = _table("computation", "instruction", "opcode", "change", "op_name")
    for c in changed[:top]:
        name = c["name"] if c["name"] == c["old_name"] else f"{c['old_name']} → {c['name']}"
        opcode = (
            c["new_opcode"]
            if c["old_opcode"] == c["new_opcode"]
            else f"{c['old_opcode']} → {c['new_opcode']}"
        )
        table.add_row(
            Text(c["computation"], style="hlo.muted"),
            Text(name, style="hlo.name"),
            opcode,
            Text(c["change"], style="hlo.shape"),
            c["op_name"] or "",
        )
    _more(table, len(changed), top)
    return _titled("changed instructions", table)


def _instructions_table(title: str, rows: list[dict[str, Any]], top: int) -> RenderableType:
    table = _table("computation", "instruction", "opcode", "shape", "op_name")
    for r in rows[:top]:
        table.add_row(
            Text(r["computation"], style="hlo.muted"),
            Text(r["name"], style="hlo.name"),
            r["opcode"],
            Text(r["shape"], style="hlo.shape"),
            r["op_name"] or "",
        )
    _more(table, len(rows), top)
    return _titled(title, table)


def _computations_table(title: str, names: list[str], top: int) -> RenderableType:
    table = _table("computation")
    for name in names[:top]:
        table.add_row(Text(name, style="hlo.name"))
    _more(table, len(names), top)
    return _titled(title, table)


@group()
def _structure(m: dict[str, Any], top: int) -> Iterator[RenderableType]:
    comps, inst = m["computations"], m["instructions"]
    renamed = len(inst["renamed"])
    counts = _table("", "paired", "added", "removed", "changed", "renamed",
                    right=("paired", "added", "removed", "changed", "renamed"))  # fmt: skip
    counts.add_row(
        Text("computations", style="hlo.name"), format_number(comps["paired"]),
        format_number(len(comps["added"])), format_number(len(comps["removed"])), "",
        format_number(len(comps["renamed"])),
    )  # fmt: skip
    counts.add_row(
        Text("instructions", style="hlo.name"), format_number(inst["paired"]),
        format_number(len(inst["added"])), format_number(len(inst["removed"])),
        format_number(len(inst["changed"])), format_number(renamed),
    )  # fmt: skip
    yield _titled("structure (paired by what survives recompilation, not by name)", counts)
    if not (comps["added"] or comps["removed"] or inst["added"] or inst["removed"]
            or inst["changed"]):  # fmt: skip
        note = "no structural change"
        if renamed or comps["renamed"]:
            note += " (the renamed differ only in numbering)"
        yield Text(note, style="hlo.ok")
        return
    if inst["changed"]:
        yield _changes_by_kind(inst["changed"], top)
        yield _changed_table(inst["changed"], top)
    if inst["added"]:
        yield _instructions_table("added instructions", inst["added"], top)
    if inst["removed"]:
        yield _instructions_table("removed instructions", inst["removed"], top)
    if comps["added"]:
        yield _computations_table("added computations", comps["added"], top)
    if comps["removed"]:
        yield _computations_table("removed computations", comps["removed"], top)


def _bytes_change(old: int | None, new: int | None) -> str:
    """`1.82MiB → 1.63MiB` or one figure when equal."""
    if old == new:
        return _value("bytes", new)
    return f"{_value('bytes', old)} → {_value('bytes', new)}"


def _signed(delta: int) -> Text:
    text = format_delta(delta, None, as_bytes=True) or "0B"
    return Text(text, style="hlo.padding" if delta > 0 else "hlo.ok" if delta < 0 else "")


def _headline(peak: dict[str, Any]) -> Text:
    out = Text()
    out.append("peak ", style="bold")
    out.append(_bytes_change(peak["old"], peak["new"]), style="bold")
    if peak["delta"]:
        out.append("  ")
        out.append(_delta_text("bytes", peak))
    else:
        out.append("  unchanged", style="hlo.ok")
    return out


def _step(s: dict[str, Any] | None) -> str:
    if s is None:
        return "—"
    return f"{s['instruction']} ({s['step']}/{s['of']})"


def _spaces_table(spaces: list[dict[str, Any]], tpu: bool) -> RenderableType:
    """Each space's headline old → new, then its parts and where its peak is."""
    table = _table("", "old", "new", "change", right=("old", "new", "change"))
    for s in spaces:
        estimate = " (estimate)" if s["estimate"]["old"] or s["estimate"]["new"] else ""
        table.add_row(
            Text(s["label"] + estimate, style="hlo.space"),
            _value("bytes", s["old"]),
            _value("bytes", s["new"]),
            _delta_text("bytes", s),
        )
        parts = [("  static", "static"), ("  temp allocation", "temp")]
        if s["heap_peak"] != s["temp"]:
            parts.append(("  heap peak", "heap_peak"))
        for label, key in parts:
            d = s[key]
            table.add_row(
                label, _value("bytes", d["old"]), _value("bytes", d["new"]), _delta_text("bytes", d)
            )
        old, new = (_step(s["peak_step"][k]) for k in ("old", "new"))
        table.add_row("  peak step", old, new, "moved" if s["peak_step"]["moved"] else "")
    return Group(
        _titled("per memory space", table),
        Text(legend(tpu), style="hlo.muted"),
    )


def _attribution_table(peak: dict[str, Any], top: int) -> RenderableType:
    """The change by key, then the parts no buffer holds, then what is left: they add up."""
    by = peak["by"]
    table = _table(by, "old", "new", "change", right=("old", "new", "change"))
    rows = [r for r in peak["attribution"] if r["delta_bytes"]]
    for r in rows[:top]:
        key = r["key"] if r["key"] is not None else f"(no {by})"
        table.add_row(
            Text(key, style="hlo.name"),
            _value("bytes", r["old_bytes"]),
            _value("bytes", r["new_bytes"]),
            _signed(r["delta_bytes"]),
        )
    if len(rows) > top:
        rest = sum(r["delta_bytes"] for r in rows[top:])
        table.add_row(
            Text(f"{len(rows) - top} more {by}s (--top)", style="hlo.muted"), "", "", _signed(rest)
        )
    for r in peak["explained"]:
        if r["delta_bytes"]:
            table.add_row(
                Text(r["key"], style="hlo.muted"),
                _value("bytes", r["old_bytes"]),
                _value("bytes", r["new_bytes"]),
                _signed(r["delta_bytes"]),
            )
    table.add_row(Text("unattributed", style="hlo.muted"), "", "", _signed(
        peak["unattributed_bytes"]))  # fmt: skip
    table.add_row(Text("total", style="bold"), _value("bytes", peak["old"]),
                  _value("bytes", peak["new"]), _signed(peak["delta"]))  # fmt: skip
    return _titled(f"why: the change by {by}, paired across the compiles", table)


def _buffer_text(b: dict[str, Any] | None) -> Text:
    if b is None:
        return Text("—", style="hlo.muted")
    index = f"{{{','.join(map(str, b['index']))}}}" if b["index"] else ""
    shape = b["shape"]
    if shape.startswith("("):  # a tuple's pointer table: its elements are buffers of their own
        shape = "(tuple table)"
    return Text.assemble((b["name"] + index, "hlo.name"), " ", (shape, "hlo.shape"))


def _buffers_table(peak: dict[str, Any], top: int) -> RenderableType:
    table = _table("change", "old", "new", "paired by", "source", right=("change",))
    rows = [p for p in peak["buffers"] if p["delta_bytes"]]
    for p in rows[:top]:
        at = p["new"] or p["old"]
        table.add_row(
            _signed(p["delta_bytes"]),
            _buffer_text(p["old"]),
            _buffer_text(p["new"]),
            p["how"],
            (at["source"] or at["op_name"] or "") if at else "",
        )
    _more(table, len(rows), top)
    return _titled("buffers held at the peak that changed, largest change first", table)


@group()
def _explanations(peak: dict[str, Any], remat: dict[str, Any], aliases: dict[str, Any],
                  top: int) -> Iterator[RenderableType]:  # fmt: skip
    if peak["padding"]:
        table = _table("tiling pattern", "old", "new", "change", right=("old", "new", "change"))
        for r in peak["padding"][:top]:
            table.add_row(r["pattern"], _value("bytes", r["old_bytes"]),
                          _value("bytes", r["new_bytes"]), _signed(r["delta_bytes"]))  # fmt: skip
        yield _titled("padding of the buffers held at the peak, by tiling pattern", table)
    if peak["moves"]:
        table = _table("buffer", "from", "to", "change", right=("change",))
        for r in peak["moves"][:top]:
            table.add_row(_buffer_text(r["new"]), f"S({r['old_space']})", f"S({r['new_space']})",
                          _signed(r["delta_bytes"]))  # fmt: skip
        yield _titled("moved to another memory space", table)
    xla, jax = remat["xla_remat_instructions"], remat["checkpoint_instructions"]
    if xla["old"] != xla["new"] or jax["old"] != jax["new"]:
        yield Text(
            f"rematerialization: {xla['old']} → {xla['new']} instructions cloned by XLA (.remat), "
            f"{jax['old']} → {jax['new']} recomputed for jax.checkpoint (rematted_computation)"
        )
    if remat["duplicated_op_names"]:
        table = _table("op_name", "old", "new", right=("old", "new"))
        for r in remat["duplicated_op_names"][:top]:
            table.add_row(r["op_name"], format_number(r["old"]), format_number(r["new"]))
        yield _titled("op_names with more instructions (duplicated work?)", table)
    if aliases["gained"] or aliases["lost"]:
        parts = []
        if aliases["gained"]:
            parts.append(f"{len(aliases['gained'])} more donated (outputs written into them)")
        if aliases["lost"]:
            parts.append(f"{len(aliases['lost'])} no longer donated")
        yield Text(
            f"donation (input_output_alias): {aliases['old']} → {aliases['new']} parameters; "
            + ", ".join(parts)
        )


def _compared(spaces: list[dict[str, Any]]) -> Text | None:
    """Where the two sides were compared, when one is not at its own peak step."""
    parts = []
    for s in spaces:
        steps = s["peak_step"]
        for side, other in (("old", "new"), ("new", "old")):
            here, there = steps[side], steps[other]
            if here is None or there is None or here["compared_at"] == here["step"]:
                continue
            parts.append(
                f"S({s['memory_space']}): the larger peak is {other.upper()}'s "
                f"({there['instruction']}, step {there['step']}); {side.upper()} is seen at its "
                f"counterpart ({here['compared_instruction']}, step {here['compared_at']}), not "
                f"at its own peak (step {here['step']}): `peak step moved` is the difference"
            )
    return Text("; ".join(parts), style="hlo.muted") if parts else None


@group()
def _memory(m: dict[str, Any], top: int) -> Iterator[RenderableType]:
    peak = m["peak"]
    yield _headline(peak)
    if not m.get("changed", True):
        return
    yield _spaces_table(peak["spaces"], peak["backend"]["new"] == "tpu")
    if peak["delta"]:
        yield _attribution_table(peak, top)
        compared = _compared(peak["spaces"])
        if compared is not None:
            yield compared
        if peak["unattributed_bytes"]:
            yield Text(f"unattributed: {peak['unattributed_note']}", style="hlo.muted")
        yield _buffers_table(peak, top)
    yield _explanations(peak, m["rematerialization"], m["aliasing"], top)


@group()
def _module(m: dict[str, Any], top: int) -> Iterator[RenderableType]:
    yield Text.assemble(
        ("diff ", "hlo.muted"), (m["old_module"], "hlo.name"), (" → ", "hlo.muted"),
        (m["new_module"], "hlo.name"),
    )  # fmt: skip
    files = (
        m["old_file"] if m["old_file"] == m["new_file"] else f"{m['old_file']} → {m['new_file']}"
    )
    yield Text(files, style="hlo.muted")
    for note in m.get("notes", ()):
        yield Text(f"note: {note}", style="hlo.padding")
    if m.get("peak") is not None:
        yield _memory(m, top)
    if not m.get("changed", True):
        inst = m["instructions"]
        renamed = len(inst["renamed"]) + len(m["computations"]["renamed"])
        yield Text(
            "no change" + (f" ({renamed} renamed by numbering only)" if renamed else ""),
            style="hlo.ok",
        )
        yield Text("")
        return
    yield _figures_table("figures", m["figures"], only_changed=False)
    spaces = {f"S({k})": v for k, v in m["space_bytes"].items()}
    if spaces:
        yield _figures_table("bytes per memory space", spaces, False, unit_key="bytes")
    if m["opcodes"]:
        yield _figures_table("opcodes (changed)", m["opcodes"], only_changed=True)
    if m["fusion_kinds"]:
        yield _figures_table("fusion kinds (changed)", m["fusion_kinds"], only_changed=True)
    yield _structure(m, top)
    if m.get("cost"):
        yield _cost(m["cost"], top)
    yield Text("")


def _cost(cost: dict[str, Any], top: int) -> RenderableType:
    """Flops and bytes accessed old → new (XLA's convention and loop-aware), then the
    instruction groups whose cost changed most (hlo_layout.cost.diff)."""
    table = _table("", "old", "new", "change", right=("old", "new", "change"))
    for convention, label in (("xla", "XLA (loops once)"), ("total", "loop-aware")):
        for key in ("flops", "bytes_accessed"):
            d = cost[convention][key]
            as_bytes = key != "flops"
            shown = [_cost_figure(v, as_bytes) for v in (d["old"], d["new"])]
            change = _cost_figure(d["delta"], as_bytes, signed=True) if d["delta"] else "0"
            if d["percent"] is not None and d["delta"]:
                change += f" ({d['percent']:+.1f}%)"
            table.add_row(f"{label} {key.replace('_', ' ')}", *shown, change)
    changes = _table("op_name", "opcode", "flops change", "bytes change",
                     right=("flops change", "bytes change"))  # fmt: skip
    for c in cost["changes"][:top]:
        changes.add_row(
            c["op_name"] or "(no op_name)",
            c["opcode"],
            _cost_figure(c["flops_delta"], False, signed=True),
            _cost_figure(c["physical_bytes_delta"], True, signed=True),
        )
    _more(changes, len(cost["changes"]) + cost["changes_hidden"], top)
    parts: list[RenderableType] = [_titled("cost", table)]
    if cost["changes"]:
        parts.append(_titled("cost changed most", changes))
    return Group(*parts)


def _cost_figure(value: float, as_bytes: bool, *, signed: bool = False) -> str:
    """Bytes as every view prints them (units.format_bytes), flops as the cost view does."""
    sign = ("+" if value > 0 else "-" if value < 0 else "") if signed else ""
    magnitude = abs(value) if signed else value
    return sign + (format_bytes(round(magnitude)) if as_bytes else format_si(magnitude, "FLOP"))


@group()
def render_diff(document: dict[str, Any], top: int) -> Iterator[RenderableType]:
    for m in document["modules"]:
        yield _module(m, top)
    for side, key in (("old", "unpaired_old"), ("new", "unpaired_new")):
        for item in document.get(key, ()):
            yield Text(f"only in {side}: {item['module']} ({item['file']})", style="hlo.muted")
    for name in document.get("ambiguous", ()):
        yield Text(
            f"note: module name {name} repeats; such modules pair only by relative path",
            style="hlo.muted",
        )
