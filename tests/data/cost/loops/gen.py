"""Programs written twice — with lax loops and unrolled in Python — compiled by XLA:CPU (jax
0.10.2), with XLA's cost analysis of both texts (tests/cost/test_loops.py).

    JAX_PLATFORMS=cpu /work/venvs/jax010/bin/python tests/data/cost/loops/gen.py

Writes `<name>.looped.txt` and `<name>.unrolled.txt` (the optimized HLO module, as jax's
`compiled.as_text()` gives it: XLA has annotated each loop's `known_trip_count`),
`<name>.looped.before.txt` (the module before optimization, as `lowered.as_text("hlo")` gives
it: no annotation, so the trip count comes from the pattern match) and `expected.json`: per
program, jaxlib's `hlo_module_cost_analysis` of each text (the looped one counts each loop body
once), and what the loop-aware total must come near (the unrolled program's flops).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import jaxlib._hlo as H
from jax import lax
from jax._src.lib import _jax

HERE = Path(__file__).parent
W = jnp.ones((64, 64), jnp.float32) * 0.01
X = jnp.ones((64, 64), jnp.float32)
XS = jnp.ones((8, 64), jnp.float32)


def fori_matmul(x, w):
    return lax.fori_loop(0, 10, lambda i, x: x @ w, x)


def fori_matmul_unrolled(x, w):
    for _ in range(10):
        x = x @ w
    return x


def fori_offset(x, w):
    return lax.fori_loop(3, 10, lambda i, x: jnp.tanh(x @ w), x)


def fori_offset_unrolled(x, w):
    for _ in range(3, 10):
        x = jnp.tanh(x @ w)
    return x


def scan_rnn(xs, w):
    def step(c, x):
        c = jnp.tanh(c @ w + x)
        return c, c.sum()

    return lax.scan(step, jnp.zeros((64,), jnp.float32), xs)


def scan_rnn_unrolled(xs, w):
    c = jnp.zeros((64,), jnp.float32)
    ys = []
    for t in range(xs.shape[0]):
        c = jnp.tanh(c @ w + xs[t])
        ys.append(c.sum())
    return c, jnp.stack(ys)


def nested(x, w):
    inner = lambda j, x: x @ w  # noqa: E731
    return lax.fori_loop(0, 4, lambda i, x: lax.fori_loop(0, 3, inner, x) * 0.5, x)


def nested_unrolled(x, w):
    for _ in range(4):
        for _ in range(3):
            x = x @ w
        x = x * 0.5
    return x


def while_le(x, w):
    def body(c):
        i, x = c
        return i + 1, x @ w

    return lax.while_loop(lambda c: c[0] <= 5, body, (jnp.int32(0), x))[1]


def while_le_unrolled(x, w):
    for _ in range(6):
        x = x @ w
    return x


PROGRAMS = {
    "fori_matmul": (fori_matmul, fori_matmul_unrolled, (X, W)),
    "fori_offset": (fori_offset, fori_offset_unrolled, (X, W)),
    "scan_rnn": (scan_rnn, scan_rnn_unrolled, (XS, W)),
    "nested": (nested, nested_unrolled, (X, W)),
    "while_le": (while_le, while_le_unrolled, (X, W)),
}


def main() -> None:
    client = jax.devices("cpu")[0].client
    expected = {}
    for name, (looped, unrolled, args) in PROGRAMS.items():
        entry = {}
        for kind, fn in (("looped", looped), ("unrolled", unrolled)):
            text = jax.jit(fn).lower(*args).compile().as_text()
            (HERE / f"{name}.{kind}.txt").write_text(text)
            props = _jax.hlo_module_cost_analysis(client, H.hlo_module_from_text(text))
            entry[kind] = {k: props[k] for k in ("flops", "transcendentals", "bytes accessed")
                           if k in props}  # fmt: skip
        before = jax.jit(looped).lower(*args).as_text("hlo")
        (HERE / f"{name}.looped.before.txt").write_text(before)
        props = _jax.hlo_module_cost_analysis(client, H.hlo_module_from_text(before))
        entry["looped.before"] = {
            k: props[k] for k in ("flops", "transcendentals", "bytes accessed") if k in props
        }
        expected[name] = entry
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
