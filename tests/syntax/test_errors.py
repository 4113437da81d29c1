"""Bad input: one clear error with file, line, column, the line and a caret; never a crash."""

from __future__ import annotations

import contextlib

import pytest

from hlo_layout.errors import HloLayoutError, HloSemanticError, HloSyntaxError
from hlo_layout.syntax import parse, parse_shape
from tests.support import CORPUS

GOOD = """HloModule m

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %p)
}
"""


def check_error(text: str, line: int, column: int, fragment: str, cls: type = HloSyntaxError):
    with pytest.raises(cls) as info:
        parse(text, "bad.hlo")
    error = info.value
    assert fragment in str(error), str(error)
    assert error.span is not None
    assert (error.span.line, error.span.column) == (line, column), str(error)
    rendered = str(error)
    assert rendered.startswith(f"bad.hlo:{line}:{column}: ")
    assert "^" in rendered.splitlines()[-1]
    return error


def test_good_text_parses() -> None:
    assert parse(GOOD).entry.root.name == "n"


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        (GOOD.replace("f32[4]{0} negate", "f32[4]{0 negate"), 5, 22, "unexpected"),
        (GOOD.replace("parameter(0)", "parameter(0"), 5, 3, "unexpected"),
        (GOOD[:-3], 5, 43, "end of input"),
    ],
    ids=["unclosed-layout", "unclosed-paren", "truncated"],
)
def test_syntax_errors_point_at_the_problem(text: str, line: int, column: int, fragment: str):
    check_error(text, line, column, fragment)


@pytest.mark.parametrize(
    ("layout", "fragment"),
    [
        ("{0:T(0)}", "tile (0) has an entry <= 0"),
        ("{1}", "not a permutation"),
        ("{0,0}", "2 minor-to-major entries but the shape has rank 1"),
    ],
)
def test_bad_layouts_point_at_the_shape(layout: str, fragment: str) -> None:
    text = GOOD.replace("f32[4]{0} parameter", f"f32[4]{layout} parameter")
    check_error(text, 4, 14, fragment, HloSemanticError)


def test_undefined_operand() -> None:
    check_error(GOOD.replace("%p)", "%q)"), 5, 3, "undefined operand 'q'", HloSemanticError)


def test_duplicate_name() -> None:
    text = GOOD.replace("ROOT %n", "%p = f32[4]{0} parameter(1)\n  ROOT %n")
    check_error(text, 5, 3, "duplicate instruction name 'p'", HloSemanticError)


def test_unknown_computation() -> None:
    text = GOOD.replace("negate(f32[4]{0} %p)", "call(%p), to_apply=%nowhere")
    check_error(text, 5, 3, "unknown computation 'nowhere'", HloSemanticError)


@pytest.mark.parametrize(
    "shape",
    ["f32[2,", "f32[2]{1,0}", "f32[2]{0:T(8,-1)}", "f32[2]{0:L(0)}", "(f32[2]", "f32[2]]"],
)
def test_bad_shapes(shape: str) -> None:
    with pytest.raises(HloLayoutError):
        parse_shape(shape)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\x01\x02garbage",
        "HloModule",
        "{" * 10_000,
        "(" * 10_000 + "f32[]" + ")" * 10_000,
        "ENTRY e { ROOT t = " + "(" * 10_000 + "f32[]" + ")" * 10_000 + " tuple() }",
        "x" * 1_000_000,
    ],
    ids=["empty", "binary", "header-only", "braces", "deep-tuple", "deep-instr", "long-word"],
)
def test_hostile_input_gives_a_clean_error_quickly(text: str, time_bound) -> None:
    with time_bound(5), pytest.raises(HloLayoutError):  # generous: a hang or blow-up
        parse(text, "hostile.hlo")


def test_truncation_at_every_line_is_clean() -> None:
    text = (CORPUS / "libtpu-v5e" / "conv" / "conv.after_optimizations.txt").read_text()
    lines = text.splitlines(keepends=True)
    for n in range(1, len(lines)):
        cut = "".join(lines[:n])
        cut = cut[: len(cut) - 7] if len(cut) > 7 else cut
        with contextlib.suppress(HloLayoutError):
            parse(cut, "cut.hlo")


@pytest.mark.parametrize("width", [40, 60, 80, 200])
def test_error_line_fits_a_terminal_with_the_caret_under_the_column(width: int) -> None:
    """On a terminal, the offending line is windowed to the terminal's width (the terminal
    would otherwise wrap it and leave the caret under another character); piped, it is the
    whole line up to the usual window."""
    import io

    from rich.console import Console

    from hlo_layout.report.errors_view import render_error

    name = "p_" + "x" * 90
    text = f"HloModule m\nENTRY e {{\n  ROOT {name} = f32[4]{{0}} parameter(0), bad==1\n}}\n"
    with pytest.raises(HloSyntaxError) as info:
        parse(text)
    error = info.value
    for terminal in (True, False):
        out = io.StringIO()
        console = Console(  # as cli.common.stderr_console makes it: long lines kept whole
            file=out, width=width, force_terminal=terminal, color_system=None, soft_wrap=True
        )
        render_error(console, error)
        lines = out.getvalue().splitlines()
        assert lines[0].startswith(f"<string>:{error.line}:{error.column}: error:")
        line, caret = lines[-2:]  # the message before them may wrap
        if terminal:
            assert len(line) <= width
        else:
            assert line.strip() == text.splitlines()[error.line - 1].strip()
        at = caret.index("^")
        source_line = text.splitlines()[error.line - 1]
        shown = line[2:].removeprefix("…")
        offset = len(line) - len(shown)  # the indent and the `…` of a windowed line
        start = source_line.index(shown)
        assert source_line[start + at - offset] == source_line[error.column - 1]
