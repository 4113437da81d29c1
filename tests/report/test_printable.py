"""The one escape on the way to a terminal (`hlo_layout.printable`, applied by the console to
everything it prints): an ESC in an op_name, a source file, a file name or an error's context
line is shown as `\\x1b`, never sent; tables are measured after escaping; JSON keeps the data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from hlo_layout.printable import UNSAFE, printable
from hlo_layout.report.console import make_console, printable_text
from tests.support import Cli

OP_NAME = "jit(f)/\x1b]0;pwned\x07\x1b[2Jneg\u202e"
SOURCE = "/a/\x1b[31mb\x9b.py"
DUMP = (
    "HloModule m, is_scheduled=true\nENTRY e {\n"
    f'  p = f32[1024] parameter(0), metadata={{op_name="{OP_NAME}" source_file="{SOURCE}" '
    "source_line=3}\n"
    f'  ROOT n = f32[1024] negate(p), metadata={{op_name="{OP_NAME}" source_file="{SOURCE}" '
    "source_line=4}\n}\n"
)


@given(st.text())
def test_nothing_unsafe_is_left_and_escaping_is_idempotent(text: str) -> None:
    shown = printable(text)
    assert UNSAFE.search(shown) is None
    assert printable(shown) == shown
    if UNSAFE.search(text) is None:
        assert shown is text


def test_escapes() -> None:
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable(os.fsdecode(b"\xff.hlo")) == "\\xff.hlo"  # the byte of a non-UTF-8 name
    assert printable("x\u202ey\x9b\x7f\r") == "x\\u202ey\\x9b\\x7f\\x0d"
    assert printable("tab\tand\nnewline") == "tab\tand\nnewline"


def test_a_styled_text_keeps_its_styles() -> None:
    text = Text.assemble(("red\x1b", "red"), ("plain", ""))
    shown = printable_text(text)
    assert shown.plain == "red\\x1bplain"
    red = {
        k for span in shown.spans if str(span.style) == "red" for k in range(span.start, span.end)
    }
    assert red == set(range(7))


def _lines(renderable: object, width: int) -> list[str]:
    console = make_console(None, width=width)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get().splitlines()


@pytest.mark.parametrize("width", [60, 80, 200])
def test_a_table_is_measured_after_escaping(width: int) -> None:
    table = Table("bytes", "op_name")
    table.add_row("4.0KiB", OP_NAME)
    table.add_row("8.0KiB", Text(OP_NAME, style="bold"))
    text = "\n".join(_lines(table, width))
    assert "\x1b" not in text
    assert printable(OP_NAME) in text  # whole, never cut by a width measured raw
    # Rich's Text drops BEL, BS, VT, FF and CR itself; the rest is escaped, whole
    assert printable(OP_NAME.replace("\x07", "")) in text


def _dump(tmp_path: Path, name: str = "m.hlo") -> Path:
    path = tmp_path / name
    path.write_text(DUMP, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "{}"],
        ["inspect", "{}"],
        ["inspect", "{}", "--top", "5"],
        ["indexing", "{}", "-i", "n"],
        ["sharding", "{}"],
        ["diff", "{}", "{}"],
        ["check", "{}", "--no-rules-ok"],
    ],
    ids=lambda a: " ".join(a[:3]),
)
def test_no_command_sends_an_escape(cli: Cli, tmp_path: Path, args: list[str]) -> None:
    path = _dump(tmp_path, "e\x1b[2J.hlo")
    result = cli(*[a.replace("{}", str(path)) for a in args], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout + result.stderr
    if args[0] == "memory":
        assert printable(OP_NAME) in result.stdout and printable(SOURCE) in result.stdout


def test_json_keeps_the_data_exact(cli: Cli, tmp_path: Path) -> None:
    result = cli("memory", str(_dump(tmp_path)), "-f", "json")
    (module,) = json.loads(result.stdout)["modules"]
    assert {row["op_name"] for row in module["live_at_peak"]} == {OP_NAME}


def test_an_error_context_line_is_escaped_and_its_caret_placed(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.hlo"
    path.write_text(
        "HloModule m\nENTRY e {\n"
        '  ROOT p = f32[8] parameter(0), metadata={op_name="\x1b[2J" \x1b}\n}\n'
    )
    result = cli("inspect", str(path))
    assert result.exit_code == 3
    assert "\x1b" not in result.stderr
    head, line, caret = result.stderr.splitlines()[:3]
    assert head.startswith(f"{path}:3:58: error: unexpected character '\\x1b'")
    assert line[caret.index("^") :].startswith("\\x1b}")  # the caret under the escape
