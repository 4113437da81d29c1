"""Generic attribute values: the bracketed structures after `key=` before they are given a meaning.

The grammar parses every attribute value into these few node kinds; `attrs.py` then reads a
`dimensions={1,0}` as a tuple of ints, a `window={...}` as a Window, and so on. Keeping the
generic form means an attribute we have never seen is still parsed, kept and printable.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from hlo_layout.syntax.shape import ArrayShape


@dataclass(frozen=True, slots=True)
class Word:
    """A name-like or number-like atom: `kLoop`, `%add.1`, `-inf`, `0_0x1_2`, `b01f_01io->b01f`."""

    text: str


@dataclass(frozen=True, slots=True)
class Str:
    """A quoted string; `text` is the contents with escapes undone. Single-quoted strings
    (mesh axis names, `'x'`) are kept as they are written, without the quotes."""

    text: str


@dataclass(frozen=True, slots=True)
class Group:
    """A bracketed list: kind is one of `{`, `[`, `(`, `<`, or `mesh[` for the axes of a mesh
    sharding (`mesh['x'=2,'y'=2]`); `mesh` pairs such a group with the value after it when they
    form an attribute value together (`replica_groups=mesh['x'=2] {'x'}`). Separating commas
    are not kept."""

    kind: str
    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Chain:
    """Items joined by `=` or `:` inside brackets: `size=3x3`, `"kind": "x"`, `0:10:2`."""

    parts: tuple[Value, ...]
    separators: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Iota:
    """`[4,2]<=[2,4]T(1,0)`: an iota tile assignment / replica-group list (reshape dims, then an
    optional transpose of the iota). A mesh's `device_ids=([4,16]T(1,0))` has no tile dims:
    `dims` is then an empty group."""

    dims: Group
    reshape_dims: Group
    transpose: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class Arrow:
    """The `->` inside `entry_computation_layout={(...)->...}`."""


Value = Word | Str | Group | Chain | Iota | Arrow | ArrayShape


def unescape(body: str) -> str:
    """The value of a quoted HLO string's `body`, as XLA's parser reads it (absl::CUnescape:
    `\\'` is `'`, `\\n` a newline); an escape Python's rules do not know is kept as written."""
    if "\\" not in body:
        return body
    try:
        with warnings.catch_warnings():  # `\\A` is kept as written, without a warning
            warnings.simplefilter("ignore")
            return str(ast.literal_eval('"' + body.replace("\n", "\\n") + '"'))
    except (ValueError, SyntaxError):
        return body
