"""The human view of `hlo-layout cost`: XLA's totals beside the loop-aware ones, the loops and
their trip counts, the roofline of the chip, the instructions where time goes, and where
padding makes the hardware move more than it uses; and the one-line summary `inspect` shows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.console import Group, RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.cost.model import ModuleCost
from hlo_layout.cost.summary import CostSummary, RooflineRow
from hlo_layout.units import format_bytes, format_seconds, format_share, format_si

#: A fusion whose operands move this much more than they use is listed under "padding".
INFLATION = 1.05


def render_cost(summaries: Sequence[CostSummary]) -> RenderableType:
    """Every module of one `cost` call, one block each."""
    return Group(*(_module(s) for s in summaries))


def cost_line(cost: ModuleCost) -> Text:
    """One line for `inspect`: XLA's flops and bytes, and the loop-aware flops when loops
    multiply them."""
    xla, total = cost.xla, cost.total
    line = Text.assemble(
        ("cost ", "hlo.muted"),
        (format_si(xla.flops, "FLOP"), "hlo.count"),
        f", {format_si(xla.transcendentals, 'transcendental')}s, "
        f"{format_bytes(int(xla.bytes_accessed))} accessed (XLA's HloCostAnalysis)",
    )
    if total.flops != xla.flops or total.bytes_accessed != xla.bytes_accessed:
        line.append(
            f"; with loops {format_si(total.flops, 'FLOP')}, "
            f"{format_bytes(int(total.bytes_accessed))}"
        )
    unknown = sum(loop.trip_count is None for loop in cost.loops)
    if unknown:
        line.append(f" ({unknown} loop(s) of unknown count once)", style="hlo.muted")
    return line


def _totals(s: CostSummary) -> Table:
    c = s.cost
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="hlo.muted")
    for name, justify in (("", "left"), ("flops", "right"), ("transcendentals", "right"),
                          ("bytes", "right"), ("physical bytes", "right")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    xla, total = c.xla, c.total
    table.add_row(
        Text("XLA (loops once)", style="hlo.muted"),
        format_si(xla.flops, "FLOP"),
        format_si(xla.transcendentals, ""),
        format_bytes(int(xla.bytes_accessed)),
        "",
    )
    table.add_row(
        Text("total (loop-aware)", style="hlo.name"),
        format_si(total.flops, "FLOP"),
        format_si(total.transcendentals, ""),
        format_bytes(int(total.bytes_accessed)),
        format_bytes(int(total.physical_bytes_accessed)),
    )
    return table


def _loops(s: CostSummary) -> Iterator[RenderableType]:
    for loop in s.cost.loops:
        count = f"×{loop.trip_count:,}" if loop.trip_count is not None else "×1 (unknown)"
        yield Text.assemble(
            ("loop ", "hlo.muted"), (loop.instruction, "hlo.name"), f" {count}  ",
            (loop.how, "hlo.muted"),
        )  # fmt: skip
    for branch in s.cost.branches:
        yield Text.assemble(
            ("conditional ", "hlo.muted"), (branch.instruction, "hlo.name"),
            f" counts its costliest branch {branch.counted} (of {len(branch.branches)})",
        )  # fmt: skip


def _roofline_line(s: CostSummary) -> Text:
    roof = s.roofline
    if roof is None:
        return Text("no roofline: " + s.chip_reason, style="hlo.muted")
    line = Text.assemble(
        ("roofline ", "hlo.muted"),
        (roof.chip, "hlo.name"),
        f"  {format_si(roof.peak_flops_per_second, 'FLOP/s')} bf16, "
        f"{format_si(roof.bandwidth, 'B/s')}: at least ",
        (format_seconds(s.bound_seconds or 0.0), "hlo.count"),
    )
    if s.bound_seconds and s.compute_seconds is not None:
        line.append(f", {format_share(s.compute_seconds, s.bound_seconds)} of it compute-bound")
    return line


def _rows(s: CostSummary) -> Table:
    roofline = s.roofline is not None
    title = "where time goes (bound time over all executions)" if roofline else "largest flops"
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    columns = [("instruction", "left"), ("opcode", "left"), ("flops", "right"),
               ("bytes moved", "right"), ("flop/B", "right")]  # fmt: skip
    if roofline:
        columns += [("time", "right"), ("bound", "left"), ("share", "right")]
    columns += [("op_name", "left")]
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for r in s.rows:
        t = r.cost.totals
        cells: list[RenderableType] = [
            Text(r.cost.name + _times(r), style="hlo.name"),
            Text(r.cost.opcode, style="hlo.opcode"),
            format_si(t.flops, ""),
            format_bytes(int(t.physical_bytes_accessed)),
            f"{r.arithmetic_intensity:.3g}" if r.arithmetic_intensity is not None else "-",
        ]
        if roofline:
            cells += [
                format_seconds(r.bound_seconds or 0.0),
                r.bound or "",
                f"{100 * r.share:.1f}%" if r.share is not None else "-",
            ]
        cells.append(Text(r.op_name or "", style="hlo.muted"))
        table.add_row(*cells)
    if s.hidden:
        table.add_row(Text(f"… {s.hidden:,} more", style="hlo.muted"))
    return table


def _times(row: RooflineRow) -> str:
    return f" ×{row.cost.executions:,}" if row.cost.executions != 1 else ""


def _padding(s: CostSummary) -> Table | None:
    """Operands of the shown rows whose physical size moves more than they use."""
    table = Table(
        title="padding inflates traffic (operand bytes moved vs used)",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    for name, justify in (("instruction", "left"), ("operand", "left"), ("used", "right"),
                          ("moved", "right"), ("space", "right")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    rows = 0
    for r in s.rows:
        for t in r.cost.operand_traffic():
            if t.used_bytes > 0 and t.moved_bytes > INFLATION * t.used_bytes:
                table.add_row(
                    Text(r.cost.name, style="hlo.name"),
                    t.name,
                    format_bytes(int(t.used_bytes)),
                    Text(format_bytes(int(t.moved_bytes)), style="hlo.padding"),
                    f"S({t.memory_space})" if t.memory_space else "",
                )
                rows += 1
    return table if rows else None


@group()
def _module(s: CostSummary) -> Iterator[RenderableType]:
    c = s.cost
    yield Text.assemble(
        ("module ", "hlo.muted"), (c.module.name or "(no module header)", "hlo.name"),
        ("  " + c.file, "hlo.muted"),
    )  # fmt: skip
    yield _totals(s)
    yield from _loops(s)
    yield _roofline_line(s)
    yield Text("")
    yield _rows(s)
    padding = _padding(s)
    if padding is not None:
        yield Text("")
        yield padding
    for note in s.notes:
        yield Text("note: " + note, style="hlo.muted")
    yield Text("")


__all__ = ["cost_line", "render_cost"]
