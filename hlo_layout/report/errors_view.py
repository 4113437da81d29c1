"""How an error looks on stderr: `file:line:col: error: message`, the line, a caret."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlo_layout.errors import HloLayoutError, HloSemanticError, HloSyntaxError

#: Columns of the offending line shown: all of a line up to this long when piped (the window of
#: `HloSyntaxError.context`), at least this many on the narrowest terminal.
_PIPED_WINDOW = 160
_MIN_WINDOW = 20


def render_error(console: Console, error: HloLayoutError) -> None:
    """One input error as the compiler-style block users expect."""
    span = getattr(error, "span", None)
    message = getattr(error, "message", None) or str(error)
    if isinstance(error, HloSyntaxError) and error.expected:
        message += " (expected " + ", ".join(error.expected) + ")"
    head = Text()
    if span is not None and isinstance(error, HloSyntaxError | HloSemanticError):
        where = HloSyntaxError(message, span)
        head.append(f"{where.filename}:{where.line}:{where.column}: ", style="bold")
        head.append("error: ", style="hlo.error")
        head.append(message)
        console.print(head)
        # On a terminal the line is windowed to its width (an indent and a `…` beside it), so
        # the terminal does not wrap it and leave the caret under another character.
        width = console.width - 3 if console.is_terminal else _PIPED_WINDOW
        context = where.context(max_width=max(_MIN_WINDOW, min(_PIPED_WINDOW, width)))
        if context:
            line, caret = context.split("\n")
            console.print(Text("  " + line))
            console.print(Text("  " + caret, style="hlo.caret"))
    else:
        head.append("error: ", style="hlo.error")
        head.append(message)
        console.print(head)
    for note in getattr(error, "__notes__", ()):
        console.print(Text("  note: " + note, style="hlo.muted"))


def render_internal_error(
    console: Console, error: BaseException, command: str, *, traceback_shown: bool = False
) -> None:
    """An exception we did not expect: say it is our bug and how to report it (there is no
    issue tracker to name: the traceback and the command are what a maintainer needs)."""
    console.print(
        Text.assemble(
            ("internal error: ", "hlo.error"),
            f"{type(error).__name__}: {error}",
        )
    )
    how = (
        "send the traceback above"
        if traceback_shown
        else f"run it again with HLO_LAYOUT_DEBUG=1 (`HLO_LAYOUT_DEBUG=1 hlo-layout {command} "
        "...`), which prints the traceback, and send that traceback"
    )
    console.print(
        f"This is a bug in hlo-layout, not in your input. To report it, {how}, the command and, "
        "if you can share it, the input file to the maintainers of hlo-layout."
    )
