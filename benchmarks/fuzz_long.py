"""The long fuzz run: many mutated real dumps through the parser and every dump-reading command.

    python benchmarks/fuzz_long.py [--examples 5000] [--seed 0]

Prints: inputs tried, inputs parsed, clean errors, crashes (must be 0: an exception that is not
an HloLayoutError, or a command exiting other than 0/2/3 or printing a traceback) and the slowest
input's time. The bounded version of this runs in the test suite (tests/robustness/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hlo_layout.cli import app  # noqa: E402
from hlo_layout.errors import HloLayoutError  # noqa: E402
from hlo_layout.syntax import parse_modules  # noqa: E402
from tests.robustness.mutations import mutated_dumps  # noqa: E402

#: Commands that read a dump, as argument lists with `{}` for the file. Extend as commands land.
from tests.robustness.test_fuzz import COMMANDS  # noqa: E402  (one list for both runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--cli-every", type=int, default=10, help="run the CLI on every Nth input")
    args = parser.parse_args()
    runner = CliRunner()
    stats = {"tried": 0, "parsed": 0, "clean_errors": 0, "crashes": 0, "slowest": 0.0}
    crashes: list[str] = []
    workdir = Path(tempfile.mkdtemp())

    @settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutated_dumps())
    def one(text: str) -> None:
        stats["tried"] += 1
        start = time.perf_counter()
        try:
            parse_modules(text, "fuzz.hlo")
            stats["parsed"] += 1
        except HloLayoutError:
            stats["clean_errors"] += 1
        except Exception as e:  # a crash: record and go on
            stats["crashes"] += 1
            crashes.append(f"{type(e).__name__}: {e}"[:200])
        stats["slowest"] = max(stats["slowest"], time.perf_counter() - start)
        if stats["tried"] % args.cli_every == 0:
            path = workdir / "dump.txt"
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            for command in COMMANDS:
                result = runner.invoke(app, [a.replace("{}", str(path)) for a in command])
                bad_exit = result.exit_code not in (0, 1, 2, 3)
                escaped = result.exception is not None and not isinstance(
                    result.exception, SystemExit
                )
                if bad_exit or escaped or "Traceback" in result.output:
                    stats["crashes"] += 1
                    crashes.append(f"{command[0]} exit {result.exit_code}: {result.exception}")

    one()
    print(
        f"inputs tried {stats['tried']}, parsed {stats['parsed']}, clean errors "
        f"{stats['clean_errors']}, crashes {stats['crashes']}, slowest {stats['slowest']:.3f} s"
    )
    for line in crashes[:20]:
        print("  crash:", line)
    sys.exit(1 if stats["crashes"] else 0)


if __name__ == "__main__":
    main()
