"""The fast tier: frame each line of a well-formed dump with regular expressions, and let the
grammar parse the pieces (shapes, literals, attribute values), memoized by their exact text.

The scanner decides nothing about syntax that the grammar does not also decide: it only finds
where a line's name, shape, opcode, operands and attributes start and end. Whatever it is not sure
of (an instruction wrapped over several lines, a multi-line comment, anything unbalanced) raises
ScanFallback, and the caller parses the file with the full grammar instead, which also gives the
error with its position. tests/syntax/test_tiers.py shows both tiers build identical trees on
every corpus file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

from hlo_layout import accel
from hlo_layout.errors import HloLayoutError, Source, Span
from hlo_layout.limits import LimitExceeded
from hlo_layout.syntax import lexicon
from hlo_layout.syntax.assemble import finish_items
from hlo_layout.syntax.fragments import (
    check_literal,
    lark_items,
    lark_parse,
    lark_syntax_error,
    parse_shape,
)
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS
from hlo_layout.syntax.shape import Shape
from hlo_layout.syntax.tree import (
    Attribute,
    Computation,
    Instruction,
    LazyAttributes,
    Operand,
    ParameterDecl,
    Section,
    SectionEntry,
)

#: The interface version of `accel/scan.c` this module calls (its `ABI`).
_ACCEL_ABI = accel.ABIS["_hlo_layout_scan"]
#: The compiled twin of `_scan_lines`' common-line branch (`accel/scan.c`), or None: pure Python.
_accel = accel.load("_hlo_layout_scan", _ACCEL_ABI)


class ScanFallback(Exception):
    """The scanner met a line it does not frame; parse with the full grammar instead."""


# Every token below is the lexicon's (`syntax/lexicon.py`: `{NAME}` names one of its pieces):
# names, blanks (`{B}`: between the tokens of a line as XLA prints it), strings, array shapes.
_pattern = lexicon.pattern
_NAME = lexicon.NAME
_BARE_NAME = lexicon.BARE_NAME
_INSTR_HEAD = re.compile(_pattern(r"{B}*(ROOT{B}+)?({NAME}){B}*={B}*"))
# An array shape with an optional layout that holds no nested braces (P(...) layouts fall back).
_ARRAY = re.compile(_pattern(r"{ARRAY}(?:\{[^{}]*\}|<[0-9:][^<>]*>)?"))
_ARRAY_HEAD = re.compile(lexicon.ARRAY_HEAD)
_OPCODE = re.compile(_pattern(r"{B}+({BARE_NAME})\("))
_OPERAND = re.compile(_pattern(r"{B}*({NAME})(?:#([0-9]+))?{B}*"))
_PAREN = re.compile(r"[()]")
# Tokens of an attribute tail: strings, brackets, commas, and runs of anything else.
_TAIL_TOKEN = re.compile(_pattern(r'{LINE_STRING}|[{}()\[\],]|[^"{}()\[\],]+'))
_COMP_HEAD = re.compile(_pattern(r"{B}*(ENTRY{B}+)?({NAME}){B}*(\(.*\){B}*->.*?)?{B}*\{{B}*$"))
_SIGNATURE = re.compile(_pattern(r"\((.*)\){B}*->{B}*(.*?){B}*$"))
_PARAM = re.compile(_pattern(r"{B}*({NAME}){B}*:{B}*(.*?){B}*$"))
_MODULE_HEAD = re.compile(_pattern(r"{B}*HloModule{B}+({NAME}){B}*"))
_SECTION_ROW = re.compile(_pattern(r"{B}*(-?[0-9]+){B}+({STRING}|\{[^{}]*\}){B}*$"))
_SECTIONS = frozenset({"FileNames", "FunctionNames", "FileLocations", "StackFrames"})
_CLOSERS = {"}": "{", ")": "(", "]": "["}
_COMMENT = re.compile(lexicon.LINE_BLOCK_COMMENT)
_STRINGS = re.compile(lexicon.LINE_STRING)
#: A string without its closing quote (`_STRINGS` is this and `"`).
_STRING_OPEN = re.compile(lexicon.string("\\n", closed=False))


def strings_replaced(text: str, replacement: str) -> str:
    """`_STRINGS.sub(replacement, text)` in linear time. The regex's search retries at every
    quote, and a text of escaped quotes in an unclosed string (hostile input) made that
    quadratic: each quote inside an unclosed string sits in an escape pair, so its own string
    would stop where the enclosing one stopped, unclosed too; the search resumes there (as the
    compiled skeleton does, accel/scan.c)."""
    i = text.find('"')
    if i < 0:
        return text
    out: list[str] = []
    pos, n = 0, len(text)
    opened = _STRING_OPEN.match
    while i >= 0:
        end = opened(text, i).end()  # type: ignore[union-attr]  # a quote always starts one
        if end < n and text[end] == '"':
            out.append(text[pos:i])
            out.append(replacement)
            pos = end + 1
            i = text.find('"', pos)
        else:
            i = text.find('"', end)
    out.append(text[pos:])
    return "".join(out)


def _shape(text: str) -> Shape:
    try:
        return parse_shape(text)
    except LimitExceeded:
        raise  # located by parse_modules; the grammar would reject it too, only slower
    except HloLayoutError:
        raise ScanFallback from None


def _split_top(text: str) -> list[tuple[int, int]]:
    """(start, end) of each comma-separated piece at bracket depth 0, strings respected."""
    if _accel is not None:
        found: list[tuple[int, int]] | None = _accel.split_top(text)
        if found is None:
            raise ScanFallback
        return found
    pieces = []
    depth = 0
    start = 0
    stack: list[str] = []
    for m in _TAIL_TOKEN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c in "{([":
            stack.append(c)
            depth += 1
        elif c in "})]":
            if not stack or stack.pop() != _CLOSERS[c]:
                raise ScanFallback
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append((start, m.start()))
            start = m.end()
        elif c == '"' and (len(tok) < 2 or tok[-1] != '"'):
            raise ScanFallback
    if stack:
        raise ScanFallback
    pieces.append((start, len(text)))
    return pieces


def _attributes(line: str, start: int, line_offset: int, source: Source) -> tuple[Attribute, ...]:
    """The attributes of a module or computation header in `line[start:]` (empty or `, k=v...`),
    split by the one splitter once the grammar would accept them (`_tail_ok`)."""
    tail = line[start:]
    if not tail.strip(_BLANK):
        return ()
    if not _tail_ok(tail):
        raise ScanFallback
    spans = attribute_spans(tail)
    if not spans:
        raise ScanFallback
    return TailSplitter(source)(tail, line_offset + start, spans)


def _matching_paren(line: str, open_pos: int) -> int:
    depth = 0
    for m in _PAREN.finditer(line, open_pos):
        if m.group() == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    raise ScanFallback


def _shape_at(line: str, pos: int) -> tuple[Shape, int]:
    """The shape starting at line[pos] and the position after it."""
    m = _ARRAY.match(line, pos)
    if m is not None:
        return _shape(m.group()), m.end()
    if line.startswith("(", pos) or line.startswith("b(", pos):
        close = _matching_paren(line, line.index("(", pos))
        end = close + 1
        # A layout of the tuple's last leaf never follows ')', so the shape ends here.
        return _shape(line[pos:end]), end
    raise ScanFallback


def _operands(text: str) -> tuple[Operand, ...]:
    if "/*" in text:
        text = _COMMENT.sub("", text)
    if not text.strip():
        return ()
    if "[" not in text:
        out = []
        for piece in text.split(","):
            m = _OPERAND.fullmatch(piece)
            if m is None:
                raise ScanFallback
            index = m.group(2)
            out.append(Operand(m.group(1).removeprefix("%"), int(index) if index else None))
        return tuple(out)
    if "(" not in text and '"' not in text:
        found = _shaped_operands(text)
        if found is not None:
            return found
    out = []
    for a, b in _split_top(text):
        piece = text[a:b]
        stripped = piece.lstrip()
        shape = None
        rest = stripped
        if stripped[:1] == "(" or _ARRAY_HEAD.match(stripped):
            shape, end = _shape_at(stripped, 0)
            rest = stripped[end:]
            if not rest[:1].isspace():
                raise ScanFallback
        m = _OPERAND.fullmatch(rest)
        if m is None:
            raise ScanFallback
        index = m.group(2)
        out.append(Operand(m.group(1).removeprefix("%"), int(index) if index else None, shape))
    return tuple(out)


#: One `array-shape %name` of an operand list written with shapes, and the comma after it.
_SHAPED_OPERAND = re.compile(
    _pattern(r"{B}*(" + _ARRAY.pattern + r"){B}+({NAME})(?:#([0-9]+))?{B}*(,|$)")
)


def _shaped_operands(text: str) -> tuple[Operand, ...] | None:
    """`_operands` of a list whose every operand is `array-shape %name` (as older dumps print
    them), one match per operand instead of a split and three matches; None for anything else.
    The array pattern ends where `_shape_at` ends it (a blank must follow), so the pieces,
    shapes and names are those of the general path. The compiled loop (`accel/scan.c`, `run`)
    takes such lines itself and builds what `_slow_instruction` builds with this."""
    out = []
    pos, end = 0, len(text)
    match = _SHAPED_OPERAND.match
    comma = ""
    while pos < end:
        m = match(text, pos)
        if m is None:
            return None
        shape_text, name, index, comma = m.groups()
        out.append(
            Operand(name.removeprefix("%"), int(index) if index else None, _shape(shape_text))
        )
        pos = m.end()
    return None if comma or not out else tuple(out)


_SIMPLE_VALUE = _pattern(r'[^,{}()\[\]"\s]+|{LINE_STRING}|\{[^{}"]*(?:{LINE_STRING}[^{}"]*)*\}')
_SIMPLE_ATTR = _pattern(r",{B}*(?:{BARE_NAME})=(?:" + _SIMPLE_VALUE + r")")
# A tail whose values hold no nested brackets, split by one finditer (after validation).
_SIMPLE_TAIL = re.compile(_pattern(r"(?:{B}*" + _SIMPLE_ATTR + r")*{LB}*"))
_SIMPLE_ATTR_RE = re.compile(_pattern(r"{B}*,{B}*({BARE_NAME})=(" + _SIMPLE_VALUE + r")"))
# The common line's head: `[ROOT] %name = shape opcode(flat operands)`; the tail stays raw.
# Shapes: an array shape whose layout holds no braces, or a tuple nested at most three deep
# (parse_shape, memoized, then decides whether the text really is a shape).
# Framed as words (a constant's literal and a parameter's number stand here too); an operand that
# is an integer is no name, which `_scan_lines` checks as it first meets each (`plain`).
_ONE_OPERAND = _pattern(r"%?{NAME_RUN}(?:#[0-9]+)?")
_FLAT_OPERANDS = re.compile(
    _pattern(r"{B}*" + _ONE_OPERAND + r"{B}*(?:,{B}*" + _ONE_OPERAND + r"{B}*)*")
)


# The common line in one match: `[ROOT] %name = shape opcode(flat operands)` and the raw tail.
# Shapes: an array shape whose layout holds no braces, or a tuple nested at most three deep
# (parse_shape, memoized, then decides whether the text really is a shape).
_HEAD = re.compile(
    _pattern(
        r"{B}*((?:ROOT{B}+)?)%?({BARE_NAME}){B}*={B}*"
        r"({ARRAY}(?:\{[^{}]*\})?"
        r"|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))"
        r"{B}+({BARE_NAME})\((" + _FLAT_OPERANDS.pattern + r"|{B}*)\)(.*)"
    )
)


def _operand(piece: str) -> Operand:
    """One `%name` or `%name#1` of a flat operand list."""
    name = piece.strip(" \t")
    if name[0] == "%":
        name = name[1:]
    if "#" in name:
        name, index = name.split("#")
        return tuple.__new__(Operand, (name, int(index), None))
    return tuple.__new__(Operand, (name, None, None))


# Strings (skipped whole), openers, closers and commas of a tail already known to be valid.
_SPECIAL = re.compile(_pattern(r"{STRING}|([{(\[])|([})\]])|(,)"))
_KEY = re.compile(_pattern(r"{LB}*({BARE_NAME}){LB}*={LB}*"))


def attribute_spans(tail: str) -> tuple[int, ...]:
    """The one attribute splitter: (key start, key end, value start, value end) of each
    attribute of a tail `_tail_ok` accepted, flat, relative to the tail; () where it does not
    follow the tail (the grammar splits it). Cut at the commas outside strings and brackets,
    each piece `[ \\t\\f\\r]*KEY[ \\t\\f\\r]*=[ \\t\\f\\r]*VALUE`, the value without its
    trailing blanks. The compiled twin (`accel/scan.c`) splits alike (tests/syntax/
    test_lexicon.py holds both to the grammar's items); the tree's attributes, `attribute_pairs`
    and both JSON writers read these spans (`LazyAttributes.spans`), and nothing splits again."""
    if _accel is not None:
        found: tuple[int, ...] = _accel.attribute_spans(tail)
        return found
    out: list[int] = []
    if _simple_tail(tail):  # one pass over the common kind, which cuts where the loop below does
        for item in _SIMPLE_ATTR_RE.finditer(tail):
            out += (item.start(1), item.end(1), item.start(2), item.end(2))
        return tuple(out)
    cuts = []
    depth = 0
    for m in _SPECIAL.finditer(tail):
        kind = m.lastindex
        if kind == 1:
            depth += 1
        elif kind == 2:
            depth -= 1
        elif kind == 3 and not depth:
            cuts.append(m.start())
    if not cuts or tail[: cuts[0]].strip(_BLANK):
        return ()
    cuts.append(len(tail))
    for a, b in itertools.pairwise(cuts):
        k = _KEY.match(tail, a + 1, b)
        if k is None:
            return ()
        value = k.end()
        out += (k.start(1), k.end(1), value, value + len(tail[value:b].rstrip(_BLANK)))
    return tuple(out)


def splitter() -> Callable[[str], tuple[int, ...]]:
    """`attribute_spans` itself: the compiled one when it is on (a writer in C then calls it
    directly)."""
    return _accel.attribute_spans if _accel is not None else attribute_spans  # type: ignore[no-any-return]


class TailSplitter:
    """How the scanner's `LazyAttributes` split (`tree.AttributeSplitter`): the spans of the one
    splitter, made into attributes of `source`; where it does not follow a tail, the grammar's
    attributes."""

    __slots__ = ("source",)

    def __init__(self, source: Source) -> None:
        self.source = source

    @staticmethod
    def spans(text: str) -> tuple[int, ...]:
        return attribute_spans(text)

    def __call__(self, text: str, offset: int, spans: tuple[int, ...]) -> tuple[Attribute, ...]:
        source = self.source
        if spans:
            return tuple(
                Attribute(text[k0:k1], text[v0:v1], Span(offset + v0, offset + v1, source))
                for k0, k1, v0, v1 in zip(*[iter(spans)] * 4, strict=True)
            )
        probe = _PROBE + text
        instruction = lark_parse(probe, source, start="instruction", offset=offset - len(_PROBE))
        return tuple(instruction.attributes)


#: Entries a memo of tail or skeleton answers holds before it starts afresh (adversarial input).
_MEMO_BOUND = 100_000


def _remembered(memo: dict[str, bool], key: str, test: Callable[[str], object]) -> bool:
    """Whether `test(key)` holds (a regex match counts as true), asked once per key."""
    hit = memo.get(key)
    if hit is None:
        if len(memo) > _MEMO_BOUND:
            memo.clear()
        hit = memo[key] = bool(test(key))
    return hit


def _matches_per_skeleton(tail: str, memo: dict[str, bool], match: Callable[[str], object]) -> bool:
    """`match(tail) is not None`, asked once per compiled skeleton (NOTE: [tail skeletons]) for
    a `match` whose answer the skeleton keeps; without the compiled skeleton, of the tail."""
    fast: str | None = _accel.skeleton(tail) if _accel is not None else None
    if fast is None:
        return match(tail) is not None
    return _remembered(memo, fast, match)


def _simple_tail(tail: str) -> bool:
    """`_SIMPLE_TAIL.fullmatch(tail)`, asked once per compiled skeleton: replacing strings by
    `""` and digit runs by 0 keeps every value's kind (a string stays one string, a digit a
    character of a word), and the regex over a long backend_config cost more than using it."""
    return _matches_per_skeleton(tail, _SIMPLE_SKELETONS, _SIMPLE_TAIL.fullmatch)


_SIMPLE_SKELETONS: dict[str, bool] = {}


def tail_mentions(tail: str, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` matches `tail` outside its strings: a pre-filter for attribute keys,
    asked once per compiled skeleton. `pattern` must match neither digits nor quotes, which the
    skeleton rewrites; then its matches outside strings are the same in the tail and in the
    skeleton. Without the compiled skeleton: anywhere in the tail (a match inside a string only
    makes the caller look closer)."""
    memo = _MENTIONS.get(pattern)
    if memo is None:
        memo = _MENTIONS[pattern] = {}
    return _matches_per_skeleton(tail, memo, pattern.search)


_MENTIONS: dict[re.Pattern[str], dict[str, bool]] = {}


def attribute_pairs(attributes: Sequence[Attribute]) -> Sequence[tuple[str, str]]:
    """(key, raw text) of each attribute, as splitting gives them: of an unsplit tail, read from
    its spans (`LazyAttributes.spans`) without making its attributes (`inspect --format json`
    reads every attribute of every instruction once, and making Attributes and Spans cost it
    three times as much)."""
    if type(attributes) is LazyAttributes and attributes._items is None:
        spans = attributes.spans()
        if spans:
            tail = attributes._text
            return [(tail[k0:k1], tail[v0:v1]) for k0, k1, v0, v1 in zip(*[iter(spans)] * 4)]
    return [(a.key, a.raw) for a in attributes]


# NOTE: [tail skeletons] An attribute tail is accepted only if the grammar accepts it, but the
# grammar is asked once per *skeleton*: the tail with every string replaced by "" and every digit
# run by 0. Neither substitution changes a token's kind or boundaries (digits are word characters
# everywhere, a string is one STRING token whatever it holds), so the grammar accepts the tail iff
# it accepts the skeleton. A dump's tens of thousands of tails have a few dozen skeletons (the
# JSON of `backend_config` differs only in strings). Shapes inside values (`f32[2]{1,0}`) are
# parsed (memoized) and then stand for a value like a string does. Comments other than
# `/*index=N*/` decline.
_DIGITS = re.compile(r"[0-9]+")
#: Whether a shape head may occur: `[a-z][a-z0-9]*\[` found as "a letter, digits, `[`" (the last
#: letter of the run), which is the same test in linear time (the other form is quadratic on a
#: long run of letters, e.g. an unterminated string).
_HAS_ARRAY = re.compile(lexicon.ARRAY_HEAD_END)
_TAILS: dict[str, bool] = {}
#: `_tail_ok` by the compiled skeleton (no shape head), the inline-computation test included.
_FAST_TAILS: dict[str, bool] = {}
_PROBE = "x=f32[] x()"


#: `/*index=5*/`-like comments, which XLA prints inside long tuples; other comments decline.
_INLINE_COMMENT = re.compile(r'/\*[^,{}()\[\]"/]*?\*/')


# A word of a value as the grammar's lexer takes it: an integer where one stands (the lexer
# prefers it: `0?` is `0` and `?`), else a NAME, REF or WORD (never backtracked into); and the
# blanks the grammar skips within a line.
_WORD = f"(?:{lexicon.INT}|(?!{lexicon.INT}){lexicon.WORD_WHOLE})"
_WS = _pattern("{LB}")
_ATOM = r"(?:" + _WORD + r'|"")'
_FLAT_ITEMS = (
    (r"(?:WS|,|->|ATOM(?:WS*" + lexicon.CHAIN_SEPARATOR + "WS*ATOM)*)*")
    .replace("WS", _WS)
    .replace("ATOM", _ATOM)
)
#: A bracket group whose items are flat: atoms, commas, `->`, and `=`/`:` chains of atoms.
_FLAT_GROUP = re.compile(
    r"\{" + _FLAT_ITEMS + r"\}|\[" + _FLAT_ITEMS + r"\]|\(" + _FLAT_ITEMS + r"\)"
)
# An attribute's key is a bare name (lexicon.py, NOTE [names]), but `literal`, whose value the
# grammar reads as a shape and a literal.
_TOP_TAIL = re.compile(
    ("(?:WS*,WS*(?!" + lexicon.LITERAL_KEY + ")" + _BARE_NAME + "WS*=WS*ATOM)*WS*")
    .replace("WS", _WS)
    .replace("ATOM", _ATOM)
)


_IOTA_T = lexicon.iota_transpose(_WS)
#: `[4,2]<=[2,4]T(1,0)` with flat brackets: an iota, which stands where any value stands.
_IOTA = re.compile(
    r"\["
    + _FLAT_ITEMS
    + r"\]"
    + _WS
    + r"*<="
    + _WS
    + r"*\["
    + _FLAT_ITEMS
    + r"\](?:"
    + _WS
    + r"*"
    + _IOTA_T
    + r")?"
)

#: `<...>` with flat items (`#sdy.mesh<"...">`): an item but not a value, as `->` is.
_ANGLE = re.compile(r"<" + _FLAT_ITEMS + r">")


def _regular_tail(skeleton: str) -> bool:
    """Whether a skeleton without shapes is accepted, decided by regular expressions alone.

    `/*index=N*/` comments become spaces (the grammar ignores both alike between tokens). Then,
    innermost first, flat iotas and flat `{}`, `[]`, `()` groups become `""`: in a tail without
    shapes each can only be a value, as a string is; a flat `<...>` becomes ` -> ` (an item that
    is not a value). What remains must be `, key=atom` pairs.
    """
    if "/" in skeleton:
        skeleton = _INLINE_COMMENT.sub(" ", skeleton)
        if "/" in skeleton:
            return False
    while True:
        reduced = skeleton
        if "<" in skeleton:
            reduced = _ANGLE.sub(" -> ", _IOTA.sub('""', reduced))
        reduced = _FLAT_GROUP.sub('""', reduced)
        if reduced == skeleton:
            return "<" not in skeleton and _TOP_TAIL.fullmatch(skeleton) is not None
        skeleton = reduced


def _comments_inside(skeleton: str) -> bool:
    """Whether every `/` of the skeleton is in a `/*...*/` comment inside brackets (at the top
    level a comment would end up in the value's raw text, which the grammar leaves out)."""
    for m in _INLINE_COMMENT.finditer(skeleton):
        before = skeleton[: m.start()]
        opened = before.count("{") + before.count("(") + before.count("[")
        if opened == before.count("}") + before.count(")") + before.count("]"):
            return False
    return "/" not in _INLINE_COMMENT.sub("", skeleton)


def _grammar_accepts_tail(skeleton: str) -> bool:
    if "/" in skeleton and not _comments_inside(skeleton):
        return False
    if _HAS_ARRAY.search(skeleton) is None and _regular_tail(skeleton):
        return True
    text = _PROBE + skeleton
    try:
        lark_parse(text, Source(text, "<tail>"), start="instruction")
    except HloLayoutError:
        return False
    return True


# An array shape inside a value, not inside a word; its layout is taken as the grammar's
# LAYOUT_OPEN takes it (a `{` followed by a digit or `:`).
_VALUE_SHAPE = re.compile(
    _pattern(r"(?<![%#]|{WORD_CHAR}){ARRAY_HEAD}[^\[\]]*\](?:\{(?=[0-9:])[^{}]*\})?(?!{LB}*[{<\[])")
)


def _shape_free(skeleton: str) -> str | None:
    """`skeleton` with every array shape replaced by `""` (a shape is a value, as a string is),
    or None when a shape does not parse or is followed by what could extend it."""
    pieces = []
    last = 0
    for m in _VALUE_SHAPE.finditer(skeleton):
        try:
            parse_shape(m.group())
        except HloLayoutError:
            return None
        pieces.append(skeleton[last : m.start()])
        pieces.append('""')
        last = m.end()
    pieces.append(skeleton[last:])
    out = "".join(pieces)
    return None if _HAS_ARRAY.search(out) else out


#: A called-computation key whose value opens a brace: maybe a computation written inline.
_CALLED_BRACE = re.compile(
    _pattern(r"(?:^|[\s,])(?:" + "|".join(CALLED_COMPUTATION_KEYS) + r"){B}*={B}*\{")
)


def _inline_computation_value(tail: str) -> bool:
    """Whether a called-computation key's `{...}` value may hold a `=`: the grammar then reads it
    as a computation written inline (`to_apply={ ... }`), which the scanner leaves to it. A
    string in it counts: the grammar looks for `=` in the value's text, strings included, and
    this is asked of skeletons, whose strings are `""`."""
    for m in _CALLED_BRACE.finditer(tail):
        depth = 0
        for tok in _TAIL_TOKEN.finditer(tail, m.end() - 1):
            t = tok.group()
            if t in "{([":
                depth += 1
            elif t in "})]":
                depth -= 1
                if depth == 0:
                    break
            elif "=" in t or t[0] == '"':
                return True
    return False


def _tail_ok(tail: str) -> bool:
    """Whether `, key=value, ...` is a tail the grammar accepts (see [tail skeletons])."""
    fast: str | None = _accel.skeleton(tail) if _accel is not None else None
    if fast is not None:
        # No shape head: the inline-computation test reads the skeleton as it would the tail
        # (a string is one token either way, and a key inside a string is no key), so it is
        # asked once per skeleton too; searched per tail, it cost most of the tail check.
        return _remembered(_FAST_TAILS, fast, _fast_tail_ok)
    if _inline_call(tail):
        return False
    skeleton = strings_replaced(tail, '""')
    if _HAS_ARRAY.search(skeleton) is not None:
        free = _shape_free(skeleton)
        if free is None:
            return _grammar_accepts_tail(skeleton)
        skeleton = free
    return _skeleton_ok(_DIGITS.sub("0", skeleton))


def _inline_call(tail: str) -> bool:
    """A called-computation key whose value is a computation written inline."""
    if "{" not in tail or _CALLED_BRACE.search(tail) is None:
        return False
    return _inline_computation_value(tail)


def _fast_tail_ok(skeleton: str) -> bool:
    """`_tail_ok` of a compiled skeleton (no shape head)."""
    return not _inline_call(skeleton) and _skeleton_ok(skeleton)


def _skeleton_ok(skeleton: str) -> bool:
    """`_grammar_accepts_tail(skeleton)`, memoized."""
    return _remembered(_TAILS, skeleton, _grammar_accepts_tail)


def _tail_kind(tail: str) -> int:
    """0: not a tail the grammar accepts; 1: blank; 2: attributes."""
    if not tail.strip(_BLANK):
        return 1
    return 2 if _tail_ok(tail) else 0


def _lazy_tail(line: str, start: int, offset: int, source: Source) -> Sequence[Attribute]:
    """The attributes after `line[start]`: () when blank, else validated and kept raw."""
    tail = line[start:]
    if not tail or tail.isspace():
        if tail.strip(" \t\f\r"):
            raise ScanFallback  # whitespace the grammar does not skip (\v, \x1c, ...)
        return ()
    if not _tail_ok(tail):
        raise ScanFallback
    return LazyAttributes(tail, offset + start, TailSplitter(source))


_BLANK = lexicon.LINE_BLANK_CHARACTERS
_WORD_LITERAL = re.compile(lexicon.NAME_RUN)
_INTEGER = re.compile(lexicon.INT)
_INT = re.compile(r"-?[0-9]+")


def _slow_instruction(line: str, offset: int, source: Source) -> Instruction:
    """Lines the head pattern does not frame: nested tuple shapes, operands with shapes,
    bracketed literals, `<...>` layouts."""
    head = _INSTR_HEAD.match(line)
    if head is None:
        raise ScanFallback
    shape, pos = _shape_at(line, head.end())
    op = _OPCODE.match(line, pos)
    if op is None:
        raise ScanFallback
    opcode = op.group(1)
    open_pos = op.end() - 1
    close = line.find(")", open_pos)
    if close < 0:
        raise ScanFallback
    if "(" in line[open_pos + 1 : close]:
        close = _matching_paren(line, open_pos)
    inner = line[open_pos + 1 : close]
    literal = None
    number = None
    operands: tuple[Operand, ...] = ()
    if opcode == "constant":
        literal = inner.strip()
        if "(" in literal or "{" in literal or not literal:
            try:
                check_literal(literal)
            except HloLayoutError:
                raise ScanFallback from None
        elif not _WORD_LITERAL.fullmatch(literal):
            raise ScanFallback
    elif opcode == "parameter":
        s = inner.strip()
        if not _INT.fullmatch(s):
            raise ScanFallback
        number = int(s)
    else:
        operands = _operands(inner)
    attrs = _lazy_tail(line, close + 1, offset, source)
    name = head.group(2).removeprefix("%")
    stripped = line.rstrip(" \t\f\r")
    return Instruction(
        name,
        opcode,
        shape,
        operands,
        attrs,
        head.group(1) is not None,
        literal,
        number,
        Span(offset + len(line) - len(line.lstrip(" \t")), offset + len(stripped), source),
    )


#: One `name: array-shape` of a signature and its comma (the common signature, no tuples).
_FLAT_PARAM = re.compile(
    _pattern(r"{B}*%?({BARE_NAME}){B}*:{B}*({ARRAY}(?:\{[^{}]*\})?){B}*(?:,|$)")
)


def _flat_params(text: str, shapes: dict[str, Shape]) -> list[ParameterDecl] | None:
    """The parameters of a signature holding only array shapes, by one regex per parameter
    (the shapes memoized); None when the text is anything else."""
    if _accel is not None:
        found: list[ParameterDecl] | None = _accel.flat_params(text, shapes, _shape, ParameterDecl)
        return found
    if not text or text.isspace():
        return None
    out = []
    pos = 0
    end = len(text)
    match = _FLAT_PARAM.match
    while pos < end:
        p = match(text, pos)
        if p is None:
            return None
        pos = p.end()
        if text[pos - 1] != "," and pos != end:  # pragma: no cover - `$` only matches at end
            return None
        if text[pos - 1] == "," and pos == end:
            return None  # a trailing comma: let the general path decide
        name, shape_text = p.groups()
        shape = shapes.get(shape_text)
        if shape is None:
            shape = shapes[shape_text] = _shape(shape_text)
        out.append(ParameterDecl(name, shape))
    return out


def _signature(
    text: str, shapes: dict[str, Shape] | None = None
) -> tuple[tuple[ParameterDecl, ...], Shape]:
    """Parameters and result of `(p: shape, ...) -> shape`; `shapes` memoizes shape texts."""
    if _accel is not None:
        found = _accel.signature(text, {} if shapes is None else shapes, _shape, ParameterDecl)
        if found is not None:
            return found  # type: ignore[no-any-return]
    m = _SIGNATURE.fullmatch(text)
    if m is None:
        raise ScanFallback
    params_text, result_text = m.group(1), m.group(2)
    params = []
    flat = None
    if "(" not in params_text:
        flat = _flat_params(params_text, {} if shapes is None else shapes)
    if flat is not None:
        params = flat
    elif params_text.strip():
        for a, b in _split_top(params_text):
            p = _PARAM.fullmatch(params_text[a:b])
            if p is None:
                raise ScanFallback
            params.append(ParameterDecl(p.group(1).removeprefix("%"), _shape(p.group(2))))
    result, end = _shape_at(result_text, 0)
    if end != len(result_text):
        raise ScanFallback
    return tuple(params), result


#: A line that can only begin a top-level item: a computation header or a module header at
#: column 0. Where the scanner declines, the grammar parses up to the next such line.
_TOP_LINE = re.compile(
    _pattern(r"(?:HloModule{B}|(?:ENTRY{B}+)?%?{BARE_NAME}{B}*(?:\(.*)?\{[ \t\r]*$)")
)


class _Declined(Exception):
    """The scanner declined the top-level item that starts at line `item` (offset `offset`).

    Inside a computation, `done` holds the instructions scanned before line `at` (offset
    `at_offset`), the first line the scanner did not read."""

    def __init__(
        self,
        item: int,
        offset: int,
        done: list[Instruction] | None = None,
        at: int = 0,
        at_offset: int = 0,
    ) -> None:
        self.item = item
        self.offset = offset
        self.done = done
        self.at = at if done is not None else item
        self.at_offset = at_offset if done is not None else offset


def _scan_lines(
    lines: list[str],
    index: int,
    offset: int,
    source: Source,
    items: list[object],
    report: Callable[[int, int], None] | None = None,
) -> None:
    """Scan `lines[index:]` (the first at `offset`) into `items`; raise _Declined where a
    top-level item is not a plain one (items before it stay in `items`). `report(done, total)`
    (characters of the text) is called after a computation ends, at most once per MiB."""
    total = len(source.text)
    next_report = offset + _REPORT_EVERY if report is not None else total + 1
    shapes: dict[str, Shape] = {}
    operand_cache: dict[str, Operand] = {}
    tails: dict[str, int] = {}
    opcodes: dict[str, str] = {}
    head_match = _HEAD.match
    lazy = LazyAttributes
    split = TailSplitter(source)

    def operand(piece: str) -> Operand:
        op = _operand(piece)
        if _INTEGER.fullmatch(op.name):
            raise ScanFallback  # no name (lexicon.BARE_NAME): the grammar rejects it
        operand_cache[piece] = op
        return op

    def plain(name: str) -> Operand:
        """`%name` (operands are shared: a value used twice is one Operand)."""
        if _INTEGER.fullmatch(name):
            raise ScanFallback
        op = operand_cache[name] = new(Operand, (name, None, None))
        return op

    cache_get = operand_cache.get
    comp_name = ""
    comp_entry = False
    comp_sig: tuple | None = None
    comp_start = 0
    comp_line = 0
    instructions: list[Instruction] | None = None
    section: tuple[str, list[SectionEntry]] | None = None
    section_at = (0, 0)
    closed_by = -1
    new = tuple.__new__
    n = len(lines)
    run = _accel.run if _accel is not None else None
    ctx: tuple[object, ...] = (source, shapes, opcodes, operand_cache, tails, _shape, _tail_kind)
    ctx += (lazy, split, Instruction, Operand, Span, ParameterDecl, Computation)
    # The compiled loop closes computations into `items` itself, unless progress is reported
    # (which happens here, as a computation ends).
    closes = items if report is None else None
    while index < n:
        if instructions is not None and run is not None:
            # The compiled loop takes the common lines whole (and the lines whose operands carry
            # their shapes, as `_slow_instruction` reads them), a computation's lone `}` and the
            # plain header of the next one, as the code below reads them, and stops at the
            # first line it does not take, which the code below reads (and declines, or
            # raises) as without it.
            head: list[Any] = [comp_name, comp_entry, comp_sig, comp_start, comp_line]
            index, offset, instructions = run(lines, index, offset, instructions, ctx, head, closes)
            comp_name, comp_entry, comp_sig, comp_start, comp_line = head
            if index >= n:
                break
        line = lines[index]
        line_offset = offset
        offset += len(line) + 1
        index += 1
        if instructions is not None:
            # Inside a computation: the common line first, with as little Python as possible.
            m = head_match(line)
            if m is not None:
                root, name, shape_text, opcode, inner, tail = m.groups()
                shape = shapes.get(shape_text)
                opcode = opcodes.setdefault(opcode, opcode)
                literal = number = None
                operands: tuple[Operand, ...] = ()
                try:
                    if shape is None:
                        shape = shapes[shape_text] = _shape(shape_text)
                    if opcode == "constant":
                        literal = inner.strip(" \t")
                        if not _WORD_LITERAL.fullmatch(literal):
                            raise ScanFallback
                    elif opcode == "parameter":
                        text = inner.strip(" \t")
                        if not _INT.fullmatch(text):
                            raise ScanFallback
                        number = int(text)
                    elif inner and not inner.isspace():
                        if "#" in inner:
                            operands = tuple([cache_get(p) or operand(p) for p in inner.split(",")])
                        else:
                            # Validated by _HEAD: `%`, blanks and commas only separate names.
                            flat = inner.replace("%", "").replace(" ", "")
                            if "\t" in flat:
                                flat = flat.replace("\t", "")
                            operands = tuple([cache_get(n) or plain(n) for n in flat.split(",")])
                    attrs: Sequence[Attribute] = ()
                    if tail:
                        kind = tails.get(tail)
                        if kind is None:
                            kind = tails[tail] = _tail_kind(tail)
                        if kind == 2:
                            attrs = lazy(tail, line_offset + m.start(6), split)
                        elif not kind:
                            raise ScanFallback
                except ScanFallback:
                    raise _Declined(
                        comp_line, comp_start, instructions, index - 1, line_offset
                    ) from None
                instructions.append(
                    new(
                        Instruction,
                        (
                            name,
                            opcode,
                            shape,
                            operands,
                            attrs,
                            root != "",
                            literal,
                            number,
                            # Up to the last token, as the grammar's (not trailing blanks)
                            Span(
                                line_offset + m.start(1),
                                line_offset + len(line.rstrip(_BLANK)),
                                source,
                            ),
                            False,  # shape_inferred: the scanner only reads written shapes
                        ),
                    )
                )
                continue
        stripped = line.strip(_BLANK)
        if not stripped or stripped.startswith("//"):
            continue
        try:
            if "\r" in stripped:
                raise ScanFallback  # a CR-only line break: the grammar reads this part
            if "/*" in line and "/*" in _COMMENT.sub("", line):
                raise ScanFallback  # a comment spanning lines
            if "//" in line and "//" in strings_replaced(line, ""):
                raise ScanFallback  # a comment after the line's text: the grammar drops it
            if instructions is not None:
                if stripped.startswith("}"):
                    attrs_t = _attributes(line, line.index("}") + 1, line_offset, source)
                    params, result = comp_sig if comp_sig is not None else (None, None)
                    items.append(
                        Computation(
                            comp_name,
                            tuple(instructions),
                            is_entry=comp_entry,
                            parameters=params,
                            result_shape=result,
                            attributes=attrs_t,
                            span=Span(comp_start, line_offset + len(line.rstrip(_BLANK)), source),
                        )
                    )
                    instructions = None
                    if line_offset >= next_report and report is not None:
                        report(line_offset, total)
                        next_report = line_offset + _REPORT_EVERY
                    continue
                instructions.append(_slow_instruction(line, line_offset, source))
                continue
            if section is not None:
                row = _SECTION_ROW.fullmatch(line)
                if row is not None and (row.group(2)[0] == '"' or _tail_ok(", x=" + row.group(2))):
                    section[1].append(SectionEntry(int(row.group(1)), row.group(2)))
                    continue
                items.append(Section(section[0], tuple(section[1])))
                section = None
                closed_by = index - 1  # if this line is declined, so is the section it ended
            if stripped in _SECTIONS:
                section = (stripped, [])
                section_at = (index - 1, line_offset)
                continue
            if stripped.startswith("HloModule"):
                m = _MODULE_HEAD.match(line)
                if m is None:
                    raise ScanFallback
                attrs_t = _attributes(line, m.end(), line_offset, source)
                span = Span(line_offset + line.index("HloModule"), line_offset + len(line), source)
                items.append(("header", m.group(1).removeprefix("%"), attrs_t, span))
                continue
            if stripped.endswith("{"):
                m = _COMP_HEAD.fullmatch(line)
                if m is None:
                    raise ScanFallback
                comp_entry = m.group(1) is not None
                comp_name = m.group(2).removeprefix("%")
                comp_sig = _signature(m.group(3).strip(), shapes) if m.group(3) else None
                comp_start = line_offset + len(line) - len(line.lstrip(" \t"))
                comp_line = index - 1
                instructions = []
                continue
            items.append(_slow_instruction(line, line_offset, source))
        except ScanFallback:
            if instructions is not None:
                raise _Declined(
                    comp_line, comp_start, instructions, index - 1, line_offset
                ) from None
            if section is not None or closed_by == index - 1:
                if section is None:
                    items.pop()  # the section this line ended: the grammar reads it again
                raise _Declined(*section_at) from None
            raise _Declined(index - 1, line_offset) from None
    if instructions is not None:
        # Unterminated: let the grammar say where.
        raise _Declined(comp_line, comp_start, instructions, n, offset)
    if section is not None:
        items.append(Section(section[0], tuple(section[1])))


def _stand_in(previous: object, start: int, text: str) -> tuple[int, str]:
    """Where a piece starting at `start` may begin instead, and its prefix, so that the grammar
    meets the piece's first token in the state the previous item leaves: the previous item's
    own text, or for a computation without attributes (its last token is its `}`) a minimal
    one padded with spaces to the same offsets."""
    span = getattr(previous, "span", None)
    if isinstance(previous, tuple) and not isinstance(previous, Instruction):
        span = previous[3]  # a module header: ("header", name, attributes, span)
    if span is None or span.start >= start:
        return start, ""
    if isinstance(previous, Computation) and not previous.attributes:
        return span.start, "x {}" + " " * (start - span.start - 4)
    return span.start, text[span.start : start]


# NOTE: [long operand lists] A declined line may hold thousands of operands (the ROOT tuple of
# a training step), which the grammar reads at ~10 µs a token: a dump cut short in that line
# would take longer to reject than the whole file takes to scan. Lark's lists are left-recursive
# (`x ("," x)*` becomes `l: "," x | l "," x`), so after one or more `, %name` items of a run the
# parser is in the same state (same stack), and a piece with all but the first item of each run
# blanked (spaces: same offsets) is rejected by the grammar's parse phase exactly where, and as,
# the whole piece is (blanking inside a string or comment changes no token boundary). Only that
# rejection is taken; a piece it accepts is parsed again whole (the tree needs every operand).
_INDEX_COMMENT = _pattern(r"(?:/\*index=[0-9]+\*/{B}*)?")
#: One item of a run: `, %name` or `, f32[2,3]{1,0:T(8,128)(2,1)}` (a tuple shape's element),
#: each a complete list item whose brackets close within it, with blanks and `/*index=N*/`.
_OPERAND_UNIT = _pattern(
    r",{B}*"
    + _INDEX_COMMENT
    + r"(?:%{BARE_NAME}|{ARRAY_HEAD}[0-9,]*\](?:\{[0-9,]*(?::(?:[A-Z]+(?:\([0-9,]*\))+)+)?\})?){B}*"
    + _INDEX_COMMENT
)
_OPERAND_RUN = re.compile("(" + _OPERAND_UNIT + ")((?:" + _OPERAND_UNIT + ")+)(?=,)")
#: A piece is read blanked first when that blanks more characters than this.
_ABBREVIATE_ABOVE = 2_000


def _lark_piece(piece: str, source: Source, start: int) -> tuple[bool, tuple]:
    """`lark_items(piece, source, start)`, with a piece the grammar rejects rejected sooner (see
    [long operand lists])."""
    if len(piece) > _ABBREVIATE_ABOVE:
        blanked = [0]

        def blank(m: re.Match[str]) -> str:
            blanked[0] += len(m.group(2))
            return m.group(1) + " " * len(m.group(2))

        short = _OPERAND_RUN.sub(blank, piece)
        if blanked[0] > _ABBREVIATE_ABOVE:
            error = lark_syntax_error(short, source, start)
            if error is not None:
                raise error
    return lark_items(piece, source, start)


#: How often (characters of text) the scanner reports progress.
_REPORT_EVERY = 2**20


def scan_modules(
    source: Source, *, fallback: bool = True, report: Callable[[int, int], None] | None = None
) -> tuple:
    """Frame every line of `source.text`; where the scanner declines, the grammar reads on.

    NOTE: [local fallback] The grammar parses only from the declined line to the next top-level
    header line (a computation or module header at column 0). Inside a computation it is given
    the computation's header line, the lines already scanned replaced by spaces (same offsets,
    one whitespace token) and the rest: an LALR parser is in the same state after any number of
    complete instructions, so this parse accepts, rejects and positions errors exactly as a
    whole-file parse would, at the cost of the declined lines only. If that piece fails before
    the file ends, it is parsed again up to the end of the file (the next header might only
    look like one), which gives the whole-file parse's answer. Without `fallback`, raise
    ScanFallback instead. `report(done, total)` hears of the scan's progress (characters).
    """
    text = source.text
    lines = text.split("\n")
    items: list[object] = []
    index = 0
    offset = 0
    needs_finish = False  # set when a grammar piece holds inline operands or shapeless lines
    while True:
        try:
            _scan_lines(lines, index, offset, source, items, report)
            break
        except _Declined as declined:
            if not fallback:
                raise ScanFallback from None
            stop = declined.at + 1
            stop_offset = declined.at_offset + (
                len(lines[declined.at]) + 1 if stop <= len(lines) else 0
            )
            while stop < len(lines) and not (
                lines[stop][:1] not in (" ", "\t") and _TOP_LINE.match(lines[stop])
            ):
                stop_offset += len(lines[stop]) + 1
                stop += 1
            start = resume = declined.offset
            prefix = ""
            if declined.done is not None:
                newline = text.find("\n", start)  # the computation's header is one line
                body = len(text) if newline < 0 else newline + 1
                # The last scanned instruction stays (the grammar's state after it depends on
                # its last token); the ones before it become spaces.
                resume = min(declined.at_offset, len(text))
                if declined.done and declined.done[-1].span is not None:
                    resume = declined.done[-1].span.start
                    declined.done.pop()  # the grammar reads it again
                gap = max(0, resume - body)
                prefix = text[start:body] + " " * gap
                resume = body + gap
            stand_in = ""
            if items:
                # The grammar must meet this item in the state the items before it leave: put a
                # minimal item of the previous item's kind in front (same offsets).
                start, stand_in = _stand_in(items[-1], start, text)
                prefix = stand_in + prefix
            parsed = None
            if stop < len(lines):
                # If the piece fails, maybe it was cut wrongly: the rest of the file decides.
                with contextlib.suppress(HloLayoutError):
                    parsed = _lark_piece(prefix + text[resume:stop_offset], source, start)
            if parsed is None:
                parsed = _lark_piece(prefix + text[resume:], source, start)
                stop = len(lines)
            piece_needs_finish, got = parsed
            needs_finish = needs_finish or piece_needs_finish
            if stand_in:
                got = got[1:]
            if declined.done:
                first = got[0]
                if not isinstance(first, Computation):
                    raise ScanFallback from None  # pragma: no cover - pieces start with a header
                first = dataclasses.replace(
                    first, instructions=tuple(declined.done) + first.instructions
                )
                got = (first, *got[1:])
            items.extend(got)
            index, offset = stop, stop_offset
            if stop >= len(lines):
                break
    return finish_items(tuple(items), source, needs_finish)
