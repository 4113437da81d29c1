"""The compiled scanner (`accel/scan.c`) builds what the pure-Python scanner builds, byte for byte.

Every test parses the same text twice, with `scan._accel` set to the compiled module and to None,
and compares the whole tree with every span, or the error with its message and position. The
compiled module is imported directly (not through `accel.load`), so these tests also run under
HLO_LAYOUT_PURE_PYTHON=1; they skip when the extension is not built.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hlo_layout import limits
from hlo_layout.errors import HloLayoutError, Source
from hlo_layout.syntax import scan
from hlo_layout.syntax.parse import parse_modules, read_text
from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Module
from tests.support import DATA, compiled_scanner, corpus_id, corpus_modules, hlo_files

COMPILED = compiled_scanner()
pytestmark = pytest.mark.skipif(
    COMPILED is None,
    reason="the compiled scanner is not built (python setup.py build_ext --inplace)",
)

FILES = hlo_files()
XLA_TESTS = sorted((DATA / "xla-tests").glob("*.hlo.txt"))
SHARED_XLA_TESTS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "xla-tests"


def _span(span: object) -> tuple[int, int] | None:
    return None if span is None else (span.start, span.end)  # type: ignore[attr-defined]


def _attributes(attrs: object) -> tuple:
    lazy = None
    if isinstance(attrs, LazyAttributes):
        lazy = (attrs._text, attrs._offset)
    return lazy, tuple((a.key, a.raw, _span(a.span)) for a in attrs)  # type: ignore[attr-defined]


def _instruction(i: Instruction) -> tuple:
    return (*i[:4], _attributes(i.attributes), *i[5:8], _span(i.span), i.shape_inferred)


def _computation(c: Computation) -> tuple:
    return (
        c.name,
        c.is_entry,
        c.parameters,
        c.result_shape,
        _attributes(c.attributes),
        c.synthetic,
        _span(c.span),
        tuple(_instruction(i) for i in c.instructions),
    )


def _module(m: Module) -> tuple:
    return (
        m.name,
        _attributes(m.attributes),
        m.sections,
        _span(m.span),
        tuple(_computation(c) for c in m.computations),
    )


def _outcome(text: str, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """Everything a parse gives: the trees with every position, or the error with its own."""
    monkeypatch.setattr(scan, "_accel", COMPILED if compiled else None)
    try:
        modules = parse_modules(text, "dump.hlo")
    except HloLayoutError as e:
        span = getattr(e, "span", None)
        return ("error", type(e).__name__, str(e), _span(span))
    except ValueError as e:  # pragma: no cover - parse_modules turns these into HloLayoutError
        return ("ValueError", str(e))
    return ("ok", tuple(_module(m) for m in modules))


def _same(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    compiled = _outcome(text, True, monkeypatch)
    assert compiled == _outcome(text, False, monkeypatch)
    return compiled


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_corpus_dump(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _same(read_text(path), monkeypatch)[0] == "ok"


def _conformance_sample() -> list[Path]:
    """The committed xla-tests subset and every 20th file of the team's whole set."""
    shared = sorted(SHARED_XLA_TESTS.glob("*.hlo.txt"))[::20] if SHARED_XLA_TESTS.is_dir() else []
    return XLA_TESTS + shared


def test_conformance_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _conformance_sample()
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        compiled = _outcome(text, True, monkeypatch)
        assert compiled == _outcome(text, False, monkeypatch), path.name


def _body(n: int) -> str:
    lines = ["HloModule m, is_scheduled=true", "", "ENTRY %main (p0: f32[8]{0}) -> f32[8]{0} {"]
    lines.append("  %p0 = f32[8]{0} parameter(0)")
    for k in range(n):
        lines.append(
            f"  %a.{k} = f32[8]{{0}} add(f32[8]{{0}} %p0, %p0), "
            f'metadata={{op_name="jit(f)/add" source_line={k}}}'
            if k % 7 == 3
            else f'  %a.{k} = f32[8]{{0}} add(%p0, %p0), metadata={{op_name="f/{k}"}}'
        )
    lines.append(f"  ROOT %t = (f32[8]{{0}}, s32[]) tuple(%a.{n - 1}, %a.0#0)")
    lines.append("}")
    return "\n".join(lines) + "\n"


SMALL = read_text(FILES[0]) if FILES else _body(20)


def test_truncations(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dump cut anywhere: same tree or same error, at the same place."""
    text = SMALL
    rng = random.Random(13)
    for cut in sorted({len(text) - 200, *rng.sample(range(1, len(text)), 40)}):
        if cut > 0:
            _same(text[:cut], monkeypatch)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_random_edits(monkeypatch: pytest.MonkeyPatch, data: st.DataObject) -> None:
    """Law: for any edit of a real dump (bytes flipped, characters from anywhere in Unicode,
    blanks and brackets put in), both scanners agree on the tree or on the error."""
    text = _body(12)
    edits = data.draw(st.integers(1, 6))
    for _ in range(edits):
        at = data.draw(st.integers(0, len(text) - 1))
        new = data.draw(
            st.one_of(
                st.sampled_from(list(" \t\r\f\v\x00,%#(){}[]<>=\"'\\/*-+ROOT_")),
                st.characters(),
                st.text(max_size=4),
            )
        )
        text = text[:at] + new + text[at + data.draw(st.integers(0, 2)) :]
    _same(text, monkeypatch)


@pytest.mark.parametrize(
    "line",
    [
        "  %é = f32[8]{0} add(%p0, %p0)",
        "  %a = f32[8]{0} add(%p0, %pé)",
        '  %a = f32[8]{0} add(%p0, %p0), metadata={op_name="ü😀"}',
        "  %a = f32[8]{0} add(%p0, %p0)\u00a0",
        "  %a = f32[8]{0} add(%p0,\u2003%p0)",
        "  %a = f32[8]{0} constant(é)",
        "  ROOT = f32[8]{0} add(%p0, %p0)",
        "  ROOT\t%a = f32[8]{0} add( %p0 ,\t%p0 )",
        "  ROOT  ROOT = f32[8]{0} add(%p0, %p0)",
        "  %a = f32[8]{0} parameter(-1)",
        "  %a = f32[8]{0} parameter(" + "9" * 5000 + ")",
        "  %a = f32[8]{0} get-tuple-element(%p0#" + "9" * 5000 + ")",
        "  %a = f32[8]{0} add(%p0#1, %p0)",
        "  %a = f32[8]{0} add(%p0#, %p0)",
        "  %a = f32[8]{0} add(%p0->x)",
        "  %a-b = f32[8]{0} add(%p0, %p0)",
        "  %a = ((f32[8]{0}, (s32[])), f32[]) tuple(%p0)",
        "  %a = ((((f32[8]{0})))) tuple(%p0)",
        "  %a = f32[8]{0 add(%p0)",
        "  %a = f32[8]{0} add(%p0), ",
        "  %a = f32[8]{0} add(%p0), x=",
        "  %a = f32[8]{0} add(%p0), x={",
        "  %a = f32[8]{0} add(%p0) junk",
        "  %a = f32[8]{0} add(%p0) // comment",
        "  %a = f32[8]{0} add(%p0) /* comment",
        "  %a = f32[8]{0} add(%p0\x00)",
        "  %a = f32[8]{0} ad\x00d(%p0)",
        "  %a = f32[" + "9" * 300 + "]{0} add(%p0)",
        "  %a = f32[8]{0} add(" + ", ".join(["%p0"] * 20_000) + ")",
        '  %a = f32[8]{0} add(%p0), metadata={op_name="' + "x" * 200_000 + '"}',
        "  %a = f32[8]{0} add(%p0), k=" + "{" * 3000 + "}" * 3000,
        "  %a = f32[8]{0} add(f32[8]{0} %p0, f32[8]{0} %p0)",
        "  %a = f32[8]{0} add(f32[8]{0} %p0#" + "9" * 5000 + ")",
        "  %a = f32[8]{0} add(f32[8]{0} %pé)",
        "  %a = f32[8]{0} add(f32[8]{0}\u00a0%p0)",
        "  %a = f32[8]{0} add(f32[8]{0} %p0\x00)",
        "  %a = f32[8]{0} add(f32[8]{0} %p0) // comment",
        '  %a = f32[8]{0} add(f32[8]{0} %p0), metadata={op_name="a"//"b"}',
        "  %a = f32[8]{0} add(" + ", ".join(["f32[8]{0} %p0"] * 20_000) + ")",
        '  %a = f32[8]{0} add(%p0), a="' + '\\"' * 3000,
        '  %a = f32[8]{0} add(f32[8]{0} %p0), a="x", b="' + '\\"' * 3000 + " //",
        "  %a = f32[8]{0} add(f32[8]{0} %p0), a=" + '\\"' * 3000 + '"x"',
    ],
    ids=lambda line: repr(line[:40]) + (f"+{len(line) - 40}" if len(line) > 40 else ""),
)
def test_hostile_lines(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-ASCII, NUL, huge numbers, long lines, deep brackets: same tree or same error."""
    head = "HloModule m\n\nENTRY %main (p0: f32[8]{0}) -> f32[8]{0} {\n"
    head += "  %p0 = f32[8]{0} parameter(0)\n"
    for tail in ("  ROOT %r = f32[8]{0} copy(%p0)\n}\n", ""):
        _same(head + line + "\n" + tail, monkeypatch)


def test_escaped_quotes_cost_one_scan(time_bound) -> None:
    """A quote whose string runs to the end of the text has no later string after it: the
    compiled readers stop looking (200,000 escaped quotes took minutes, one scan per quote)."""
    assert COMPILED is not None
    quotes = '\\"' * 200_000
    tail = ', a="' + quotes
    # A `//` after the strings: the compiled loop declines the line before reading its tail.
    line = '  %a = f32[8]{0} add(f32[8]{0} %p0), a="x", b="' + quotes + " //"
    with time_bound(2):
        assert COMPILED.skeleton(tail) == tail  # no string, no digit
        assert COMPILED.split_top(tail) == [(0, 0), (1, len(tail))]
        instructions: list[Instruction] = []
        found = COMPILED.run([line], 0, 0, instructions, _ctx(Source(line, "x")), _HEAD, None)
        assert found == (0, 0, instructions)


def test_the_compiled_loop_takes_common_lines() -> None:
    """Not a fallback in disguise: `run` takes every line of a plain computation body."""
    assert COMPILED is not None
    # A list mixing shaped and bare operands is the Python's (_slow_instruction, general split).
    lines = [x for x in _body(30).split("\n") if "(f32[8]{0} %p0, %p0" not in x]
    source = Source("\n".join(lines), "x")
    instructions: list[Instruction] = []
    start = sum(len(x) + 1 for x in lines[:3])
    index, offset, _ = COMPILED.run(lines, 3, start, instructions, _ctx(source), _HEAD, None)
    assert lines[index] == "}"
    assert len(instructions) == index - 3 > 25
    assert offset == sum(len(x) + 1 for x in lines[:index])
    assert instructions[-1].is_root and instructions[-1].operands[1].index == 0


# Older dumps print each operand's shape in the list: `add(f32[] %x, f32[] %y)`. The compiled
# loop takes the lines `_slow_instruction` reads through `_shaped_operands` and builds what it
# builds (the span without trailing blanks, operands with their shapes, the tail as `_lazy_tail`
# keeps it).
_SHAPED_BODY = [
    "  %b = f32[8]{0} broadcast(f32[] %c), dimensions={}",
    '  %x = f32[8]{0} add(f32[8]{0} %p0, f32[8]{0} %b), metadata={op_name="a//b" source_line=3}',
    "  %y = f32[8]{0} add(f32[8]{0} %x, f32[8]{0} %b)  \r",
    "  %g = f32[8]{0} get-tuple-element(s32[] %t#1,\tbf16[2,3]{1,0} %u.2#0 ), index=0",
    "  %h = f32[8]{0} get-tuple-element((f32[8]{0}, (s32[])) %t), index=0",
    "  %i = bf16[8]{0:T(8)} add(bf16[8]{0:T(8)} %t, (f32[], s32[]) %u.2#1)",
    "  %j = s32[] get-tuple-element((f32[8]{0}, /*index=1*/s32[]) %t), index=1, x={/*index=2*/1}",
]


def test_the_compiled_loop_takes_shaped_operand_lines() -> None:
    assert COMPILED is not None
    lines = [*_SHAPED_BODY, "  %m = f32[8]{0} add(f32[8]{0} %x, %b)", "}"]
    source = Source("\n".join(lines), "x")
    instructions: list[Instruction] = []
    index, offset, _ = COMPILED.run(lines, 0, 0, instructions, _ctx(source), _HEAD, None)
    assert index == len(_SHAPED_BODY)  # the mixed list is the Python's
    assert offset == sum(len(x) + 1 for x in _SHAPED_BODY)
    start = len(lines[0]) + len(lines[1]) + 2
    assert _span(instructions[2].span) == (start + 2, start + len(lines[2].rstrip(" \r")))
    assert [(o.name, o.index, str(o.shape)) for o in instructions[3].operands] == [
        ("t", 1, "s32[]"),
        ("u.2", 0, "bf16[2,3]{1,0}"),
    ]
    assert [(o.name, o.index, str(o.shape)) for o in instructions[5].operands] == [
        ("t", None, "bf16[8]{0:T(8)}"),
        ("u.2", 1, "(f32[], s32[])"),
    ]
    assert str(instructions[6].operands[0].shape) == "(f32[8]{0}, s32[])"


#: Every name the generated lines use, defined (an undefined operand's error would hide the tree).
_SHAPED_PARAMS = ("p0", "c", "a", "b.1", "-d", "e", "f-g", "k", "t", "u.2")


def _shaped_module(line: str) -> str:
    params = "".join(
        f"  %{name} = f32[8]{{0}} parameter({k})\n" for k, name in enumerate(_SHAPED_PARAMS)
    )
    body = "\n".join(_SHAPED_BODY)
    return f"HloModule m\n\n%f {{\n{params}{body}\n{line}\n  ROOT %r = f32[8]{{0}} copy(%p0)\n}}\n"


#: Each part of a shaped-operand line: (well formed, written wrong).
_SHAPED_PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "head": (("  ", "\t", " \t"), ("  ROOT ", " \r ", "", "\f")),
    "name": (("%s", "s.1", "-s"), ("ROOT", "%s#1", "%", "s->t")),
    "shape": (("f32[8]{0}", "(f32[], s32[])", "s32[]"), ("f32[8]<0>", "((f32[]))", "f32[8]{0")),
    "opcode": (("add", "broadcast", "all-gather", "get-tuple-element"), ("constant", "parameter")),
    "lead": (
        ("", " ", "  ", "/*index=5*/"),
        ("\f", "\v", "/*", "*/", "/*(*/", "/*)*/", "/ /*c*/*"),
    ),
    "operand_shape": (
        (
            "f32[]",
            "f32[8]{0}",
            "bf16[2,3]{1,0}",
            "s32[<=3]",
            "pred[2]{0}",
            "s32[?]",
            "bf16[8,128]{1,0:T(8,128)(2,1)}",
            "(f32[], s32[2]{0})",
            "(f32[8]{0}, (s32[], pred[]))",
            "(f32[], /*index=1*/s32[])",
        ),
        (
            "u8[2]<0:1>",
            "f32[8]{0",
            "f32",
            "F32[2]",
            "f32[2]{0}}",
            "f32[" + "9" * 30 + "]",
            "()",
            "(f32[]",
            "(f32[]))",
            "b(f32[])",
            "(f32[8]{0)}",
            "f32[2]{1,0:T(8}",
            "(f32[], /*index=1)*/s32[])",
            "(f32[], s32[]",
            "(" * 70 + "f32[]" + ")" * 70,
        ),
    ),
    "gap": ((" ", "\t", " \t "), ("", "\f", "\v", "\u2003", "\n")),
    "operand": (
        ("%a", "b.1", "%c", "-d", "%e", "f-g", "%t#1", "%u.2#0", "%a#12"),
        ("%", "%h#", "%i->j", "%k#" + "9" * 5000, "%zz", "é", "%a #1", "%a#1#2"),
    ),
    "comma": ((", ", ",", " , ", ",\t"), (";", ",,", " ")),
    "tail": (
        (
            "",
            ", dimensions={}",
            ', metadata={op_name="a//b" source_line=2}',
            ', metadata={op_name="a/*b" source_file="/x"}',
            "  \t",
            "\r",
            " \f",
            ", k=f32[2]{0}",
            ", x={/*index=1*/1}",
            ", backend_config={}, y=2",
        ),
        (
            ", x=1 // note",
            ", x=1 /* note */",
            " /* x */",
            "\v",
            " \x1c",
            ', a="/"/, b=1',
            ', a=/"x"/',
            ", a=/",
            ", x=",
            " x",
            ", x={",
            "\r, x=1",
            " /*",
            ", x=1 /*",
            ", x={/*)*/1}",
        ),
    ),
}


def _shaped_line(draw: Callable[[st.SearchStrategy[str]], str], wrong: bool) -> str:
    """`name = shape opcode(shape %operand, ...), tail`, every part well formed, or one part (or
    the trailing comma) written wrong."""
    wrong_part = draw(st.sampled_from([*_SHAPED_PARTS, "trailing comma"])) if wrong else ""

    def part(name: str, here: bool = True) -> str:
        good, bad = _SHAPED_PARTS[name]
        return draw(st.sampled_from(bad if here and name == wrong_part else good))

    count = draw(st.integers(1, 4))  # type: ignore[arg-type]
    wrong_at = draw(st.integers(0, count - 1))  # type: ignore[arg-type]
    operands = []
    for k in range(count):
        here = k == wrong_at
        operands.append("".join(part(n, here) for n in ("lead", "operand_shape", "gap", "operand")))
        if k < count - 1:
            operands.append(part("comma", here))
    if wrong_part == "trailing comma":
        operands.append(",")
    return (
        f"{part('head')}{part('name')} = {part('shape')} {part('opcode')}({''.join(operands)})"
        + part("tail")
    )


@st.composite
def _lines_written_wrong(draw: st.DrawFn) -> str:
    """A shaped-operand line with one part written wrong, then characters replaced, put in or
    taken out."""
    line = _shaped_line(draw, wrong=True)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(line)))
        new = draw(
            st.one_of(st.sampled_from(list(' \t\r\f\v,%#(){}[]<>="\\/*-:x9')), st.characters())
        )
        line = line[:at] + new + line[at + draw(st.integers(0, 2)) :]
    return line


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_shaped_operand_lines(monkeypatch: pytest.MonkeyPatch, data: st.DataObject) -> None:
    """Law: on a line whose operands carry their shapes, both scanners build the same tree with
    every span."""
    assert _same(_shaped_module(_shaped_line(data.draw, wrong=False)), monkeypatch)[0] == "ok"


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_lines_written_wrong())
# A `\r` inside a comment: the compiled loop took the line (its `\r` test skipped comments),
# the Python declined it and the grammar read it, splitting the instruction before it.
@example("  %s = f32[8]{0} add(/*\r*/f32[] %a, f32[] %c)")
@example("  %s = f32[8]{0} add(f32[] %a /*\r*/, f32[] %c), x=1")
def test_shaped_operand_lines_written_wrong(monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    """Law: on such a line with one part written wrong (a shape, name, blank, comma, comment or
    tail that is no such thing, an operand list the Python reads another way, a trailing comma)
    or characters replaced, put in or taken out, both scanners give the same tree or the same
    error at the same place."""
    _same(_shaped_module(line), monkeypatch)


#: What `run` is told of the open computation (name, entry, signature, start, header line).
_HEAD = ["c", False, None, 0, 0]


def _ctx(source: Source) -> tuple:
    from hlo_layout.errors import Span
    from hlo_layout.syntax.tree import Operand, ParameterDecl

    split = scan.TailSplitter(source)
    memos: tuple[dict, ...] = ({}, {}, {}, {})
    return (
        source,
        *memos,
        scan._shape,
        scan._tail_kind,
        LazyAttributes,
        split,
        Instruction,
        Operand,
        Span,
        ParameterDecl,
        Computation,
    )


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("not a list", 0, 0, [], None, _HEAD, None),
        ([], 0, 0, [], (1, 2), _HEAD, None),
        ([1], 0, 0, [], "ctx", _HEAD, None),
        ([], "x", 0, [], "ctx", _HEAD, None),
        ([], 0, 0, [], "ctx", [], None),
        ([], 0, 0, [], "ctx", _HEAD, ()),
    ],
)
def test_run_checks_its_arguments(args: tuple) -> None:
    assert COMPILED is not None
    args = tuple(_ctx(Source("", "x")) if a == "ctx" else a for a in args)
    with pytest.raises(TypeError):
        COMPILED.run(*args)


def test_run_rejects_a_non_string_line() -> None:
    assert COMPILED is not None
    with pytest.raises(TypeError):
        COMPILED.run([b"  %a = f32[] add(%b)"], 0, 0, [], _ctx(Source("", "x")), _HEAD, None)


# NOTE: [long operand lists] in scan.py: the error of a piece read with its list runs blanked is
# the whole piece's error. Checked against the grammar alone (engine="lark") on every cut.
def _long_tuple(n: int) -> str:
    tiled = "bf16[8,128]{1,0:T(8,128)(2,1)}"
    shapes = ", ".join(
        f"/*index={k}*/f32[8]{{0}}" if k % 5 == 0 else tiled if k % 3 else "f32[8]{0}"
        for k in range(n)
    )
    names = ", ".join(f"/*index={k}*/%p0" if k % 5 == 0 else "%p0" for k in range(n))
    return (
        "HloModule m\n\nENTRY %main (p0: f32[8]{0}) -> f32[8]{0} {\n"
        "  %p0 = f32[8]{0} parameter(0)\n"
        f"  ROOT %t = ({shapes}) tuple({names})\n}}\n"
    )


def _error(text: str, engine: str) -> tuple | None:
    try:
        parse_modules(text, "d", engine=engine)
    except HloLayoutError as e:
        return type(e).__name__, str(e)
    return None


def test_cut_long_list_same_error_as_grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_ABBREVIATE_ABOVE", 40)
    text = _long_tuple(60)
    start = text.index("ROOT")
    rng = random.Random(5)
    cuts = sorted({*rng.sample(range(start, len(text)), 60), len(text) - 5, len(text) - 200})
    blanked = 0
    for cut in cuts:
        piece = text[:cut]
        if scan._OPERAND_RUN.search(piece):
            blanked += 1
        assert _error(piece, "auto") == _error(piece, "lark"), cut
    assert blanked > 30


def test_cut_long_list_is_fast_in_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The blanked piece is what the grammar reads first, and it is short in tokens."""
    seen: list[str] = []
    real = scan.lark_syntax_error

    def spy(text: str, source: Source, offset: int) -> HloLayoutError | None:
        seen.append(text)
        return real(text, source, offset)

    monkeypatch.setattr(scan, "lark_syntax_error", spy)
    text = _long_tuple(3000)[:-200]
    error = _error(text, "auto")
    assert error is not None and "unexpected end of input" in error[1]
    (short,) = seen
    assert len(short.split()) < 100 < 3000 < len(text.split())


def _reference_nesting(text: str) -> int | None:
    """The first position nested past MAX_NESTING, by the plain scan the regex replaces."""
    pattern = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{(\[]+|[})\]]+')
    depth = 0
    for m in pattern.finditer(text):
        run = m.end() - m.start()
        if text[m.start()] == '"':
            continue
        if text[m.start()] in "{([":
            depth += run
            if depth > limits.MAX_NESTING:
                return m.end() - (depth - limits.MAX_NESTING)
        else:
            depth = max(0, depth - run)
    return None


def _nesting(text: str) -> int | None:
    try:
        limits.check_nesting(Source(text, "x"))
    except limits.LimitExceeded as e:
        assert e.span is not None
        return e.span.start
    return None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(['"', "\\", " ", "a", "\n", ")", "]", "}", '"x"']),
            st.sampled_from(["(", "[", "{"]).map(lambda c: c * 400),
        ),
        max_size=40,
    )
)
def test_check_nesting_equals_plain_scan(pieces: list[str]) -> None:
    """Law: the one-match-per-run check finds the very position the plain scan finds."""
    text = "".join(pieces)
    assert _nesting(text) == _reference_nesting(text)


def _read(
    module: ModuleType | None,
    read: Callable[[], object],
    declines: tuple[type[Exception], ...] = (scan.ScanFallback,),
) -> object:
    """`read()` with the scanner's accelerator set to `module` (None: the pure-Python path); a
    text it declines or rejects gives the exception's class name."""
    saved = scan._accel
    scan._accel = module
    try:
        return read()
    except declines as e:
        return type(e).__name__
    finally:
        scan._accel = saved


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab ,"\\\n{}()[]é')), max_size=60))
def test_split_top_equals_python(text: str) -> None:
    """Law: the compiled `_split_top` cuts where the Python one cuts, and declines alike."""
    assert COMPILED is not None
    expected = _read(None, lambda: scan._split_top(text))
    assert COMPILED.split_top(text) == (None if expected == "ScanFallback" else expected)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["p", "%q.1", " ", "\t", ":", ",", "f32[2]", "{0}", "{", "s32[]", "é"]),
        max_size=12,
    ).map("".join)
)
def test_flat_params_equals_python(text: str) -> None:
    """Law: the compiled `_flat_params` reads the same parameters, or declines alike."""
    assert COMPILED is not None

    def read() -> object:
        return scan._flat_params(text, {})

    assert _read(COMPILED, read) == _read(None, read)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('a f32[]{}, "\\\n0123é=x')), max_size=50))
def test_skeleton_equals_python(tail: str) -> None:
    """Law: the compiled tail skeleton is the Python one, or None where a shape head occurs."""
    assert COMPILED is not None
    replaced = scan._STRINGS.sub('""', tail)
    expected = None if scan._HAS_ARRAY.search(replaced) else scan._DIGITS.sub("0", replaced)
    assert COMPILED.skeleton(tail) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(' \t,={}()[]"\\\n09a_.%k')), max_size=50))
def test_simple_tail_reads_the_skeleton_as_the_tail(text: str) -> None:
    """Law: a tail is of the simple kind (one findall splits it) iff its skeleton is, so the
    answer is memoized per skeleton (`scan._simple_tail`)."""
    for tail in (text, ", k=" + text, ", k=" + text + ", b={" + text + "}"):
        assert scan._simple_tail(tail) == (scan._SIMPLE_TAIL.fullmatch(tail) is not None), tail


def test_tails_of_the_corpus() -> None:
    """The same law on every distinct attribute tail of the corpus dumps, and each is split
    into the same spans by the compiled splitter and the Python one (neither declines)."""
    tails = {
        (i.attributes._text, i.attributes._offset)
        for path in FILES
        for m in corpus_modules(path)
        for c in m.computations
        for i in c.instructions
        if type(i.attributes) is LazyAttributes
    }
    assert tails
    for tail, _ in tails:
        assert scan._simple_tail(tail) == (scan._SIMPLE_TAIL.fullmatch(tail) is not None), tail
        spans = _read(COMPILED, lambda t=tail: scan.attribute_spans(t))
        assert spans
        assert spans == _read(None, lambda t=tail: scan.attribute_spans(t)), tail


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "(",
                ")",
                ", ",
                " ",
                "\t",
                "->",
                ":",
                "\n",
                "é",
                "b(",
                "<1>",
                "{0}",
                "f32[]",
                "%q: s32[]",
                "p: f32[2]{0}",
                "bf16[3,4]{1,0}",
                "(f32[], s32[])",
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_signature_equals_python(text: str) -> None:
    """Law: the compiled `_signature` reads what the Python reads, or declines alike."""
    assert COMPILED is not None

    def read() -> object:
        return scan._signature(text, {})

    declines = (scan.ScanFallback, HloLayoutError)
    assert _read(COMPILED, read, declines) == _read(None, read, declines)


#: Computation headers and closing lines, well formed or not, and what may stand between them.
_HEADERS = (
    "%c{n} (p: f32[8]) -> f32[8] {{",
    "ENTRY %c{n} (p: f32[8]{{0}}, q: s32[]) -> (f32[8], s32[]) {{",
    "%c{n} {{",
    "ENTRY %c{n} {{",
    "c{n} (p: f32[8]) -> f32[8]  {{ ",
    "%c{n} (p: (f32[8], s32[])) -> f32[8] {{",
    "%c{n} (p: f32[8]) -> f32[8] {{ // note",
    "%c{n} /* x */ (p: f32[8]) -> f32[8] {{",
    "ENTRY {{",
    "HloModule m{n} {{",
    "%c{n} (p: f32[8]) -> f32[8] x {{",
    "%c{n} (p: f32[8]) {{",
    "%c{n} (p: f32[8]) -> f32[8] {{\r",
)
_CLOSERS = ("}", " }", "}\t", "}\f", '}, execution_thread="x"', "} // end", "}}")
_BETWEEN = ("", " ", "// a comment", "\t", "/* c */")
_BODIES = (
    "  %p = f32[8]{0} parameter(0)",
    "  %t = (f32[8]{0}, f32[8]{0}) tuple(%p, /*index=1*/%p)",
    "  %t = (f32[8]{0}, f32[8]{0}) tuple(%p, /*index=1*/ %p, )",
    "  %t = (f32[8]{0}, f32[8]{0}) tuple(/*a*/)",
    "  %t = (f32[8]{0}, f32[8]{0}) tuple(%p#0, /*index=1*/%p#12)",
    "  %t = (f32[8]{0}, f32[8]{0}) tuple(%p, /*index=1*/0)",
    "  ROOT %r = f32[8]{0} copy(%p)",
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_HEADERS),
            st.lists(st.sampled_from(_BODIES), max_size=4),
            st.sampled_from(_CLOSERS),
            st.sampled_from(_BETWEEN),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_computations_closed_and_opened(parts: list[tuple[str, list[str], str, str]]) -> None:
    """Law: the compiled loop, which closes a computation at a lone `}` and reads the plain
    header of the next one, builds the Python's trees (every span) or leaves the Python its
    error, whatever the headers, closing lines and lines between them."""
    lines = ["HloModule m", ""]
    for n, (header, body, closer, between) in enumerate(parts):
        lines += [header.format(n=n), *body, closer, between]
    with pytest.MonkeyPatch.context() as monkeypatch:
        _same("\n".join(lines) + "\n", monkeypatch)


def test_the_compiled_loop_runs_across_computations() -> None:
    """Not a fallback in disguise: on plain computations `run` closes each and opens the next,
    to the end of the text, once called."""
    assert COMPILED is not None
    text = "\n".join(
        f"%c{n} (p: f32[8]) -> f32[8] {{\n  %p = f32[8]{{0}} parameter(0)\n"
        "  %t = (f32[8]{0}, f32[8]{0}) tuple(%p, /*index=1*/%p)\n"
        "  ROOT %r = f32[8]{0} copy(%p)\n}\n"
        for n in range(50)
    )
    lines = text.split("\n")
    source = Source(text, "x")
    head: list[object] = ["c0", False, None, 0, 0]
    items: list[object] = []
    index, offset, open_list = COMPILED.run(
        lines, 1, len(lines[0]) + 1, [], _ctx(source), head, items
    )
    assert (index, offset, open_list) == (len(lines), len(text) + 1, None)
    assert [c.name for c in items] == [f"c{n}" for n in range(50)]  # type: ignore[attr-defined]
    assert all(len(c.instructions) == 3 for c in items)  # type: ignore[attr-defined]
