"""HLO's token language, written once: names, words, numbers, strings, shape heads, layout items,
attribute separators, blanks and comments.

Three readers take their tokens from here and nowhere else:

* the grammar: the terminals of `grammars/hlo.lark` are a block generated from `TERMINALS`;
* the line scanner: `syntax/scan.py` (and `index.py`, `fast_shape.py`) build their regular
  expressions from these patterns at import;
* the compiled scanner and JSON writer: `accel/lexicon.h`, generated from the character
  classes (`CLASSES`) and included by `accel/scan.c` and `accel/jsonattrs.c`.

`python -m hlo_layout.syntax.lexicon_files --write` regenerates both generated files;
`tests/syntax/test_lexicon.py` fails when either is stale and holds the three readers to one
token language (a property test over generated names, words and attribute lists).

NOTE: [names] XLA's lexer (xla/hlo/parser/hlo_lexer.cc: `LexPercent`, `LexIdentifier`) reads a
name as `%?[A-Za-z_][A-Za-z0-9_.-]*`: no `?`, no `#` (`%x#1` is the name `x`, `#`, an integer),
no `->` (`%a->b` is an error), never an integer (`0` lexes as one); an opcode and an attribute
key carry no `%` (`LexIdentifier` only). So do all three readers here: the grammar once read
names as its value WORD and took `%a?b`, `#x`, `%a->b`, `0(...)` and `%op(...)`, which the
scanner declined, took otherwise, or XLA rejects. Deviations every reader shares: a name may
also hold `$` and `+` and begin with a digit, `.` or one `-` (older and hand-written texts), and
it ends before a `-` that begins `->` (only the error's place differs from XLA's there).

A WORD is the atom of attribute values and literals, a superset of NAME: numbers (`1e-05`,
`-inf`, `0x1p-3`), padding (`0_0x1_2_1`), dim labels (`b01f_01io->b01f`, `?b01f_0?1io->b01?f`),
`#sdy.mesh`, `...`, the open axis `?` of a mesh sharding.

Each run of name characters is one lazy repeat of a class that stops at `->` or the first other
character: `re` keeps state for each repeat of a group, and a group repeated per character (or
per `-`) cost 2 GB on a 10 MB word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ---------------------------------------------------------------- character classes
# The bodies of regular-expression classes (`[...]` without the brackets).

#: A name's first character (after an optional `-`).
NAME_START = "A-Za-z0-9_.$"
#: A name's later characters (`-` only where no `>` follows).
NAME_CHAR = NAME_START + "+\\-"
#: A value word's first and later characters: a name's and `?`.
WORD_START = NAME_START + "?"
WORD_CHAR = NAME_CHAR + "?"
#: What follows `->` in a word (dim labels): a word's characters but `-`.
ARROW_CHAR = NAME_START + "+?"
#: An element type (`f32`, `bf16`, `pred`): a lower-case letter, then letters and digits.
TYPE_START = "a-z"
TYPE_CHAR = "a-z0-9"
#: What the dimensions of an array shape in XLA's canonical spelling hold: `[2,<=3,?]`.
DIM_CHAR = "0-9,<=?"
DIGIT = "0-9"
#: Blanks between the tokens of one line as XLA prints it.
BLANK = " \\t"
#: Whitespace the grammar skips within a line (it also skips line breaks: `WS`).
LINE_BLANK = " \\t\\f\\r"
#: A layout property's letters (`T`, `SC`, an unknown one).
UPPER = "A-Z"

#: Each class by the name the C header gives it (HLO_<name>), in bit order.
CLASSES: dict[str, str] = {
    "NAME_START": NAME_START,
    "NAME_CHAR": NAME_CHAR,
    "TYPE_START": TYPE_START,
    "TYPE_CHAR": TYPE_CHAR,
    "DIM_CHAR": DIM_CHAR,
    "DIGIT": DIGIT,
    "BLANK": BLANK,
    "LINE_BLANK": LINE_BLANK,
}


def members(body: str) -> list[int]:
    """The ASCII code points the class `[body]` holds."""
    cls = re.compile(f"[{body}]")
    return [c for c in range(128) if cls.fullmatch(chr(c))]


#: The blanks `str.strip` takes off a line's ends: those the grammar skips within a line.
LINE_BLANK_CHARACTERS = "".join(map(chr, members(LINE_BLANK)))


def _run(start: str, char: str) -> str:
    """`[start][char]*`, taken whole and never ending before `->`: a lazy repeat of one class
    (see the module docstring) stopped by `->`, another character or the end."""
    return f"[{start}][{char}]*?(?=->|[^{char}]|$)"


# ---------------------------------------------------------------- tokens
#: An integer standing alone (not the start of a word such as `1e-05` or `0_0x1_2`).
INT = f"-?[{DIGIT}]+(?![{NAME_CHAR}])"
#: The characters of a name, or of a word-like literal (`5`, `-inf`, `1e-05`, `true`).
NAME_RUN = "-?" + _run(NAME_START, NAME_CHAR)
#: A bare name ([names]): an opcode, an attribute key, or any name written without XLA's `%`;
#: never an integer (where one may stand, the lexer reads an integer).
BARE_NAME = f"(?!{INT}){NAME_RUN}"
#: A name with XLA's `%`: an instruction, operand, computation or parameter (also written bare).
REF = "%" + BARE_NAME
#: Either: where an instruction, operand, computation or parameter is named.
NAME = "%?" + BARE_NAME
#: A value word ([names]); ends after the longest run the grammar's lexer takes.
WORD = f"[%#]?-?{_run(WORD_START, WORD_CHAR)}(?:->[{ARROW_CHAR}]+)?"
#: `WORD` for use inside a longer expression: taken whole, never backtracked into.
WORD_WHOLE = f"[%#]?-?{_run(WORD_START, WORD_CHAR)}(?:->[{ARROW_CHAR}]+(?![{ARROW_CHAR}]))?"
#: A `WORD` that is no `NAME` (where one begins, the name is shorter or there is none): one that
#: begins with `#` or `?`, an integer, or one whose run of name characters meets a `?` or ends in
#: `->x`. The grammar's lexer reads values as NAME or this (`_word`), so a name never lexes as
#: more.
WORD_NOT_NAME = (
    f"(?=#|%?-?\\?|%?{INT}|%?-?[{NAME_START}][{NAME_CHAR}]*?(?:\\?|->[{ARROW_CHAR}])){WORD}"
)


def string(stop: str = "", *, closed: bool = True) -> str:
    """A double-quoted string with backslash escapes; `stop` adds characters it may not hold
    (a line's reader passes `\\n`: a string never spans its line); not `closed`: the string
    without its closing quote (one left open where the text ends)."""
    body = f'[^"\\\\{stop}]*'
    return f'"{body}(?:\\\\.{body})*' + ('"' if closed else "")


#: A double-quoted string (it may span lines, as XLA's lexer reads one).
STRING = string()
#: A string of one line (the scanner's, over lines and tails: the same tokens there).
LINE_STRING = string("\\n")
#: Single-quoted axis names of mesh shardings: `{mesh['x'=2,'y'=2] [{'x'}, {'y'}]}`.
SQSTRING = "'[^'\\n]*'"
#: `mesh[` opening a mesh's axes (`replica_groups=mesh['x'=2] {'x'}`).
MESH_HEAD = "mesh\\[(?=\\s*')"

#: An element type's name (`f32`, `bf16`, `pred`), also of a layout's index and pointer types.
ELEMENT_TYPE = f"[{TYPE_START}][{TYPE_CHAR}]*"
#: An element type and the `[` of its dimensions: `f32[`. One token, so that an operand named
#: like a type is still a name.
ARRAY_HEAD = f"{ELEMENT_TYPE}\\["
#: `s32 [2,3]`: XLA's lexer skips the blank between the type and `[`.
SPACED_ARRAY_HEAD = f"{ELEMENT_TYPE}[{BLANK}]+\\["
#: An array shape's head and dimensions in XLA's canonical spelling: `bf16[8,<=128,?]`.
CANONICAL_ARRAY = f"{ARRAY_HEAD}[{DIM_CHAR}]*\\]"
#: Where an element type may end: a letter (the last of a type) before digits and `[`; the
#: same test as a shape head's in linear time (`ARRAY_HEAD` searched is quadratic on a long run
#: of letters).
ARRAY_HEAD_END = f"[{TYPE_START}][{DIGIT}]*\\["
#: `b(` opening a buffer shape.
BUFFER_OPEN = "b("
#: A `{` after a shape opens a layout only when an integer or `:` follows (layout_rules.md
#: §1.2), so `-> f32[2] {` still opens a body.
LAYOUT_OPEN = "\\{(?=\\s*[0-9:])"
#: The same for `<...>`, an older spelling of a layout.
LAYOUT_LANGLE = "<(?=\\s*[0-9:])"
#: A layout property's name (`T`, `S`, `SC`, an unknown one).
LAYOUT_PROPERTY = f"[{UPPER}][{UPPER}{DIGIT}]*"


def iota_transpose(blank: str = "\\s") -> str:
    """`T(1,0)` after an iota tile assignment, blanks of class `blank` between its tokens."""
    return f"T\\({blank}*-?[{DIGIT}]+(?:{blank}*,{blank}*-?[{DIGIT}]+)*{blank}*\\)"


#: `T(1,0)` after an iota tile assignment (`[4,2]<=[2,4]T(1,0)`).
IOTA_T = iota_transpose()
#: `literal` as the key of custom-call's `literal=s32[2]{0} {1, 2}` (only before `=`).
LITERAL_KEY = "literal(?=\\s*=)"

#: The separator of attributes (and of list items), of a key from its value, and of the parts
#: of a chained value inside brackets (`key=value`, JSON `"k": v`, a slice `0:10:2`).
ITEM_SEPARATOR = ","
KEY_SEPARATOR = "="
CHAIN_SEPARATOR = "[=:]"
#: An arrow: a signature's result, or an item of a value (`{0}->{1}`).
ARROW = "->"

#: Whitespace the grammar skips (line breaks included), and comments.
WS = f"[{LINE_BLANK}\\n]+"
COMMENT = "/\\*(.|\\n)*?\\*/"
LINE_COMMENT = "//[^\\n]*"
#: A comment as the scanner meets one, within a line.
LINE_BLOCK_COMMENT = "/\\*.*?\\*/"


# ---------------------------------------------------------------- patterns built from these
#: The tokens a reader's pattern may name as `{NAME}` (`pattern`): blanks, names, words,
#: strings, array shapes.
PIECES: dict[str, str] = {
    "B": f"[{BLANK}]",
    "LB": f"[{LINE_BLANK}]",
    "NAME": NAME,
    "BARE_NAME": BARE_NAME,
    "NAME_RUN": NAME_RUN,
    "NAME_CHAR": f"[{NAME_CHAR}]",
    "WORD_CHAR": f"[{WORD_CHAR}]",
    "WORD": WORD_WHOLE,
    "STRING": STRING,
    "LINE_STRING": LINE_STRING,
    "ARRAY_HEAD": ARRAY_HEAD,
    "ARRAY": CANONICAL_ARRAY,
    "TYPE": ELEMENT_TYPE,
}
_PIECE = re.compile(r"\{([A-Z_]+)\}")


def pattern(template: str) -> str:
    """`template` (a regular expression) with each `{PIECE}` replaced by the token `PIECES`
    names: `pattern(r"{B}*({NAME}){B}*=")`. Only upper-case names in braces are pieces (a
    quantifier holds digits), and an unknown one is an error."""
    return _PIECE.sub(lambda m: PIECES[m.group(1)], template)


# ---------------------------------------------------------------- the grammar's terminals
@dataclass(frozen=True)
class Terminal:
    """A terminal of the generated block of grammars/hlo.lark: its name, Lark priority (ties
    between terminals that match at one place go to the higher), pattern and why it is there."""

    name: str
    priority: int
    pattern: str
    note: str = ""


TERMINALS: tuple[Terminal, ...] = (
    Terminal("NAME", 0, BARE_NAME, "a name without `%`: the only kind an opcode or a key is"),
    Terminal("REF", 0, REF, "a name with `%`: an instruction, operand, computation, parameter"),
    # Lark tries WORD before NAME where both may follow (its longer pattern sorts first): a
    # state can offer both, as LALR merges the look-aheads of a reduction.
    Terminal("WORD", 0, WORD_NOT_NAME, "a word of a value or literal that is no NAME"),
    Terminal("INT", 2, INT),
    Terminal("STRING", 0, STRING),
    Terminal("SQSTRING", 0, SQSTRING),
    Terminal("MESH_HEAD", 4, MESH_HEAD),
    Terminal("ARRAY_HEAD", 3, ARRAY_HEAD),
    # Offered only where an instruction's shape stands (the contextual lexer keeps it out of
    # attribute values).
    Terminal("SPACED_ARRAY_HEAD", 3, SPACED_ARRAY_HEAD, "`s32 [2,3]`, as XLA's lexer reads it"),
    Terminal("LAYOUT_OPEN", 3, LAYOUT_OPEN),
    Terminal("LAYOUT_LANGLE", 3, LAYOUT_LANGLE),
    Terminal("UPPER", 0, LAYOUT_PROPERTY, "a layout property"),
    Terminal("IOTA_T", 3, IOTA_T),
    Terminal("LITERAL_KEY", 3, LITERAL_KEY, "elsewhere `literal` is an ordinary name"),
    Terminal("CHAIN_SEP", 0, CHAIN_SEPARATOR),
    Terminal("WS", 0, WS),
    Terminal("COMMENT", 0, COMMENT),
    Terminal("LINE_COMMENT", 0, LINE_COMMENT),
)
