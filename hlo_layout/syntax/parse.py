"""Public entry points of the parser: text → tree, with every failure as one HloSyntaxError.

Two tiers, one grammar: `scan.py` frames the lines of a well-formed dump at C-regex speed and asks
the grammar for every shape, literal and attribute value (memoized by exact text: a dump has a few
hundred distinct shape strings among tens of thousands). Anything the scanner is unsure of goes to
the full Lark parse, which is also what reports errors, with positions.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from hlo_layout.errors import HloLayoutError, HloSemanticError, HloSyntaxError, Source, Span
from hlo_layout.syntax.grammar import HloTransformer, lark_parser
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.tree import Module
from hlo_layout.syntax.values import Value

#: How terminals are named in "expected ..." messages.
_TERMINAL_NAMES = {
    "WORD": "a name",
    "INT": "an integer",
    "STRING": "a string",
    "ARRAY_HEAD": "a shape like f32[",
    "SPACED_ARRAY_HEAD": "a shape like f32[",
    "BUFFER_OPEN": "a shape like b(",
    "SQSTRING": "a string",
    "MESH_HEAD": "mesh[",
    "LITERAL_KEY": "a name",
    "LAYOUT_OPEN": "a layout",
    "LAYOUT_LANGLE": "a layout",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LANGLE": "'<'",
    "RANGLE": "'>'",
    "COMMA": "','",
    "EQUAL": "'='",
    "COLON": "':'",
    "HASH": "'#'",
    "STAR": "'*'",
    "QMARK": "'?'",
    "LESSTHAN": "'<'",
    "MORETHAN": "'>'",
    "CHAIN_SEP": "'=' or ':'",
    "ROOT": "ROOT",
    "ENTRY": "ENTRY",
    "CONSTANT": "constant",
    "PARAMETER": "parameter",
    "SECTION_NAME": "a section name",
    "IOTA_T": "T(...)",
    "UPPER": "a layout property",
    "$END": "end of input",
}


class HloInputError(HloLayoutError):
    """A path that cannot be read as HLO text (missing, a directory, undecodable)."""


def _expected_names(expected: Any) -> tuple[str, ...]:
    names = set()
    for term in expected or ():
        name = _TERMINAL_NAMES.get(term)
        if name is None:
            if term.startswith("__ANON") or term.startswith("_"):
                continue
            name = f"'{term.lower()}'" if term.isupper() and len(term) < 12 else term
        names.add(name)
    return tuple(sorted(names))[:8]


def _convert(error: UnexpectedInput, source: Source, offset: int = 0) -> HloSyntaxError:
    """One Lark exception → HloSyntaxError with a span into `source`."""
    if isinstance(error, UnexpectedToken):
        token = error.token
        pos = token.start_pos if token.start_pos is not None else len(source.text) - offset
        end = token.end_pos if token.end_pos is not None else pos + 1
        if token.type == "$END":
            message = "unexpected end of input"
            pos = end = len(source.text) - offset
        else:
            message = f"unexpected {token.value!r}"
        return HloSyntaxError(
            message,
            Span(pos + offset, max(end, pos + 1) + offset, source),
            _expected_names(error.expected),
        )
    if isinstance(error, UnexpectedCharacters):
        pos = error.pos_in_stream or 0
        char = source.text[pos + offset] if pos + offset < len(source.text) else ""
        return HloSyntaxError(
            f"unexpected character {char!r}",
            Span(pos + offset, pos + offset + 1, source),
            _expected_names(error.allowed),
        )
    if isinstance(error, UnexpectedEOF):
        pos = len(source.text)
        return HloSyntaxError(
            "unexpected end of input", Span(pos, pos, source), _expected_names(error.expected)
        )
    return HloSyntaxError(str(error), None)


#: For grammar.py, which re-reads an inline computation's text with its own start symbol.
convert_lark_error = _convert


def lark_parse(text: str, source: Source, start: str = "start", offset: int = 0) -> Any:
    """Parse `text` (which sits at `offset` in `source`) with the full grammar and transform it."""
    try:
        tree = lark_parser().parse(text, start=start)
        return HloTransformer(source, offset).transform(tree)
    except UnexpectedInput as e:
        raise _convert(e, source, offset) from None
    except VisitError as e:
        if isinstance(e.orig_exc, HloLayoutError):
            raise e.orig_exc from None
        raise
    except RecursionError:
        raise HloSyntaxError(
            "input is nested too deeply to parse", Span(offset, offset + 1, source)
        ) from None
    except LarkError as e:  # pragma: no cover - defensive: any other Lark failure is bad input
        raise HloSyntaxError(str(e), Span(offset, offset + 1, source)) from None


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a tree: the tree has no cycles, and the
    collector's passes over hundreds of thousands of new tuples cost ~10 % of a parse."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_modules(
    text: str,
    name: str = "<string>",
    *,
    engine: str = "auto",
    verify: bool = True,
    first_line: int = 1,
) -> tuple[Module, ...]:
    """Every module in `text` (a dump may hold several; a snippet gives one header-less module).

    engine: "auto" (fast scanner, Lark where the scanner is unsure), "lark" (grammar only) or
    "scan" (scanner only; raises instead of falling back — for tests). With `verify`, the first
    broken whole-module rule (undefined operand, duplicate name) raises HloSemanticError.
    """
    from hlo_layout.syntax.scan import ScanFallback, scan_modules
    from hlo_layout.syntax.verify import check

    source = Source(text, name, first_line)
    modules: tuple[Module, ...] | None = None
    with _gc_paused():
        if engine != "lark":
            try:
                modules = scan_modules(source)
            except ScanFallback:
                if engine == "scan":
                    raise
        if modules is None:
            modules = lark_parse(text, source)
    if verify:
        for module in modules:
            check(module)
    return modules


def parse(
    text: str, name: str = "<string>", *, engine: str = "auto", verify: bool = True
) -> Module:
    """Parse HLO text holding one module (or a header-less computation or instruction snippet).

    >>> m = parse("HloModule m\\nENTRY e { ROOT p = f32[2]{0} parameter(0) }")
    >>> m.entry.root.shape
    ArrayShape(element_type='f32', dims=(2,), dynamic=(), layout=Layout(minor_to_major=(0,), ...))
    """
    modules = parse_modules(text, name, engine=engine, verify=verify)
    if not modules:
        raise HloSyntaxError("no HLO module, computation or instruction found", None)
    if len(modules) > 1:
        raise HloSemanticError(
            f"{name} holds {len(modules)} modules; use hlo_layout.parse_modules to read them all"
        )
    return modules[0]


def open_binary(path: Path) -> BinaryIO:
    """A dump file opened for reading; a directory, a missing or an unreadable path raises
    HloInputError (shared by `read_text` and the streaming reader)."""
    try:
        if path.is_dir():
            raise HloInputError(f"{path}: is a directory, not an HLO file")
        return path.open("rb")
    except FileNotFoundError:
        raise HloInputError(f"{path}: no such file") from None
    except OSError as e:
        raise HloInputError(f"{path}: cannot read ({e.strerror or e})") from None


def read_text(path: str | Path) -> str:
    """The text of a dump file; `.gz` is decompressed. Raises HloInputError on any I/O problem."""
    p = Path(path)
    with open_binary(p) as f:
        try:
            data = f.read()
        except OSError as e:
            raise HloInputError(f"{p}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise HloInputError(f"{p}: broken gzip data ({e})") from None
    if b"\x00" in data[:65536]:
        raise HloInputError(f"{p}: binary data, not HLO text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HloInputError(f"{p}: not UTF-8 text (byte {e.start})") from None


def parse_file(path: str | Path, *, engine: str = "auto", verify: bool = True) -> Module:
    """`parse` on a file's text (plain or gzip)."""
    return parse(read_text(path), str(path), engine=engine, verify=verify)


def parse_file_modules(
    path: str | Path, *, engine: str = "auto", verify: bool = True
) -> tuple[Module, ...]:
    """`parse_modules` on a file's text (plain or gzip)."""
    return parse_modules(read_text(path), str(path), engine=engine, verify=verify)


@functools.lru_cache(maxsize=65536)
def _shape_cached(text: str) -> Shape:
    from hlo_layout.syntax.fast_shape import fast_shape

    shape = fast_shape(text)
    if shape is not None:
        return shape
    return lark_parse(text, Source(text, "<shape>"), start="shape")


def parse_shape(text: str) -> Shape:
    """A shape string as XLA prints it: `bf16[8,128]{1,0:T(8,128)(2,1)}`, `(f32[], s32[2])`, also
    with the `<...>` layout notation. Memoized by exact text."""
    return _shape_cached(text.strip())


@functools.lru_cache(maxsize=65536)
def _value_cached(text: str) -> Value:
    return lark_parse(text, Source(text, "<attribute>"), start="value")


def parse_value(raw: str, span: Span | None = None) -> Value:
    """An attribute value's generic structure; errors point into the file when `span` is given."""
    try:
        return _value_cached(raw)
    except HloSyntaxError as e:
        if span is None or e.span is None:
            raise
        s = e.span
        raise HloSyntaxError(
            "in attribute value: " + e.message,
            Span(span.start + s.start, span.start + s.end, span.source),
            e.expected,
        ) from None


@functools.lru_cache(maxsize=16384)
def check_literal(text: str) -> None:
    """Validate a constant's literal against the grammar (raises HloSyntaxError)."""
    lark_parse(text, Source(text, "<literal>"), start="literal")
