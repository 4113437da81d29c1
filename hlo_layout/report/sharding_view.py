"""The human view of `hlo-layout sharding`: the sharded values of each module with their
per-device shapes, bytes and Axe layouts, the per-device totals, and with `--instruction` every
device's tile."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType, group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hlo_layout.report.sharding_model import ArrayRow, ShardingReport, ValueRow
from hlo_layout.report.units import human_bytes
from hlo_layout.syntax.sharding import MAXIMAL, TILED

#: Characters of a sharding's text the tables show (an explicit device list can be as long as
#: the file; the JSON keeps it whole).
_SHOWN_CHARS = 400


def _short(text: str) -> str:
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[:_SHOWN_CHARS]}… ({len(text):,} characters)"


def _bytes(n: int | None) -> str:
    return "?" if n is None else human_bytes(n)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=None, pad_edge=False, title_style="bold")


def _holders(a: ArrayRow) -> str:
    """How many devices hold the array, or which one (`maximal`)."""
    if a.kind == MAXIMAL:
        return f"#{a.devices[0]}" if a.devices else "-"
    return f"{len(a.devices):,}"


def _values(report: ShardingReport, top: int) -> Table:
    """One row per array, its sharding and Axe layout on the lines below it (they are long)."""
    table = _table("Sharded values")
    table.add_column("value", style="hlo.name", no_wrap=True, max_width=32)
    table.add_column("shape → per device", overflow="fold", ratio=1)
    table.add_column("bytes/device", justify="right", style="bold", no_wrap=True)
    table.add_column("devices", justify="right", no_wrap=True)
    rows = [(v, a) for v in report.values for a in v.arrays or (None,)]
    for v, a in rows[:top]:
        name = v.instruction + ("{" + ",".join(map(str, a.index)) + "}" if a and a.index else "")
        if a is None:
            table.add_row(name, Text(f"{v.shape}: {v.error or '-'}", style="hlo.error"))
            continue
        cell = Text.assemble((a.shape, "hlo.shape"), " → ", (a.shard_shape, "hlo.shape"))
        cell.append(f"\n{_short(a.sharding)}", style="hlo.muted")
        if a.tile_sharding != a.sharding:
            cell.append(f" = {_short(a.tile_sharding)}", style="hlo.muted")
        if a.kind == TILED and a.replication > 1:
            cell.append(f" · each tile on {a.replication} devices", style="hlo.muted")
        if a.axe is not None:
            cell.append(f"\nAxe {a.axe['text']}")
        elif a.note:
            cell.append(f"\n{a.note}", style="hlo.muted")
        table.add_row(name, cell, _bytes(a.shard_physical_bytes), _holders(a))
    if len(rows) > top:
        table.add_row(Text(f"… {len(rows) - top:,} more (--top)", style="hlo.muted"))
    return table


def _devices(report: ShardingReport) -> Table:
    table = _table("Per device")
    table.add_column("devices", no_wrap=True)
    table.add_column("entry parameters", justify="right", style="bold")
    table.add_column("all sharded values", justify="right")
    for g in report.device_groups:
        label = str(g.first) if g.first == g.last else f"{g.first}-{g.last}"
        table.add_row(label, human_bytes(g.argument_bytes), human_bytes(g.annotated_bytes))
    return table


def _detail(v: ValueRow, a: ArrayRow, top: int) -> Iterator[RenderableType]:
    facts = Table(box=None, show_header=False, pad_edge=False)
    facts.add_column(style="hlo.muted", no_wrap=True)
    facts.add_column(overflow="fold")
    title = v.instruction + (f" {{{','.join(map(str, a.index))}}}" if a.index else "")
    facts.add_row("value", Text(f"{title} = {v.opcode}", style="hlo.name"))
    facts.add_row("shape", Text(a.shape, style="hlo.shape"))
    facts.add_row("sharding", _short(a.sharding))
    if a.tile_sharding != a.sharding:
        facts.add_row("as tiles", _short(a.tile_sharding))
    facts.add_row("tiles per dim", "[" + ",".join(map(str, a.tile_dims)) + "]")
    facts.add_row("per device", Text(a.shard_shape, style="hlo.shape"))
    facts.add_row(
        "bytes/device",
        f"{_bytes(a.shard_physical_bytes)} physical, {_bytes(a.shard_logical_bytes)} logical",
    )
    facts.add_row("shard as CuTe", a.cute or "-")
    facts.add_row("Axe (device, m)", a.axe["text"] if a.axe else "-")
    if a.note:
        facts.add_row("note", Text(a.note, style="hlo.muted"))
    yield facts
    shards = _table("Tiles")
    shards.add_column("device", justify="right", style="hlo.name")
    shards.add_column("tile", no_wrap=True)
    shards.add_column("start", no_wrap=True)
    shards.add_column("real elements", no_wrap=True)
    shards.add_column("copy", justify="right")
    ordered = a.shards_by_device
    for s in ordered[:top]:
        shards.add_row(
            str(s.device),
            "(" + ",".join(map(str, s.tile)) + ")",
            "(" + ",".join(map(str, s.start)) + ")",
            "[" + ",".join(map(str, s.extent)) + "]",
            str(s.replica),
        )
    if len(ordered) > top:
        shards.add_row(Text(f"… {len(ordered) - top:,} more (--top)", style="hlo.muted"))
    yield Padding(shards, (1, 0, 0, 0))


@group()
def render_sharding(reports: list[ShardingReport], top: int) -> Iterator[RenderableType]:
    """One block per module."""
    for n, r in enumerate(reports):
        if n:
            yield Text("")
        where = (
            "shapes are per device (after SPMD partitioning)"
            if r.partitioned
            else "shapes are global (before SPMD partitioning)"
        )
        yield Text.assemble(
            (r.module or "(no module name)", "hlo.name"),
            f"  {r.file}\n",
            (f"{r.num_devices} devices; {where}", "hlo.muted"),
        )
        if not r.values:
            yield Text("no instruction carries a sharding", style="hlo.muted")
            continue
        if r.detail:
            for v in r.values:
                if v.error:
                    yield Text(f"{v.instruction}: {v.error}", style="hlo.error")
                for a in v.arrays:
                    yield Padding(Group(*_detail(v, a, top)), (1, 0, 0, 0))
            continue
        yield Padding(_values(r, top), (1, 0, 0, 0))
        yield Padding(_devices(r), (1, 0, 0, 0))
        if r.unannotated_parameters:
            names = ", ".join(r.unannotated_parameters)
            yield Text(
                f"entry parameters without a sharding, counted on every device: {names}",
                style="hlo.muted",
            )
