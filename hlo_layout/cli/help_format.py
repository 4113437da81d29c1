"""How help prints option types: as ruff and uv do, never as Python types.

Imported by `cli/app.py`, so that the root `--help` (which loads no command module) and every
command's help print alike.
"""

from __future__ import annotations

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


_plain_metavars()
