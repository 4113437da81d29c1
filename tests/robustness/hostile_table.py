"""Run every hostile-input family (tests/robustness/families.py) and print a Markdown table of
exit code, time and peak memory against the bounds of issue 16.

    python -m tests.robustness.hostile_table [NAME-SUBSTRING]

Each family runs in its own child process, one after another (the machine is shared). Exit 1
when a family misses its bounds.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.robustness.families import FAMILIES, problems, run_family


def main(argv: list[str]) -> int:
    wanted = argv[1] if len(argv) > 1 else ""
    print("| family | command | exit | s (bound) | MB (bound) | verdict |")
    print("|---|---|---|---|---|---|")
    failed = 0
    for family in FAMILIES:
        if wanted not in family.name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            got = run_family(family, Path(tmp))
        missed = problems(family, got)
        failed += bool(missed)
        verdict = "ok" if not missed else "; ".join(missed)
        print(
            f"| {family.name} | `{' '.join(family.args[:1])}` | {got['code']} | "
            f"{got['seconds']:.2f} ({family.max_seconds:g}) | {got['hwm_mb']} ({family.max_mb}) "
            f"| {verdict} |",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
