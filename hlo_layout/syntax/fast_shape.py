"""Shapes in XLA's canonical spelling, read with regular expressions instead of the LALR parser.

A cold parse meets a few hundred distinct shape strings; through Lark each costs about a
millisecond, which alone is half the parse time of a 2 MB dump. XLA prints shapes one way (no
spaces, `{...}` layouts, properties from a small set), and this reader accepts exactly that subset
and returns None for anything else, which `parse_shape` then hands to the grammar. It builds the
values with the grammar's own constructors (`layout_text.make_array_shape`), so validation is
shared, and tests/syntax/test_fast_shape.py shows it gives the grammar's tree for every shape in
the corpus and for generated ones.
"""

from __future__ import annotations

import re

from hlo_layout import limits
from hlo_layout.syntax.layout_text import (
    INT_PROPERTIES,
    TYPE_PROPERTIES,
    ShapeTextError,
    make_array_shape,
)
from hlo_layout.syntax.lexicon import ELEMENT_TYPE
from hlo_layout.syntax.shape import COMBINE, UNBOUNDED, Shape, SplitConfig, Tile, TupleShape

# `f32[2,<=3,?]{1,0:T(8,128)(2,1)S(1)}`: a layout only when a digit or ':' follows '{' (as the
# grammar's LAYOUT_OPEN); properties hold no braces (so `P(shape)` goes to the grammar). A
# number has at most 19 digits, as XLA's int64 (`_N`): a longer one goes to the grammar, which
# bounds it (limits.MAX_INT_DIGITS) and says where it is.
_N = "[0-9]{1,19}(?![0-9])"
_ARRAY = re.compile(
    rf"({ELEMENT_TYPE})\[((?:(?:{_N}|<={_N}|\?)(?:,(?:{_N}|<={_N}|\?))*)?)\]"
    rf"(?:\{{(?=[0-9:])({_N}(?:,{_N})*)?(?::([^{{}}<>\s]*))?\}})?"
)
_PROP = re.compile(
    rf"T((?:\((?:{_N}|\*)(?:,(?:{_N}|\*))*\))+)"  # 1 tiles
    rf"|SC((?:\({_N}:{_N}(?:,{_N})*\))+)"  # 2 split configs
    r"|([" + re.escape("".join(INT_PROPERTIES)) + rf"])\(({_N})\)"  # 3, 4 integer properties
    r"|([" + re.escape("".join(TYPE_PROPERTIES)) + rf"])\(({ELEMENT_TYPE})\)"  # 5, 6 type names
)
_GROUP = re.compile(r"\(([^()]*)\)")
_INDEX_COMMENT = re.compile(r"/\*index=[0-9]+\*/")


def _props(text: str) -> list[tuple[str, object]] | None:
    props: list[tuple[str, object]] = []
    pos = 0
    while pos < len(text):
        m = _PROP.match(text, pos)
        if m is None:
            return None
        tiles, splits, int_key, int_value, type_key, type_value = m.groups()
        if tiles is not None:
            props.append(
                (
                    "tiles",
                    tuple(
                        Tile(tuple(COMBINE if d == "*" else int(d) for d in g.split(",")))
                        for g in _GROUP.findall(tiles)
                    ),
                )
            )
        elif splits is not None:
            configs = []
            for g in _GROUP.findall(splits):
                dim, _, indices = g.partition(":")
                configs.append(SplitConfig(int(dim), tuple(int(i) for i in indices.split(","))))
            props.append(("split_configs", tuple(configs)))
        elif int_key is not None:
            props.append((INT_PROPERTIES[int_key], int(int_value)))
        else:
            props.append((TYPE_PROPERTIES[type_key], type_value))
        pos = m.end()
    return props


def _dims(text: str) -> list[tuple[int, bool]]:
    if not text:
        return []
    out = []
    for d in text.split(","):
        if d == "?":
            out.append((UNBOUNDED, True))
        elif d[0] == "<":
            out.append((int(d[2:]), True))
        else:
            out.append((int(d), False))
    return out


#: Array shapes by exact text: a tuple repeats its element shapes (a 977-element entry tuple
#: holds a few dozen distinct ones), and shapes are immutable.
_ARRAYS: dict[str, Shape] = {}


def _array(text: str, pos: int) -> tuple[Shape, int] | None:
    m = _ARRAY.match(text, pos)
    if m is None:
        return None
    known = _ARRAYS.get(m.group(0))
    if known is not None:
        return known, m.end()
    got = _build_array(m)
    if got is not None:
        if len(_ARRAYS) > 65_536:
            _ARRAYS.clear()
        _ARRAYS[m.group(0)] = got[0]
    return got


def _build_array(m: re.Match[str]) -> tuple[Shape, int] | None:
    element_type, dims, m2m, props_text = m.groups()
    layout = None
    if m.group(0).endswith("}"):
        props = _props(props_text) if props_text else []
        if props is None:
            return None
        minor_to_major = tuple(int(x) for x in m2m.split(",")) if m2m else ()
        layout = (minor_to_major, props, m.start(), m.end())
    try:
        return make_array_shape(element_type + "[", _dims(dims), layout), m.end()
    except ShapeTextError:  # invalid: the grammar path reports it with its position
        return None


def _shape(text: str, pos: int, depth: int = 0) -> tuple[Shape, int] | None:
    if text.startswith("(", pos):
        if depth >= limits.MAX_SHAPE_DEPTH:
            return None  # the grammar reports it, with its place
        elements = []
        pos += 1
        if text.startswith(")", pos):
            return TupleShape(()), pos + 1
        while True:
            comment = _INDEX_COMMENT.match(text, pos)
            if comment is not None:
                pos = comment.end()
            got = _shape(text, pos, depth + 1)
            if got is None:
                return None
            element, pos = got
            elements.append(element)
            if text.startswith(", ", pos):
                pos += 2
            elif text.startswith(",", pos):
                pos += 1
            elif text.startswith(")", pos):
                return TupleShape(tuple(elements)), pos + 1
            else:
                return None
    return _array(text, pos)


def fast_shape(text: str) -> Shape | None:
    """The shape when `text` is in XLA's canonical spelling, else None (use the grammar)."""
    try:
        got = _shape(text, 0)
    except RecursionError:
        return None
    if got is None or got[1] != len(text):
        return None
    return got[0]
