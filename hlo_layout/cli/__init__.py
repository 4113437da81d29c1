"""The `hlo-layout` command: thin wiring from arguments to library calls to renderers.

Exit codes (README "Exit codes"): 0 ok, 1 a check failed, 2 usage error, 3 unreadable or invalid
input, 4 internal error (a bug in hlo-layout).
"""

from __future__ import annotations

import sys

from hlo_layout.cli.app import app
from hlo_layout.cli.common import EXIT_INTERNAL, report_internal

# Importing the command modules registers their commands on `app`.
from hlo_layout.cli import check_cmd, diff_cmd, inspect_cmd, layout_cmd  # noqa: F401  isort: skip
from hlo_layout.cli import indexing_cmd  # noqa: F401  isort: skip
from hlo_layout.cli import sharding_cmd  # noqa: F401  isort: skip
from hlo_layout.cli import report_cmd  # noqa: F401  isort: skip

__all__ = ["app", "main"]


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
        report_internal(e, " ".join(sys.argv[1:2]) or "")
        sys.exit(EXIT_INTERNAL)
