"""`hlo-layout check` over the whole corpus with -j 1 and -j 2 (wall time, best of N).

python benchmarks/check_parallel.py [--repeat 3] [PATH...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "corpus"


def wall(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "hlo_layout", "check", *args, "-f", "json"],
            capture_output=True,
            text=True,
        )
        best = min(best, time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"check failed ({proc.returncode}): {proc.stderr[-500:]}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dumps = [p for p in sorted(CORPUS.iterdir()) if p.is_dir() and p.name != "public"]
    dumps += [CORPUS / "public" / "models", CORPUS / "public" / "tpu-snippets"]
    parser.add_argument("paths", nargs="*", default=[str(p) for p in dumps])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    one = wall([*args.paths, "-j", "1"], args.repeat)
    two = wall([*args.paths, "-j", "2"], args.repeat)
    print(f"check -j 1: {one:.2f} s   -j 2: {two:.2f} s   speed-up {one / two:.2f}x")


if __name__ == "__main__":
    main()
