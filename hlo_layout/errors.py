"""One error family for the whole package, with source locations computed only when shown.

The CLI maps these classes to exit codes (3 for bad input); nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_layout.printable import printable


@dataclass(frozen=True, slots=True)
class Source:
    """The text of one parse and the name it came from; shared by every span of that parse."""

    text: str = field(repr=False)
    name: str = "<string>"
    #: Line number of the text's first line in its file (a streamed chunk starts mid-file).
    first_line: int = 1

    def location(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset. A line ends at `\n`, `\r\n` or a lone
        `\r` (old Mac files); a form feed is whitespace inside a line, as in the grammar."""
        text = self.text
        offset = max(0, min(offset, len(text)))
        line = text.count("\n", 0, offset) + self.first_line
        if "\r" in text:
            line += text.count("\r", 0, offset) - text.count("\r\n", 0, offset)
            if offset and text.startswith("\r\n", offset - 1):
                line -= 1  # on the `\n` of a CRLF: its `\r` was counted as a lone one
        return line, offset - self._line_start(offset) + 1

    def _line_start(self, offset: int) -> int:
        text = self.text
        start = text.rfind("\n", 0, offset) + 1
        if "\r" in text:
            cr = text.rfind("\r", 0, offset) + 1
            if cr > start and not text.startswith("\n", cr):
                start = cr
        return start

    def line_text(self, offset: int) -> str:
        """The whole line holding `offset`, without its line break."""
        text = self.text
        offset = max(0, min(offset, len(text)))
        start = self._line_start(offset)
        end = len(text)
        for brk in ("\n", "\r"):
            found = text.find(brk, offset)
            if 0 <= found < end:
                end = found
        return text[start:end].rstrip("\r")


class Span:
    """Start and end offsets into a Source; line and column are derived lazily.

    A plain slotted class rather than a frozen dataclass: a dump makes one per instruction, and
    the frozen constructor costs three times as much. Treat it as immutable.
    """

    __slots__ = ("end", "source", "start")

    def __init__(self, start: int, end: int, source: Source) -> None:
        self.start = start
        self.end = end
        self.source = source

    def __repr__(self) -> str:
        return f"Span({self.start}, {self.end}, {self.source.name!r})"

    @property
    def line(self) -> int:
        return self.source.location(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.location(self.start)[1]


_ONE_COLUMN = {ord("\t"): " ", ord("\f"): " ", ord("\v"): " "}


class HloLayoutError(Exception):
    """Base class of every error hlo-layout raises on purpose."""


class HloUsageError(HloLayoutError):
    """A value given on the command line or in a config file that cannot be used (exit 2, as
    the command's own usage errors): too long a number, a config nested past the limit."""


class HloSyntaxError(HloLayoutError):
    """Input that is not HLO text: carries file, line, column, the line itself and a caret."""

    def __init__(self, message: str, span: Span | None = None, expected: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.span = span
        self.expected = expected

    @property
    def filename(self) -> str:
        return self.span.source.name if self.span else "<string>"

    @property
    def line(self) -> int:
        return self.span.line if self.span else 0

    @property
    def column(self) -> int:
        return self.span.column if self.span else 0

    def context(self, max_width: int = 160) -> str:
        """The offending line and a caret under the column (long lines are windowed)."""
        if self.span is None:
            return ""
        # Tabs, form feeds and vertical tabs take one column each, as the caret counts them;
        # other control characters are shown escaped (`printable`), the caret moved with them.
        line = self.span.source.line_text(self.span.start).translate(_ONE_COLUMN)
        col = self.column - 1
        text = printable(line)
        if len(text) != len(line):
            col = len(printable(line[:col]))
        if len(text) > max_width:
            lo = max(0, col - max_width // 2)
            prefix = "…" if lo > 0 else ""
            text = prefix + text[lo : lo + max_width]
            col = col - lo + len(prefix)
        width = max(1, min(self.span.end - self.span.start, len(text) - col))
        return f"{text}\n{' ' * col}{'^' * width}"

    def __str__(self) -> str:
        where = f"{self.filename}:{self.line}:{self.column}: " if self.span else ""
        expected = ""
        if self.expected:
            expected = " (expected " + ", ".join(self.expected) + ")"
        body = self.context()
        return f"{where}{self.message}{expected}" + (f"\n{body}" if body else "")


# Kept as an alias: the design documents call it HloParseError.
HloParseError = HloSyntaxError


class HloSemanticError(HloLayoutError):
    """Well-formed text that breaks a rule of HLO (undefined operand, bad layout, ...)."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    def __str__(self) -> str:
        if self.span is None:
            return self.message
        err = HloSyntaxError(self.message, self.span)
        return str(err)
