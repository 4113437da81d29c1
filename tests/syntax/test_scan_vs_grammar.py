"""The fast tier never accepts what the grammar rejects (issue 11 item 5).

Generative: instruction lines of real dumps, mutated (tokens inserted, text cut, characters
replaced) and generated attribute tails go through the scanner alone (`engine="scan"`) and the
grammar alone (`engine="lark"`). The scanner must either decline (ScanFallback) or build the
grammar's tree, attributes split and positioned alike. Whole dumps with a mutated line must give
`engine="auto"` (scanner + local grammar fallback) the whole-file grammar's answer: the same tree
or the same error text, position included.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import scan
from hlo_layout.syntax.parse import parse_modules, read_text
from hlo_layout.syntax.scan import ScanFallback
from tests.support import CORPUS

_DUMPS = (
    "jax-cpu/module_0018.jit_step.cpu_after_optimizations.txt",
    "jax-cpu-spmd/module_0018.jit_step.cpu_after_optimizations.txt",
    "libtpu-v5e/transformer/transformer.after_optimizations.txt",
)

#: Pieces a mutation inserts: separators the scanner must not take for attribute syntax, odd
#: whitespace, comment markers, brackets, and the cases issue 11 names.
_INSERTS = (
    "=", ":", "->", "=a=b", ":b", "->y->z", "\v", "\f", "\r", "\x1c", "*", ",", ", ", "{", "}",
    "(", ")", "[", "]", "<", ">", "<=", '"', "\\", "/*", "*/", "//", "/*c*/", "#", "#1", "%",
    " ", "\t", "T(8,*)", "T(2,1)", "{1,0:T(8,*)}", "ROOT ", "constant", "f32[2]{0}", "x=",
    ", foo=a=b", ", foo=a:b", ", foo=x->y->z", ", k={a=b}", ", k=[1]<=[1]", "ENTRY", "0",
)  # fmt: skip


@cache
def _lines() -> tuple[str, ...]:
    out = []
    for name in _DUMPS:
        path = CORPUS / name
        if not path.exists():
            continue
        for line in read_text(path).split("\n"):
            if " = " in line and not line.lstrip().startswith("//"):
                out.append(line.rstrip())
    return tuple(out)


@st.composite
def _mutated_line(draw: st.DrawFn) -> str:
    lines = _lines()
    if not lines:
        pytest.skip("tests/data/corpus is missing")
    line = draw(st.sampled_from(lines))
    for _ in range(draw(st.integers(1, 3))):
        if not line:
            break
        pos = draw(st.integers(0, len(line)))
        kind = draw(st.sampled_from(("insert", "insert", "cut", "replace", "truncate")))
        if kind == "insert":
            line = line[:pos] + draw(st.sampled_from(_INSERTS)) + line[pos:]
        elif kind == "cut":
            line = line[:pos] + line[pos + draw(st.integers(1, 8)) :]
        elif kind == "replace" and pos < len(line):
            line = line[:pos] + draw(st.sampled_from(_INSERTS)) + line[pos + 1 :]
        else:
            line = line[:pos]
    return line


_WORDS = st.sampled_from(
    ("a", "%c.1", "0", "-1", "1e-05", "true", "b01f_01io->b01f", "may-alias", "#sdy.mesh", "kLoop")
)
_STRINGS = st.sampled_from(('""', '"x"', '"a\\"b"', '"{,}"', '"/*"'))


@cache  # one strategy per depth: built per draw, Hypothesis validated it again each time
def _values(depth: int) -> st.SearchStrategy[str]:
    atom = st.one_of(_WORDS, _STRINGS, st.just("f32[2,3]{1,0}"), st.just("[2,1]<=[2]T(1,0)"))
    if depth == 0:
        return atom
    inner = _values(depth - 1)
    item = st.one_of(
        inner, st.builds(lambda a, s, b: f"{a}{s}{b}", inner, st.sampled_from("=:"), inner)
    )
    items = st.lists(item, max_size=3).map(", ".join)
    return st.one_of(
        atom,
        items.map(lambda s: "{" + s + "}"),
        items.map(lambda s: "[" + s + "]"),
        items.map(lambda s: "(" + s + ")"),
        items.map(lambda s: "<" + s + ">"),
    )


@st.composite
def _generated_line(draw: st.DrawFn) -> str:
    """A plain head with a generated tail: valid values, bare chains and stray separators."""
    keys = st.sampled_from(("foo", "to_apply", "sharding", "backend_config", "a.b", "x-y"))
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        value = draw(_values(3))
        if draw(st.integers(0, 4)) == 0:
            value += draw(st.sampled_from(("=a", ":b", "->z", " x", "<=[1]", "{0}")))
        pieces.append(f", {draw(keys)}={value}")
    return "  %x = f32[2]{0} add(%p, %p)" + "".join(pieces)


def _check_line(line: str) -> None:
    text = f"HloModule m\n\nENTRY e {{\n  %p = f32[2]{{0}} parameter(0)\n{line}\n}}\n"
    try:
        fast = parse_modules(text, "t.hlo", engine="scan", verify=False)
    except ScanFallback:
        return  # declined: the grammar decides
    except HloLayoutError as e:
        with pytest.raises(HloLayoutError) as ref:
            parse_modules(text, "t.hlo", engine="lark", verify=False)
        assert str(ref.value) == str(e)
        return
    try:
        reference = parse_modules(text, "t.hlo", engine="lark", verify=False)
    except HloLayoutError as e:  # pragma: no cover - the failure this test exists to find
        pytest.fail(f"scanner accepted what the grammar rejects:\n{line!r}\n{e}")
    assert fast == reference, line
    for m_fast, m_ref in zip(fast, reference, strict=True):
        for c_fast, c_ref in zip(m_fast.computations, m_ref.computations, strict=True):
            for i_fast, i_ref in zip(c_fast.instructions, c_ref.instructions, strict=True):
                assert i_fast.span.start == i_ref.span.start, line
                for a_fast, a_ref in zip(i_fast.attributes, i_ref.attributes, strict=True):
                    assert (a_fast.span.start, a_fast.span.end) == (
                        a_ref.span.start,
                        a_ref.span.end,
                    ), line


_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


@_SETTINGS
@given(_mutated_line())
def test_mutated_corpus_lines(line: str) -> None:
    _check_line(line)


@_SETTINGS
@given(_generated_line())
def test_generated_tails(line: str) -> None:
    _check_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "  %x = f32[2]{0} add(%p, %p), foo=a=b",
        "  %x = f32[2]{0} add(%p, %p), foo=a:b",
        "  %x = f32[2]{0} add(%p, %p), foo=x->y->z",
        "  %x = f32[2]{0} add(%p, %p), foo={a=b}, bar=[2]<=[2]",
        "  %x = f32[2]{0} add(%p, %p) // comment \v %y = f32[] parameter(1)",
        "  %x = f32[2]{0:T(2,*)} add(%p, %p)",
        "  %x = f32[2]{0} add(%p, %p), foo={1,0:T(8,*)}",
        "  %x = f32[2]{0} add(%p, %p), shape=f32[2]{5}",
        "  %x = f32[2]{0} add(%p, %p), foo=a /* c */",
        '  %x = f32[2]{0} add(%p, %p), foo="unterminated',
        "  %x = f32[2]{0} add(%p, %p), foo={a]",
        "  %x = f32[2]{0} add(%p, %p),\ffoo=1",
        "  %x = f32[2]{0} add(%p, %p), foo=1\v",
    ],
)
def test_named_cases(line: str) -> None:
    _check_line(line)


@st.composite
def _mutated_dump(draw: st.DrawFn) -> str:
    lines = _lines()
    if not lines:
        pytest.skip("tests/data/corpus is missing")
    text = read_text(CORPUS / _DUMPS[0])
    rows = text.split("\n")
    i = draw(st.integers(0, len(rows) - 1))
    pos = draw(st.integers(0, len(rows[i])))
    kind = draw(st.sampled_from(("insert", "cut", "wrap", "delete", "truncate")))
    if kind == "insert":
        rows[i] = (
            rows[i][:pos] + draw(st.sampled_from((*_INSERTS, "\n", "/* a\nb */"))) + rows[i][pos:]
        )
    elif kind == "cut":
        rows[i] = rows[i][:pos] + rows[i][pos + draw(st.integers(1, 20)) :]
    elif kind == "wrap":
        rows[i] = rows[i][:pos] + "\n    " + rows[i][pos:]
    elif kind == "delete":
        del rows[i]
    else:
        return "\n".join(rows)[: -draw(st.integers(1, 400))]
    return "\n".join(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(_mutated_dump())
def test_local_fallback_equals_whole_file_grammar(text: str) -> None:
    def run(engine: str) -> object:
        try:
            return parse_modules(text, "d.hlo", engine=engine)
        except HloLayoutError as e:
            return str(e)

    assert run("auto") == run("lark")


def _general_operands(text: str) -> object:
    """`scan._operands(text)` without its one-regex reader of `shape %name` lists."""
    saved = scan._shaped_operands
    scan._shaped_operands = lambda _text: None  # type: ignore[assignment]
    try:
        return scan._operands(text)
    except ScanFallback:
        return "declined"
    finally:
        scan._shaped_operands = saved  # type: ignore[assignment]


_ARRAYS = ("f32[]", "f32[2,3]{1,0}", "bf16[4]{0:T(4)}", "s32[<=3]", "u8[2]<0:1>")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("", " ", "\t", "  ")),
            st.sampled_from(_ARRAYS),
            st.sampled_from((" ", "\t ", "", "\f")),
            st.sampled_from(("%a", "b.1", "%c#1", "-d", "%e#12", "f-g", "%")),
            st.sampled_from((",", ", ", " ,", ",\t")),
        ),
        min_size=1,
        max_size=4,
    ),
    st.booleans(),
)
def test_shaped_operand_lists_read_as_the_general_split(
    pieces: list[tuple[str, ...]], trailing_comma: bool
) -> None:
    """Law: the one-regex reader of `shape %name` operand lists (`scan._shaped_operands`)
    declines or gives what the general split gives."""
    text = "".join(lead + shape + gap + name + sep for lead, shape, gap, name, sep in pieces)
    text = text if trailing_comma else text.rstrip(" \t,")
    fast: object
    try:
        fast = scan._shaped_operands(text)
    except ScanFallback:  # a shape that does not parse: the general path declines it too
        fast = "declined"
    if fast is not None:
        assert fast == _general_operands(text), text


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('"\\\nab /')), max_size=60), st.sampled_from(["", '""'])
)
def test_strings_replaced_is_the_regex_sub(text: str, replacement: str) -> None:
    """Law: the linear string replacer is `_STRINGS.sub` (which is quadratic on escaped quotes
    in an unclosed string)."""
    assert scan.strings_replaced(text, replacement) == scan._STRINGS.sub(replacement, text)


def test_strings_replaced_on_escaped_quotes() -> None:
    """40,000 escaped quotes in an unclosed string (where `_STRINGS.sub` takes seconds) are
    left as they are; strings of escaped quotes that do close are replaced."""
    for tail in ('"' + '\\"' * 40_000, '"' + '\\"' * 40_000 + "\\", '"' + '\\"' * 40_000 + "\n"):
        assert scan.strings_replaced(tail, "") == tail
    closed = ('"' + '\\"' * 20) * 2000
    assert scan.strings_replaced(closed, "") == scan._STRINGS.sub("", closed)
