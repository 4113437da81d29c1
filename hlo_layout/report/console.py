"""The one place consoles are made, and why no shape, name or number is ever split or cut.

Rich, left to itself, folds a word longer than its column mid-token (`{1,0:T(8,128)(2,1` / `)}`),
ends cut cells with `…`, crops lines at the console width and wraps piped output at 80 columns.
`HloConsole` changes that for every view at once, without any view knowing:

- every `Table` is drawn by `FittedTable`: when the table fits it prints one line per row; when it
  does not, columns whose cells are prose (have spaces) wrap at spaces, and if that is not enough
  the widest columns leave the row and print on their own indented line under it, wrapped (only
  when longer than the whole width) at token boundaries `,` `:` `)` `]` `}` `/` `;` and spaces;
- text wraps at spaces only (a word longer than the width stays whole), and nothing is cropped;
- `Padding` indents without filling lines to the width (no trailing blanks);
- piped (stdout not a terminal and no `COLUMNS`), the width is unbounded: one greppable line per
  row, never wrapped at 80 columns;
- control characters in what it prints (an ESC in an op_name, the bytes of a file name that is
  not UTF-8) are escaped (`hlo_layout.printable`), whatever view printed them.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TextIO

from rich._wrap import divide_line
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.containers import Lines
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Column, Row, Table
from rich.text import Text

from hlo_layout.printable import UNSAFE, printable
from hlo_layout.report.theme import THEME

#: The width of piped output: wide enough that no real row wraps, small enough to be harmless
#: if something still pads to it.
PIPED_WIDTH = 1 << 16

#: Break opportunities inside a token, after these characters (and at whitespace).
_BREAK_AFTER = re.compile(r"[,:)\]}/;]|\s+")

#: Indent of a cell that left its row for a line of its own.
DETAIL_INDENT = 4


def make_console(
    file: TextIO | None = None, *, width: int | None = None, soft_wrap: bool = False
) -> Console:
    """A console on `file` (stdout by default) with our theme; colour only on a terminal.

    Width: `width` when given, else the terminal's or `COLUMNS`; piped without `COLUMNS`,
    `PIPED_WIDTH` (lines are never wrapped for a reader that is a program). `soft_wrap` keeps
    long lines whole (error lines must stay greppable as `file:line:col:`)."""
    console = HloConsole(
        file=file or sys.stdout,
        theme=THEME,
        width=width,
        highlight=False,
        emoji=False,  # `:name:` in an op_name or a layout is text, never an emoji
        markup=False,  # `[axes=(0,)]` in an op_name is text, never a style tag
        no_color="NO_COLOR" in os.environ,
        soft_wrap=soft_wrap,
    )
    if width is None and not console.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        console.width = PIPED_WIDTH
    return console


class HloConsole(Console):
    """A Rich console that never splits a token: tables are fitted, text wraps at spaces only,
    nothing is cropped (see the module docstring). Views stay plain Rich."""

    def render(self, renderable: Any, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        options = options or self.options
        if isinstance(renderable, str):
            renderable = self.render_str(
                renderable, highlight=options.highlight, markup=options.markup
            )
        if isinstance(renderable, Text):
            renderable = _WholeWords(printable_text(renderable))
        elif isinstance(renderable, Table) and not isinstance(renderable, _Laid):
            renderable = FittedTable(renderable)
        elif isinstance(renderable, Padding):
            renderable = _Indent(renderable)
        return _printable(super().render(renderable, options))

    def print(self, *objects: Any, crop: bool = False, **kwargs: Any) -> None:
        """As Rich's, but lines longer than the width (one unbreakable token) are not cropped."""
        super().print(*objects, crop=crop, **kwargs)


def printable_text(text: Text) -> Text:
    """`text` with its UNSAFE characters escaped (`printable`), each escape in the style of the
    character it stands for; `text` itself when it has none. Done before a table measures its
    cells, so an escaped cell is as wide as it is drawn."""
    plain = text.plain
    if UNSAFE.search(plain) is None:
        return text
    cuts = sorted({k for m in UNSAFE.finditer(plain) for k in (m.start(), m.end())})
    out = text.blank_copy()
    for piece in text.divide(cuts):
        if UNSAFE.fullmatch(piece.plain) is None:
            out.append_text(piece)
            continue
        escaped = Text(printable(piece.plain), style=piece.style)
        for span in piece.spans:  # the piece is one character: its spans cover all of it
            escaped.stylize(span.style)
        out.append_text(escaped)
    return out


def _printable_cell(cell: Any) -> Any:
    if isinstance(cell, str):
        return printable(cell)
    if isinstance(cell, Text):
        return printable_text(cell)
    return cell


def _printable(segments: Iterable[Segment]) -> Iterator[Segment]:
    """Segments with input text escaped for the terminal (`printable`), whatever renderable
    made them: an ESC in an op_name or a file name is shown as `\\x1b`, never sent. Rich's own
    control segments (cursor moves of a progress bar) pass as they are."""
    search = UNSAFE.search
    for segment in segments:
        if segment.control is None and search(segment.text) is not None:
            segment = Segment(printable(segment.text), segment.style)
        yield segment


class _WholeWords:
    """`Text` wrapped at spaces only: a word longer than the width stays whole on its line
    (Rich would fold it mid-word, or with `overflow="ignore"` not wrap at all)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text
        width = options.max_width
        justify = text.justify or options.justify or "default"
        no_wrap = text.no_wrap if text.no_wrap is not None else bool(options.no_wrap)
        lines = Lines()
        for line in text.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(text.tab_size or 8)
            if no_wrap:
                pieces = Lines([line])
            else:
                pieces = line.divide(divide_line(str(line), width, fold=False))
                for piece in pieces:
                    piece.rstrip()
            pieces.justify(console, width, justify=justify, overflow="ignore")
            lines.extend(pieces)
        yield from Text("\n").join(lines).render(console, end=text.end)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return self.text.__rich_measure__(console, options)


class _Indent:
    """`Padding` without filling each line to the full width and without cropping."""

    def __init__(self, padding: Padding) -> None:
        self.padding = padding

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        p = self.padding
        inner = options.update_width(max(1, options.max_width - p.left - p.right))
        for _ in range(p.top):
            yield Segment.line()
        lines = Segment.split_lines(console.render(p.renderable, inner))
        for line in lines:
            if p.left:
                yield Segment(" " * p.left)
            yield from _rstrip(line)
            yield Segment.line()
        for _ in range(p.bottom):
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        p = self.padding
        m = Measurement.get(console, options, p.renderable)
        return Measurement(m.minimum + p.left + p.right, m.maximum + p.left + p.right)


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A line without its trailing blanks (they are invisible, but grep and diffs see them)."""
    out = list(line)
    while out and not out[-1].control and not out[-1].text.strip():
        out.pop()
    if out and not out[-1].control:
        last = out[-1]
        out[-1] = Segment(last.text.rstrip(), last.style)
    return out


def token_lines(text: Text, width: int) -> list[Text]:
    """`text` cut into lines of at most `width` cells, only after `,` `:` `)` `]` `}` `/` `;` or at
    spaces; a piece with no break inside that is longer than `width` stays whole on its line."""
    plain = text.plain
    if len(plain) <= width:
        return [text]
    cuts = [m.end() for m in _BREAK_AFTER.finditer(plain)]
    lines: list[Text] = []
    start = 0
    last_fit = None
    for cut in [*cuts, len(plain)]:
        if cut - start <= width:
            last_fit = cut
            continue
        end = last_fit if last_fit is not None and last_fit > start else cut
        lines.append(text[start:end])
        start = end
        last_fit = cut if cut - start <= width else None
        if last_fit is None and cut > start:
            # the piece up to `cut` alone is too long: keep it whole
            lines.append(text[start:cut])
            start = cut
    if start < len(plain):
        lines.append(text[start:])
    out = []
    for n, line in enumerate(lines):
        line.rstrip()
        blank = len(line.plain) - len(line.plain.lstrip())
        if n and blank:
            line = line[blank:]
        if line.plain:
            out.append(line)
    return out


def _one_line(console: Console, cell: Any) -> bool:
    """Whether a table cell is one line of text drawn the same stacked with others
    (`FittedTable._one_line_columns`)."""
    if not isinstance(cell, Text):
        return False
    if cell.justify is not None or cell.overflow is not None or cell.no_wrap is not None:
        return False
    plain = cell.plain
    if "\n" in plain or "\t" in plain:
        return False
    return not cell.style or console.get_style(cell.style).bgcolor is None


class _TokenLines:
    """A cell on its own line: `label value`; only `value` when the label would make it wrap;
    wrapped by `token_lines` when the value alone is too long."""

    def __init__(self, label: Text, value: Text) -> None:
        self.label = label
        self.value = value

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for n, value in enumerate(self.value.split("\n")):
            whole = value
            if n == 0 and self.label.plain:
                labelled = Text.assemble(self.label, " ", value)
                # the label gives way before the value would wrap
                whole = labelled if labelled.cell_len <= width or value.cell_len > width else value
            for line in token_lines(whole, width):
                yield from console.render(line, options.update(no_wrap=True))


class _Laid(Table):
    """A table `FittedTable` already laid out: drawn by Rich as it is."""


@dataclasses.dataclass(frozen=True)
class _Fit:
    keep: list[int]  # columns that stay in the row, in order
    moved: list[int]  # columns printed on lines of their own under each row
    widths: dict[int, int]  # kept column → width


class FittedTable:
    """A Rich `Table` drawn so that no cell is split mid-token or cut (see the module docstring).

    The table's own options (title, styles, justification, box when it fits) are kept."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._one_line: list[list[Text]] | None = None  # `_one_line_cells`, once known
        self._one_line_known = False
        for column in table.columns:  # escaped before they are measured (`printable_text`)
            cells = column._cells
            if any(isinstance(c, str | Text) for c in cells):
                column._cells = [_printable_cell(c) for c in cells]

    def _cells(self, console: Console, column: Column) -> list[Text | RenderableType]:
        return [console.render_str(c) if isinstance(c, str) else c for c in column.cells]

    def _one_line_cells(self, console: Console) -> list[list[Text]] | None:
        """Each column's cells as Texts, when every cell is one line of text whose own style
        has no background and no row has a style (NOTE: [one row of lines]); else None."""
        if self._one_line_known:
            return self._one_line
        found: list[list[Text]] | None = None
        t = self.table
        if len(t.rows) > 1 and not t.row_styles and all(r.style is None for r in t.rows):
            found = []
            for column in t.columns:
                cells = self._cells(console, column)
                if not all(_one_line(console, cell) for cell in cells):
                    found = None
                    break
                found.append(cells)  # type: ignore[arg-type]
        self._one_line, self._one_line_known = found, True
        return found

    def _one_line_columns(self, console: Console) -> list[Text] | None:
        """Each column's one-line cells stacked into one Text, a line per row.

        NOTE: [one row of lines] Rich draws a table row by row, every cell rendered, padded and
        aligned on its own: about 1 ms a row, seconds for `inspect --top 100000000`. A table
        whose cells are each one line is drawn the same when each column's cells are stacked
        into one cell of as many lines (Rich justifies and pads every line of a cell alike,
        and a row without lines between is the same as rows without lines between): one cell a
        column. Only when the table fits as it is (no cell wraps: its lines stay aligned);
        a cell's own style then covers its text, not the blanks that justify it, which shows
        only with a background (those tables are drawn row by row). A borderless table is not
        given to Rich at all (`_plain`)."""
        cells = self._one_line_cells(console)
        return None if cells is None else [Text("\n").join(column) for column in cells]

    def _measure(self, console: Console, options: ConsoleOptions) -> list[tuple[int, int]]:
        """(minimum, maximum) width of each column's content: the minimum is its longest word
        (or the whole cell in a `no_wrap` column), so wrapping never cuts inside a word."""
        wide = options.update_width(PIPED_WIDTH)
        out = []
        stacked = self._one_line_columns(console)
        for k, column in enumerate(self.table.columns):
            cells: list[Any] = [stacked[k]] if stacked is not None else self._cells(console, column)
            if self.table.show_header:
                header = column.header
                cells.append(console.render_str(header) if isinstance(header, str) else header)
            lo = hi = 0
            for cell in cells:
                m = Measurement.get(console, wide, cell)
                hi = max(hi, m.maximum)
                lo = max(lo, m.maximum if column.no_wrap else m.minimum)
            out.append((lo, hi))
        return out

    def _overhead(self, console: Console, options: ConsoleOptions, keep: list[int]) -> int:
        """Borders and padding of a table made of the `keep` columns."""
        probe = self._copy(keep, {i: 1 for i in keep}, box=len(keep) == len(self.table.columns))
        probe.show_header = False
        probe.title = probe.caption = None
        wide = options.update_width(PIPED_WIDTH)
        return Measurement.get(console, wide, probe).maximum - len(keep)

    def _copy(
        self,
        keep: Sequence[int],
        widths: dict[int, int] | None,
        *,
        box: bool = True,
        rows: bool = False,
    ) -> _Laid:
        t = self.table
        table = _Laid(
            title=t.title,
            caption=t.caption,
            box=t.box if box else None,
            show_header=t.show_header,
            show_edge=t.show_edge,
            pad_edge=t.pad_edge,
            padding=t.padding,
            collapse_padding=t.collapse_padding,
            style=t.style,
            header_style=t.header_style,
            title_style=t.title_style,
            caption_style=t.caption_style,
            title_justify=t.title_justify,
            caption_justify=t.caption_justify,
            highlight=t.highlight,
            min_width=t.min_width,
        )
        for i in keep:
            c = t.columns[i]
            fixed = widths[i] if widths is not None else None
            table.columns.append(
                dataclasses.replace(
                    c,
                    _cells=list(c.cells) if rows else [],
                    width=fixed,
                    min_width=None if fixed is not None else c.min_width,
                    max_width=None,
                    ratio=None,
                    no_wrap=widths is None,
                    overflow="ignore",
                    _index=len(table.columns),
                )
            )
        if rows:
            table.rows.extend(t.rows)
        return table

    def _fit(self, console: Console, options: ConsoleOptions) -> _Fit | None:
        """None when the table fits whole; else which columns stay and their widths."""
        width = options.max_width
        n = len(self.table.columns)
        sizes = self._measure(console, options)
        keep = list(range(n))
        overhead = self._overhead(console, options, keep)
        if sum(hi for _, hi in sizes) + overhead <= width:
            return None
        moved: list[int] = []
        while keep and sum(sizes[i][0] for i in keep) + overhead > width:
            # the widest column leaves the row; the first (the row's name) only as a last resort
            pool = keep[1:] or keep
            widest = max(pool, key=lambda i: (sizes[i][0], i))
            keep.remove(widest)
            moved.append(widest)
            overhead = self._overhead(console, options, keep) if keep else 0
        widths = {i: sizes[i][1] for i in keep}
        excess = sum(widths.values()) + overhead - width
        while excess > 0:
            # shrink the widest column that can still wrap (down to its longest word)
            room = [i for i in keep if widths[i] > sizes[i][0]]
            if not room:
                break
            j = max(room, key=lambda i: (widths[i], i))
            widths[j] -= 1
            excess -= 1
        return _Fit(keep, sorted(moved), widths)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        plain = self._plain(console, options)
        if plain is not None:
            parts: Iterable[Iterable[Segment]] = [plain.render(console, end="\n")]
        else:
            parts = (console.render(part, options) for part in self._parts(console, options))
        for segments in parts:
            for line in Segment.split_lines(segments):
                yield from _rstrip(line)
                yield Segment.line()

    def _plain(self, console: Console, options: ConsoleOptions) -> Text | None:
        """The table as one Text, a line a row, when it is drawn as Rich would draw it without
        a border (NOTE: [one row of lines]): no box, lines or footer, a left-justified title
        no wider than the table, no caption, Rich's default padding, columns of free width,
        one-line cells that fit. None otherwise (then Rich draws it). Tests compare the two
        on generated tables (tests/report/test_console.py)."""
        t = self.table
        if (
            t.box is not None
            or t.show_lines
            or t.show_footer
            or t.caption
            or t.collapse_padding
            or t.padding != (0, 1, 0, 1)
            or t.width is not None
            or t.min_width is not None
            or t.expand
            or (t.style and console.get_style(t.style))
            or (t.title and (not isinstance(t.title, str) or t.title_justify != "left"))
        ):
            return None
        columns = t.columns
        if any(
            c.width is not None
            or c.min_width is not None
            or c.max_width is not None
            or c.ratio is not None
            or c.justify not in ("left", "right")
            for c in columns
        ):
            return None
        cells = self._one_line_cells(console)
        if cells is None:
            return None
        get_style = console.get_style
        rows = len(t.rows)
        header: list[Text] = []
        if t.show_header:
            for c in columns:
                h = console.render_str(c.header) if isinstance(c.header, str) else c.header
                if not _one_line(console, h):
                    return None
                header.append(h)  # type: ignore[arg-type]
        last = len(columns) - 1
        pads = [
            (0 if k == 0 and not t.pad_edge else 1, 0 if k == last and not t.pad_edge else 1)
            for k in range(len(columns))
        ]
        widths = [
            max([x.cell_len for x in cells[k]] + ([header[k].cell_len] if header else []))
            for k in range(len(columns))
        ]
        total = sum(w + left + right for w, (left, right) in zip(widths, pads))
        if total > options.max_width:
            return None
        title = (
            console.render_str(str(t.title), style=Style.pick_first(t.title_style, "table.title"))
            if t.title
            else None
        )
        if title is not None and title.cell_len > total:
            return None
        out = Text(no_wrap=True, overflow="ignore", end="")
        lines: list[tuple[Any, list[Text]]] = []
        if header:
            head_style = get_style(t.header_style or "")
            lines.append(([head_style + get_style(c.header_style) for c in columns], header))
        body_styles = [get_style(c.style or "") for c in columns]
        lines.extend((body_styles, [cells[k][r] for k in range(len(columns))]) for r in range(rows))
        if title is not None:
            out.append_text(title)
            out.append("\n")
        for n, (styles, row) in enumerate(lines):
            if n:
                out.append("\n")
            for k, cell in enumerate(row):
                start = len(out)
                left, right = pads[k]
                gap = widths[k] - cell.cell_len
                if columns[k].justify == "right":
                    cell = cell.copy()
                    cell.rstrip()
                    gap = widths[k] - cell.cell_len
                    out.append(" " * (left + gap))
                    out.append_text(cell)
                    out.append(" " * right)
                else:
                    out.append(" " * left)
                    out.append_text(cell)
                    out.append(" " * (gap + right))
                if styles[k]:
                    out.stylize_before(styles[k], start, len(out))
        return out

    def _parts(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        n = len(self.table.columns)
        fit = self._fit(console, options) if n else None
        stacked = self._one_line_columns(console) if fit is None else None
        if stacked is not None:  # NOTE: [one row of lines]
            table = self._copy(range(n), None)
            for column, cell in zip(table.columns, stacked):
                column._cells = [cell]
            table.rows.append(Row())
            yield table
        elif fit is None:
            yield self._copy(range(n), None, rows=True)
        elif not fit.moved:
            yield self._copy(fit.keep, fit.widths, rows=True)
        else:
            yield from self._stacked(console, fit)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)

    def _stacked(self, console: Console, fit: _Fit) -> Iterator[RenderableType]:
        """Each row: its kept cells as a row (columns aligned), then one line per moved cell."""
        t = self.table
        columns = [self._cells(console, c) for c in t.columns]
        head = self._copy(fit.keep, fit.widths, box=False)
        head.caption = None
        if fit.keep:
            yield head
        elif t.title:
            yield Text(str(t.title), style=t.title_style or "table.title")
        labels = [
            Text(c.header.plain if isinstance(c.header, Text) else str(c.header), "hlo.muted")
            for c in t.columns
        ]
        for r, row in enumerate(t.rows):
            if fit.keep:
                line = self._copy(fit.keep, fit.widths, box=False)
                line.title = line.caption = None
                line.show_header = False
                line.add_row(*(columns[i][r] for i in fit.keep), style=row.style)
                yield line
            for k, i in enumerate(fit.moved):
                cell = columns[i][r]
                if not isinstance(cell, Text):
                    yield Padding(cell, (0, 0, 0, DETAIL_INDENT))
                    continue
                if not cell.plain.strip() or cell.plain.strip() in ("-", "—"):
                    continue
                cell = cell.copy()
                if t.columns[i].style:
                    cell.stylize_before(t.columns[i].style)
                indent = 0 if not fit.keep and k == 0 else DETAIL_INDENT
                label = Text("") if indent == 0 else labels[i]
                yield Padding(_TokenLines(label, cell), (0, 0, 0, indent))
        if t.caption:
            yield Text(str(t.caption), style=t.caption_style or "table.caption")
