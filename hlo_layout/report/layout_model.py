"""The report model of `hlo-layout layout SHAPE...`: what one shape string means in memory.

Plain frozen data built from the layout engine; `layout_view.py` draws it with Rich and
`layout_json` turns it into the JSON list the command prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hlo_layout.errors import HloLayoutError, HloSyntaxError
from hlo_layout.layout.element_type import logical_bits
from hlo_layout.layout.errors import LayoutError
from hlo_layout.layout.memory_space import memory_space
from hlo_layout.layout.padding import explain_padding
from hlo_layout.layout.size import (
    array_bytes,
    element_storage_bits,
    first_tile_step,
    footprint,
    logical_bytes,
    sized_physical_dims,
)
from hlo_layout.layout.tiling import (
    Grid,
    PadReshapeTranspose,
    element_offset,
    pad_reshape_transpose,
    physical_axes,
    shape_tiles,
    tile_grid,
    tiled_dims,
)
from hlo_layout.syntax.fragments import parse_shape
from hlo_layout.syntax.layout_text import tile_problem
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape


@dataclass(frozen=True, slots=True)
class ArrayLayout:
    """One array explained: dims in logical and physical order, tiles, the padded and tiled
    shapes, the byte figures and why they differ, the memory space, and optional offset/grid."""

    shape: str
    index: tuple[int, ...]
    element_type: str
    dims: tuple[int, ...]
    minor_to_major: tuple[int, ...]
    physical_axes: tuple[int, ...]
    physical_dims: tuple[int, ...]
    tiles: tuple[str, ...]
    padded_dims: tuple[int, ...]
    tiled_dims: tuple[int, ...]
    steps: tuple[PadReshapeTranspose, ...]
    logical_bits: int
    storage_bits: int
    logical_bytes: int
    physical_bytes: int | None  # None when no layout rule sizes the tiling (`note` says why)
    memory_space: int
    memory_space_name: str
    memory_space_label: str
    reasons: tuple[str, ...]
    offset: int | None = None
    byte_offset: int | None = None
    grid: Grid | None = None
    cute: str | None = None
    axe: dict[str, Any] | None = None
    interop_error: str | None = None
    note: str | None = None

    @property
    def padding_bytes(self) -> int | None:
        if self.physical_bytes is None:
            return None
        return self.physical_bytes - self.logical_bytes


@dataclass(frozen=True, slots=True)
class ShapeLayout:
    """One input line: the text as given, and either its arrays (a tuple has several, `token[]`
    none) with the tuple pointer table, or the error that stopped it."""

    text: str
    shape: str | None
    arrays: tuple[ArrayLayout, ...] = ()
    pointer_table_bytes: int = 0
    error: str | None = None

    @property
    def logical_bytes(self) -> int | None:
        return None if self.error else sum(a.logical_bytes for a in self.arrays)

    @property
    def physical_bytes(self) -> int | None:
        return None if self.error else _known_sum(a.physical_bytes for a in self.arrays)

    @property
    def padding_bytes(self) -> int | None:
        return None if self.error else _known_sum(a.padding_bytes for a in self.arrays)

    @property
    def memory_space(self) -> int | None:
        spaces = {a.memory_space for a in self.arrays}
        return spaces.pop() if len(spaces) == 1 else None


def _known_sum(values: Iterable[int | None]) -> int | None:
    out = 0
    for v in values:
        if v is None:
            return None
        out += v
    return out


def _tiling_problem(shape: ArrayShape) -> str | None:
    """Why no layout rule fully explains the shape's tiles (syntax.layout_text.tile_problem)."""
    for tile in shape_tiles(shape):
        problem = tile_problem(tile.dims)
        if problem is not None:
            return problem
    return None


def _array(
    shape: ArrayShape,
    index: tuple[int, ...],
    at: tuple[int, ...] | None,
    grid: bool,
    cute: bool = False,
    axe: bool = False,
) -> ArrayLayout:
    """One array explained. A tiling no layout rule explains (a tile ending in `*`) keeps what
    the text says and the byte figures a dump gets (`layout.size.array_bytes`: physical unknown
    when it is the first tile), with the reason in `note`."""
    problem = _tiling_problem(shape)
    if problem is not None and (at is not None or grid):
        raise LayoutError(problem)  # an offset or a grid needs the tiling
    cute_text: str | None = None
    axe_doc: dict[str, Any] | None = None
    interop_error: str | None = None
    if (cute or axe) and problem is not None:
        interop_error = problem
    elif cute or axe:  # the interop converters load only when asked for
        from hlo_layout.interop import axe_json, cute_string
        from hlo_layout.interop.errors import InteropError

        try:
            if cute:
                cute_text = cute_string(shape)
            if axe:
                axe_doc = axe_json(shape)
        except InteropError as e:
            interop_error = e.message
    sized = sized_physical_dims(shape)
    tiles = shape_tiles(shape)
    space = memory_space(shape.layout.memory_space if shape.layout else 0, tpu=bool(tiles))
    offset = byte_offset = None
    if at is not None:
        offset = element_offset(shape, at)
        byte_offset = offset * element_storage_bits(shape) // 8
    figures: tuple[int, int | None, tuple[str, ...]]
    if problem is None:
        why = explain_padding(shape)
        step = first_tile_step(shape)
        padded = step.padded if step is not None else sized
        figures = (why.logical_bytes, why.physical_bytes, why.reasons())
        tiled, steps = tiled_dims(sized, tiles), pad_reshape_transpose(sized, tiles)
    else:
        padded, tiled, steps = sized, sized, ()
        figures = (logical_bytes(shape), array_bytes(shape).physical_bytes, ())
    return ArrayLayout(
        shape=print_shape(shape, default_layout=True),
        index=index,
        element_type=shape.element_type,
        dims=shape.dims,
        minor_to_major=shape.minor_to_major,
        physical_axes=physical_axes(shape),
        physical_dims=sized,
        tiles=tuple(str(t) for t in tiles),
        padded_dims=padded,
        tiled_dims=tiled,
        steps=steps,
        logical_bits=logical_bits(shape.element_type),
        storage_bits=element_storage_bits(shape),
        logical_bytes=figures[0],
        physical_bytes=figures[1],
        memory_space=space.number,
        memory_space_name=space.name,
        memory_space_label=space.label,
        reasons=figures[2],
        offset=offset,
        byte_offset=byte_offset,
        grid=tile_grid(shape) if grid else None,
        cute=cute_text,
        axe=axe_doc,
        interop_error=interop_error,
        note=problem,
    )


def explain_shape(
    text: str,
    *,
    at: tuple[int, ...] | None = None,
    grid: bool = False,
    cute: bool = False,
    axe: bool = False,
) -> ShapeLayout:
    """Explain one shape string; errors (bad syntax, unknown type, index out of bounds) are kept
    in the result so one bad line does not stop a batch.

    >>> explain_shape("f32[3,5]{1,0:T(2,2)}", at=(2, 3)).arrays[0].offset
    17
    """
    try:
        shape: Shape = parse_shape(text)
        if at is not None and not isinstance(shape, ArrayShape):
            raise LayoutError("--at needs an array shape, not a tuple")
        arrays = tuple(_array(leaf, index, at, grid, cute, axe) for index, leaf in shape.leaves())
        table = footprint(shape).pointer_table_bytes if isinstance(shape, TupleShape) else 0
        return ShapeLayout(text, print_shape(shape, default_layout=True), arrays, table)
    except HloSyntaxError as e:
        expected = f" (expected {', '.join(e.expected)})" if e.expected else ""
        return ShapeLayout(text, None, error=f"column {e.column}: {e.message}{expected}")
    except HloLayoutError as e:
        return ShapeLayout(text, None, error=getattr(e, "message", None) or str(e))


def layout_json(item: ShapeLayout) -> dict[str, Any]:
    """One object of `layout --format json`: `shape`, the three byte figures, `memory_space`
    (null for a tuple whose leaves differ), `offset` with `--at`, and the details."""
    if item.error is not None:
        return {"shape": item.text, "error": item.error}
    out: dict[str, Any] = {
        "shape": item.shape,
        "logical_bytes": item.logical_bytes,
        "physical_bytes": item.physical_bytes,
        "padding_bytes": item.padding_bytes,
        "memory_space": item.memory_space,
    }
    if len(item.arrays) == 1 and not item.arrays[0].index and item.shape == item.arrays[0].shape:
        a = item.arrays[0]
        if a.offset is not None:
            out["offset"] = a.offset
            out["byte_offset"] = a.byte_offset
        out.update(_array_details(a))
    else:
        out["pointer_table_bytes"] = item.pointer_table_bytes
        out["arrays"] = [
            {
                "index": list(a.index),
                "shape": a.shape,
                "logical_bytes": a.logical_bytes,
                "physical_bytes": a.physical_bytes,
                "padding_bytes": a.padding_bytes,
                "memory_space": a.memory_space,
                **_array_details(a),
            }
            for a in item.arrays
        ]
    return out


def _array_details(a: ArrayLayout) -> dict[str, Any]:
    out: dict[str, Any] = {
        "memory_space_name": a.memory_space_name,
        "element_type": a.element_type,
        "dims": list(a.dims),
        "minor_to_major": list(a.minor_to_major),
        "physical_dims": list(a.physical_dims),
        "tiles": list(a.tiles),
        "padded_dims": list(a.padded_dims),
        "tiled_dims": list(a.tiled_dims),
        "steps": [
            {
                "tile": tile,
                "merged": list(step.merged),
                "padded": list(step.padded),
                "reshaped": list(step.reshaped),
                "transposed": list(step.transposed),
            }
            for tile, step in zip(a.tiles, a.steps)
        ],
        "logical_bits": a.logical_bits,
        "storage_bits": a.storage_bits,
        "padding": list(a.reasons),
    }
    if a.cute is not None:
        out["cute"] = a.cute
    if a.axe is not None:
        out["axe"] = a.axe
    if a.interop_error is not None:
        out["interop_error"] = a.interop_error
    if a.note is not None:
        out["note"] = a.note
    if a.grid is not None:
        out["grid"] = [[c.offset for c in row] for row in a.grid.cells]
        out["grid_padding"] = [[c.padding for c in row] for row in a.grid.cells]
    return out
