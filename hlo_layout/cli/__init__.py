"""The `hlo-layout` command: thin wiring from arguments to library calls to renderers.

Exit codes (README "Exit codes"): 0 ok, 1 a check failed, 2 usage error, 3 unreadable or invalid
input, 4 internal error (a bug in hlo-layout). Command modules load lazily (`cli/app.py`).
"""

from __future__ import annotations

import sys

from hlo_layout.cli.app import COMMANDS, app

__all__ = ["COMMANDS", "app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
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
