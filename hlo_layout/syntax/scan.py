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

import functools
import re
from collections.abc import Callable, Sequence

from hlo_layout.errors import HloLayoutError, Source, Span
from hlo_layout.syntax.grammar import assemble_modules
from hlo_layout.syntax.parse import check_literal, parse_shape
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


class ScanFallback(Exception):
    """The scanner met a line it does not frame; parse with the full grammar instead."""


# Mirrors the grammar's WORD for names (no `->`, no leading `#`).
# Loops unrolled as `a*(?:-(?!>)a*)*`: the grammar's WORD language, half the backtracking work.
_NAME = r"%?-?[A-Za-z0-9_.$][A-Za-z0-9_.$+]*(?:-(?!>)[A-Za-z0-9_.$+]*)*"
_INSTR_HEAD = re.compile(r"[ \t]*(ROOT[ \t]+)?(" + _NAME + r")[ \t]*=[ \t]*")
# An array shape with an optional layout that holds no nested braces (P(...) layouts fall back).
_ARRAY = re.compile(r"[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\}|<[0-9:][^<>]*>)?")
_OPCODE = re.compile(r"[ \t]+(" + _NAME[2:] + r")\(")
_OPERAND = re.compile(r"[ \t]*(" + _NAME + r")(?:#([0-9]+))?[ \t]*")
_PAREN = re.compile(r"[()]")
# Tokens of an attribute tail: strings, brackets, commas, and runs of anything else.
_TAIL_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}()\[\],]|[^"{}()\[\],]+')
_ATTR_KEY = re.compile(r"[ \t]*(" + _NAME + r")[ \t]*=")
_COMP_HEAD = re.compile(
    r"[ \t]*(ENTRY[ \t]+)?(" + _NAME + r")[ \t]*(\(.*\)[ \t]*->.*?)?[ \t]*\{[ \t]*$"
)
_SIGNATURE = re.compile(r"\((.*)\)[ \t]*->[ \t]*(.*?)[ \t]*$")
_PARAM = re.compile(r"[ \t]*(" + _NAME + r")[ \t]*:[ \t]*(.*?)[ \t]*$")
_MODULE_HEAD = re.compile(r"[ \t]*HloModule[ \t]+(" + _NAME + r")[ \t]*")
_SECTION_ROW = re.compile(r'[ \t]*(-?[0-9]+)[ \t]+("(?:[^"\\]|\\.)*"|\{[^{}]*\})[ \t]*$')
_SECTIONS = frozenset({"FileNames", "FunctionNames", "FileLocations", "StackFrames"})
_CLOSERS = {"}": "{", ")": "(", "]": "["}
_COMMENT = re.compile(r"/\*.*?\*/")
_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def _shape(text: str) -> Shape:
    try:
        return parse_shape(text)
    except HloLayoutError:
        raise ScanFallback from None


def _split_top(text: str) -> list[tuple[int, int]]:
    """(start, end) of each comma-separated piece at bracket depth 0, strings respected."""
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


def _check_string_tokens(text: str) -> None:
    """Reject an unterminated string (the tail tokenizer would read `"` as an ordinary run)."""
    if text.count('"') % 2 and '\\"' not in text:
        raise ScanFallback


def _attributes(line: str, start: int, line_offset: int, source: Source) -> tuple[Attribute, ...]:
    """Attributes in `line[start:]`, which is empty or begins with a comma."""
    tail = line[start:]
    if not tail.strip():
        return ()
    stripped = tail.lstrip()
    if not stripped.startswith(","):
        raise ScanFallback
    lead = len(tail) - len(stripped) + 1
    body = stripped[1:]
    if '"' in body:
        _check_string_tokens(body)
    attrs = []
    for a, b in _split_top(body):
        piece = body[a:b]
        m = _ATTR_KEY.match(piece)
        if m is None:
            raise ScanFallback
        value = piece[m.end() :]
        raw = value.strip()
        if not raw:
            raise ScanFallback
        pos = line_offset + start + lead + a + m.end() + len(value) - len(value.lstrip())
        attrs.append(Attribute(m.group(1), raw, Span(pos, pos + len(raw), source)))
    return tuple(attrs)


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
    out = []
    for a, b in _split_top(text):
        piece = text[a:b]
        stripped = piece.lstrip()
        shape = None
        rest = stripped
        if stripped[:1] == "(" or re.match(r"[a-z][a-z0-9]*\[", stripped):
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


_BARE_NAME = _NAME[2:]
_STR = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SIMPLE_VALUE = r'[^,{}()\[\]"\s]+|' + _STR + r'|\{[^{}"]*(?:' + _STR + r'[^{}"]*)*\}'
_SIMPLE_ATTR = r",[ \t]*(?:" + _NAME + r")=(?:" + _SIMPLE_VALUE + r")"
# The common line: array shape, flat operand list, attributes without nested brackets.
_FAST_LINE = re.compile(
    r"[ \t]*(ROOT[ \t]+)?%?(" + _BARE_NAME + r")[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\})?)"
    r"[ \t]+(" + _BARE_NAME + r")\(([^()\[\]{}\"/]*)\)"
    r"((?:[ \t]*" + _SIMPLE_ATTR + r")*)[ \t]*"
)
_SIMPLE_ATTR_RE = re.compile(r"[ \t]*,[ \t]*(" + _NAME + r")=(" + _SIMPLE_VALUE + r")")
_ONE_OPERAND = _NAME + r"(?:#[0-9]+)?"
_FLAT_OPERANDS = re.compile(
    r"[ \t]*" + _ONE_OPERAND + r"[ \t]*(?:,[ \t]*" + _ONE_OPERAND + r"[ \t]*)*"
)


def _flat_operands(inner: str) -> tuple[Operand, ...]:
    """`%a, %b#1` (already known to hold no brackets) as operands."""
    if not inner or inner.isspace():
        return ()
    if _FLAT_OPERANDS.fullmatch(inner) is None:
        raise ScanFallback
    out = []
    for piece in inner.split(","):
        name = piece.strip()
        if name[0] == "%":
            name = name[1:]
        if "#" in name:
            name, index = name.split("#")
            out.append(Operand(name, int(index)))
        else:
            out.append(Operand(name))
    return tuple(out)


def _simple_attributes(source: Source, tail: str, base: int) -> tuple[Attribute, ...]:
    """Split a tail the fast line matched (its attributes hold no nested brackets)."""
    return tuple(
        Attribute(a.group(1), a.group(2), Span(base + a.start(2), base + a.end(2), source))
        for a in _SIMPLE_ATTR_RE.finditer(tail)
    )


def _fast_instruction(
    line: str, offset: int, source: Source, split: Callable[[str, int], tuple[Attribute, ...]]
) -> Instruction | None:
    m = _FAST_LINE.fullmatch(line)
    if m is None:
        return None
    root, name, shape_text, opcode, inner, tail = m.groups()
    opcode = _OPCODES.setdefault(opcode, opcode)  # one string per opcode, not per instruction
    literal = None
    number = None
    operands: tuple[Operand, ...] = ()
    if opcode == "constant":
        literal = inner.strip()
        if not _WORD_LITERAL.fullmatch(literal):
            return None
    elif opcode == "parameter":
        text = inner.strip()
        if not _INT.fullmatch(text):
            return None
        number = int(text)
    else:
        operands = _flat_operands(inner)
    attrs: Sequence[Attribute] = LazyAttributes(tail, offset + m.start(6), split) if tail else ()
    start = len(line) - len(line.lstrip())
    return Instruction(
        name,
        opcode,
        _shape(shape_text),
        operands,
        attrs,
        root is not None,
        literal,
        number,
        Span(offset + start, offset + m.end(), source),
    )


_WORD_LITERAL = re.compile(_BARE_NAME)
_OPCODES: dict[str, str] = {}
_INT = re.compile(r"-?[0-9]+")


def _instruction(
    line: str, offset: int, source: Source, split: Callable[[str, int], tuple[Attribute, ...]]
) -> Instruction:
    fast = _fast_instruction(line, offset, source, split)
    if fast is not None:
        return fast
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
    attrs = _attributes(line, close + 1, offset, source)
    name = head.group(2).removeprefix("%")
    end = offset + len(line.rstrip())
    return Instruction(
        name,
        opcode,
        shape,
        operands,
        attrs,
        head.group(1) is not None,
        literal,
        number,
        Span(offset + len(line) - len(line.lstrip()), end, source),
    )


def _signature(text: str) -> tuple[tuple[ParameterDecl, ...], Shape]:
    m = _SIGNATURE.fullmatch(text)
    if m is None:
        raise ScanFallback
    params_text, result_text = m.group(1), m.group(2)
    params = []
    if params_text.strip():
        for a, b in _split_top(params_text):
            p = _PARAM.fullmatch(params_text[a:b])
            if p is None:
                raise ScanFallback
            params.append(ParameterDecl(p.group(1).removeprefix("%"), _shape(p.group(2))))
    result, end = _shape_at(result_text, 0)
    if end != len(result_text):
        raise ScanFallback
    return tuple(params), result


def scan_modules(source: Source) -> tuple:
    """Frame every line of `source.text`; ScanFallback when any line is not a plain one."""
    text = source.text
    if "/*" in text and "*/" not in text:
        raise ScanFallback
    items: list[object] = []
    split = functools.partial(_simple_attributes, source)
    comp_name = ""
    comp_entry = False
    comp_sig: tuple | None = None
    comp_start = 0
    instructions: list[Instruction] | None = None
    section: tuple[str, list[SectionEntry]] | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        line_offset = offset
        offset += len(line)
        line = line.rstrip("\r\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if "//" in line and "//" in _STRINGS.sub("", line):
            raise ScanFallback  # a comment after the line's text: the grammar drops it
        if "/*" in line and "/*" in _COMMENT.sub("", line):
            raise ScanFallback  # a comment spanning lines
        if instructions is not None:
            if stripped.startswith("}"):
                attrs = _attributes(line, line.index("}") + 1, line_offset, source)
                params, result = comp_sig if comp_sig is not None else (None, None)
                items.append(
                    Computation(
                        comp_name,
                        tuple(instructions),
                        is_entry=comp_entry,
                        parameters=params,
                        result_shape=result,
                        attributes=attrs,
                        span=Span(comp_start, line_offset + len(line), source),
                    )
                )
                instructions = None
                continue
            instructions.append(_instruction(line, line_offset, source, split))
            continue
        if section is not None:
            row = _SECTION_ROW.fullmatch(line)
            if row is not None:
                section[1].append(SectionEntry(int(row.group(1)), row.group(2)))
                continue
            items.append(Section(section[0], tuple(section[1])))
            section = None
        if stripped in _SECTIONS:
            section = (stripped, [])
            continue
        if stripped.startswith("HloModule"):
            m = _MODULE_HEAD.match(line)
            if m is None:
                raise ScanFallback
            attrs = _attributes(line, m.end(), line_offset, source)
            span = Span(line_offset + line.index("HloModule"), line_offset + len(line), source)
            items.append(("header", m.group(1).removeprefix("%"), attrs, span))
            continue
        if stripped.endswith("{"):
            m = _COMP_HEAD.fullmatch(line)
            if m is None:
                raise ScanFallback
            comp_entry = m.group(1) is not None
            comp_name = m.group(2).removeprefix("%")
            comp_sig = _signature(m.group(3).strip()) if m.group(3) else None
            comp_start = line_offset + len(line) - len(line.lstrip())
            instructions = []
            continue
        items.append(_instruction(line, line_offset, source, split))
    if instructions is not None:
        raise ScanFallback  # unterminated computation: let the grammar say where
    if section is not None:
        items.append(Section(section[0], tuple(section[1])))
    return assemble_modules(tuple(items), source)
