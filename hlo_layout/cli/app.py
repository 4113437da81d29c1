"""The Typer application object every command module registers on."""

from __future__ import annotations

import typer

from hlo_layout import __version__

app = typer.Typer(
    name="hlo-layout",
    help="Read XLA HLO dumps: where memory goes (bytes, padding, placement) and how data moves.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hlo-layout {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Read XLA HLO dumps: where memory goes (bytes, padding, placement) and how data moves."""
