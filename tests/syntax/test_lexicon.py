"""One token language (`hlo_layout/syntax/lexicon.py`) for the grammar, the Python scanner and the
compiled scanner.

The files generated from the lexicon (the grammar's terminals, `accel/lexicon.h`) must be
current; the grammar's terminals must read as the lexicon's patterns; and, as laws over
generated text, the three readers accept the same names in every place a name stands and split
the same attribute lists into the same items at the same places.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import lexicon, lexicon_files, scan
from hlo_layout.syntax.grammar import lark_parser
from hlo_layout.syntax.parse import parse_modules
from hlo_layout.syntax.scan import ScanFallback
from tests.support import compiled_scanner

COMPILED = compiled_scanner()
_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_generated_files_are_current() -> None:
    stale = [str(p) for p in lexicon_files.stale()]
    assert not stale, f"stale, run `{lexicon_files.GENERATOR}`: {stale}"


def test_pattern_pieces() -> None:
    assert lexicon.pattern(r"{B}*({NAME})\{[0-9]{2,}\}") == (
        r"[ \t]*(" + lexicon.NAME + r")\{[0-9]{2,}\}"
    )
    with pytest.raises(KeyError):
        lexicon.pattern("{NOT_A_PIECE}")


#: Characters every token of the lexicon is made of, and some that end one.
_ALPHABET = "aZ09_.$+-?#%>=:,{}()[]<\"' \t\\/*"
_TEXTS = st.text(st.sampled_from(_ALPHABET), max_size=12)


@_SETTINGS
@given(_TEXTS)
def test_grammar_terminals_read_as_the_lexicon(text: str) -> None:
    """Law: each terminal Lark built from the generated block matches where, and as far as, the
    lexicon's pattern does, and has its priority."""
    terminals = {t.name: t for t in lark_parser().terminals}
    for t in lexicon.TERMINALS:
        built = terminals[t.name]
        assert built.priority == t.priority
        ours = re.match(t.pattern, text)
        theirs = re.match(built.pattern.to_regexp(), text)
        assert (ours and ours.end()) == (theirs and theirs.end()), (t.name, text)


@_SETTINGS
@given(st.text(st.sampled_from("aZ09_.$+-?#%>= "), max_size=10))
@example("a->b")
@example("a-->b")
@example("#x")
def test_word_not_name(text: str) -> None:
    """Law: the grammar's WORD terminal matches exactly where a value word is no name (so a name
    never lexes as a WORD, and NAME | WORD reads the words the scanner reads)."""
    word = re.match(lexicon.WORD, text)
    name = re.match(lexicon.NAME, text)
    other = re.match(lexicon.WORD_NOT_NAME, text)
    differs = word is not None and (name is None or name.end() != word.end())
    assert (other is not None) == differs
    if other is not None:
        assert word is not None and other.end() == word.end()


# ---------------------------------------------------------------- the three readers
_KEYWORDS = {"ROOT", "ENTRY", "HloModule", "constant", "parameter", "literal"}


def _outcome(text: str, engine: str, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """("ok", trees with every span) or ("error", message) or ("declined",)."""
    monkeypatch.setattr(scan, "_accel", COMPILED if compiled else None)
    try:
        modules = parse_modules(text, "t.hlo", engine=engine, verify=False)
    except ScanFallback:
        return ("declined",)
    except HloLayoutError as e:
        return ("error", str(e))
    spans = [
        (i.span.start, i.span.end, [(a.key, a.raw, a.span.start, a.span.end) for a in i.attributes])
        for m in modules
        for c in m.computations
        for i in c.instructions
    ]
    return ("ok", modules, spans)


def _readers(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple, tuple | None]:
    """What the grammar, the Python scanner and the compiled scanner (None: not built) give."""
    grammar = _outcome(text, "lark", False, monkeypatch)
    python = _outcome(text, "scan", False, monkeypatch)
    compiled = _outcome(text, "scan", True, monkeypatch) if COMPILED is not None else None
    return grammar, python, compiled


#: A module with a slot for a name in each place a name stands.
_MODULE = """HloModule {module}

{comp} ({param}: f32[2]) -> f32[2] {{
  %{param} = f32[2]{{0}} parameter(0)
  ROOT {instruction} = f32[2]{{0}} {opcode}(%{param}, {operand}), {key}=1
}}
"""
_PLACES = ("module", "comp", "param", "instruction", "opcode", "operand", "key")
_GOOD = {
    "module": "m",
    "comp": "%c",
    "param": "p",
    "instruction": "%r",
    "opcode": "add",
    "operand": "%p",
    "key": "k",
}
_NAMES = st.one_of(
    st.text(st.sampled_from("aZ09_.$+-?#%>"), min_size=1, max_size=8),
    st.sampled_from(("a?b", "#x", "%a->b", "a->b", "a-", "-a", "%-a", "0", "1e-05", "a$b+c")),
)


@_SETTINGS
@given(st.sampled_from(_PLACES), _NAMES)
@example("instruction", "%a?b")
@example("operand", "%a->b")
@example("key", "#k")
@example("opcode", "a?b")
def test_names_in_every_place(monkeypatch: pytest.MonkeyPatch, place: str, name: str) -> None:
    """Law: where a name stands, the three readers accept exactly the lexicon's name (XLA's,
    NOTE [names]) and, accepting it, build the same tree with the same spans."""
    if name.lstrip("%") in _KEYWORDS or (place == "param" and name.startswith("%")):
        return  # keywords are names only in some places; the parameter's slot adds a `%`
    if place == "operand" and "#" in name:
        return  # `%x#1` is a name and a tuple index
    text = _MODULE.format(**{**_GOOD, place: name})
    grammar, python, compiled = _readers(text, monkeypatch)
    # An opcode and a key are bare names, other places take XLA's `%` too.
    token = lexicon.BARE_NAME if place in ("opcode", "key") else lexicon.NAME
    is_name = re.fullmatch(token, name) is not None
    assert (grammar[0] == "ok") == is_name, (grammar, name)
    assert (python[0] == "ok") == is_name, (python, name)
    if is_name:
        assert python == grammar
    if compiled is not None:
        assert compiled == python


#: Words of values drawn from the whole token alphabet: names, numbers, dim labels, `?`, `#`.
_WORDS = st.one_of(
    st.text(st.sampled_from("aZ09_.$+-?#%>"), min_size=1, max_size=6),
    st.sampled_from(("b01f_01io->b01f", "?", "#sdy.mesh", "-inf", "1e-05", "...", "a?b", "0?")),
    st.sampled_from(("T(1,0)", "literal", "mesh", "ROOT", "[2]<=[2]", "[2,1]<=[2]T(1,0)")),
)
_STRINGS = st.sampled_from(('""', '"x"', '"a\\"b"', '"{,}"', '"a,b=c"'))


@st.composite
def _value(draw: st.DrawFn, depth: int = 2) -> str:
    atom = draw(st.one_of(_WORDS, _STRINGS, st.just("f32[2]{0}")))
    if depth == 0 or draw(st.booleans()):
        return atom
    items = draw(st.lists(_value(depth - 1), max_size=3))
    separator = draw(st.sampled_from((",", ", ", " ", "=", ":")))
    open_, close = draw(st.sampled_from(("{}", "[]", "()")))
    return open_ + separator.join(items) + close


@st.composite
def _tail(draw: st.DrawFn) -> str:
    keys = st.one_of(st.sampled_from(("k", "to_apply", "backend_config", "x-y", "a.b")), _WORDS)
    items = draw(st.lists(st.tuples(keys, _value()), min_size=1, max_size=4))
    blanks = st.sampled_from(("", " ", "\t", "  "))
    return "".join(f",{draw(blanks)}{k}{draw(blanks)}={v}{draw(blanks)}" for k, v in items)


@_SETTINGS
@given(_tail())
@example(", k=a?b, x={?}, y=b01f_01io->b01f")
@example(", #k=1")
@example(", a->b=1")
@example(', k="a,b", j={x, "}"}')
@example(",k=0?")
@example(",k=0,literal=0")
@example(',to_apply={"a,b=c"}')
def test_attribute_lists_split_alike(monkeypatch: pytest.MonkeyPatch, tail: str) -> None:
    """Law: an attribute list the grammar accepts, both scanners accept or decline alike and
    split into the grammar's items (key, raw value, span); one it rejects, neither accepts."""
    text = f"HloModule m\n\nENTRY %e {{\n  ROOT %p = f32[2]{{0}} parameter(0){tail}\n}}\n"
    grammar, python, compiled = _readers(text, monkeypatch)
    if compiled is not None:
        assert compiled == python
    if python[0] != "declined":
        assert python == grammar, tail
