"""Parse throughput and peak memory against XLA's own parser.

    python benchmarks/parse_throughput.py            # largest corpus dump + a synthetic 50 MB dump
    python benchmarks/parse_throughput.py FILE...    # your own dumps

Prints MB/s for hlo-layout (cold: first parse in a fresh process, grammar cache warm on disk) and
for XLA's C++ parser (`jaxlib._hlo.hlo_module_from_text`, when jax is installed), their ratio,
and the peak RSS of each run. Every figure comes from its own child process, so one run's memory
and caches never flatter the next.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "corpus"

_CHILD = r"""
import json, sys, time
path, engine = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
if engine == "xla":
    from jaxlib import _hlo
    start = time.perf_counter()
    _hlo.hlo_module_from_text(text)
    seconds = time.perf_counter() - start
    count = None
else:
    from hlo_layout.syntax import parse_modules
    start = time.perf_counter()
    modules = parse_modules(text, path, engine=engine)
    seconds = time.perf_counter() - start
    count = sum(m.instruction_count for m in modules)
# VmHWM: this process's own peak (ru_maxrss would include the parent's, inherited at exec).
rss = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "bytes": len(text.encode()), "rss": rss, "count": count}))
"""


def measure(path: Path, engine: str, repeat: int) -> dict | None:
    """Best of `repeat` fresh-process runs (the least disturbed by other load)."""
    best = None
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), engine], capture_output=True, text=True
        )
        if proc.returncode != 0:
            return None
        result = json.loads(proc.stdout)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    return best


def synthetic_dump(target_mb: int, out: Path) -> Path:
    """A dump of ~target_mb made by repeating corpus modules' computations under fresh names."""
    source = max(
        (p for p in CORPUS.rglob("*.txt") if "public/models" in p.as_posix()),
        key=lambda p: p.stat().st_size,
    )
    text = source.read_text()
    head, _, body = text.partition("\n")
    chunks = [head]
    size = len(head)
    copy = 0
    while size < target_mb * 1_000_000:
        # Rename computations per copy (`%name` → `%name_cN`) so the module stays well formed;
        # only the ENTRY of the last copy is kept as ENTRY.
        renamed = body.replace("ENTRY ", "") if copy else body
        renamed = renamed.replace("%", f"%c{copy}_")
        chunks.append(renamed)
        size += len(renamed)
        copy += 1
    out.write_text("\n".join(chunks))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--synthetic-mb", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = list(args.files)
    tmp = tempfile.TemporaryDirectory()
    if not files:
        largest = max(
            (p for p in CORPUS.rglob("*.txt") if "buffer-assignment" not in p.name),
            key=lambda p: p.stat().st_size,
        )
        files = [largest, synthetic_dump(args.synthetic_mb, Path(tmp.name) / "synthetic.hlo.txt")]
    measure(files[0], "auto", 1)  # warm the grammar cache on disk
    print(
        f"{'file':44} {'MB':>7} {'ours MB/s':>10} {'XLA MB/s':>9} {'ratio':>6} "
        f"{'ours RSS':>9} {'XLA RSS':>8} {'instrs':>9}"
    )
    for path in files:
        ours = measure(path, "auto", args.repeat)
        xla = measure(path, "xla", args.repeat)
        if ours is None:
            print(f"{path.name[:44]:44} failed to parse")
            continue
        mb = ours["bytes"] / 1e6
        ours_rate = mb / ours["seconds"]
        xla_rate = mb / xla["seconds"] if xla else None
        ratio = f"{ours_rate / xla_rate:6.2f}" if xla_rate else "   n/a"
        xla_text = f"{xla_rate:9.1f}" if xla_rate else "      n/a"
        xla_rss = f"{xla['rss'] / 2**20:6.0f}MB" if xla else "     n/a"
        print(
            f"{path.name[:44]:44} {mb:7.1f} {ours_rate:10.1f} {xla_text} {ratio} "
            f"{ours['rss'] / 2**20:7.0f}MB {xla_rss} {ours['count']:9,}"
        )
    tmp.cleanup()


if __name__ == "__main__":
    main()
