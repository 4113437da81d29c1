"""The human view of `diff`: changed figures first, then the structural changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.console import RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.units import format_bytes, format_delta, format_figure


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


def _figures_table(
    title: str, rows: dict[str, dict[str, Any]], only_changed: bool, unit_key: str | None = None
) -> Table:
    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    table.add_column("", style="hlo.name")
    table.add_column("old", justify="right")
    table.add_column("new", justify="right")
    table.add_column("change", justify="right")
    for key, d in rows.items():
        if only_changed and not d["delta"]:
            continue
        unit = unit_key or key
        table.add_row(key, _value(unit, d["old"]), _value(unit, d["new"]), _delta_text(unit, d))
    return table


@group()
def _module(m: dict[str, Any], top: int) -> Iterator[RenderableType]:
    yield Text.assemble(
        ("diff ", "hlo.muted"), (m["old_module"], "hlo.name"), (" → ", "hlo.muted"),
        (m["new_module"], "hlo.name"),
    )  # fmt: skip
    if not m.get("changed", True):
        yield Text("no change", style="hlo.ok")
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
    comps = m["computations"]
    inst = m["instructions"]
    yield Text(
        f"computations: +{len(comps['added'])} -{len(comps['removed'])} "
        f"renamed {len(comps['renamed'])};  instructions: +{len(inst['added'])} "
        f"-{len(inst['removed'])} changed {len(inst['changed'])} renamed {len(inst['renamed'])}"
    )
    if inst["changed"]:
        table = Table(title="changed instructions", title_justify="left", box=None)
        table.add_column("computation", style="hlo.muted")
        table.add_column("instruction", style="hlo.name")
        table.add_column("old", style="hlo.shape")
        table.add_column("new", style="hlo.shape")
        for c in inst["changed"][:top]:
            old = (
                c["old_shape"]
                if c["old_opcode"] == c["new_opcode"]
                else (f"{c['old_opcode']} {c['old_shape']}")
            )
            new = (
                c["new_shape"]
                if c["old_opcode"] == c["new_opcode"]
                else (f"{c['new_opcode']} {c['new_shape']}")
            )
            table.add_row(c["computation"], c["name"], old, new)
        if len(inst["changed"]) > top:
            table.add_row(
                Text(f"… {len(inst['changed']) - top} more", style="hlo.muted"), "", "", ""
            )
        yield table
    for label, key in (("added", "added"), ("removed", "removed")):
        rows = inst[key]
        if rows:
            names = ", ".join(f"{r['computation']}/{r['name']}" for r in rows[:top])
            more = f" … {len(rows) - top} more" if len(rows) > top else ""
            yield Text(f"{label}: {names}{more}", style="hlo.muted")
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
