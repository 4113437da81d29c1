"""The peak as every terminal view shows it: the headline, its parts, one row per memory space,
and the legend (memory/peak.py, NOTE: [the headline]). `memory` and `inspect` both draw it here,
so a figure has one name wherever it appears."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hlo_layout.layout.memory_space import space_label
from hlo_layout.memory import MemoryAnalysis
from hlo_layout.memory.peak import legend as legend_text
from hlo_layout.report.units import human_bytes


def headline(ma: MemoryAnalysis) -> Text:
    """`peak 26.22MiB = static 6.99MiB + temp allocation 19.23MiB`: the parts add up to it."""
    t = Text()
    t.append("peak ", style="bold")
    t.append(human_bytes(ma.peak_bytes), style="bold green")
    parts = " + ".join(f"{name} {human_bytes(b)}" for name, b in ma.headline_parts())
    t.append(f"  = {parts}", style="dim")
    if not ma.scheduled:
        t.append("  (estimate: the dump is not scheduled)", style="yellow")
    return t


def spaces_table(ma: MemoryAnalysis) -> Table:
    """One row per memory space: its peak and parts, and the step where the most is live."""
    tpu = ma.backend == "tpu"
    t = Table(box=None, pad_edge=False, header_style="bold")
    fragmented = any(s.fragmentation_bytes for s in ma.spaces)
    columns = ["space", "peak", "static", "temp allocation", "heap peak"]
    columns += ["fragmentation"] * fragmented + ["live", "peak step"]
    for col in columns:
        t.add_column(col, justify="left" if col == "space" else "right", no_wrap=col == "space")
    compiler_temps = (ma.compiler or {}).get("temp_allocation_bytes", {})
    if compiler_temps:
        t.add_column("compiler temp", justify="right")
    for s in ma.spaces:
        row = [
            space_label(s.memory_space, tpu) + (" ~estimate" if s.estimate else ""),
            human_bytes(s.peak_bytes),
            human_bytes(s.static_bytes),
            human_bytes(s.temp_allocation_bytes),
            human_bytes(s.heap_peak_bytes),
            *[human_bytes(s.fragmentation_bytes)] * fragmented,
            human_bytes(s.live_bytes),
            str(s.peak_step),
        ]
        if compiler_temps:
            c = compiler_temps.get(str(s.memory_space))
            row.append(human_bytes(c) if c is not None else "-")
        t.add_row(*row)
    return t


def legend(ma: MemoryAnalysis) -> Text:
    """The one-line legend under the figures (memory/peak.py)."""
    return Text(legend_text(ma.backend == "tpu"), style="dim")


def peak_block(ma: MemoryAnalysis) -> RenderableType:
    """Headline, per-space table and legend."""
    return Group(headline(ma), spaces_table(ma), legend(ma))
