"""Start-up cost of the `hlo-layout` command (issue 11: `--version` and `layout SHAPE` under 0.2 s).

    python benchmarks/startup.py [--runs 7] [--python PATH]

Runs each command in a fresh process and reports the best wall time and the best CPU time
(user + system, which a loaded machine inflates less), next to a bare `python -c pass`.
`--python` measures another interpreter, e.g. a fresh venv: `python -m venv /tmp/v &&
/tmp/v/bin/pip install . && python benchmarks/startup.py --python /tmp/v/bin/python`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 0.2

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "hlo-layout --version": ["-m", "hlo_layout", "--version"],
    "hlo-layout layout SHAPE": ["-m", "hlo_layout", "layout", "f32[8,128]{1,0}"],
    "hlo-layout layout SHAPE -f text (Typer path)": [
        "-m",
        "hlo_layout",
        "layout",
        "f32[8,128]{1,0}",
        "-f",
        "text",
    ],
}


def _once(python: str, args: list[str], cwd: Path | None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([python, *args], cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    # The checkout's package unless another interpreter (a venv with it installed) is measured.
    cwd = ROOT if args.python == sys.executable else Path(os.sep)
    print(f"{args.python}, best of {args.runs}; goal < {GOAL_SECONDS} s")
    print("| command | wall s | CPU s |")
    print("|---|---|---|")
    for name, command in COMMANDS.items():
        runs = [_once(args.python, command, cwd) for _ in range(args.runs)]
        print(f"| {name} | {min(w for w, _ in runs):.3f} | {min(c for _, c in runs):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
