"""Styles by role, defined once; report code never names a colour."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console
from rich.theme import Theme

THEME = Theme(
    {
        "hlo.name": "bold cyan",
        "hlo.opcode": "magenta",
        "hlo.shape": "green",
        "hlo.dtype": "green",
        "hlo.count": "bold",
        "hlo.padding": "yellow",
        "hlo.space": "blue",
        "hlo.muted": "dim",
        "hlo.error": "bold red",
        "hlo.caret": "bold red",
        "hlo.ok": "bold green",
        # `layout --grid`: one background per first-level tile (cycled), padding cells dimmed.
        "hlo.tile0": "black on cyan",
        "hlo.tile1": "black on yellow",
        "hlo.tile2": "black on green",
        "hlo.tile3": "black on magenta",
        "hlo.tile4": "black on blue",
        "hlo.tile5": "black on red",
        "hlo.pad": "dim",
    }
)


def make_console(
    file: TextIO | None = None, *, width: int | None = None, soft_wrap: bool = False
) -> Console:
    """A console on `file` (stdout by default) with our theme; colour only on a terminal.

    `soft_wrap` keeps long lines whole (error lines must stay greppable as `file:line:col:`)."""
    return Console(
        file=file or sys.stdout,
        theme=THEME,
        width=width,
        highlight=False,
        no_color="NO_COLOR" in os.environ,
        soft_wrap=soft_wrap,
    )
