"""The text form of layouts: one table of layout properties (letter, field, print order) and the
validated constructors both parser tiers build shapes with.

The table drives the fast shape reader (`fast_shape.py`: which letters take an integer or a type
name), the printer (`printer.print_layout`: XLA's printing order) and the tiling-pattern text
(`layout/padding.tiling_pattern`: the properties that decide padding). The grammar
(grammars/hlo.lark) spells the same letters; tests/syntax/test_layout_text.py checks the four
agree. Lark-free, so reading one shape (`hlo-layout layout SHAPE`) never loads the grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hlo_layout import limits
from hlo_layout.syntax.shape import (
    COMBINE,
    ArrayShape,
    Layout,
    OpaqueShape,
    Shape,
    Tile,
    TokenShape,
)


@dataclass(frozen=True, slots=True)
class LayoutProperty:
    """One `X(...)` property after a layout's colon.

    `kind` says how its value is spelled: `tiles` `(8,128)(2,1)`, `int` `(4)`, `type` `(s32)`,
    `splits` `(0:2,4)`, `shape` `(f32[8])`, `names` `(D,C)`. `decides_padding`: part of the
    tiling pattern that padding is grouped by."""

    letter: str
    field: str
    kind: str
    decides_padding: bool = False


#: Every property XLA prints, in the order Layout::Print writes them (layout_rules.md §1.3).
LAYOUT_PROPERTIES: tuple[LayoutProperty, ...] = (
    LayoutProperty("D", "dim_level_types", "names"),
    LayoutProperty("T", "tiles", "tiles", decides_padding=True),
    LayoutProperty("L", "tail_padding_alignment", "int", decides_padding=True),
    LayoutProperty("#", "index_type", "type"),
    LayoutProperty("*", "pointer_type", "type"),
    LayoutProperty("E", "element_size_bits", "int", decides_padding=True),
    LayoutProperty("S", "memory_space", "int"),
    LayoutProperty("SC", "split_configs", "splits"),
    LayoutProperty("P", "physical_shape", "shape"),
    LayoutProperty("M", "dynamic_shape_metadata_prefix_bytes", "int"),
)

#: Letter -> Layout field, for the properties of each value kind.
INT_PROPERTIES = {p.letter: p.field for p in LAYOUT_PROPERTIES if p.kind == "int"}
TYPE_PROPERTIES = {p.letter: p.field for p in LAYOUT_PROPERTIES if p.kind == "type"}
PADDING_PROPERTIES = tuple(p for p in LAYOUT_PROPERTIES if p.decides_padding)


def property_default(prop: LayoutProperty) -> Any:
    """The value a Layout holds when the text does not print `prop`."""
    return Layout.__dataclass_fields__[prop.field].default


class ShapeTextError(Exception):
    """A shape or layout that reads but breaks a rule; carries the offending text offsets."""

    def __init__(self, message: str, start: int, end: int):
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end


def tile_problem(dims: tuple[int, ...]) -> str | None:
    """Why the layout engine cannot size a tile, or None: the one rule for `*` entries.

    XLA's parser (hlo_parser.cc ParseTiles) reads `*` in any tile entry as
    Tile::kCombineDimension, "combined with the next minor dimension before tiling", so a tile
    ending in `*` reads and prints like any other, in a dump and in `layout` alike. It names no
    size for the dimensions it combines (there is no more-minor entry to merge into), so no
    layout rule gives the array a physical size: the figures that depend on tiling are unknown,
    with this reason, and the logical ones stand.
    """
    if not dims:
        return "empty tile ()"
    if dims[-1] == COMBINE:
        return (
            f"tile {Tile(dims)} ends in *: there is no more-minor dimension to merge into, so "
            "it names no tile size (XLA's parser reads it; no layout rule sizes it)"
        )
    for t in dims:
        if t != COMBINE and t <= 0:
            return f"tile entry {t} is not a positive size"
    return None


def make_layout(
    rank: int, minor_to_major: tuple[int, ...], props: list[tuple[str, Any]], start: int, end: int
) -> Layout:
    """Validate and build a Layout (XLA's ValidateLayoutForShape, in our words)."""
    if minor_to_major or props is not None:
        if len(minor_to_major) != rank:
            raise ShapeTextError(
                f"layout has {len(minor_to_major)} minor-to-major entries but the shape has "
                f"rank {rank}",
                start,
                end,
            )
        if sorted(minor_to_major) != list(range(rank)):
            raise ShapeTextError(
                f"minor_to_major {{{','.join(map(str, minor_to_major))}}} is not a permutation "
                f"of 0..{rank - 1}",
                start,
                end,
            )
    fields: dict[str, Any] = {}
    unknown: list[str] = []
    for key, val in props:
        if key == "unknown_props":
            unknown.append(val)
        elif key == "tiles":
            fields["tiles"] = fields.get("tiles", ()) + val
        elif key == "split_configs":
            fields["split_configs"] = fields.get("split_configs", ()) + val
        else:
            fields[key] = val
    if unknown:
        fields["unknown_props"] = tuple(unknown)
    for tile in fields.get("tiles", ()):
        if any(d <= 0 and d != COMBINE for d in tile.dims):
            raise ShapeTextError(
                f"tile {tile} has an entry <= 0 (only positive sizes or * are valid)", start, end
            )
    if fields.get("tail_padding_alignment", 1) < 1:
        raise ShapeTextError("L(n) needs n >= 1", start, end)
    if fields.get("element_size_bits", 0) < 0:
        raise ShapeTextError("E(n) needs n >= 0", start, end)
    return Layout(minor_to_major=minor_to_major, **fields)


def make_array_shape(
    head: str, dims: list[tuple[int, bool]], layout: tuple[tuple[int, ...], list, int, int] | None
) -> Shape:
    element_type = head[:-1]
    if element_type == "token":
        return TokenShape()
    if element_type == "opaque":
        return OpaqueShape()
    sizes = tuple(d for d, _ in dims)
    tiles = [t.dims for k, v in (layout[1] if layout else ()) if k == "tiles" for t in v]
    problem = limits.array_problem(sizes, tiles)
    if problem is not None:  # checked before anything the text merely declares is built
        raise limits.LimitExceeded(problem)
    dynamic = tuple(dyn for _, dyn in dims)
    if not any(dynamic):
        dynamic = ()
    built = None
    if layout is not None:
        m2m, props, start, end = layout
        built = make_layout(len(sizes), m2m, props, start, end)
    return ArrayShape(element_type, sizes, dynamic, built)


__all__ = [
    "INT_PROPERTIES",
    "LAYOUT_PROPERTIES",
    "PADDING_PROPERTIES",
    "TYPE_PROPERTIES",
    "LayoutProperty",
    "ShapeTextError",
    "make_array_shape",
    "make_layout",
    "property_default",
    "tile_problem",
]
