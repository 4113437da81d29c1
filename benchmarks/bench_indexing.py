"""Indexing wall times and peak memory (issue 13's indexing rows, issue 16's nested calls).

Run: `python benchmarks/bench_indexing.py [--scale 1.0] [--no-corpus]`. Each case runs in a child
process (`python -m hlo_layout indexing ... -f json`); prints seconds, VmHWM and the exit code.
Generated cases: a 2,000-operand tuple, an 8,000-op fusion chain (both directions), a
2,000-operand concatenate, 200 and 2,000 nested calls. Corpus cases (when ../shared is present):
`indexing --computation ENTRY` next to `inspect` of the same file, on the largest dump of each
kind and on a 5 MB TPU-like dump built from the TPU corpus (`tpu_like`).

Goals: generated cases under 1 s of work each and linear in size; `--computation ENTRY` at most
3x `inspect` of the same file (issue 13).

Measured 2026-11-23, 2-core shared container (5 concurrent sessions; load 1-4), python 3.11,
wall seconds of the whole process (start-up ~0.3 s included):

| case                                   | before              | after                  |
|----------------------------------------|---------------------|------------------------|
| tuple 2,000 `-i t`                     | 5.95 s              | 0.9 s (work 0.5 s)     |
| tuple 300 `-c e`                       | 2.17 s              | 0.6 s                  |
| tuple 2,000 `-c e`                     | 87 s (issue)        | 1.3 s (work 0.9 s)     |
| tuple 2,000 `-c e -d in2out`           | (quadratic)         | 1.7 s (work 1.3 s)     |
| fusion chain 8,000 `--fusion f`        | 1.48 s              | 0.9 s (work 0.45 s)    |
| fusion chain 8,000 in2out              | 1.45 s              | 0.9 s (work 0.44 s)    |
| concatenate 2,000 `-c e -d in2out`     | 4.1 s work          | 1.1 s (work 0.8 s)     |
| 200 nested calls `-c e`                | exit 3 (too deep)   | 0.9 s, exit 0          |
| 2,000 nested calls `-c e`              | exit 3 (too deep)   | 1.3 s, exit 0          |
| mixtral 4.1 MB `-c ENTRY` (text)       | > 600 s (by name)   | 7-15 s, ~0.5x inspect  |
| gemma 1.7 MB `-c ENTRY`                | -                   | 1.2-4 s (inspect 3-6 s), ~0.7x |
| GPU/CPU/TPU 0.2-0.3 MB `-c ENTRY`      | -                   | 1.6-3.2 s, 1.7-2.6x inspect |
| TPU-like 5.2 MB `-c ENTRY`             | 74 s of work        | 4-7 s, 2.4-2.8x inspect |

Issue 13, `--computation ENTRY` vs `inspect`, whole process, CPU seconds (best of 3, the same
2-core container at load 3-5, so both sides are inflated alike), before -> after the memos of
2026-11-23 (exact composition pairs, rule results per instruction, constraint and result
simplification, sub-expression ranges; cached map hashes; no collector passes during a report):

| dump                          | inspect | before          | after           |
|-------------------------------|---------|-----------------|-----------------|
| TPU v5e grown 5.1 MB          | 1.31 s  | 4.73 s (3.6x)   | 2.19 s (1.7x)   |
| mixtral 4.1 MB                | 5.17 s  | 14.0 s (2.7x)   | 7.55 s (1.5x)   |
| CPU grown 4.6 MB              | 2.16 s  | 4.35 s (2.0x)   | 2.63 s (1.2x)   |

The step budget is charged exactly as before, so the same maps are unknown: a memo hit costs the
steps its computation would have. A bigger budget does not help mixtral (16x the steps still
leaves 321,730 of 321,734 maps unknown); on the grown TPU dump 2x the steps makes 155 of 294
maps exact instead of 82 of 233.

Past the step budget (`indexing/fusion.py`, STEPS_PER_INSTRUCTION) maps are reported unknown
with a note; on mixtral (979 outputs, each reading ~330 parameters through ~30,000
instructions) nearly all are.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


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


def calls_dump(n: int) -> str:
    """`c{i}` calls `c{i-1}`, n deep; `c0` transposes, so the answer is one exact map."""
    lines = ["HloModule m", "c0 {", "  p = f32[4,6] parameter(0)"]
    lines += ["  ROOT r = f32[6,4] transpose(p), dimensions={1,0}", "}"]
    for i in range(1, n):
        lines += [f"c{i} {{", "  p = f32[4,6] parameter(0)"]
        lines += [f"  ROOT r = f32[6,4] call(p), to_apply=c{i - 1}", "}"]
    lines += ["ENTRY e {", "  p = f32[4,6] parameter(0)"]
    lines += [f"  ROOT r = f32[6,4] call(p), to_apply=c{n - 1}", "}"]
    return "\n".join(lines) + "\n"


def tpu_like(sources: Sequence[Path], target_bytes: int) -> str:
    """A TPU-like dump of about `target_bytes`: the computations of real TPU dumps, copied
    under new names (`.c<k>`), and an ENTRY that calls every copy's entry and returns all
    their results in one flat tuple, so `--computation ENTRY` composes through everything."""
    sys.path.insert(0, str(ROOT))
    from hlo_layout.syntax.parse import parse
    from hlo_layout.syntax.printer import print_shape
    from hlo_layout.syntax.shape import TupleShape

    header = re.compile(r"^(ENTRY )?%?[A-Za-z_][\w.\-]* [({].*\{$", re.M)
    out = ["HloModule tpu_like, is_scheduled=true", ""]
    params: list[str] = []
    body_lines: list[str] = []
    flat: list[tuple[str, str]] = []
    size = copy = 0
    while size < target_bytes:
        for src in sources:
            text = src.read_text()
            module = parse(text)
            entry = module.entry
            found = header.search(text)
            if entry is None or entry.root is None or found is None:
                continue
            names = sorted((c.name for c in module.computations), key=len, reverse=True)
            rename = re.compile(
                r"(?<![\w.\-])(%?)(" + "|".join(map(re.escape, names)) + r")(?![\w\-]|\.\w)"
            )
            body = rename.sub(rf"\g<1>\g<2>.c{copy}", text[found.start() :])
            out.append(re.sub(r"^ENTRY ", "", body, flags=re.M))
            args = []
            for p in entry.parameter_instructions:
                args.append(f"p{len(params)}")
                params.append(f"  p{len(params)} = {print_shape(p.shape)} parameter({len(params)})")
            call, shape = f"call.c{copy}", entry.root.shape
            body_lines.append(
                f"  {call} = {print_shape(shape)} call({', '.join(args)}), "
                f"to_apply={entry.name}.c{copy}"
            )
            if isinstance(shape, TupleShape):
                for k, element in enumerate(shape.elements):
                    text = print_shape(element)
                    body_lines.append(f"  {call}.{k} = {text} get-tuple-element({call}), index={k}")
                    flat.append((f"{call}.{k}", text))
            else:
                flat.append((call, print_shape(shape)))
            size += len(body)
            copy += 1
            if size >= target_bytes:
                break
    shapes = ", ".join(s for _, s in flat)
    operands = ", ".join(n for n, _ in flat)
    out += ["ENTRY %tpu_like_main {", *params, *body_lines]
    out += [f"  ROOT t = ({shapes}) tuple({operands})", "}"]
    return "\n".join(out) + "\n"


GENERATED: list[tuple[str, Callable[[int], str], int, list[str]]] = [
    ("tuple -i t", tuple_dump, 2000, ["-i", "t"]),
    ("tuple -c e", tuple_dump, 2000, ["-c", "e"]),
    ("tuple -c e in2out", tuple_dump, 2000, ["-c", "e", "-d", "in2out"]),
    ("fusion chain", chain_dump, 8000, ["--fusion", "f"]),
    ("fusion chain in2out", chain_dump, 8000, ["--fusion", "f", "-d", "in2out"]),
    ("concatenate -c e", concat_dump, 2000, ["-c", "e"]),
    ("concatenate in2out", concat_dump, 2000, ["-c", "e", "-d", "in2out"]),
    ("200 nested calls", calls_dump, 200, ["-c", "ENTRY"]),
    ("2000 nested calls", calls_dump, 2000, ["-c", "ENTRY"]),
]

# Any of these spellings (XLA's test files, jax dumps, TPU dumps, public models), largest first.
CORPUS_GLOBS = [
    "xla-tests/*mixtral*.hlo.txt",
    "public/models/*.hlo.txt",
    "jax-gpu-h100/*after_optimizations.txt",
    "jax-cpu/*after_optimizations.txt",
    "libtpu-v5e/*/*after_optimizations.txt",
]


def run(args: list[str], timeout: float) -> tuple[float, int, int]:
    """(seconds, peak MB, exit code) of `python -m hlo_layout ARGS` in a child process."""
    cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "hlo_layout", *args]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout, -1, -1
    seconds = time.perf_counter() - start
    tail = done.stderr.strip().splitlines()
    kb = int(tail[-1]) if tail and tail[-1].isdigit() else 0
    return seconds, kb // 1024, done.returncode


def largest(pattern: str) -> Path | None:
    files = [p for p in CORPUS.glob(pattern) if not p.name.endswith(".json")]
    return max(files, key=lambda p: p.stat().st_size) if files else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-corpus", action="store_true")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, n, args in GENERATED:
            size = max(2, int(n * opts.scale))
            path = Path(tmp) / f"{name.replace(' ', '_')}.hlo"
            path.write_text(make(size))
            seconds, mb, code = run(["indexing", str(path), *args, "-f", "json"], opts.timeout)
            print(f"{name:24} n={size:6}  {seconds:7.2f} s  {mb:6} MB  exit {code}")
        if opts.no_corpus or not CORPUS.is_dir():
            return
        dumps = [p for p in map(largest, CORPUS_GLOBS) if p is not None]
        tpu = sorted(CORPUS.glob("libtpu-*/*/*after_optimizations.txt"))
        if tpu:
            built = Path(tmp) / "tpu_like_5mb.hlo"
            built.write_text(tpu_like(tpu, int(5e6 * opts.scale)))
            dumps.append(built)
        for dump in dumps:
            inspect_s, inspect_mb, _ = run(["inspect", str(dump)], opts.timeout)
            index_s, index_mb, code = run(["indexing", str(dump), "-c", "ENTRY"], opts.timeout)
            print(
                f"{dump.name[:40]:40} {dump.stat().st_size / 1e6:5.1f} MB  inspect "
                f"{inspect_s:6.2f} s {inspect_mb:5} MB  indexing -c ENTRY {index_s:6.2f} s "
                f"{index_mb:5} MB exit {code}  ratio {index_s / inspect_s:4.1f}x"
            )


if __name__ == "__main__":
    main()
