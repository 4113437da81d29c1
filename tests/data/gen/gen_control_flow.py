"""Generate small XLA:CPU dumps with control flow and in-place ops (oracles for tests/memory).

Usage: python tests/data/gen/gen_control_flow.py OUTDIR
Writes XLA's own dumps (after-optimizations HLO, buffer assignment, live ranges) and
`memory_analysis.json` (jax's compiled.memory_analysis() per program).
"""

import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + f" --xla_dump_to={out} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

results = {}


def run(name, f, *args, donate=()):
    jf = jax.jit(f, donate_argnums=donate)
    compiled = jf.lower(*args).compile()
    ma = compiled.memory_analysis()
    results[name] = {
        k: getattr(ma, k)
        for k in dir(ma)
        if k.endswith("_in_bytes") and isinstance(getattr(ma, k), int)
    }


def while_loop(x):
    def body(c):
        i, v = c
        return i + 1, jnp.tanh(v @ v) + v

    return jax.lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]


def fori_two(x, y):
    def body(i, c):
        a, b = c
        return (a * 2.0 + b, jnp.sin(b))

    return jax.lax.fori_loop(0, 7, body, (x, y))


def cond(p, x):
    return jax.lax.cond(p > 0, lambda v: jnp.exp(v) @ v, lambda v: v * 3.0, x)


def switch(i, x):
    return jax.lax.switch(i, [lambda v: v + 1.0, lambda v: v @ v, lambda v: jnp.cos(v)], x)


def scan(xs, h):
    def step(h, x):
        h = jnp.tanh(h @ x + h)
        return h, h.sum(0)

    return jax.lax.scan(step, h, xs)


def dus(buf, upd, i):
    return jax.lax.dynamic_update_slice(buf, upd * 2.0, (i, 0))


def donate_add(a, b):
    return a + b, (a * b).sum()


def sort_ops(x, k):
    return jnp.sort(x, axis=-1), jax.lax.sort_key_val(k, x, dimension=0)


def scatter(x, idx, upd):
    return x.at[idx].add(upd), x.at[idx].set(upd * 2.0)


def nested(x):
    def outer(i, v):
        v = jax.lax.fori_loop(0, 3, lambda j, w: w @ w * 0.5 + 1.0, v)
        return jax.lax.cond(i % 2 == 0, lambda u: u + 1.0, lambda u: u * 2.0, v)

    return jax.lax.fori_loop(0, 4, outer, x)


f32 = jnp.float32
m = jnp.ones((64, 64), f32)
run("while_loop", while_loop, m)
run("fori_two", fori_two, m, m)
run("cond", cond, jnp.int32(1), m)
run("switch", switch, jnp.int32(1), m)
run("scan", scan, jnp.ones((6, 32, 32), f32), jnp.ones((32, 32), f32))
run("dus", dus, jnp.ones((256, 128), f32), jnp.ones((16, 128), f32), jnp.int32(3), donate=(0,))
run("donate_add", donate_add, m, m, donate=(0,))
run("sort_ops", sort_ops, jnp.ones((128, 64), f32), jnp.ones((128, 64), f32))
run("scatter", scatter, jnp.ones((100, 16), f32), jnp.arange(10), jnp.ones((10, 16), f32))
run("nested", nested, m)
with open(os.path.join(out, "memory_analysis.json"), "w") as fh:
    json.dump(results, fh, indent=1, sort_keys=True)
