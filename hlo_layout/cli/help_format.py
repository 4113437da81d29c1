"""How help prints: option types as ruff and uv do (never Python types), and docstring paragraphs
reflowed to the terminal (never broken where the source line ended), in a command's own help
and in the root help's list of commands (`short_help`).

Imported by `cli/app.py`, so that the root `--help` (which loads no command module) and every
command's help print alike. Typer has no public switch for either: `hlo_layout/compat/typer.py`
makes the changes (none on a Typer it was not tested with: help then prints as Typer's).
"""

from __future__ import annotations

import inspect
from typing import Any

from hlo_layout.compat import typer as compat


def _plain_metavars() -> None:
    """Help shows metavars as ruff and uv do (`PATH`, `SIZE`, `N`), never Python types
    (`<list[Path]>`, `<bool>`, `<int range>`): an argument's name already says what it takes,
    a flag takes nothing, an option shows its metavar. (This is the one place we change the
    type column.)"""

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None

    def option_type(self: Any, ctx: Any, typer_type: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return str(self.metavar)
        return typer_type(self, ctx)  # type: ignore[no-any-return]

    compat.patch_display_types(argument_type, option_type)


def unwrap_paragraph(paragraph: str) -> str:
    """One docstring paragraph as one line, so the terminal (not the source file) decides where
    it wraps: `candidates (closest\nfirst)` → `candidates (closest first)`. A paragraph that
    starts with `\\b` (click's "keep as is"), or whose lines are a list (`- `, `* `, indented),
    keeps its line breaks."""
    lines = paragraph.split("\n")
    if paragraph.startswith("\b") or any(
        line.lstrip().startswith(("- ", "* ")) or line.startswith(" ") for line in lines[1:]
    ):
        return paragraph
    return " ".join(line.strip() for line in lines if line.strip())


def short_help(help_text: str | None) -> str | None:
    """A command's line in the root `--help`: its docstring's first paragraph as one line.
    Typer's command panel takes that paragraph with its source line breaks (rich markup mode
    keeps them), which printed ragged at any width but the source's; a command given this as
    its `short_help` reflows like the rest."""
    if not help_text:
        return None
    first = inspect.cleandoc(help_text).split("\n\n", 1)[0]
    return unwrap_paragraph(first)


def _join_paragraphs(paragraphs: list[str], markup_mode: Any) -> str:
    """Typer's Rich help keeps the docstring's single line breaks after the first paragraph,
    so help wrapped mid-sentence at any width but the source's; we join them (the one place
    help text is formatted)."""
    return "\n\n".join(unwrap_paragraph(p) for p in paragraphs)


def _reflow_when_help_prints() -> None:
    """Change Typer's help formatter only when a help page is drawn: its Rich help module pulls
    in rich.markdown and friends (~0.1 s), which a command that prints no help should not pay."""
    compat.before_help(lambda: compat.set_paragraph_joiner(_join_paragraphs))


_plain_metavars()
_reflow_when_help_prints()
