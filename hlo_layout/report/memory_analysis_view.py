"""Rich view of `hlo-layout memory`: the peak per memory space, a memory-over-program-order chart,
the buffers live at the peak and the peak broken down by op_name."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from hlo_layout.memory import LiveBuffer, MemoryAnalysis
from hlo_layout.report.memory_view import space_label
from hlo_layout.report.units import human_bytes
from hlo_layout.units import format_share

_BLOCKS = " ▁▂▃▄▅▆▇█"
CHART_WIDTH = 72
CHART_ROWS = 4


def sparkline(series: list[int], width: int = CHART_WIDTH, rows: int = CHART_ROWS) -> list[str]:
    """`rows` lines of block characters, max-pooled to `width` columns; the peak is kept."""
    if not series:
        return [""]
    bucket = max(1, -(-len(series) // width))
    cols = [max(series[k : k + bucket]) for k in range(0, len(series), bucket)]
    top = max(cols) or 1
    levels = [round(c * rows * 8 / top) for c in cols]
    lines = []
    for r in range(rows - 1, -1, -1):
        line = ""
        for lv in levels:
            part = min(8, max(0, lv - r * 8))
            line += _BLOCKS[part]
        lines.append(line)
    return lines


class _Chart:
    """The sparkline of one space, as wide as the console allows (at most `CHART_WIDTH`)."""

    def __init__(self, ma: MemoryAnalysis, space: int) -> None:
        self.ma = ma
        self.space = space

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield _chart(self.ma, self.space, max(8, min(CHART_WIDTH, options.max_width - 11)))


def _chart(ma: MemoryAnalysis, space: int, width: int = CHART_WIDTH) -> Text:
    series = ma.timelines.get(space, [])
    lines = sparkline(series, width)
    sp = next(s for s in ma.spaces if s.memory_space == space)
    bucket = max(1, -(-len(series) // width))
    mark = " " * (sp.peak_step // bucket) + "▲"
    out = Text()
    out.append(f"{human_bytes(sp.peak_live_bytes):>9} ┤", style="dim")
    out.append(lines[0] + "\n", style="cyan")
    for line in lines[1:]:
        out.append(" " * 10 + "│", style="dim")
        out.append(line + "\n", style="cyan")
    out.append(" " * 10 + "└", style="dim")
    out.append(mark, style="bold red")
    label = f"peak at step {sp.peak_step} ({sp.peak_instruction}) of {len(series)}"
    # Beside the marker when it fits in the chart's width, else whole on a line of its own
    # (a console would wrap it at a space and strand its last word).
    if len(mark) + 1 + len(label) <= width:
        out.append(" " + label, style="dim")
    else:
        out.append("\n" + " " * 11 + label, style="dim")
    return out


def _buffers_table(title: str, rows: list[LiveBuffer], top: int) -> Table:
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col, just in (
        ("bytes", "right"),
        ("padding", "right"),
        ("buffer", "left"),
        ("shape", "left"),
        ("kind", "left"),
        ("live", "right"),
        ("op_name", "left"),
        ("source", "left"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for b in rows[:top]:
        name = b.name + (f"{{{','.join(map(str, b.index))}}}" if b.index else "")
        t.add_row(
            human_bytes(b.bytes),
            human_bytes(b.padding_bytes) if b.padding_bytes else "",
            name,
            b.shape,
            b.allocation,
            f"{b.start}-{b.end}",
            b.op_name or "",
            b.source or "",
        )
    if len(rows) > top:
        t.caption = f"{len(rows) - top} more (--top)"
    return t


def render_memory(
    analyses: list[MemoryAnalysis],
    *,
    top: int = 20,
    space: int | None = None,
    at: list[int | None] | None = None,
) -> RenderableType:
    """The whole report, one block per module."""
    parts: list[RenderableType] = []
    for n, ma in enumerate(analyses):
        if n:
            parts.append(Text(""))
        head = Text()
        head.append(f"{ma.module or '(unnamed module)'}", style="bold")
        head.append(f"  backend {ma.backend}", style="dim")
        if not ma.scheduled:
            head.append("  (not scheduled: estimate)", style="yellow")
        parts.append(head)
        if ma.file:  # its own line: a long path would push the backend onto a line of its own
            parts.append(Text(ma.file, style="dim"))
        tpu = ma.backend == "tpu"
        peak = Text()
        peak.append("peak ", style="bold")
        peak.append(human_bytes(ma.peak_bytes), style="bold green")
        peak.append(
            f"  = static {human_bytes(ma.static_bytes)} + heap "
            f"{human_bytes(ma.peak_bytes - ma.static_bytes)}  (XLA ComputePeakMemorySizes)",
            style="dim",
        )
        parts.append(peak)
        t = Table(show_edge=False, pad_edge=False)
        for col in ("space", "static", "temp allocation", "peak live", "at step", "instruction"):
            t.add_column(
                col,
                justify="left" if col in ("space", "instruction") else "right",
                no_wrap=col == "space",
            )
        compiler_temps = (ma.compiler or {}).get("temp_allocation_bytes", {})
        if compiler_temps:
            t.add_column("compiler temp", justify="right")
        for s in ma.spaces:
            row = [
                space_label(s.memory_space, tpu) + (" ~estimate" if s.estimate else ""),
                human_bytes(s.static_bytes),
                human_bytes(s.temp_allocation_bytes),
                human_bytes(s.peak_live_bytes),
                str(s.peak_step),
                s.peak_instruction or "",
            ]
            if compiler_temps:
                c = compiler_temps.get(str(s.memory_space))
                row.append(human_bytes(c) if c is not None else "-")
            t.add_row(*row)
        parts.append(t)
        shown = [s for s in ma.spaces if space is None or s.memory_space == space]
        for s in shown:
            if not ma.timelines.get(s.memory_space):
                continue
            parts.append(Text(f"live bytes over the schedule, {space_label(s.memory_space, tpu)}"))
            parts.append(_Chart(ma, s.memory_space))
        rows = ma.live_at_peak(space)
        sp = (
            ma.peak_space
            if space is None
            else next((s for s in ma.spaces if s.memory_space == space), None)
        )
        if sp is not None:
            parts.append(
                _buffers_table(
                    f"live at the peak of {space_label(sp.memory_space, tpu)} "
                    f"(step {sp.peak_step}, {human_bytes(sp.peak_live_bytes)}), largest first",
                    rows,
                    top,
                )
            )
            ops = Table(
                title="peak by op_name", title_justify="left", show_edge=False, pad_edge=False
            )
            ops.add_column("bytes", justify="right")
            ops.add_column("share", justify="right")
            ops.add_column("buffers", justify="right")
            ops.add_column("op_name")
            total = sum(b.bytes for b in rows) or 1
            for r in ma.by_op_name(rows)[:top]:
                ops.add_row(
                    human_bytes(r.bytes), format_share(r.bytes, total), str(r.values), r.op_name
                )
            parts.append(ops)
        step = at[n] if at is not None and n < len(at) else None
        if step is not None:
            live = ma.live_at(step, space)
            name = ma.sequence[step] if 0 <= step < len(ma.sequence) else "end"
            parts.append(
                _buffers_table(
                    f"live at step {step} ({name}): {human_bytes(sum(b.bytes for b in live))}",
                    live,
                    top,
                )
            )
        for note in ma.notes:
            parts.append(Text(f"note: {note}", style="dim"))
    return Group(*parts)
