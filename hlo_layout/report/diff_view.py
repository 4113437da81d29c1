"""The human view of `diff`: what each side is, changed figures, then the structure, as tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from rich.console import Group, RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.units import format_bytes, format_delta, format_figure, format_number


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
    yield Text("")


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
