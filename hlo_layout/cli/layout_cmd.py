"""`hlo-layout layout SHAPE...`: what a shape string means in memory."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Annotated

import typer

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    FormatOpt,
    OutputFormat,
    emit_json_items,
    guard,
    stderr_console,
    stdout_console,
)
from hlo_layout.errors import HloUsageError
from hlo_layout.limits import read_int
from hlo_layout.report.layout_model import ShapeLayout, explain_shape, layout_json

ShapeArgs = Annotated[
    list[str],
    typer.Argument(
        help="Shapes as XLA prints them, e.g. 'bf16[3,5]{1,0:T(8,128)(2,1)}' (quote them), "
        "or - to read one per line from stdin.",
        metavar="SHAPE",
        show_default=False,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="A logical index such as 2,3: print the element's offset.",
        metavar="I,J,...",
        show_default=False,
    ),
]
CuteOpt = Annotated[
    bool,
    typer.Option("--cute", help="Also show each array's layout as a CuTe/TLA shape:stride layout."),
]
AxeOpt = Annotated[
    bool, typer.Option("--axe", help="Also show each array's layout as an Axe layout (axis m).")
]
GridOpt = Annotated[
    bool, typer.Option("--grid", help="Draw a small 1-D or 2-D shape's memory order as a grid.")
]
FullOpt = Annotated[
    bool,
    typer.Option(
        "--full", help="Draw every column of a --grid (it fits the terminal, or 80 columns)."
    ),
]


def _index(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(
            read_int(x, "an index", option=True) for x in text.replace(" ", "").split(",") if x
        )
    except HloUsageError as e:
        raise typer.BadParameter(str(e)) from None
    except ValueError:
        raise typer.BadParameter(f"expected integers separated by commas, got {text!r}") from None


#: JSON layout version. 1: an object `{"schema_version", "shapes": [...]}` (was a bare list).
SCHEMA_VERSION = 1

#: Words a user may type after a flag (`--grid true`): flags take no value, so these are
#: never shapes.
_FLAG_VALUES = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


def _inputs(shapes: list[str]) -> list[str]:
    out: list[str] = []
    for s in shapes:
        if s == "-":
            out.extend(
                line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")
            )
        else:
            out.append(s)
    return out


@app.command()
def layout(
    shapes: ShapeArgs,
    at: AtOpt = None,
    grid: GridOpt = False,
    cute: CuteOpt = False,
    axe: AxeOpt = False,
    full: FullOpt = False,
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """Explain shapes: dims, element bits, minor_to_major, tiles, the physical (tiled) shape,
    logical / physical / padding bytes and the memory space.

    [bold]--at 2,3[/bold] gives an element's offset; [bold]--grid[/bold] draws memory order like
    the tiled-layout document's figures. [bold]--format json[/bold] prints
    {"schema_version", "shapes": [...]}, one object per shape in input order.
    """
    index = _index(at)
    for s in shapes:
        if s.lower() in _FLAG_VALUES:
            stderr_console().print(
                f"error: {s!r} is not a shape: --grid, --cute and --axe are flags and take no "
                "value",
                markup=False,
                highlight=False,
            )
            raise typer.Exit(EXIT_USAGE)
    with guard("layout"):
        # One shape at a time, explained and written: a long batch streams, in the memory of
        # one shape (a 1 MB batch to JSON held 500 MB as one document).
        counts = [0, 0]  # shapes, failed

        def explained() -> Iterator[ShapeLayout]:
            for s in _inputs(shapes):
                item = explain_shape(s, at=index, grid=grid, cute=cute, axe=axe)
                counts[0] += 1
                counts[1] += item.error is not None
                yield item

        if output_format is OutputFormat.json:
            emit_json_items(
                {"schema_version": SCHEMA_VERSION}, "shapes", map(layout_json, explained())
            )
        else:
            from hlo_layout.report.layout_view import render_layouts

            console = stdout_console()
            for n, item in enumerate(explained()):
                if n:
                    console.print()
                console.print(render_layouts([item], full=full))
        total, failed = counts
        if failed:
            stderr_console().print(f"error: {failed} of {total} shapes could not be explained")
            raise typer.Exit(EXIT_INPUT)
