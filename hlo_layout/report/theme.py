"""Styles by role, defined once; report code never names a colour."""

from __future__ import annotations

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
