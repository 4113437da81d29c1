"""The Typer application object every command module registers on, and the lazy command table.

Start-up cost is paid per command: `hlo-layout layout SHAPE` imports the layout command's module
and what it needs, never numpy, the indexing engine or the other commands. A command module is
imported when its command runs (or when `--help` lists them all) and registers itself on `app`
with `@app.command()`; `COMMANDS` says which module holds which command.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from hlo_layout import __version__
from hlo_layout.cli import (
    fast_params,
    help_format,  # plain metavars and reflowed paragraphs in every help
)
from hlo_layout.compat import typer as typer_compat

#: Command name -> module under `hlo_layout.cli` that defines it, in `--help` order. To add a
#: command: a module with `@app.command()` and one line here.
COMMANDS = {
    "check": "check_cmd",
    "diff": "diff_cmd",
    "inspect": "inspect_cmd",
    "layout": "layout_cmd",
    "memory": "memory_cmd",
    "cost": "cost_cmd",
    "indexing": "indexing_cmd",
    "sharding": "sharding_cmd",
    "report": "report_cmd",
}


fast_params.install()


class LazyGroup(TyperGroup):
    """A Typer group that imports a command's module only when the command is asked for."""

    def _load(self, name: str) -> None:
        module = COMMANDS.get(name)
        if module is None or name in self.commands:
            return
        importlib.import_module(f"hlo_layout.cli.{module}")
        for info in app.registered_commands:
            command = typer_compat.command_from_info(info, app)
            if command.name and command.name not in self.commands:
                self.add_command(command)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        self._load(cmd_name)
        command = super().get_command(ctx, cmd_name)
        if command is not None and not command.short_help:  # its line in the root help
            command.short_help = help_format.short_help(command.help)
        return command

    def list_commands(self, ctx: Any) -> list[str]:
        for name in COMMANDS:
            self._load(name)
        order = list(COMMANDS)
        return sorted(self.commands, key=lambda n: order.index(n) if n in order else len(order))


app = typer.Typer(
    name="hlo-layout",
    cls=LazyGroup,
    help="Read XLA HLO dumps: where memory goes (bytes, padding, placement) and how data moves.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from hlo_layout import accel

        compiled = ", ".join(accel.active()) or "none, pure Python"
        typer.echo(f"hlo-layout {__version__} (compiled accelerators: {compiled})")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Read XLA HLO dumps: where memory goes (bytes, padding, placement) and how data moves."""
