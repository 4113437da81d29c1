"""This folder's CPU programs: JAX_PLATFORMS=cpu python gen.py OUT_DIR [names] (jax 0.10.2)."""

import json
import os
import sys

import numpy as np

out = sys.argv[1]
only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
os.makedirs(out, exist_ok=True)
# XLA reads its flags when jax first initializes a backend, so they must be set before that.
os.environ["XLA_FLAGS"] = (
    "--xla_force_host_platform_device_count=8 "  # the sharded jobs' 2 x 4 mesh
    f"--xla_dump_to={out} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def sharded(shape, dtype, *spec):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(MESH, P(*spec)))


S = jax.ShapeDtypeStruct
f32, i32, bf, f16, i8 = jnp.float32, jnp.int32, jnp.bfloat16, jnp.float16, jnp.int8
jobs = {}


def job(fn):
    jobs[fn.__name__] = fn
    return fn


@job
def cnn_bn_train():
    def f(params, stats, x, y):
        def loss(params):
            h, new = x, []
            for (w, g, b), (rm, rv) in zip(params, stats):
                h = lax.conv_general_dilated(
                    h, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
                )
                mu, var = h.mean((0, 1, 2)), h.var((0, 1, 2))
                h = jax.nn.relu((h - mu) * lax.rsqrt(var + 1e-5) * g + b)
                new.append((0.9 * rm + 0.1 * mu, 0.9 * rv + 0.1 * var))
            logits = h.mean((1, 2)) @ jnp.ones((h.shape[-1], 10), f32)
            xent = -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))
            return xent, new

        (xent, new), g = jax.value_and_grad(loss, has_aux=True)(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)
        return xent, params, new

    chans = [(3, 16), (16, 32)]
    params = [(S((3, 3, a, b), f32), S((b,), f32), S((b,), f32)) for a, b in chans]
    stats = [(S((b,), f32), S((b,), f32)) for _, b in chans]
    return f, [params, stats, S((8, 16, 16, 3), f32), S((8,), i32)], (0, 1)


@job
def causal_attn_remat():
    pol = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def block(x, wq, wk, wv):
        q, k, v = x @ wq, x @ wk, x @ wv
        s = jnp.einsum("btd,bsd->bts", q, k) / 8.0
        mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
        p = jax.nn.softmax(jnp.where(mask, s, -1e9), -1)
        return x + jnp.einsum("bts,bsd->btd", p, v)

    def f(ws, x):
        def loss(ws):
            h = x
            for w in ws:
                h = jax.checkpoint(block, policy=pol)(h, *w)
            return jnp.mean(h**2)

        return jax.grad(loss)(ws)

    ws = [tuple(S((64, 64), f32) for _ in range(3)) for _ in range(2)]
    return f, [ws, S((4, 32, 64), f32)]


@job
def grad_accum_scan():
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2)

    def f(w, xs, ys):
        def body(acc, xy):
            g = jax.grad(loss)(w, *xy)
            return jax.tree_util.tree_map(jnp.add, acc, g), None

        zero = jax.tree_util.tree_map(jnp.zeros_like, w)
        g, _ = lax.scan(body, zero, (xs, ys))
        return jax.tree_util.tree_map(lambda w, g: w - 0.01 * g / 4, w, g)

    w = {"a": S((64, 128), f32), "b": S((128, 16), f32)}
    return f, [w, S((4, 32, 64), f32), S((4, 32, 16), f32)], (0,)


@job
def loss_scale_mixed():
    def f(w, scale, x, y):
        def loss(w):
            h = jax.nn.gelu(x.astype(bf) @ w["a"].astype(bf))
            out = (h @ w["b"].astype(bf)).astype(f32)
            return jnp.mean((out - y) ** 2) * scale

        g = jax.grad(loss)(w)
        g = jax.tree_util.tree_map(lambda g: g / scale, g)
        finite = jnp.all(
            jnp.array([jnp.all(jnp.isfinite(t)) for t in jax.tree_util.tree_leaves(g)])
        )
        new_w = lax.cond(
            finite,
            lambda: jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, w, g),
            lambda: w,
        )
        new_scale = jnp.where(finite, scale * 2.0, scale / 2.0)
        return new_w, new_scale

    w = {"a": S((128, 256), f32), "b": S((256, 64), f32)}
    return f, [w, S((), f32), S((32, 128), f32), S((32, 64), f32)], (0,)


@job
def embed_scatter_grad():
    def f(table, ids, w, y):
        def loss(table, w):
            h = table[ids].mean(1)
            return jnp.mean((h @ w - y) ** 2)

        gt, gw = jax.grad(loss, argnums=(0, 1))(table, w)
        return table - 0.1 * gt, w - 0.1 * gw

    return f, [S((1000, 64), f32), S((16, 12), i32), S((64, 8), f32), S((16, 8), f32)], (0,)


@job
def beam_search_kv():
    B, K, T, D, V = 2, 4, 16, 32, 50

    def f(emb, w, cache, tok0):
        def body(c):
            i, toks, scores, cache, seqs = c
            x = emb[toks]  # [B, K, D]
            cache = lax.dynamic_update_slice(cache, x[:, :, None, :], (0, 0, i, 0))
            att = jnp.einsum("bkd,bktd->bkt", x, cache)
            att = jnp.where(jnp.arange(T) <= i, att, -1e9)
            ctx = jnp.einsum("bkt,bktd->bkd", jax.nn.softmax(att, -1), cache)
            logp = jax.nn.log_softmax(ctx @ w, -1)  # [B, K, V]
            cand = (scores[:, :, None] + logp).reshape(B, K * V)
            scores, idx = lax.top_k(cand, K)
            beam, toks = idx // V, (idx % V).astype(i32)
            cache = jnp.take_along_axis(cache, beam[:, :, None, None], 1)
            seqs = jnp.take_along_axis(seqs, beam[:, :, None], 1)
            seqs = lax.dynamic_update_slice(seqs, toks[:, :, None], (0, 0, i))
            return i + 1, toks, scores, cache, seqs

        c = (0, tok0, jnp.zeros((B, K), f32), cache, jnp.zeros((B, K, T), i32))
        c = lax.while_loop(lambda c: c[0] < T, body, c)
        return c[4], c[2]

    return f, [S((V, D), f32), S((D, V), f32), S((B, K, T, D), f32), S((B, K), i32)], (2,)


@job
def topk_sample_decode():
    def f(w, key, tok):
        def body(i, c):
            key, tok, out = c
            key, sub = jax.random.split(key)
            logits = jnp.tanh(w[tok] @ w.T)
            v, ix = lax.top_k(logits, 8)
            pick = jax.random.categorical(sub, v)
            tok = jnp.take_along_axis(ix, pick[:, None], 1)[:, 0]
            return key, tok, out.at[:, i].set(tok)

        return lax.fori_loop(0, 12, body, (key, tok, jnp.zeros((4, 12), i32)))[2]

    return f, [S((200, 32), f32), S((2,), jnp.uint32), S((4,), i32)]


@job
def vmap_ensemble():
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2)

    def f(ws, x, y):
        gs = jax.vmap(jax.grad(loss), in_axes=(0, None, None))(ws, x, y)
        per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(
            jax.tree_util.tree_map(lambda t: t[0], ws), x[:, None], y[:, None]
        )
        return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, ws, gs), per_ex

    ws = {"a": S((5, 16, 32), f32), "b": S((5, 32, 4), f32)}
    return f, [ws, S((24, 16), f32), S((24, 4), f32)]


@job
def sort_cumsum_heavy():
    def f(x, v):
        s = jnp.sort(x, -1)
        a = jnp.argsort(-x, -1)
        c = jnp.cumsum(s, -1)
        cp = jnp.cumprod(1 + 1e-3 * x, 0)
        r = jnp.searchsorted(s[0], v)
        m = lax.cummax(x, 1)
        u = jnp.take_along_axis(x, a, -1)
        return c, cp, r, m, u.sum(0), jnp.median(x, 0)

    return f, [S((64, 100), f32), S((30,), f32)]


@job
def custom_vjp_scan():
    @jax.custom_vjp
    def act(x, w):
        return jnp.tanh(x @ w)

    def fwd(x, w):
        y = jnp.tanh(x @ w)
        return y, (x, w, y)

    def bwd(res, g):
        x, w, y = res
        gy = g * (1 - y * y)
        return gy @ w.T, x.T @ gy

    act.defvjp(fwd, bwd)

    def f(ws, x):
        def loss(ws):
            h, _ = lax.scan(lambda h, w: (act(h, w), None), x, ws)
            return jnp.sum(h)

        return jax.grad(loss)(ws)

    return f, [S((6, 48, 48), f32), S((16, 48), f32)]


@job
def cond_in_vmap():
    def one(x, k):
        return lax.cond(
            k > 0,
            lambda x: (jnp.sin(x) * 2, x.sum()),
            lambda x: (jnp.cos(x), -x.max()),
            x,
        )

    def f(xs, ks):
        ys, ss = jax.vmap(one)(xs, ks)
        sw = jax.vmap(lambda x, k: lax.switch(k, [jnp.sin, jnp.cos, jnp.exp], x))(xs, ks % 3)
        return ys + sw, ss

    return f, [S((16, 128), f32), S((16,), i32)]


@job
def fori_mixed_dtypes():
    def f(a, b, c, d):
        def body(i, s):
            a, b, c, d, e = s
            a = a * 1.01 + b.astype(f16)
            b = (b + i.astype(i8)) % 100
            c = c ^ (i.astype(jnp.uint32) * jnp.uint32(2654435761))
            d = jnp.logical_xor(d, a > 0)
            e = e + a.astype(bf).sum()
            return a, b, c, d, e

        return lax.fori_loop(0, 7, body, (a, b, c, d, jnp.zeros((), bf)))

    sh = (33, 17)
    return f, [S(sh, f16), S(sh, i8), S(sh, jnp.uint32), S(sh, jnp.bool_)]


@job
def int8_fp8_matmul():
    def f(a, b, c, d, sa, sb):
        i = lax.dot(a, b, preferred_element_type=i32)
        fp = lax.dot(c, d, preferred_element_type=f32)
        q = jnp.clip(jnp.round(i.astype(f32) * sa * sb), -127, 127).astype(i8)
        return q, fp.astype(bf)

    e4 = jnp.float8_e4m3fn
    return f, [
        S((64, 128), i8),
        S((128, 96), i8),
        S((64, 128), e4),
        S((128, 96), e4),
        S((), f32),
        S((96,), f32),
    ]


@job
def donate_partial():
    def f(a, b, c, d):
        return a + 1, (b * 2).astype(bf), c[:16] + d, d

    return f, [S((64, 64), f32), S((64, 64), f32), S((32, 64), f32), S((16, 64), f32)], (0, 1, 2)


@job
def donate_swap():
    def f(a, b, n):
        return lax.fori_loop(0, n, lambda i, c: (c[1] * 0.5, c[0] + 1.0), (a, b))

    return f, [S((128, 32), f32), S((128, 32), f32), S((), i32)], (0, 1)


@job
def tiny_scalars():
    def f(a, b, c):
        x = a * b + c
        y = jnp.where(x > 0, x, -x)
        return (
            x,
            y,
            a.astype(jnp.int16),
            jnp.stack([a, b, c]),
            (a > b),
            jnp.uint8(3) + c.astype(jnp.uint8),
        )

    return f, [S((), f32), S((), f32), S((), f32)]


@job
def large_100mb():
    def f(x, y):
        z = jnp.tanh(x) * y
        return z.sum(0), (z * 2).astype(bf), jnp.max(z)

    return f, [S((5120, 5120), f32), S((5120, 5120), f32)]


@job
def lstm_scan_grad():
    def cell(c, x, w):
        h, cs = c
        gates = jnp.concatenate([x, h], -1) @ w
        i, fg, o, g = jnp.split(gates, 4, -1)
        cs = jax.nn.sigmoid(fg) * cs + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(cs)
        return (h, cs), h

    def f(w, xs):
        def loss(w):
            z = jnp.zeros((8, 32), f32)
            _, hs = lax.scan(lambda c, x: cell(c, x, w), (z, z), xs, reverse=True, unroll=2)
            return jnp.sum(hs**2)

        return jax.value_and_grad(loss)(w)

    return f, [S((48, 128), f32), S((10, 8, 16), f32)]


@job
def while_early_exit():
    def f(x, tol):
        def cond(c):
            i, _, err = c
            return (i < 50) & (err > tol)

        def body(c):
            i, x, _ = c
            nx = 0.5 * (x + 2.0 / x)
            return i + 1, nx, jnp.max(jnp.abs(nx - x))

        return lax.while_loop(cond, body, (0, x, jnp.inf))

    return f, [S((256,), f32), S((), f32)]


stats = {}
for name, mk in jobs.items():
    if only and name not in only:
        continue
    r = mk()
    fn, args = r[0], r[1]
    donate = r[2] if len(r) > 2 else ()

    def g(*a, fn=fn):
        return fn(*a)

    g.__name__ = name
    c = jax.jit(g, donate_argnums=donate).lower(*args).compile()
    m = c.memory_analysis()
    stats[name] = {k: getattr(m, k) for k in dir(m) if k.endswith("in_bytes")}
path = os.path.join(out, "memory_analysis.json")
if only and os.path.exists(path):
    with open(path) as fh:
        stats = {**json.load(fh), **stats}
with open(path, "w") as fh:
    json.dump(stats, fh, indent=1, sort_keys=True)
print("ok", sorted(stats))
