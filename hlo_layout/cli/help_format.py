"""How help prints: option types as ruff and uv do (never Python types), and docstring paragraphs
reflowed to the terminal (never broken where the source line ended), in a command's own help
and in the root help's list of commands (`short_help`).

Imported by `cli/app.py`, so that the root `--help` (which loads no command module) and every
command's help print alike.
"""

from __future__ import annotations

import inspect
from typing import Any


def _plain_metavars() -> None:
    """Help shows metavars as ruff and uv do (`PATH`, `SIZE`, `N`), never Python types
    (`<list[Path]>`, `<bool>`, `<int range>`): an argument's name already says what it takes,
    a flag takes nothing, an option shows its metavar. (Typer prints the type column from
    `display_type_rich`; this is the one place we override it.)"""
    from typer.core import TyperArgument, TyperOption

    original = TyperOption.display_type_rich

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None

    def option_type(self: Any, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return str(self.metavar)
        return original(self, ctx)

    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign]
    TyperOption.display_type_rich = option_type  # type: ignore[method-assign]


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


def _reflowed_paragraphs() -> None:
    """Typer's Rich help keeps the docstring's single line breaks after the first paragraph
    (`typer.rich_utils._fix_linebreaks`), so help wrapped mid-sentence at any width but the
    source's; we join them (the one place help text is formatted)."""
    from typer import rich_utils

    def fix_linebreaks(paragraphs: list[str], markup_mode: Any) -> str:
        return "\n\n".join(unwrap_paragraph(p) for p in paragraphs)

    rich_utils._fix_linebreaks = fix_linebreaks  # type: ignore[attr-defined]


def _reflow_when_help_prints() -> None:
    """Patch Typer's help formatter only when a help page is drawn: `typer.rich_utils` pulls in
    rich.markdown and friends (~0.1 s), which a command that prints no help should not pay."""
    from typer.core import TyperCommand, TyperGroup

    for cls in (TyperCommand, TyperGroup):
        original = cls.format_help

        def format_help(self: Any, ctx: Any, formatter: Any, _original: Any = original) -> Any:
            _reflowed_paragraphs()
            return _original(self, ctx, formatter)

        cls.format_help = format_help  # type: ignore[method-assign]


_plain_metavars()
_reflow_when_help_prints()
