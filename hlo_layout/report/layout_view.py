"""The human view of `hlo-layout layout`: one block per shape, and `--grid` as a coloured picture
of memory order like the tiled-layout document's Figures 1 and 2."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult, group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hlo_layout.layout.tiling import Grid
from hlo_layout.report.console import PIPED_WIDTH
from hlo_layout.report.layout_model import ArrayLayout, ShapeLayout
from hlo_layout.report.units import expansion
from hlo_layout.units import format_bytes_exact

_TILE_STYLES = 6


def _dims(dims: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, dims)) + "]"


def _bytes(n: int | None) -> str:
    return "?" if n is None else format_bytes_exact(n)


#: Width a grid fits when the output has none (piped): a picture, not a greppable table.
GRID_WIDTH_PIPED = 80
#: The cell standing for the columns left out of a grid that does not fit.
_ELIDED = "…"


def grid_columns(columns: int, cell: int, max_width: int | None) -> tuple[int, int]:
    """(first, last): a grid of `columns` cells of `cell` characters (plus a rule between)
    shows its first `first` and last `last` columns, with one marker cell between when any are
    left out, so that it fits `max_width` (all of them without a width)."""
    fits = columns if max_width is None else max(1, (max_width + 1) // (cell + 1))
    if fits >= columns:
        return columns, 0
    kept = max(1, fits - 1)  # one cell for the marker
    first = max(1, (kept * 2 + 2) // 3)
    return first, kept - first


def render_grid(grid: Grid, max_width: int | None = None) -> tuple[Text, Text]:
    """The grid and its footnote. Each cell is its offset in the buffer; a new background (and a
    `│`/`─` rule) starts each first-level tile; padding cells are dimmed and marked `·`. Columns
    that do not fit in `max_width` characters are left out in the middle, a `…` column in their
    place (the footnote says which); None shows them all, each row on one line."""
    width = max((len(str(c.offset)) for row in grid.cells for c in row), default=1) + 1
    first, last = grid_columns(grid.columns, width, max_width)
    out = Text(no_wrap=True, overflow="ignore")
    previous = None
    for full_row in grid.cells:
        row = list(full_row[:first]) + (list(full_row[-last:]) if last else [])
        cells = len(row) + (first < grid.columns)
        if previous is not None and any(a.tile != b.tile for a, b in zip(row, previous)):
            out.append("─" * ((width + 1) * cells - 1) + "\n", style="hlo.muted")
        for j, cell in enumerate(row):
            if j == first:  # the columns left out
                out.append(" " + _ELIDED.center(width), style="hlo.muted")
            if j:
                sep = "│" if cell.tile != row[j - 1].tile else " "
                out.append(sep, style="hlo.muted")
            label = ("·" if cell.padding else "") + str(cell.offset)
            style = "hlo.pad" if cell.padding else f"hlo.tile{cell.tile % _TILE_STYLES}"
            out.append(label.rjust(width), style=style)
        if first < grid.columns and not last:
            out.append(" " + _ELIDED.center(width), style="hlo.muted")
        out.append("\n")
        previous = row
    out.rstrip()
    note = (
        f"{grid.logical_rows}×{grid.logical_columns} array shown as {grid.rows}×{grid.columns} "
        "(whole first-level tiles); numbers are offsets in elements; ·N = padding slot N"
    )
    if first < grid.columns:
        note += (
            f"; columns {first}–{grid.columns - last - 1} left out ({_ELIDED}) to fit the width "
            "(--full shows them)"
        )
    return out, Text(note, style="hlo.muted")


class GridView:
    """`render_grid` at whatever width the console offers (Rich's render protocol): the
    terminal's, or GRID_WIDTH_PIPED when piped; every column with `full`."""

    def __init__(self, grid: Grid, *, full: bool = False) -> None:
        self.grid = grid
        self.full = full

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if console.width >= PIPED_WIDTH:  # piped: no terminal to fit
            width = min(width, GRID_WIDTH_PIPED)
        yield from render_grid(self.grid, None if self.full else width)


def _array(a: ArrayLayout) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="hlo.muted", no_wrap=True)
    table.add_column(overflow="fold")
    bits = f"{a.storage_bits} bits stored per element"
    if a.storage_bits != a.logical_bits:
        bits += f" ({a.logical_bits} bits of data)"
    table.add_row("element", Text.assemble((a.element_type, "hlo.dtype"), f", {bits}"))
    order = ", ".join(f"dim {d}" for d in a.physical_axes) or "scalar"
    table.add_row("dims", _dims(a.dims))
    table.add_row(
        "minor_to_major",
        "{" + ",".join(map(str, a.minor_to_major)) + f"}} → physical order {order} "
        f"(major → minor) = {_dims(a.physical_dims)}",
    )
    table.add_row("tiles", "".join(a.tiles) or "none")
    if a.tiles and a.physical_bytes is not None:
        table.add_row("padded", f"{_dims(a.padded_dims)} by the first tile {a.tiles[0]}")
        before = a.physical_dims
        for n, (tile, step) in enumerate(zip(a.tiles, a.steps)):
            merge = ""
            if step.merged != before:  # unit dims added above, or `*` dims merged
                merge = f"view {_dims(before)} as {_dims(step.merged)}, "
            table.add_row(
                "tile steps" if n == 0 else "",
                f"{tile}: {merge}pad {_dims(step.padded)} → reshape {_dims(step.reshaped)} → "
                f"transpose {_dims(step.transposed)}",
            )
            before = step.transposed
        table.add_row("tiled shape", _dims(a.tiled_dims) + "  (tile counts, then tile dims)")
    table.add_row(
        "bytes",
        Text.assemble(
            f"logical {_bytes(a.logical_bytes)}, ",
            (f"physical {_bytes(a.physical_bytes)}", "bold"),
            ", ",
            (f"padding {_bytes(a.padding_bytes)}", "hlo.padding"),
            f" ({expansion(a.physical_bytes, a.logical_bytes)} expansion)"
            if a.physical_bytes is not None
            else "",
        ),
    )
    if a.note is not None:
        table.add_row("note", Text(a.note, style="hlo.muted"))
    for n, reason in enumerate(a.reasons):
        table.add_row("padding" if n == 0 else "", Text(reason, style="hlo.padding"))
    table.add_row(
        "memory space", Text(f"S({a.memory_space}) {a.memory_space_label}", style="hlo.space")
    )
    if a.cute is not None:
        table.add_row("CuTe", a.cute)
    if a.axe is not None:
        table.add_row("Axe", a.axe["text"])
    if a.interop_error is not None:
        table.add_row("CuTe / Axe", Text(a.interop_error, style="hlo.muted"))
    if a.offset is not None:
        table.add_row("offset", f"element {a.offset:,} (byte {a.byte_offset:,})")
    return table


@group()
def _item(item: ShapeLayout, full: bool) -> Iterator[RenderableType]:
    if item.error is not None:
        yield Text.assemble((item.text, "bold"), "  ", ("error: ", "hlo.error"), item.error)
        return
    yield Text(item.shape or item.text, style="hlo.shape bold")
    single = len(item.arrays) == 1 and not item.arrays[0].index
    if not single:
        yield Padding(
            Text(
                f"{len(item.arrays)} arrays: logical {_bytes(item.logical_bytes or 0)}, "
                f"physical {_bytes(item.physical_bytes)}, "
                f"padding {_bytes(item.padding_bytes)}; "
                f"tuple pointer tables {_bytes(item.pointer_table_bytes)}"
            ),
            (0, 0, 0, 2),
        )
    for a in item.arrays:
        if not single:
            index = "{" + ",".join(map(str, a.index)) + "}"
            yield Padding(Text.assemble((index + " ", "hlo.muted"), (a.shape, "hlo.shape")),
                          (0, 0, 0, 2))  # fmt: skip
        yield Padding(_array(a), (0, 0, 0, 2 if single else 4))
        if a.grid is not None:
            yield Padding(GridView(a.grid, full=full), (1, 0, 0, 2))


def render_layouts(items: list[ShapeLayout], *, full: bool = False) -> RenderableType:
    """Every explained shape, in input order, separated by blank lines; a grid fits the width
    (GridView) unless `full`."""

    @group()
    def _all() -> Iterator[RenderableType]:
        for n, item in enumerate(items):
            if n:
                yield Text("")
            yield _item(item, full)

    return _all()
