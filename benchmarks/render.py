"""Rendering of valid input (issue 28): text views drew ~1 ms a table row, and `layout -f json`
held the whole document.

    python benchmarks/render.py [--runs 3]

Runs each command in a fresh process, piped to /dev/null, and reports the best CPU time (user +
system, which a loaded machine inflates less than wall time) and the peak resident size. The
inputs are those of the hostile families (tests/robustness/families.py): 5,000 shapes, 1 MB of
shapes, XLA's 370 KB llama benchmark model.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.robustness.families import _llama_dump, _shapes  # noqa: E402


def _once(args: list[str], stdin: Path | None) -> tuple[float, int]:
    """CPU seconds and peak RSS (MB) of one run in a child process."""
    command = [sys.executable, "-m", "hlo_layout", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin or "/dev/null", "rb") as feed:
        subprocess.run(command, cwd=ROOT, stdin=feed, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        few, many, dump = Path(tmp, "5000.txt"), Path(tmp, "1mb.txt"), Path(tmp, "llama.txt")
        few.write_text(_shapes(5000))
        many.write_text(_shapes(40_000))
        dump.write_text(_llama_dump())
        cases = {
            "layout - (5,000 shapes)": (["layout", "-"], few),
            "layout -f json - (1 MB of shapes)": (["layout", "-f", "json", "-"], many),
            "inspect --top 100000000 (370 KB dump)": (
                ["inspect", str(dump), "--top", "100000000"],
                None,
            ),
        }
        print(f"best of {runs} (peak RSS: the largest of all children so far)")
        print("| command | CPU s | peak MB |")
        print("|---|---|---|")
        for name, (args, stdin) in cases.items():
            got = [_once(args, stdin) for _ in range(runs)]
            print(f"| {name} | {min(c for c, _ in got):.2f} | {max(m for _, m in got)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
