"""The human view of a memory report: entry signature with bytes, the largest buffers, padding
grouped by tiling pattern, bytes per memory space, and the compiler's real allocations.

Byte counts are printed as XLA prints them (KiB/MiB/GiB, `report/units.py`); expansions as TPU
out-of-memory reports do ("12.6x").
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType, group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hlo_layout.layout.memory_space import memory_space, space_label
from hlo_layout.layout.module_memory import LeafRow, MemoryReport
from hlo_layout.report.units import expansion, human_bytes
from hlo_layout.units import format_bytes_exact


def _bytes(n: int | None) -> str:
    return "?" if n is None else human_bytes(n)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=None, pad_edge=False, title_style="bold")


def _more(table: Table, hidden: int, what: str = "more") -> None:
    if hidden > 0:
        table.add_row(Text(f"… {hidden:,} {what}", style="hlo.muted"))


def _index(index: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, index)) + "}"


def _space(number: int, tpu: bool) -> Text:
    return Text(f"S({number}) {memory_space(number, tpu=tpu).short}", style="hlo.space")


def _padding_cell(row: LeafRow) -> Text:
    pad = row.padding_bytes
    if not pad:
        return Text("-" if pad == 0 else "?", style="hlo.muted")
    return Text(human_bytes(pad), style="hlo.padding")


def _leaves(title: str, rows: tuple[LeafRow, ...], top: int, tpu: bool, *, params: bool) -> Table:
    table = _table(title)
    with_index = any(r.index for r in rows)
    table.add_column("parameter" if params else "value", style="hlo.name", max_width=32)
    if with_index:
        table.add_column("index", style="hlo.muted", no_wrap=True)
    table.add_column("shape", style="hlo.shape", overflow="fold", ratio=1)
    table.add_column("logical", justify="right", no_wrap=True)
    table.add_column("physical", justify="right", style="bold", no_wrap=True)
    table.add_column("padding", justify="right", no_wrap=True)
    table.add_column("space", no_wrap=True)

    def add(name: RenderableType, index: str, *cells: RenderableType) -> None:
        table.add_row(name, *((index,) if with_index else ()), *cells)

    for row in rows[:top]:
        add(
            row.name,
            _index(row.index) if row.index else "",
            row.shape,
            _bytes(row.logical_bytes),
            _bytes(row.physical_bytes),
            _padding_cell(row),
            _space(row.memory_space, tpu),
        )
    _more(table, len(rows) - top)
    if len(rows) > 1:
        known = [r for r in rows if r.physical_bytes is not None and r.logical_bytes is not None]
        logical = sum(r.logical_bytes or 0 for r in known)
        physical = sum(r.physical_bytes or 0 for r in known)
        add(
            Text("total", style="bold"),
            "",
            Text(f"{len(rows):,} arrays", style="hlo.muted"),
            human_bytes(logical),
            human_bytes(physical),
            Text(human_bytes(physical - logical), style="hlo.padding"),
            "",
        )
    return table


def _buffers(report: MemoryReport, top: int) -> Table:
    table = _table("largest buffers")
    table.add_column("value", style="hlo.name", max_width=32)
    table.add_column("opcode", style="hlo.opcode", max_width=20)
    table.add_column("shape", style="hlo.shape", overflow="fold", ratio=1)
    table.add_column("physical", justify="right", style="bold", no_wrap=True)
    table.add_column("padding", justify="right", no_wrap=True)
    table.add_column("space", no_wrap=True)
    for row in report.buffers[:top]:
        name = row.name + (_index(row.index) if row.index else "")
        table.add_row(
            name,
            row.opcode or "",
            row.shape,
            _bytes(row.physical_bytes),
            _padding_cell(row),
            _space(row.memory_space, report.tpu),
        )
    _more(table, report.buffer_count - min(top, len(report.buffers)))
    return table


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


@group()
def _padding(report: MemoryReport, top: int) -> Iterator[RenderableType]:
    groups = report.padding
    total_pad = sum(g.padding_bytes for g in groups)
    values = _plural(sum(g.values for g in groups), "value")
    yield Text.assemble(
        ("padding by tiling pattern", "bold"),
        f"  {human_bytes(total_pad)} of padding in {values}",
    )
    per_group = max(1, min(3, top))
    for g in groups[:top]:
        yield Padding(
            Text.assemble(
                (g.pattern, "hlo.dtype"),
                f"  {_plural(g.values, 'value')}: Size {human_bytes(g.physical_bytes)}, ",
                f"Unpadded {human_bytes(g.logical_bytes)}, ",
                (f"padding {human_bytes(g.padding_bytes)}", "hlo.padding"),
                f" ({expansion(g.physical_bytes, g.logical_bytes)} expansion)",
            ),
            (0, 0, 0, 2),
        )
        for row in g.rows[:per_group]:
            count = f" ×{row.values:,}" if row.values > 1 else ""
            yield Padding(
                Text.assemble(
                    (row.shape, "hlo.shape"),
                    count,
                    f"  Size {human_bytes(row.physical_bytes)}, ",
                    f"Unpadded {human_bytes(row.logical_bytes)} ",
                    (
                        f"({expansion(row.physical_bytes, row.logical_bytes)} expansion)",
                        "hlo.padding",
                    ),
                    ("  e.g. " + row.example, "hlo.muted"),
                ),
                (0, 0, 0, 4),
            )
            if row.reasons:
                yield Padding(Text("; ".join(row.reasons), style="hlo.muted"), (0, 0, 0, 6))
        hidden_rows = len(g.rows) - per_group
        if hidden_rows > 0:
            yield Padding(Text(f"… {_plural(hidden_rows, 'more shape')}", style="hlo.muted"),
                          (0, 0, 0, 4))  # fmt: skip
    hidden = len(groups) - top
    if hidden > 0:
        yield Padding(Text(f"… {_plural(hidden, 'more pattern')}", style="hlo.muted"), (0, 0, 0, 2))


def _spaces(report: MemoryReport) -> Table:
    title = "values by memory space"
    if report.scope is None:
        title += " (each value once; no liveness)"
    table = _table(title)
    table.add_column("space")
    table.add_column("values", justify="right", style="hlo.count")
    table.add_column("logical", justify="right")
    table.add_column("physical", justify="right", style="bold")
    table.add_column("padding", justify="right", style="hlo.padding")
    for t in report.totals:
        table.add_row(
            Text(space_label(t.memory_space, report.tpu), style="hlo.space"),
            f"{t.values:,}" + (f" (+{t.unknown_values} unsized)" if t.unknown_values else ""),
            human_bytes(t.logical_bytes),
            human_bytes(t.physical_bytes),
            human_bytes(t.padding_bytes),
        )
    return table


@group()
def _allocations(report: MemoryReport, top: int) -> Iterator[RenderableType]:
    summary = report.allocations
    if summary is None:
        return
    matching = summary.values_checked - len(summary.mismatches)
    yield Text.assemble(
        ("compiler allocations", "bold"),
        ("  " + summary.file, "hlo.muted"),
    )
    yield Text.assemble(
        f"  {len(summary.allocations):,} allocations, {human_bytes(summary.total_bytes)} total; ",
        (
            f"{matching:,}/{summary.values_checked:,} array sizes equal ours",
            "hlo.ok" if not summary.mismatches else "hlo.error",
        ),
    )
    if summary.unknown_instructions:
        yield Text(
            f"  {summary.unknown_instructions:,} values name instructions not in this dump "
            "(is the buffer assignment from another module?)",
            style="hlo.error",
        )
    colors = _table("")
    colors.add_column("memory space / color", style="hlo.space")
    colors.add_column("allocations", justify="right", style="hlo.count")
    colors.add_column("bytes", justify="right", style="bold")
    for c in summary.colors:
        colors.add_row(c.label, f"{c.allocations:,}", human_bytes(c.bytes))
    yield colors
    table = _table("largest allocations")
    table.add_column("#", justify="right", style="hlo.muted", no_wrap=True)
    table.add_column("size", justify="right", style="bold", no_wrap=True)
    table.add_column("color", justify="right", style="hlo.space", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("values", justify="right", style="hlo.count", no_wrap=True)
    table.add_column("shared by (largest first)", overflow="fold", ratio=1)
    for a in summary.allocations[:top]:
        kind = a.kind + (f" {a.parameter_number}" if a.parameter_number is not None else "")
        shared = ", ".join(
            f"{v.name}{_index(v.index) if v.index else ''} {human_bytes(v.size)}"
            for v in a.values[:2]
        )
        if len(a.values) > 2:
            shared += f", … {len(a.values) - 2} more"
        table.add_row(
            str(a.index),
            human_bytes(a.size),
            str(a.color),
            kind,
            str(len(a.values)),
            Text(shared, style="hlo.name"),
        )
    _more(table, len(summary.allocations) - top)
    yield table
    for m in summary.mismatches[:top]:
        yield Text(
            f"  size differs: {m.name} {m.shape}: compiler {format_bytes_exact(m.compiler_bytes)}, "
            f"ours {format_bytes_exact(m.our_bytes) if m.our_bytes is not None else '?'}",
            style="hlo.error",
        )


def _peak(report: MemoryReport) -> RenderableType | None:
    """The peak and its parts per memory space, as `hlo-layout memory` shows them (the same
    renderer: report/peak_view.py), with a pointer to the whole story."""
    ma = report.peak
    if ma is None:
        return None
    from hlo_layout.report.peak_view import peak_block

    return Group(
        peak_block(ma),
        Text("hlo-layout memory DUMP: what is live at the peak, and why", style="hlo.muted"),
    )


@group()
def render_memory_lead(report: MemoryReport, top: int) -> Iterator[RenderableType]:
    """What a reader wants first: XLA's peak per memory space, then padding by tiling pattern."""
    peak = _peak(report)
    if peak is not None:
        yield peak
        yield Text("")
    if report.padding:
        yield _padding(report, top)
        yield Text("")


@group()
def render_memory_detail(report: MemoryReport, top: int) -> Iterator[RenderableType]:
    """The rest: entry signature with bytes, largest buffers, bytes per space, allocations."""
    what = "entry" if report.scope is None else report.scope
    yield _leaves(f"{what} parameters", report.entry_parameters, top, report.tpu, params=True)
    yield Text("")
    outputs = _leaves(f"{what} outputs", report.entry_outputs, top, report.tpu, params=False)
    yield outputs
    if report.output_pointer_table_bytes:
        yield Text(
            f"  + tuple table {human_bytes(report.output_pointer_table_bytes)}"
            + (" (512 B per tuple on TPU)" if report.tpu else " (8 B per element)"),
            style="hlo.muted",
        )
    yield Text("")
    yield _buffers(report, top)
    yield Text("")
    yield _spaces(report)
    if report.allocations is not None:
        yield Text("")
        yield _allocations(report, top)


@group()
def render_memory(report: MemoryReport, top: int) -> Iterator[RenderableType]:
    """The memory sections of one module's `inspect` view, led by XLA's peak and padding."""
    yield render_memory_lead(report, top)
    yield render_memory_detail(report, top)
