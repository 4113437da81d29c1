"""The one console: tables fitted so that no token is split or cut, text wrapped at spaces
only, piped output unwrapped."""

from __future__ import annotations

import copy
import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from hlo_layout.report.console import PIPED_WIDTH, make_console, token_lines

_PIECES = st.text(alphabet="abcf0123456789[]{},:()/;_. ", min_size=0, max_size=120)


@given(_PIECES, st.integers(min_value=1, max_value=80))
def test_token_lines_break_only_after_boundaries(text: str, width: int) -> None:
    lines = [line.plain for line in token_lines(Text(text), width)]
    # nothing lost but the spaces at the breaks
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    pos = 0
    for n, line in enumerate(lines):
        if len(line) > width:  # only a piece with no break inside may overflow
            assert not re.search(r"[,:)\]}/;\s].", line), (line, width)
        while pos < len(text) and text[pos] == " " and not line.startswith(" "):
            pos += 1
        assert text.startswith(line, pos), (lines, text)
        pos += len(line)
        if n + 1 < len(lines):  # each break follows a boundary character or a space
            assert text[pos - 1] in ",:)]}/;" or text[pos] == " ", (lines, text)


def _print(renderable: object, width: int | None) -> str:
    out = io.StringIO()
    console = make_console(out, width=width)
    console.print(renderable)
    return out.getvalue()


def _table(cells: list[list[str]]) -> Table:
    table = Table(title="t", box=None)
    table.add_column("name", max_width=8)  # a view's max_width never cuts a cell
    table.add_column("shape", overflow="ellipsis")
    table.add_column("bytes", justify="right")
    for row in cells:
        table.add_row(*row)
    return table


_TOKEN = st.text(alphabet="abcdef0123456789[]{},:()._", min_size=1, max_size=70)


@given(st.lists(st.tuples(_TOKEN, _TOKEN, _TOKEN), min_size=1, max_size=5),
       st.sampled_from([20, 40, 60, 80, 200]))  # fmt: skip
def test_no_cell_of_a_table_is_split_or_cut(rows: list[tuple[str, str, str]], width: int) -> None:
    text = _print(_table([list(r) for r in rows]), width)
    lines = text.splitlines()
    for row in rows:
        for cell in row:
            if len(cell) + 12 <= width:
                assert any(cell in line for line in lines), (cell, text)
    assert "…" not in text


def test_piped_console_is_wide_and_plain(monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    console = make_console(io.StringIO())
    assert console.width == PIPED_WIDTH
    long = "x" * 300
    text = _print(_table([["a", long, "1"]]), None)
    assert any(long in line and line.lstrip().startswith("a ") for line in text.splitlines())
    assert not any(line != line.rstrip() for line in text.splitlines())


def test_columns_env_sets_the_width_when_piped(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert make_console(io.StringIO()).width == 60


def test_a_word_longer_than_the_width_stays_whole() -> None:
    word = "bf16[4,8,128,128]{2,3,1,0:T(8,128)(2,1)S(1)}"
    text = _print(Text(f"shape {word} is long"), 20)
    assert word in text.splitlines()


def test_brackets_in_a_cell_are_text_not_markup() -> None:
    # older jax op_names carry parameters in brackets; Rich markup would swallow them
    op_name = "jit(f)/reduce_sum[axes=(0,)]"
    assert op_name in _print(_table([["a", op_name, "1"], ["[bold]x[/bold]", "y", "2"]]), 80)
    assert "[bold]x[/bold]" in _print(_table([["[bold]x[/bold]", "y", "2"]]), 80)


_WORDS = st.text(alphabet="abcxyz019 ,:()[]{}/→·-", min_size=0, max_size=14)
_STYLES = st.sampled_from([None, "bold", "hlo.muted", "hlo.shape", "red"])


@st.composite
def _tables(draw: st.DrawFn) -> Table:
    title = draw(st.sampled_from([None, "", "largest buffers", "a title much longer than most"]))
    table = Table(
        title=title,
        title_justify="left",
        box=None,
        pad_edge=draw(st.booleans()),
        show_header=draw(st.booleans()),
        title_style=draw(st.sampled_from([None, "bold"])),
    )
    columns = draw(st.integers(1, 4))
    for _ in range(columns):
        table.add_column(
            draw(_WORDS),
            style=draw(_STYLES),
            justify=draw(st.sampled_from(["left", "right"])),
            no_wrap=draw(st.booleans()),
            header_style=draw(_STYLES) or "",
        )
    for _ in range(draw(st.integers(2, 6))):
        cells: list[Text | str] = []
        for _ in range(columns):
            text = draw(_WORDS)
            style = draw(_STYLES)
            cells.append(Text(text, style=style) if style and draw(st.booleans()) else text)
        table.add_row(*cells)
    return table


def _drawn(table: Table, width: int, *, rich: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    """(character, style) of what the console prints; a blank's style is not seen (no
    background in these tables), so it is left out."""
    from hlo_layout.report import console as console_module

    with monkeypatch.context() as patch:
        if rich:
            patch.setattr(console_module.FittedTable, "_plain", lambda self, c, o: None)
        console = console_module.HloConsole(
            file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor",
            theme=console_module.THEME, highlight=False, markup=False,
        )  # fmt: skip
        segments = list(console.render(copy.deepcopy(table)))
    return [(ch, None if ch == " " else str(s.style or "none")) for s in segments for ch in s.text]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(table=_tables(), width=st.sampled_from([30, 80, 200]))
def test_a_borderless_table_is_drawn_as_rich_draws_it(
    table: Table, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Law: FittedTable's own drawing of a borderless table (`_plain`, NOTE: [one row of lines])
    prints the characters Rich prints, each in the style Rich gives it."""
    ours = _drawn(table, width, rich=False, monkeypatch=monkeypatch)
    assert ours == _drawn(table, width, rich=True, monkeypatch=monkeypatch)
