"""Generate the extra CPU programs of this folder: python gen_more.py OUT_DIR (jax 0.10.2)."""

import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
# XLA reads its flags when jax first initializes a backend, so they must be set before that.
os.environ["XLA_FLAGS"] = f"--xla_dump_to={out} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

S = jax.ShapeDtypeStruct
f32, i32 = jnp.float32, jnp.int32
jobs = {}


def job(fn):
    jobs[fn.__name__] = fn
    return fn


@job
def linalg():
    def f(a, b):
        s = a @ a.T + 64 * jnp.eye(a.shape[0])
        c = jnp.linalg.cholesky(s)
        q, r = jnp.linalg.qr(a)
        return jnp.linalg.solve(s, b), c.sum() + q.sum() + r.sum()

    return f, [S((64, 64), f32), S((64, 8), f32)]


@job
def eigh_svd():
    def f(a):
        w, v = jnp.linalg.eigh(a + a.T)
        u, s, vt = jnp.linalg.svd(a, full_matrices=False)
        return w, v @ u, s, vt

    return f, [S((48, 48), f32)]


@job
def fft_ops():
    def f(x):
        y = jnp.fft.rfft(x, axis=-1)
        return jnp.fft.irfft(y * 2, n=x.shape[-1], axis=-1), jnp.abs(
            jnp.fft.fft2(x.astype(jnp.complex64))
        )

    return f, [S((32, 128), f32)]


@job
def topk_argsort():
    def f(x):
        v, i = jax.lax.top_k(x, 8)
        return v, i, jnp.argsort(x, axis=0), jnp.cumsum(x, axis=1)

    return f, [S((64, 256), f32)]


@job
def conv_net():
    def f(x, w1, w2):
        y = jax.lax.conv_general_dilated(
            x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        y = jax.nn.relu(y)
        y = jax.lax.conv_general_dilated(
            y, w2, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    return f, [S((4, 32, 32, 8), f32), S((3, 3, 8, 16), f32), S((3, 3, 16, 16), f32)]


@job
def attention_grad():
    def loss(q, k, v):
        s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
        p = jax.nn.softmax(s, -1)
        return jnp.sum(jnp.einsum("bqk,bkd->bqd", p, v) ** 2)

    def f(q, k, v):
        return jax.grad(loss, argnums=(0, 1, 2))(q, k, v)

    return f, [S((4, 128, 64), f32)] * 3


@job
def remat_scan():
    def f(w, xs):
        @jax.checkpoint
        def cell(h, x):
            return jnp.tanh(h @ w + x), None

        def loss(w):
            h, _ = jax.lax.scan(lambda h, x: cell(h, x), jnp.zeros((16, 128)), xs)
            return jnp.sum(h**2)

        return jax.grad(loss)(w)

    return f, [S((128, 128), f32), S((12, 16, 128), f32)]


@job
def gather_scatter_add():
    def f(table, idx, upd):
        g = table[idx]
        t = table.at[idx].add(upd)
        return g * 2, t, jnp.take_along_axis(g, idx[:, None] % 32, axis=1)

    return f, [S((512, 32), f32), S((64,), i32), S((64, 32), f32)]


@job
def rng_ops():
    def f(key, x):
        k1, k2 = jax.random.split(key)
        return x + jax.random.normal(k1, x.shape), jax.random.permutation(k2, x.shape[0])

    return f, [S((2,), jnp.uint32), S((256, 64), f32)]


@job
def nested_loops():
    def f(x):
        def outer(i, c):
            def inner(j, d):
                return d * 0.99 + jnp.sin(d) * (i + j)

            return jax.lax.fori_loop(0, 3, inner, c) + jax.lax.cond(
                i % 2 == 0, lambda c: c, lambda c: -c, c
            )

        return jax.lax.fori_loop(0, 4, outer, x)

    return f, [S((64, 64), f32)]


@job
def vmap_cond_dus():
    def one(x, i):
        y = jax.lax.dynamic_update_slice(x, jnp.ones((4,), f32) * i, (i,))
        return jax.lax.cond(i > 3, lambda y: y * 2, lambda y: y + 1, y)

    def f(xs, idx):
        return jax.vmap(one)(xs, idx)

    return f, [S((16, 64), f32), S((16,), i32)]


@job
def donated_step():
    def f(p, g):
        return p - 0.1 * g, jnp.sum(g * g)

    return f, [S((1024, 256), f32), S((1024, 256), f32)], (0,)


stats = {}
for name, mk in jobs.items():
    r = mk()
    fn, args = r[0], r[1]
    donate = r[2] if len(r) > 2 else ()

    def g(*a, fn=fn):
        return fn(*a)

    g.__name__ = name
    c = jax.jit(g, donate_argnums=donate).lower(*args).compile()
    m = c.memory_analysis()
    stats[name] = {k: getattr(m, k) for k in dir(m) if k.endswith("in_bytes")}
with open(os.path.join(out, "memory_analysis.json"), "w") as fh:
    json.dump(stats, fh, indent=1)
print("ok", sorted(stats))
