"""Typer's internals that the CLI uses, and nothing else, in one place.

A group that loads its commands lazily makes each command as Typer does (`command_from_info`:
`typer.main.get_command_from_info`, undocumented). Three behaviours of Typer have no public
switch: the type column of its help (we print metavars as ruff and uv do:
`cli/help_format.py`), its docstring paragraphs kept broken at the source's line ends
(reflowed: `help_format.py`), and its pydantic coercion of every parameter, 0.15-0.3 s of a
command's start (`cli/fast_params.py` converts plain values itself). Each is reached here:
`TyperArgument/TyperOption.display_type_rich`, `TyperCommand/TyperGroup.format_help`,
`typer.rich_utils._fix_linebreaks`, `typer._coercion.RuntimeParam` and
`typer.core._TyperParameter.get_runtime_param`.

`TESTED` is the range of Typer versions this was run with (the oldest and the newest allowed by
pyproject.toml's pin, through tests/cli): outside it `usable()` is False and those three are
left alone, so help prints as Typer prints it and values are coerced by Typer's own adapter
(slower to start, never wrong).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

#: The Typer versions these internals are known to work with: from the first to below the
#: second (pyproject.toml pins the same range).
TESTED = ((0, 29), (0, 30))


def version() -> tuple[int, ...]:
    """The installed Typer's version as numbers (`0.29.2` → (0, 29, 2))."""
    numbers = []
    for part in typer.__version__.split("."):
        digits = "".join(c for c in part if c.isdigit())
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers)


def usable() -> bool:
    """Whether the installed Typer is one these internals were tested with."""
    return TESTED[0] <= version() < TESTED[1]


def patch_display_types(
    argument: Callable[[Any, Any], str | None], option: Callable[[Any, Any, Any], str | None]
) -> None:
    """Help's type column: `argument(param, ctx)` for arguments, `option(param, ctx, typer's)`
    for options (Typer's own `display_type_rich` handed in)."""
    if not usable():
        return
    from typer.core import TyperArgument, TyperOption

    original = TyperOption.display_type_rich

    def option_type(self: Any, ctx: Any) -> str | None:
        return option(self, ctx, original)

    TyperArgument.display_type_rich = argument  # type: ignore[method-assign,assignment]
    TyperOption.display_type_rich = option_type  # type: ignore[method-assign]


def before_help(prepare: Callable[[], None]) -> None:
    """Call `prepare()` each time a command's or a group's help page is drawn."""
    if not usable():
        return
    from typer.core import TyperCommand, TyperGroup

    for cls in (TyperCommand, TyperGroup):
        original = cls.format_help

        def format_help(self: Any, ctx: Any, formatter: Any, _original: Any = original) -> Any:
            prepare()
            return _original(self, ctx, formatter)

        cls.format_help = format_help  # type: ignore[method-assign]


def set_paragraph_joiner(join: Callable[[list[str], Any], str]) -> None:
    """How Rich help joins a docstring's paragraphs (Typer's `_fix_linebreaks`): imports
    `typer.rich_utils` (rich.markdown and friends, ~0.1 s), so call it only as help is drawn."""
    if not usable():
        return
    from typer import rich_utils

    rich_utils._fix_linebreaks = join  # type: ignore[attr-defined,assignment]


def coercion_classes() -> tuple[Any, Any] | None:
    """(Typer's RuntimeParam class, its `build_runtime_param`) when the installed Typer coerces
    values through them, else None."""
    if not usable():
        return None
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # pragma: no cover - a Typer in the tested range has them
        return None
    return RuntimeParam, build_runtime_param


def wrap_runtime_param(make: Callable[[Any], Any | None]) -> bool:
    """Let `make(parameter)` give a parameter's coercion (None: Typer's own) the first time Typer
    asks for it (`_TyperParameter.get_runtime_param`, also for the options Typer adds itself);
    idempotent. False where the installed Typer has no such step."""
    if coercion_classes() is None:
        return False
    from typer.core import _TyperParameter

    original = _TyperParameter.get_runtime_param
    if getattr(original, "_hlo_layout_fast", False):
        return True

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None:
            made = make(self)
            if made is not None:
                self._runtime_param = made
        return original(self)

    get_runtime_param._hlo_layout_fast = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
    return True


def command_from_info(info: Any, app: typer.Typer) -> Any:
    """The click command of one of `app.registered_commands`, as Typer makes it for `app` (a
    group that registers its commands lazily makes them one at a time)."""
    return typer.main.get_command_from_info(
        info,
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


def is_typer_parameter(param: Any) -> bool:
    """Whether `param` is one of Typer's parameters (those `wrap_runtime_param` sees)."""
    if coercion_classes() is None:
        return False
    from typer.core import _TyperParameter

    return isinstance(param, _TyperParameter)


__all__ = [
    "TESTED",
    "before_help",
    "coercion_classes",
    "command_from_info",
    "is_typer_parameter",
    "patch_display_types",
    "set_paragraph_joiner",
    "usable",
    "version",
    "wrap_runtime_param",
]
