"""Pairs whose one changed line holds the op whose buffers change (so the attribution's top row
must be that line): each side a copy of `model.py` below with that line replaced, compiled for
XLA:CPU in a process of its own.

  python gen_pairs.py OUTDIR            (jax 0.10.2)

OUTDIR/<pair>/{old,new}/: the optimized module and XLA's buffer assignment beside it, the
side's `model.py`, and `memory_analysis.json` (jax's figures); OUTDIR/pairs.json says which line
changed and the compiler's totals (the sum of the buffer assignment's allocations).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

MODEL = """import jax
import jax.numpy as jnp

WIDTH = 256


def layer(h, w):
    return jnp.tanh(h @ w)


def step(w1, w2, x):
    h = layer(x, w1)
    out = jnp.tanh(h @ jnp.tile(w2, (1, 2)))
    return jnp.sum(out * out)


def make():
    S = jax.ShapeDtypeStruct
    f32 = jnp.float32
    args = [S((WIDTH, WIDTH), f32), S((WIDTH, WIDTH), f32), S((512, WIDTH), f32)]
    return jax.jit(jax.grad(step, argnums=(0, 1))), args
"""

#: pair → (line number, old text, new text): one line of MODEL changed.
PAIRS = {
    "widen-line": (
        13,
        "    out = jnp.tanh(h @ jnp.tile(w2, (1, 2)))",
        "    out = jnp.tanh(h @ jnp.tile(w2, (1, 8)))",
    ),
    "keep-alive": (
        14,
        "    return jnp.sum(out * out)",
        "    return jnp.sum(out * out) + jnp.sum(jnp.cos(out) @ out.T)",
    ),
}

CHILD = r"""
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("model", sys.argv[1])
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)
fn, args = model.make()
c = fn.lower(*args).compile()
m = c.memory_analysis()
print(json.dumps({k: getattr(m, k) for k in dir(m) if k.endswith("in_bytes")}))
"""


def _compile(model: Path, out: Path) -> dict:
    raw = tempfile.mkdtemp()
    env = dict(
        os.environ,
        XLA_FLAGS=f"--xla_dump_to={raw} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$",
        JAX_PLATFORMS="cpu",
    )
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(model)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=model.parent,
    )
    for p in Path(raw).iterdir():
        if re.search(r"cpu_after_optimizations(-buffer-assignment)?\.txt$", p.name):
            text = re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', p.read_text())
            (out / re.sub(r"^module_\d+\.", "", p.name)).write_text(text)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _total(side: Path) -> int:
    (ba,) = side.glob("*buffer-assignment.txt")
    return sum(
        int(m.group(1)) for m in re.finditer(r"^allocation \d+: size (\d+)", ba.read_text(), re.M)
    )


def main() -> None:
    out = Path(sys.argv[1])
    index = {}
    for pair, (line, old, new) in PAIRS.items():
        lines = MODEL.split("\n")
        assert lines[line - 1] == old, (pair, lines[line - 1])
        record = {"changed_line": {"file": "model.py", "line": line, "old": old, "new": new}}
        for side, text in (("old", old), ("new", new)):
            d = out / pair / side
            d.mkdir(parents=True, exist_ok=True)
            lines[line - 1] = text
            (d / "model.py").write_text("\n".join(lines))
            memory = _compile(d / "model.py", d)
            (d / "memory_analysis.json").write_text(json.dumps(memory, indent=1) + "\n")
            record[side] = {"total_bytes": _total(d), **memory}
        record["delta"] = record["new"]["total_bytes"] - record["old"]["total_bytes"]
        index[pair] = record
    (out / "pairs.json").write_text(json.dumps(index, indent=1) + "\n")
    print(json.dumps(index, indent=1))


if __name__ == "__main__":
    main()
