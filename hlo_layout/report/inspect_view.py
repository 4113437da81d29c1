"""The human view of `inspect`: where memory goes first (XLA's peak per memory space, padding),
then the module's structure (sizes of its signature and buffers), opcode counts last."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.console import Group, RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.layout.module_memory import MemoryReport
from hlo_layout.report.memory_view import render_memory_detail, render_memory_lead
from hlo_layout.report.model import ModuleSummary
from hlo_layout.report.units import human_bytes


def _counts(title: str, rows: list[tuple[str, int]], top: int, style: str) -> Table:
    table = Table(
        title=title,
        title_justify="left",
        show_header=False,
        box=None,
        pad_edge=False,
        min_width=len(title),
    )
    table.add_column(style=style)
    table.add_column(justify="right", style="hlo.count")
    for key, count in rows[:top]:
        table.add_row(key, f"{count:,}")
    hidden = len(rows) - top
    if hidden > 0:
        table.add_row(Text(f"… {hidden} more", style="hlo.muted"), "")
    return table


@group()
def _module(
    summary: ModuleSummary, file: str, top: int, report: MemoryReport | None
) -> Iterator[RenderableType]:
    name = summary.module or "(no module header)"
    head = Text.assemble(("module ", "hlo.muted"), (name, "hlo.name"), ("  " + file, "hlo.muted"))
    yield head
    if report is not None:
        yield render_memory_lead(report, top)
    by_kind = ", ".join(f"{n} {k}" for k, n in summary.computations_by_kind.items())
    yield Text(
        f"{summary.computations:,} computations ({by_kind}), "
        f"{summary.instructions:,} instructions"
        + (f"; entry {summary.entry}" if summary.entry else "")
    )
    yield Text("")
    if report is not None:
        yield render_memory_detail(report, top)
        yield Text("")
    yield _counts("opcodes", summary.opcodes, top, "hlo.opcode")
    if summary.fusions_by_kind:
        yield _counts("fusions by kind", summary.fusions_by_kind, top, "hlo.opcode")
    yield Text("")


def render_inspect(
    summaries: Sequence[tuple[str, ModuleSummary]],
    top: int,
    reports: Sequence[MemoryReport | None] | None = None,
) -> RenderableType:
    """All modules of one `inspect` call, one block each (with its memory report when given),
    led by a row per module when there are several."""
    reports = reports or [None] * len(summaries)
    blocks: list[RenderableType] = [
        _module(summary, file, top, r) for (file, summary), r in zip(summaries, reports)
    ]
    if len(summaries) > 1:
        blocks[:0] = [_modules_table(summaries, reports), Text("")]
    return Group(*blocks)


def _modules_table(
    summaries: Sequence[tuple[str, ModuleSummary]], reports: Sequence[MemoryReport | None]
) -> Table:
    """One row per module: its peak and parts (the `memory` headline), padding, backend."""
    t = Table(title="modules", title_justify="left", box=None, pad_edge=False, title_style="bold")
    figures = ("peak", "static", "temp allocation", "padding")
    for col in ("module", *figures, "backend", "file"):
        t.add_column(col, justify="right" if col in figures else "left")
    for (file, summary), r in zip(summaries, reports):
        ma = r.peak if r is not None else None
        padding = sum(x.padding_bytes for x in r.totals) if r is not None else None
        t.add_row(
            summary.module or "(unnamed)",
            human_bytes(ma.peak_bytes) + ("" if ma.scheduled else " ~") if ma else "-",
            human_bytes(ma.static_bytes) if ma else "-",
            human_bytes(ma.temp_allocation_bytes) if ma else "-",
            human_bytes(padding) if padding is not None else "-",
            (ma.backend + (f" {ma.tpu_generation}" if ma.tpu_generation else "")) if ma else "-",
            file,
        )
    return t
