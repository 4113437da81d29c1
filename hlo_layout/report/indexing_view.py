"""The human view of `hlo-layout indexing`: the target, then its maps grouped by operand."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import RenderableType, group
from rich.padding import Padding
from rich.text import Text

from hlo_layout.indexing.map import MapState
from hlo_layout.indexing.text import format_indexing_map
from hlo_layout.report.indexing_model import IndexingReport, MapEntry, OperandReport

_DIRECTION = {"out2in": "output → operand", "in2out": "operand → output"}


def _map_lines(
    entry: MapEntry, multi_output: bool, report: IndexingReport, legacy: bool
) -> Iterator[Text]:
    oi = entry.indexing
    prefix = Text()
    if multi_output:
        word = "from output" if report.direction == "out2in" else "to output"
        prefix.append(f"[{word} {entry.output}] ", style="hlo.muted")
    if oi.is_undefined:
        yield prefix + Text("unknown indexing", style="hlo.error")
        return
    yield prefix + Text(format_indexing_map(oi.map, legacy=legacy))
    for k, rv in enumerate(oi.rt_vars):
        yield Text.assemble(
            ("  rt", "hlo.muted"), (str(k), "hlo.muted"), (" reads ", "hlo.muted"),
            (str(rv.source), "hlo.name"), ("; ", "hlo.muted"),
            format_indexing_map(rv.map, legacy=legacy),
        )  # fmt: skip
    if oi.replica_id is not None:
        yield Text.assemble(
            ("  replica id: ", "hlo.muted"), format_indexing_map(oi.replica_id, legacy=legacy)
        )


@group()
def _operand(op: OperandReport, report: IndexingReport, legacy: bool) -> Iterator[RenderableType]:
    head = Text.assemble(
        ("operand " if report.kind != "computation" else "parameter ", "hlo.muted"),
        (str(op.index), "hlo.count"), "  ", (op.name, "hlo.name"), "  ", (op.shape, "hlo.shape"),
    )  # fmt: skip
    if op.unknown:
        head.append("  unknown", style="hlo.error")
    yield head
    if not op.maps:
        empty = "not read" if report.direction == "out2in" else "reaches no output"
        yield Padding(Text(empty, style="hlo.muted"), (0, 0, 0, 2), expand=False)
    multi_output = len(report.outputs) > 1
    maps = op.maps
    i = 0
    while i < len(maps):
        entry = maps[i]
        last = _unknown_run(maps, i) if multi_output else i
        if last > i:  # consecutive outputs all unknown: one line, not hundreds
            word = "from outputs" if report.direction == "out2in" else "to outputs"
            line = Text.assemble(
                (f"[{word} {entry.output}–{maps[last].output}] ", "hlo.muted"),
                ("unknown indexing", "hlo.error"),
            )
            yield Padding(line, (0, 0, 0, 2), expand=False)
        else:
            for line in _map_lines(entry, multi_output, report, legacy):
                yield Padding(line, (0, 0, 0, 2), expand=False)
        i = last + 1


def _unknown_run(maps: tuple[MapEntry, ...], i: int) -> int:
    """The last index of the run of unknown maps starting at i over consecutive outputs (i when
    maps[i] is known or alone)."""
    last, end = i, len(maps) - 1
    undefined = MapState.UNDEFINED  # states read directly: runs are 300,000 maps long
    while (
        last < end
        and maps[last].indexing.map.state is undefined
        and maps[last + 1].indexing.map.state is undefined
        and maps[last + 1].output == maps[last].output + 1
    ):
        last += 1
    return last


@group()
def render_indexing(report: IndexingReport, *, legacy: bool = False) -> Iterator[RenderableType]:
    """The whole report: header, one block per operand, counts, notes. `legacy` prints maps as
    XLA did before 2026-06 (`floordiv`)."""
    yield Text.assemble(
        (report.kind + " ", "hlo.muted"), (report.target, "hlo.name"),
        (f" ({report.opcode})" if report.opcode and report.kind != "fusion" else "", "hlo.opcode"),
        ("  in ", "hlo.muted"), (report.computation, "hlo.name"),
        ("  module ", "hlo.muted"), (report.module or "(no module header)", "hlo.name"),
    )  # fmt: skip
    mode = _DIRECTION[report.direction]
    if report.physical:
        buffer = "operand" if report.direction == "out2in" else "output"
        mode += f", results are element offsets in the {buffer}'s buffer"
    yield Text(mode, style="hlo.muted")
    for j, shape in enumerate(report.outputs):
        yield Text.assemble(("output ", "hlo.muted"), (str(j), "hlo.count"), "  ",
                            (shape, "hlo.shape"))  # fmt: skip
    yield Text("")
    for op in report.operands:
        yield _operand(op, report, legacy)
    counts = report.counts
    yield Text("")
    yield Text(
        f"{counts['maps']} map{'' if counts['maps'] == 1 else 's'}: "
        f"{counts['exact']} exact, {counts['unknown']} unknown"
        + (f" ({counts['known_empty']} known empty)" if counts["known_empty"] else ""),
        style="hlo.count",
    )
    for note in report.notes:
        yield Text("note: " + note, style="hlo.muted")
