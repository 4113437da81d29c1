"""The human view of `inspect`: a module summary (counts, entry signature)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.console import Group, RenderableType, group
from rich.table import Table
from rich.text import Text


def _counts(title: str, rows: list[tuple[str, int]], top: int, style: str) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(style=style)
    table.add_column(justify="right", style="hlo.count")
    for key, count in rows[:top]:
        table.add_row(key, f"{count:,}")
    hidden = len(rows) - top
    if hidden > 0:
        table.add_row(Text(f"… {hidden} more", style="hlo.muted"), "")
    return table


@group()
def _module(summary: dict[str, Any], file: str, top: int) -> Iterator[RenderableType]:
    name = summary["module"] or "(no module header)"
    head = Text.assemble(("module ", "hlo.muted"), (name, "hlo.name"), ("  " + file, "hlo.muted"))
    yield head
    by_kind = ", ".join(f"{n} {k}" for k, n in summary["computations_by_kind"].items())
    yield Text(
        f"{summary['computations']:,} computations ({by_kind}), "
        f"{summary['instructions']:,} instructions"
    )
    if summary["entry"] is not None:
        entry = Table(
            title=f"entry {summary['entry']}", title_justify="left", box=None, pad_edge=False
        )
        entry.add_column("parameter", style="hlo.name")
        entry.add_column("shape", style="hlo.shape")
        for name, shape in summary["entry_parameters"][:top]:
            entry.add_row(name, shape)
        hidden = len(summary["entry_parameters"]) - top
        if hidden > 0:
            entry.add_row(Text(f"… {hidden} more", style="hlo.muted"), "")
        entry.add_row(Text("result", style="bold"), summary["entry_result"] or "")
        yield entry
    yield _counts("opcodes", summary["opcodes"], top, "hlo.opcode")
    if summary["fusions_by_kind"]:
        yield _counts("fusions by kind", summary["fusions_by_kind"], top, "hlo.opcode")
    yield Text("")


def render_inspect(summaries: list[tuple[str, dict[str, Any]]], top: int) -> RenderableType:
    """All modules of one `inspect` call, one block each."""
    return Group(*(_module(summary, file, top) for file, summary in summaries))
