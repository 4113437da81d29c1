"""Parse time vs memory-analysis time (`hlo_layout.memory.analyze_memory`) on the largest corpus
dump of each kind, the mixtral and gemma benchmark models, and scaled copies of a model; or on
the dumps given (best of N, CPU seconds of this process).

python benchmarks/bench_memory.py [--repeat 3] [--scale 4] [DUMP...]

Target (issues 12 and 13): the analysis costs less than parsing on every dump, and a few seconds
on a 17.8 MB GPU train step (`--kind-mb`: the largest dump of each kind scaled to about 18 MB,
named after its source so that the file name gives the backend, as the CLI reads it). A scaled
dump is one module whose ENTRY calls N renamed copies of the model's ENTRY in sequence
(`scaled_dump`): N times the buffers in one flattened schedule, which is what stresses the heap
simulation (a dump that merely repeats computations leaves the copies unreachable).
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hlo_layout.memory import analyze_memory  # noqa: E402
from hlo_layout.syntax import parse_file  # noqa: E402
from hlo_layout.syntax.printer import print_shape  # noqa: E402

CORPUS = REPO / "tests" / "data" / "corpus"
SHARED = REPO.parent / "shared" / "corpus"
KINDS = {
    "cpu": "jax-cpu/*after_optimizations.txt",
    "gpu": "jax-gpu-h100/*after_optimizations.txt",
    "tpu": "libtpu-*/*/*.after_optimizations.txt",
}
#: The models issue 12's speed target names (in ../shared; skipped when absent).
MODELS = [
    "xla-tests/90369a8c2f45__xla-tools-benchmarks-hlo-hlo_mixtral_8x7b_bf16_2x8.hlo__1.hlo.txt",
    "public/models/001_xla_bench_gemma4_2b_bf16_generate.hlo.txt",
]


def largest(pattern: str) -> Path:
    return max(CORPUS.glob(pattern), key=lambda p: p.stat().st_size)


def scaled_dump(source: Path, copies: int, out: Path) -> Path:
    """One module whose ENTRY passes its parameters to `copies` renamed copies of `source`'s
    ENTRY, called in sequence, and returns their results as a tuple."""
    module = parse_file(source)
    entry = module.entry
    assert entry is not None and entry.root is not None
    text = source.read_text()
    header, _, body = text.partition("\n")
    keep = re.match(r"HloModule\s+\S+?(,|\s|$)", header)
    flags = ", is_scheduled=true" if "is_scheduled=true" in header else ""
    lines = [f"HloModule scaled_{keep.group(0).split()[1].rstrip(',') if keep else 'm'}{flags}"]
    params = sorted(entry.parameter_instructions, key=lambda p: p.parameter_number or 0)
    for k in range(copies):
        lines.append(body.replace("ENTRY ", "").replace("%", f"%c{k}_"))
    signature = ", ".join(f"p{n}: {print_shape(p.shape)}" for n, p in enumerate(params))
    out_shape = print_shape(entry.root.shape)
    results = ", ".join([out_shape] * copies)
    lines.append(f"ENTRY %scaled ({signature}) -> ({results}) {{")
    for n, p in enumerate(params):
        lines.append(f"  %p{n} = {print_shape(p.shape)} parameter({n})")
    args = ", ".join(f"%p{n}" for n in range(len(params)))
    for k in range(copies):
        lines.append(f"  %r{k} = {out_shape} call({args}), to_apply=%c{k}_{entry.name}")
    rs = ", ".join(f"%r{k}" for k in range(copies))
    lines.append(f"  ROOT %t = ({results}) tuple({rs})")
    lines.append("}")
    out.write_text("\n".join(lines) + "\n")
    return out


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
    parser.add_argument("--scale", type=int, default=4, help="copies in the scaled dump (0: none)")
    parser.add_argument(
        "--kind-mb",
        type=float,
        default=18.0,
        help="also the largest dump of each kind scaled to about this size (0: none)",
    )
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    dumps = list(args.dumps)
    if not dumps:
        dumps = [largest(p) for p in KINDS.values()]
        models = [SHARED / m for m in MODELS if (SHARED / m).exists()]
        dumps += models
        if args.scale and models:
            dumps.append(scaled_dump(models[-1], args.scale, Path(tmp.name) / "gemma_scaled.txt"))
            dumps.append(scaled_dump(models[0], args.scale, Path(tmp.name) / "mixtral_scaled.txt"))
        if args.kind_mb:
            for pattern in KINDS.values():
                source = largest(pattern)
                copies = max(1, round(args.kind_mb * 1e6 / source.stat().st_size))
                # The source's name (with the copy count) keeps what names the backend.
                out = Path(tmp.name) / f"x{copies}.{source.name}"
                dumps.append(scaled_dump(source, copies, out))
    print(f"{'dump':60} {'MB':>6} {'parse s':>8} {'analysis s':>10} {'ratio':>6} {'peak':>16}")
    for path in dumps:
        t_parse, module = best(lambda p=path: parse_file(p), args.repeat)
        t_mem, ma = best(lambda m=module, p=path: analyze_memory(m, file=p), args.repeat)  # type: ignore[misc]
        mb = path.stat().st_size / 1e6
        name = path.name[-60:]
        peak = ma.peak_bytes  # type: ignore[attr-defined]
        print(f"{name:60} {mb:6.2f} {t_parse:8.2f} {t_mem:10.2f} {t_mem / t_parse:6.2f} {peak:16,}")


if __name__ == "__main__":
    main()
