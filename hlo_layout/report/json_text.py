"""JSON text exactly as `json.dumps(obj, indent=2, ensure_ascii=False)` spells it, written piece
by piece so a document of a million instructions never exists as one Python structure or one
string.

`json.dumps` with `indent` runs the pure-Python encoder; `dumps_indented` spells the same text
with C-encoded strings, about three times faster (tests/report/test_json_text.py checks the
equality over generated documents). Only the JSON types `inspect` writes are handled: dict
with str keys, list, tuple, str, int, float, bool, None. The instructions, nearly all of the
text, do not come through here: `report.model.InstructionText` spells them from memoized
fragments, several times faster again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

#: A str as JSON with ensure_ascii=False (the C encoder's).
encode_str: Callable[[str], str] = json.encoder.encode_basestring
_encode_str = encode_str
_float_repr = json.encoder.JSONEncoder().encode

#: A list holding only this string marks where `write_document` splices streamed items in.
SPLICE = "\x00splice\x00"


class Mapped:
    """A list `write_document` writes as `[make(x) for x in items]`, making each item as it is
    written (a wide tuple parameter's leaves: a dict each would all exist at once)."""

    __slots__ = ("items", "make")

    def __init__(self, items: Sequence[Any], make: Callable[[Any], Any]) -> None:
        self.items = items
        self.make = make

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return map(self.make, self.items)


def dumps_indented(obj: Any, level: int = 0) -> str:
    """`json.dumps(obj, indent=2, ensure_ascii=False)`, nested `level` steps deep (the first
    line is not indented; the lines after it are, as inside an enclosing document)."""
    parts: list[str] = []
    _encode(obj, level, parts.append)
    return "".join(parts)


#: `_encode` hands its pieces to the sink (and clears them) once it holds this many: a long
#: list written by `write_document` never exists whole as text.
_CHUNK = 1 << 14


def _encode(
    obj: Any,
    level: int,
    write: Callable[[str], Any],
    flush: Callable[[], Any] | None = None,
    splice: Callable[[int], Any] | None = None,
) -> None:
    """`dumps_indented`'s pieces, handed to `write`; `flush` (if any) is called between the
    items of a list or dict, `splice(level)` (if any) writes a `[SPLICE]` list."""
    if isinstance(obj, str):
        write(_encode_str(obj))
    elif obj is None:
        write("null")
    elif obj is True:
        write("true")
    elif obj is False:
        write("false")
    elif isinstance(obj, int):
        write(int.__repr__(obj))
    elif isinstance(obj, float):
        write(_float_repr(obj))
    elif isinstance(obj, dict):
        if not obj:
            write("{}")
            return
        inner = "\n" + "  " * (level + 1)
        write("{")
        first = True
        for key, value in obj.items():
            write(inner if first else "," + inner)
            first = False
            write(_encode_str(key))
            write(": ")
            _encode(value, level + 1, write, flush, splice)
            if flush is not None:
                flush()
        write("\n" + "  " * level + "}")
    elif isinstance(obj, list | tuple | Mapped):
        if not len(obj):
            write("[]")
            return
        if splice is not None and type(obj) is list and len(obj) == 1 and obj[0] == SPLICE:
            splice(level)
            return
        inner = "\n" + "  " * (level + 1)
        write("[")
        first = True
        for value in obj:
            write(inner if first else "," + inner)
            first = False
            _encode(value, level + 1, write, flush, splice)
            if flush is not None:
                flush()
        write("\n" + "  " * level + "]")
    else:
        raise TypeError(f"not JSON: {type(obj).__name__}")


def write_document(
    out: TextIO,
    skeleton: Any,
    fill: Callable[[int], Iterable[Iterable[str]]],
) -> None:
    """Write `skeleton` as indented JSON plus a newline, replacing the n-th `[SPLICE]` list by
    the items `fill(n)` yields: each item is the pieces of its text, encoded at the list's
    depth + 1; `fill(n)` yields at least one item. The skeleton's own text is written as it is
    encoded, `_CHUNK` pieces at a time (its lists may be long: a wide tuple parameter's leaves)."""
    parts: list[str] = []
    write = parts.append
    n = 0

    def flush() -> None:
        if len(parts) >= _CHUNK:
            out.write("".join(parts))
            parts.clear()

    # The writes fall where whole-text splicing made them (the text up to a splice's first
    # item, each item, the rest), so stdout's buffer flushes where it did beside stderr's notes.
    def splice(level: int) -> None:
        nonlocal n
        parts.append("[\n")
        out.write("".join(parts))
        parts.clear()
        indent = "  " * (level + 1)
        first = True
        for item in fill(n):
            out.write(("" if first else ",\n") + indent)
            for piece in item:
                out.write(piece)
            first = False
        out.write("\n")
        parts.append("  " * level + "]")
        n += 1

    _encode(skeleton, 0, write, flush, splice)
    out.write("".join(parts))
    out.write("\n")


__all__ = ["SPLICE", "Mapped", "dumps_indented", "encode_str", "write_document"]
