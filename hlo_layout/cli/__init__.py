"""The `hlo-layout` command: thin wiring from arguments to library calls to renderers.

Exit codes (README "Exit codes"): 0 ok, 1 a check failed, 2 usage error, 3 unreadable or invalid
input, 4 internal error (a bug in hlo-layout). Command modules load lazily (`cli/app.py`).
"""

from __future__ import annotations

import sys

import typer

from hlo_layout.cli.app import COMMANDS, app

__all__ = ["COMMANDS", "app", "main"]


def _plain_layout(args: list[str]) -> bool:
    """Whether `args` is `layout SHAPE...` with no option at all (no `-`, `--help`, flags)."""
    return len(args) >= 2 and args[0] == "layout" and not any(a.startswith("-") for a in args[1:])


def _run_plain_layout(shapes: list[str]) -> None:
    """`hlo-layout layout SHAPE...` without Typer's parameter coercion, which imports pydantic
    (about 0.1 s, a third of the command's run time) to convert values we pass through as
    strings. The same command function runs with its defaults, so the output and exit codes are
    those of the Typer path (tests/cli/test_layout.py compares the two)."""
    from hlo_layout.cli.layout_cmd import layout

    try:
        layout(shapes)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if _plain_layout(args):
            _run_plain_layout(args[1:])
        app(args=argv, prog_name="hlo-layout")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BaseException as e:  # a bug that escaped the per-command guard
        from hlo_layout.cli.common import EXIT_INTERNAL, report_internal

        report_internal(e, " ".join(sys.argv[1:2]) or "")
        sys.exit(EXIT_INTERNAL)
