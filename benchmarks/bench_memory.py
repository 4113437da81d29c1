"""Parse time vs memory-analysis time (`hlo_layout.memory.analyze_memory`) on the largest corpus
dump of each kind, or on the dumps given (best of N, CPU seconds of this process).

python benchmarks/bench_memory.py [--repeat 3] [DUMP...]

Target (issue 12): the analysis costs about what parsing does and takes a few seconds on a
17.8 MB GPU dump (a reference model of XLA's rules took 29 s there).
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

from hlo_layout.memory import analyze_memory
from hlo_layout.syntax import parse_file

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "corpus"
KINDS = {
    "cpu": "jax-cpu/*after_optimizations.txt",
    "gpu": "jax-gpu-h100/*after_optimizations.txt",
    "tpu": "libtpu-*/*/*.after_optimizations.txt",
    "public": "public/models/*.hlo.txt",
}


def largest(pattern: str) -> Path:
    return max(CORPUS.glob(pattern), key=lambda p: p.stat().st_size)


def best(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    t_best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        out = fn()
        t_best = min(t_best, time.process_time() - start)
    return t_best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dumps", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dumps = args.dumps or [largest(p) for p in KINDS.values()]
    print(f"{'dump':60} {'MB':>6} {'parse s':>8} {'analysis s':>10} {'ratio':>6} {'peak':>14}")
    for path in dumps:
        t_parse, module = best(lambda p=path: parse_file(p), args.repeat)
        t_mem, ma = best(lambda m=module: analyze_memory(m), args.repeat)  # type: ignore[arg-type]
        mb = path.stat().st_size / 1e6
        name = str(path.relative_to(CORPUS) if path.is_relative_to(CORPUS) else path)[-60:]
        peak = ma.peak_bytes  # type: ignore[attr-defined]
        print(f"{name:60} {mb:6.2f} {t_parse:8.2f} {t_mem:10.2f} {t_mem / t_parse:6.2f} {peak:14,}")


if __name__ == "__main__":
    main()
