"""The grammar on one piece of a dump: a shape, an attribute value, a literal (memoized), and
the conversion of Lark's errors into HloSyntaxError.

The lower layer both parser tiers share: `scan.py` (the line scanner) and `parse.py` (the
entry points) import it, and it imports neither (no `scan -> parse -> scan` loop).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from hlo_layout import limits
from hlo_layout.errors import HloLayoutError, HloSyntaxError, Source, Span
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.values import Value

if TYPE_CHECKING:
    from lark.exceptions import UnexpectedInput

#: How terminals are named in "expected ..." messages.
_TERMINAL_NAMES = {
    "NAME": "a name",
    "REF": "a name",
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


def _convert(
    error: UnexpectedInput, source: Source, offset: int = 0, *, dump: bool = True
) -> HloSyntaxError:
    """One Lark exception → HloSyntaxError with a span into `source`; at the end of a `dump`
    cut short (not a shape or a value parsed alone), an error that says so (`_cut_short`)."""
    converted = _converted(error, source, offset)
    return _cut_short(converted) if dump else converted


def _cut_short(error: HloSyntaxError) -> HloSyntaxError:
    """A file cut mid-line (a dump still being written, a `head -c`) fails on its last line,
    often at a token the cut left half-written (`"tuple_sh`): say the input ends inside an
    instruction, at its end. At the very end of a text that ends with a line break, the cut
    fell between lines: the input ends inside a computation."""
    span = error.span
    if span is None:
        return error
    text = span.source.text
    end = len(text)
    on_last_line = "\n" not in text[span.start :] and "\r" not in text[span.start :]
    cut = text.rstrip(" \t\f\v")  # blanks after the last line break are no instruction
    if on_last_line and cut and cut[-1] not in "\n\r}":
        where, why = "an instruction", error.message
    elif span.start >= len(text.rstrip()) and error.message == "unexpected end of input":
        where, why = "a computation", "no closing '}'"
    else:
        return error
    return HloSyntaxError(
        f"the input ends inside {where} (truncated?): {why}",
        Span(end, end, span.source),
        error.expected,
    )


def _converted(error: UnexpectedInput, source: Source, offset: int) -> HloSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

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


@functools.cache
def _items_transformer() -> type:
    """The transformer that returns a piece's top-level items, not yet grouped into modules."""
    from hlo_layout.syntax.grammar import HloTransformer

    class _ItemsTransformer(HloTransformer):
        def start(self, *items: Any) -> tuple[bool, tuple[Any, ...]]:  # type: ignore[override]
            if len(items) == 1 and isinstance(items[0], list):  # called without v_args inlining
                items = tuple(items[0])
            # Whether the items still need the module-wide finishing pass (inline operands or
            # computations, shapes to infer): the caller runs it once over the whole file.
            return self.needs_finish, items

    return _ItemsTransformer


#: For grammar.py, which re-reads an inline computation's text with its own start symbol.
convert_lark_error = _convert


def _check_piece_nesting(text: str, source: Source, offset: int) -> None:
    """limits.check_nesting on the piece the grammar is given (not the source region it stands
    for: a fallback piece replaces the lines already scanned by spaces), located in `source`."""
    if text == source.text[offset : offset + len(text)]:
        limits.check_nesting(source, offset, offset + len(text))
        return
    try:
        limits.check_nesting(Source(text, source.name))
    except limits.LimitExceeded as e:
        span = e.span
        if span is not None:
            span = Span(span.start + offset, span.end + offset, source)
        raise limits.LimitExceeded(e.message, span) from None


def lark_parse(
    text: str, source: Source, start: str = "start", offset: int = 0, *, items: bool = False
) -> Any:
    """Parse `text` (which sits at `offset` in `source`) with the full grammar and transform it.
    Lark loads here, on first use: a shape in XLA's spelling never needs it.

    With `items`, return the top-level items (headers, sections, computations, instructions)
    instead of modules: the scanner joins them with its own.
    """
    from lark.exceptions import LarkError, UnexpectedInput, VisitError

    from hlo_layout.syntax.grammar import HloTransformer, parse_transformed

    if len(text) >= limits.NESTING_CHECK_MIN_CHARS:
        _check_piece_nesting(text, source, offset)
    try:
        cls = _items_transformer() if items else HloTransformer
        transformer = cls(source, offset)
        transformer.text = text  # raw values are cut from the parsed piece, not the whole source
        return parse_transformed(text, start, transformer)
    except UnexpectedInput as e:
        raise _convert(e, source, offset, dump=start == "start") from None
    except VisitError as e:
        if isinstance(e.orig_exc, HloLayoutError):
            raise e.orig_exc from None
        if limits.is_int_digits_error(e.orig_exc):
            raise limits.long_integer_error(source, offset, offset + len(text)) from None
        raise
    except RecursionError:
        raise HloSyntaxError(
            "input is nested too deeply to parse", Span(offset, offset + 1, source)
        ) from None
    except LarkError as e:  # pragma: no cover - defensive: any other Lark failure is bad input
        raise HloSyntaxError(str(e), Span(offset, offset + 1, source)) from None


def lark_items(text: str, source: Source, offset: int) -> tuple[bool, tuple[Any, ...]]:
    """The top-level items of `text`, a piece of `source` starting at `offset`, and whether they
    need the finishing pass (`assemble.finish_items`) before they are modules."""
    return lark_parse(text, source, offset=offset, items=True)  # type: ignore[no-any-return]


def lark_syntax_error(text: str, source: Source, offset: int) -> HloLayoutError | None:
    """The error `lark_items(text, source, offset)` raises before it transforms anything (too
    deep nesting, or text the grammar rejects), or None when the grammar accepts `text`."""
    from lark.exceptions import LarkError, UnexpectedInput

    from hlo_layout.syntax.grammar import parse_transformed

    try:
        if len(text) >= limits.NESTING_CHECK_MIN_CHARS:
            _check_piece_nesting(text, source, offset)
        parse_transformed(text, "start", None)
    except HloLayoutError as e:
        return e
    except UnexpectedInput as e:
        return _convert(e, source, offset)
    except (LarkError, RecursionError):  # pragma: no cover - lark_items says what, not this
        return None
    return None


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
    text = text.strip()
    try:
        return _shape_cached(text)
    except limits.LimitExceeded as e:
        if e.span is None or e.span.source.name == "<shape>":  # the caller locates the text
            raise limits.LimitExceeded(e.message, None, text) from None
        raise


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


#: A flat literal of plain numbers and words (`{...}`, `{1, 2.5, -inf}`, `{0 1}`), which the
#: grammar's `literal` rule accepts: checked by this alone, so a dump whose constants are all
#: printed so never loads Lark (tests/syntax/test_fragments.py checks the regex against it).
_ATOM = r"-?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|inf|nan|true|false|\.\.\.)"
_FLAT_LITERAL = re.compile(
    r"\{[ \t]*(?:" + _ATOM + r"(?:(?:[ \t]*,[ \t]*|[ \t]+)" + _ATOM + r")*)?[ \t]*\}"
)


@functools.lru_cache(maxsize=16384)
def check_literal(text: str) -> None:
    """Validate a constant's literal against the grammar (raises HloSyntaxError)."""
    if _FLAT_LITERAL.fullmatch(text) is None:
        lark_parse(text, Source(text, "<literal>"), start="literal")


__all__ = [
    "check_literal",
    "lark_items",
    "lark_parse",
    "lark_syntax_error",
    "parse_shape",
    "parse_value",
]
