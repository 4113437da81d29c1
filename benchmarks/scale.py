"""A huge generated dump through `inspect --format json` (streamed): time and peak memory.

    python benchmarks/scale.py [--mb 1000] [--no-stream]

Builds the dump by repeating the largest corpus module's computations under fresh names (see
parse_throughput.synthetic_dump), runs the CLI in a child process with stdout to /dev/null, and
prints wall time, throughput and the child's peak RSS.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parse_throughput import synthetic_dump

# The CLI in a child that reports its own peak (VmHWM) last on stderr; ru_maxrss of a child
# would include this parent's memory, inherited at exec.
_CHILD = r"""
import atexit, runpy, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            sys.stderr.write("\n" + line.split()[1] + "\n")
atexit.register(peak)
sys.argv = ["hlo-layout", "inspect", sys.argv[1], "-f", "json", sys.argv[2]]
runpy.run_module("hlo_layout", run_name="__main__")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1000)
    parser.add_argument("--no-stream", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dump = synthetic_dump(args.mb, Path(tmp) / "huge.hlo.txt")
        size = dump.stat().st_size
        flag = "--no-stream" if args.no_stream else "--stream"
        start = time.perf_counter()
        with open("/dev/null", "w") as sink:
            proc = subprocess.run(
                [sys.executable, "-c", _CHILD, str(dump), flag],
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
            )
        seconds = time.perf_counter() - start
        rss = int(proc.stderr.strip().splitlines()[-1]) / 1024
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr[-300:]}"
        print(
            f"{size / 1e6:.0f} MB dump, inspect --format json {flag}: {seconds:.0f} s "
            f"({size / 1e6 / seconds:.1f} MB/s), peak RSS {rss:.0f} MiB, {status}"
        )


if __name__ == "__main__":
    main()
