"""This folder's controlled pairs: one program (mlp.py) compiled twice with one change.

    python gen.py [--jax010 PY] [--jax012 PY] [--only pair,pair]

PY are interpreters with jax 0.10.2 (+ libtpu 0.0.52) and jax 0.12.0.1 (default: this one).
Each side is compiled in a child process of its own (`gen.py compile ...`), so module numbers
start afresh and XLA's dump flags apply to that side alone. Writes <pair>/{old,new}/ (the
side's mlp.py, XLA's files for the jitted `step`, memory_analysis.json) and pairs.json.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dumptools import checked_totals, clean  # noqa: E402

BASE = os.path.join(HERE, "mlp.py")

# pair -> (old line, new line) of mlp.py (None: the same source both sides), then how each
# side is compiled: the interpreter ("jax010"/"jax012"), the platform, whether a no-op that
# XLA removes is put before the program (renumbering).
PAIRS = {
    "batch-256-512": (("BATCH = 256", "BATCH = 512"), "batch size 256 -> 512"),
    "widen-layer": (
        (
            "DIM, HIDDEN, OUT = 64, [256, 256, 256], 128",
            "DIM, HIDDEN, OUT = 64, [256, 512, 256], 128",
        ),
        "the second block's hidden layer widened 256 -> 512 (its w1, b1 and w2)",
    ),
    "remat": (
        ("        h = block(h, w1, b1, w2)", "        h = jax.checkpoint(block)(h, w1, b1, w2)"),
        "each block under jax.checkpoint (remat off -> on)",
    ),
    "donation": (("DONATE = ()", "DONATE = (0, 1)"), "params and mom donated (off -> on)"),
    "extra-output": (
        ("    return value, params, mom", "    return value, params, mom, g"),
        "the gradients kept alive: returned as an extra output",
    ),
    "bf16-layer": (
        (
            '    logits = h @ params["out"]',
            '    logits = (h.astype(bf16) @ params["out"].astype(bf16)).astype(f32)',
        ),
        "the output layer's matmul in bf16 instead of f32",
    ),
    "tpu-v5e-v6e": (None, "TPU v5e:2x2 -> v6e:2x2 (libtpu 0.0.52, deviceless AOT, 1 device)"),
    "jax-0.10-0.12": (None, "jax/jaxlib 0.10.2 -> 0.12.0.1 (XLA:CPU)"),
    "renumbered": (
        None,
        "numbering only: the new side's x passes through maximum(x, x), an op with no source"
        " location that XLA removes; every later `max.N` name moves up by one",
    ),
}
SIDES = {  # pair -> (old side, new side), each (interpreter, platform, warm-up compile)
    "tpu-v5e-v6e": (("jax010", "tpu:v5e:2x2", False), ("jax010", "tpu:v6e:2x2", False)),
    "jax-0.10-0.12": (("jax010", "cpu", False), ("jax012", "cpu", False)),
    "renumbered": (("jax010", "cpu", False), ("jax010", "cpu", True)),
}
ACCELERATOR = {"v5e": "v5litepod-4", "v6e": "v6e-4"}


def compile_side(prog, out, platform, renumber):
    """Child: compile prog's make() for platform and keep XLA's files in out."""
    raw = tempfile.mkdtemp(prefix="diffpair_raw_")
    tpu = platform.startswith("tpu:")
    if tpu:
        topology = platform[4:]
        os.environ["TPU_ACCELERATOR_TYPE"] = ACCELERATOR[topology.split(":")[0]]
        os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
        os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    else:
        os.environ["JAX_PLATFORMS"] = "cpu"
    # XLA reads its flags when jax first initializes a backend, so they must be set before that.
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text"
    import functools
    import importlib.util

    import jax
    import jax.numpy as jnp
    from jax._src import source_info_util, traceback_util

    # Frames of this generator are jax's own: the dumps' stack frame tables hold mlp.py alone.
    source_info_util.register_exclusion(os.path.abspath(__file__))
    traceback_util.register_exclusion(os.path.abspath(__file__))

    spec = importlib.util.spec_from_file_location("mlp", prog)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn, args, donate = mod.make()
    if tpu:
        import numpy as np
        from jax.experimental import topologies
        from jax.sharding import Mesh, NamedSharding
        from jax.sharding import PartitionSpec as P

        devs = np.array(
            topologies.get_topology_desc(platform="tpu", topology_name=topology).devices
        )
        sharding = NamedSharding(Mesh(devs[:1], ("x",)), P())
        args = jax.tree_util.tree_map(
            lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding), args
        )
    if renumber:
        # maximum(x, x) on x: XLA's algebraic simplifier removes it, but the MLIR -> HLO
        # conversion has given it the name max.N first, so every later max.N moves up by one.
        # Emitted from this file, which jax treats as its own (no source location, so the
        # stack frame tables stay as they were).
        inner = fn

        @functools.wraps(inner)
        def fn(*a):
            a = list(a)
            a[2] = jnp.maximum(a[2], a[2])
            return inner(*a)

    before = set(os.listdir(raw))
    compiled = jax.jit(fn, donate_argnums=donate).lower(*args).compile()
    m = compiled.memory_analysis()
    stats = {k: getattr(m, k) for k in dir(m) if k.endswith("in_bytes")}
    stats["jax"] = jax.__version__
    stats["platform"] = platform
    name = re.compile(r"module_\d+\.jit_step\.")
    new = sorted(n for n in set(os.listdir(raw)) - before if name.match(n))
    os.makedirs(out, exist_ok=True)
    keep = re.compile(
        r"after_optimizations(\.txt|-buffer-assignment\.txt|-memory-usage-report\.txt"
        r"|-live-range\.txt)$|target_arguments\.txt$"
    )
    for n in new:
        if keep.search(n):
            with open(os.path.join(raw, n)) as fh:
                text = clean(fh.read())
            with open(os.path.join(out, n), "w") as fh:
                fh.write(text)
    with open(os.path.join(out, "memory_analysis.json"), "w") as fh:
        json.dump(stats, fh, indent=1, sort_keys=True)
    shutil.rmtree(raw, ignore_errors=True)


def compiler_totals(side):
    """The compiler's own totals for one side: the memory-usage report's "Total bytes" per
    memory space (checked equal to the buffer assignment's allocation sizes summed per colour)
    and the live-range file's peak ("Stack trace breakdown for peak usage")."""
    (report,) = glob.glob(os.path.join(side, "*-memory-usage-report.txt"))
    reported, ok = checked_totals(report[: -len("-memory-usage-report.txt")])
    assert ok, (side, reported)
    totals = {"total_bytes": sum(reported.values()), "total_bytes_by_color": reported}
    (live,) = glob.glob(os.path.join(side, "*-live-range.txt"))
    with open(live) as fh:
        peak = re.search(r"Stack trace breakdown for peak usage: ([\d ]+) bytes", fh.read())
    totals["live_range_peak_bytes"] = int(peak.group(1).replace(" ", ""))
    return totals


def same_but_numbering(old, new):
    """Whether two texts are equal up to a one-to-one renaming of `name.N` numbers."""
    token = re.compile(r"[A-Za-z_][\w\-]*\.\d+|\S")
    a, b = token.findall(old), token.findall(new)
    if len(a) != len(b):
        return False
    forward, backward = {}, {}
    for x, y in zip(a, b):
        if x == y and "." not in x:
            continue
        if x.rsplit(".", 1)[0] != y.rsplit(".", 1)[0]:
            return False
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return False
    return True


def check_renumbered(pair):
    """The renumbered pair's files differ, and only in numbering."""
    differ = False
    for suffix in (
        "after_optimizations.txt",
        "after_optimizations-buffer-assignment.txt",
        "after_optimizations-live-range.txt",
        "after_optimizations-memory-usage-report.txt",
    ):
        texts = []
        for side in ("old", "new"):
            (p,) = glob.glob(os.path.join(HERE, pair, side, f"*{suffix}"))
            with open(p) as fh:
                texts.append(fh.read())
        assert same_but_numbering(*texts), suffix
        differ |= texts[0] != texts[1]
    assert differ, "the renumbered pair's files are identical"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jax010", default=sys.executable)
    ap.add_argument("--jax012", default=sys.executable)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    python = {"jax010": a.jax010, "jax012": a.jax012}
    with open(BASE) as fh:
        base = fh.read().splitlines(keepends=True)
    path = os.path.join(HERE, "pairs.json")
    pairs = {}
    if os.path.exists(path):
        with open(path) as fh:
            pairs = json.load(fh)
    for pair, (lines, change) in PAIRS.items():
        if a.only and pair not in a.only.split(","):
            continue
        sources = [base, base]
        if lines:
            (at,) = [i for i, s in enumerate(base) if s.rstrip("\n") == lines[0]]
            sources[1] = [*base[:at], lines[1] + "\n", *base[at + 1 :]]
        entry = {"change": change, "changed_line": None}
        for side, source, how in zip(
            ("old", "new"), sources, SIDES.get(pair, [("jax010", "cpu", False)] * 2)
        ):
            d = os.path.join(HERE, pair, side)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            prog = os.path.join(d, "mlp.py")
            with open(prog, "w") as fh:
                fh.writelines(source)
            interp, platform, renumber = how
            cmd = [python[interp], __file__, "compile", prog, d, platform] + ["renumber"] * renumber
            subprocess.run(cmd, check=True)
            with open(os.path.join(d, "memory_analysis.json")) as fh:
                stats = json.load(fh)
            rel = os.path.relpath(d, HERE)
            (hlo,) = glob.glob(os.path.join(d, "*after_optimizations.txt"))
            entry[side] = {
                "dir": rel,
                "hlo": os.path.relpath(hlo, HERE),
                "jax": stats["jax"],
                "platform": platform,
                "peak_memory_in_bytes": stats["peak_memory_in_bytes"],
            }
            entry[side].update(compiler_totals(d))
        if lines:
            diff = [
                (i + 1, o.rstrip("\n"), n.rstrip("\n"))
                for i, (o, n) in enumerate(zip(*sources))
                if o != n
            ]
            assert len(diff) == 1 and len(sources[0]) == len(sources[1]), diff
            line, old, new = diff[0]
            entry["changed_line"] = {"file": "mlp.py", "line": line, "old": old, "new": new}
        keys = ("total_bytes", "live_range_peak_bytes", "peak_memory_in_bytes")
        entry["delta"] = {k: entry["new"][k] - entry["old"][k] for k in keys}
        if pair == "renumbered":
            check_renumbered(pair)
        pairs[pair] = entry
        print(pair, entry["delta"])
    with open(path, "w") as fh:
        json.dump(pairs, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["compile"]:
        compile_side(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:] == ["renumber"])
    else:
        main()
