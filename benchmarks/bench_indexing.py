"""Indexing wall times and peak memory on generated wide/deep inputs (issue 13's indexing rows).

Run: `python benchmarks/bench_indexing.py [--scale 1.0]`. Each case runs in a child process;
prints seconds and VmHWM. Goals (issue 13): 2,000-operand tuple and 8,000-op fusion chain
under 1 s, linear in size.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tuple_dump(n: int) -> str:
    lines = ["HloModule m", "ENTRY e {"]
    lines += [f"  p{i} = f32[8] parameter({i})" for i in range(n)]
    operands = ", ".join(f"p{i}" for i in range(n))
    lines += [f"  ROOT t = ({', '.join(['f32[8]'] * n)}) tuple({operands})", "}"]
    return "\n".join(lines) + "\n"


def chain_dump(n: int) -> str:
    lines = ["HloModule m", "fc {", "  x0 = f32[8,8] parameter(0)"]
    lines += [f"  x{i} = f32[8,8] negate(x{i - 1})" for i in range(1, n)]
    lines[-1] = "  ROOT " + lines[-1].strip()
    lines += ["}", "ENTRY e {", "  p = f32[8,8] parameter(0)"]
    lines += ["  ROOT f = f32[8,8] fusion(p), kind=kLoop, calls=fc", "}"]
    return "\n".join(lines) + "\n"


def concat_dump(n: int) -> str:
    lines = ["HloModule m", "ENTRY e {"]
    lines += [f"  p{i} = f32[1,8] parameter({i})" for i in range(n)]
    operands = ", ".join(f"p{i}" for i in range(n))
    lines += [f"  ROOT c = f32[{n},8] concatenate({operands}), dimensions={{0}}", "}"]
    return "\n".join(lines) + "\n"


CASES = [
    ("tuple", tuple_dump, 2000, ["-i", "t"]),
    ("tuple -c ENTRY", tuple_dump, 2000, ["-c", "e"]),
    ("fusion chain", chain_dump, 8000, ["--fusion", "f"]),
    ("fusion chain in2out", chain_dump, 8000, ["--fusion", "f", "-d", "in2out"]),
    ("concatenate -c ENTRY", concat_dump, 2000, ["-c", "e"]),
]


def run(path: Path, args: list[str], timeout: float) -> tuple[float, int, int]:
    cmd = [sys.executable, "-m", "hlo_layout", "indexing", str(path), *args, "-f", "json"]
    wrapped = ["/usr/bin/time", "-f", "%M", *cmd]
    start = time.perf_counter()
    try:
        done = subprocess.run(wrapped, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout, -1, -1
    seconds = time.perf_counter() - start
    kb = int(done.stderr.strip().splitlines()[-1]) if done.stderr.strip() else 0
    return seconds, kb // 1024, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, n, args in CASES:
            size = max(2, int(n * opts.scale))
            path = Path(tmp) / f"{name.replace(' ', '_')}.hlo"
            path.write_text(make(size))
            seconds, mb, code = run(path, args, opts.timeout)
            print(f"{name:24} n={size:6}  {seconds:7.2f} s  {mb:6} MB  exit {code}")


if __name__ == "__main__":
    main()
