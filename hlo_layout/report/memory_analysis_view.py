"""Rich view of `hlo-layout memory`: the peak and its parts per memory space, a
memory-over-program-order chart, the buffers live at the peak and the peak grouped by source line
or op_name."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from hlo_layout.layout.memory_space import space_label
from hlo_layout.memory import Grouping, LiveBuffer, MemoryAnalysis
from hlo_layout.report.peak_view import peak_block
from hlo_layout.report.units import human_bytes
from hlo_layout.units import TOP_DEFAULT, format_share

#: The default grouping of the peak (`memory --by source`).
BY_SOURCE = Grouping("source")
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
    out.append(f"{human_bytes(sp.live_bytes):>9} ┤", style="dim")
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


def _groups_table(
    ma: MemoryAnalysis, rows: list[LiveBuffer], grouping: Grouping, top: int
) -> Table:
    t = Table(
        title=f"peak by {grouping.label}", title_justify="left", show_edge=False, pad_edge=False
    )
    t.add_column("bytes", justify="right")
    t.add_column("share", justify="right")
    t.add_column("buffers", justify="right")
    t.add_column(grouping.label)
    total = sum(b.bytes for b in rows) or 1
    groups = ma.grouped(rows, grouping)
    for g in groups[:top]:
        key = (
            g.key
            if g.key is not None
            else f"(no {'source line' if grouping.by == 'source' else 'op_name'})"
        )
        t.add_row(human_bytes(g.bytes), format_share(g.bytes, total), str(g.buffers), key)
    if len(groups) > top:
        t.caption = f"{len(groups) - top} more (--top)"
    return t


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
    top: int = TOP_DEFAULT,
    space: int | None = None,
    at: list[int | None] | None = None,
    grouping: Grouping = BY_SOURCE,
) -> RenderableType:
    """The whole report: a summary row per module when there are several, then one block each."""
    parts: list[RenderableType] = []
    if len(analyses) > 1:
        parts.append(summary_table(analyses))
    for n, ma in enumerate(analyses):
        if n or len(analyses) > 1:
            parts.append(Text(""))
        head = Text()
        head.append(f"{ma.module or '(unnamed module)'}", style="bold")
        head.append(
            f"  backend {backend_label(ma)}"
            + (" (assumed)" if ma.backend_assumed else "")
            + (f" · {ma.frontend}" if ma.frontend else ""),
            style="dim",
        )
        parts.append(head)
        if ma.file:  # its own line: a long path would push the backend onto a line of its own
            parts.append(Text(ma.file, style="dim"))
        parts.append(peak_block(ma))
        tpu = ma.backend == "tpu"
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
                    f"live at the peak step of {space_label(sp.memory_space, tpu)} "
                    f"(step {sp.peak_step}, {human_bytes(sp.live_bytes)}), largest first",
                    rows,
                    top,
                )
            )
            parts.append(_groups_table(ma, rows, grouping, top))
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
            if note != ma.backend_note:  # said once on stderr, and in the header
                parts.append(Text(f"note: {note}", style="dim"))
    return Group(*parts)


def backend_label(ma: MemoryAnalysis) -> str:
    return f"{ma.backend} {ma.tpu_generation}" if ma.tpu_generation else ma.backend


def summary_table(analyses: list[MemoryAnalysis]) -> Table:
    """One row per module (several dumps, a dump folder): file, peak and its parts, backend."""
    t = Table(title="modules", title_justify="left", show_edge=False, pad_edge=False)
    figures = ("peak", "static", "temp allocation", "padding at peak")
    for col in ("module", *figures, "backend", "file"):
        t.add_column(col, justify="right" if col in figures else "left")
    for ma in analyses:
        t.add_row(
            ma.module or "(unnamed)",
            human_bytes(ma.peak_bytes) + ("" if ma.scheduled else " ~"),
            human_bytes(ma.static_bytes),
            human_bytes(ma.temp_allocation_bytes),
            human_bytes(sum(b.padding_bytes for b in ma.live_at_peak())),
            backend_label(ma) + (" (assumed)" if ma.backend_assumed else ""),
            ma.file or "",
        )
    if not all(ma.scheduled for ma in analyses):
        t.caption = "~ estimate: the dump is not scheduled"
    return t
