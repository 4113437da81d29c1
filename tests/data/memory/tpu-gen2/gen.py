"""This folder's TPU programs: the team's gen_tpu_dumps.py (beside the repository) with these
jobs, donation of flattened arguments, and libtpu's target_arguments.txt kept.

  python gen.py OUTDIR --topology v5e:2x2 [--only a,b]   (jax 0.10.2, libtpu 0.0.52)

Deviceless ahead-of-time compilation for a TPU topology; OUTDIR/<job>/<job>.after_optimizations.txt,
.buffer-assignment.txt, .target_arguments.txt, and OUTDIR/memory_analysis.json.
"""

import argparse
import json
import os
import re
import shutil
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--topology", default="v5e:2x2")
ap.add_argument("--only", default="")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
raw = tempfile.mkdtemp(prefix="tpu_raw_")
os.environ.setdefault("TPU_ACCELERATOR_TYPE", "v5litepod-4")
os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
# XLA reads its flags when jax first initializes a backend, so they must be set before that.
os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.experimental import topologies  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

topo = topologies.get_topology_desc(platform="tpu", topology_name=a.topology)
devs = np.array(topo.devices)
S = jax.ShapeDtypeStruct
bf, f32, i8, i32 = jnp.bfloat16, jnp.float32, jnp.int8, jnp.int32
jobs = {}


def job(fn):
    jobs[fn.__name__] = fn
    return fn


@job
def adam_step():
    def f(params, grads, m, v):
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v
        )
        return params, m, v

    tree = {"w": S((1024, 512), f32), "b": S((512,), f32), "e": S((300, 128), bf)}
    return f, [tree, tree, tree, tree], dict(donate=(0, 1, 2, 6, 7, 8, 9, 10, 11))


@job
def layernorm_xent():
    def loss(w, g, x, y):
        mu = x.mean(-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g
        lp = jax.nn.log_softmax((h @ w).astype(f32), -1)
        return -jnp.mean(jnp.take_along_axis(lp, y[:, None], 1))

    def f(w, g, x, y):
        loss_, (gw, gg) = jax.value_and_grad(loss, argnums=(0, 1))(w, g, x, y)
        return loss_, w - 0.1 * gw, g - 0.1 * gg

    return f, [S((512, 1000), bf), S((512,), bf), S((256, 512), bf), S((256,), i32)]


@job
def fori_tuple_dus():
    def f(buf, x):
        def body(i, c):
            buf, acc, k = c
            row = lax.dynamic_slice(x, (i, 0), (8, 512))
            buf = lax.dynamic_update_slice(buf, row * acc[:1], (k * 8, 0))
            return buf, acc + row[0], (k + 3) % 16

        return lax.fori_loop(0, 10, body, (buf, jnp.zeros((512,), f32), jnp.int32(0)))

    return f, [S((128, 512), f32), S((256, 512), f32)]


@job
def while_cond_live():
    def f(x, y, n):
        def body(c):
            i, a, b = c
            a, b = lax.cond(
                i % 3 == 0,
                lambda a, b: (a * 2.0, b),
                lambda a, b: (a + jnp.tanh(b @ b).sum(), b + a[:, :256].sum()),
                a,
                b,
            )
            return i + 1, a, b

        return lax.while_loop(lambda c: c[0] < n, body, (0, x, y))

    return f, [S((512, 1024), f32), S((256, 256), f32), S((), i32)]


@job
def nested_scans():
    def f(xs, h):
        def outer(h, x):
            def inner(g, y):
                g = jnp.tanh(g @ h + y)
                return g, g.sum()

            g, s = lax.scan(inner, h, x)
            return g * 0.5, s

        return lax.scan(outer, h, xs)

    return f, [S((3, 4, 256, 256), f32), S((256, 256), f32)]


@job
def topk_segment():
    def f(x, seg, d):
        v, i = lax.top_k(x, 16)
        return v, i, jnp.argmax(x, -1), jax.ops.segment_sum(d, seg, num_segments=64)

    return f, [S((128, 2048), f32), S((4096,), i32), S((4096, 128), f32)]


@job
def remat_policy_mlp():
    def layer(x, w):
        return jax.nn.gelu(x @ w)

    lay = jax.checkpoint(layer, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)

    def f(ws, x):
        def loss(ws):
            h = x
            for w in ws:
                h = lay(h, w)
            return jnp.sum(h.astype(f32) ** 2)

        return jax.grad(loss)(ws)

    return f, [[S((1024, 1024), bf)] * 3, S((512, 1024), bf)]


@job
def donated_passthrough():
    def f(x, y, z):
        return x, y * 2, z, x + 1

    return f, [S((1024, 1024), f32), S((512, 512), bf), S((64, 128), i32)], dict(donate=(0, 1))


@job
def where_dtypes():
    def f(a, b, c, d):
        m = a > 0
        x = jnp.where(m, b.astype(f32), c.astype(f32))
        y = jnp.where(b > 3, d, (d * 2).astype(jnp.float16))
        return x.astype(bf), y, jnp.where(c > 0, a, jnp.int8(-1)), m & (b < 0)

    return f, [
        S((512, 512), i8),
        S((512, 512), bf),
        S((512, 512), jnp.float16),
        S((512, 512), jnp.float16),
    ]


@job
def cond_swap_carry():
    def f(a, b, n):
        def body(c):
            i, a, b = c
            a, b = lax.cond(
                i % 2 == 0, lambda a, b: (b * 1.5, a), lambda a, b: (a - 1.0, jnp.tanh(b)), a, b
            )
            return i + 1, a, b

        return lax.while_loop(lambda c: c[0] < n, body, (0, a, b))

    return f, [S((512, 512), f32), S((512, 512), f32), S((), i32)]


@job
def scan_cond_ys():
    def f(h, xs):
        def step(h, x):
            h = lax.cond(x.sum() > 0, lambda h: h @ h * 0.01 + x, lambda h: h - x, h)
            return h, h[:8]

        return lax.scan(step, h, xs)

    return f, [S((256, 256), f32), S((6, 256, 256), f32)]


@job
def switch_in_fori():
    def f(x, y):
        def body(i, c):
            x, y = c
            x, y = lax.switch(
                i % 3,
                [
                    lambda x, y: (x + 1.0, y),
                    lambda x, y: (x, y * 2.0),
                    lambda x, y: (x * y[:1, :1], y + x[:256, :128].sum()),
                ],
                x,
                y,
            )
            return x, y

        return lax.fori_loop(0, 5, body, (x, y))

    return f, [S((512, 1024), f32), S((256, 128), f32)]


@job
def while_two_conds():
    def f(a, b, n):
        def body(c):
            i, a, b = c
            a = lax.cond(i > 2, lambda a: a * 2.0, lambda a: a + b.sum(), a)
            b = lax.cond(i % 2 == 0, lambda b: b + a[:128, :128], lambda b: b, b)
            return i + 1, a, b

        return lax.while_loop(lambda c: c[0] < n, body, (0, a, b))

    return f, [S((1024, 512), f32), S((128, 128), f32), S((), i32)]


@job
def cond_dus_in_while():
    def f(buf, x, n):
        def body(c):
            i, buf = c
            buf = lax.cond(
                i % 2 == 0,
                lambda b: lax.dynamic_update_slice(b, x * i.astype(f32), (i * 8 % 256, 0)),
                lambda b: b * 0.5,
                buf,
            )
            return i + 1, buf

        return lax.while_loop(lambda c: c[0] < n, body, (0, buf))[1]

    return f, [S((256, 1024), f32), S((8, 1024), f32), S((), i32)]


@job
def sort_in_scan():
    def f(x, xs):
        def step(c, y):
            c = jnp.sort(c + y, axis=-1)
            return c, c[:, :4]

        return lax.scan(step, x, xs)

    return f, [S((64, 1024), f32), S((4, 64, 1024), f32)]


@job
def hbm_scan_ys():
    def f(h, xs, w):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h * 2.0

        return lax.scan(step, h, xs)

    return f, [S((1024, 1024), bf), S((8, 1024, 1024), bf), S((1024, 1024), bf)]


@job
def conv_grad():
    def f(x, w):
        def loss(w):
            y = lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
            return jnp.sum(jax.nn.relu(y).astype(f32) ** 2)

        return jax.grad(loss)(w)

    return f, [S((16, 32, 32, 64), bf), S((3, 3, 64, 128), bf)]


@job
def gather_scatter_loop():
    def f(table, idx, upd):
        def body(i, t):
            rows = t[idx + i]
            return t.at[idx * 2 % 1024].add(rows * 0.5 + upd)

        return lax.fori_loop(0, 3, body, table)

    return f, [S((1024, 256), f32), S((128,), i32), S((128, 256), f32)]


@job
def rng_dropout_step():
    def f(key, w, x):
        def loss(w):
            h = x @ w
            keep = jax.random.bernoulli(key, 0.9, h.shape)
            return jnp.mean(jnp.where(keep, h / 0.9, 0.0).astype(f32) ** 2)

        return w - 0.1 * jax.grad(loss)(w)

    return f, [S((2,), jnp.uint32), S((1024, 1024), bf), S((512, 1024), bf)]


@job
def big_transformer_layer():
    D, T, H, B = 1024, 512, 8, 4

    def f(wq, wk, wv, wo, x):
        def loss(ws):
            wq, wk, wv, wo = ws
            q = (x @ wq).reshape(B, T, H, D // H)
            k = (x @ wk).reshape(B, T, H, D // H)
            v = (x @ wv).reshape(B, T, H, D // H)
            s = jnp.einsum("bthd,bshd->bhts", q, k).astype(f32) / 8.0
            p = jax.nn.softmax(s, -1).astype(bf)
            o = jnp.einsum("bhts,bshd->bthd", p, v).reshape(B, T, D)
            return jnp.mean((x + o @ wo).astype(f32) ** 2)

        return jax.grad(loss)((wq, wk, wv, wo))

    return f, [S((D, D), bf)] * 4 + [S((B, T, D), bf)]


@job
def hbm_scan_ys_big():
    def f(h, xs, w):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h * 2.0

        return lax.scan(step, h, xs)

    return f, [S((4096, 4096), bf), S((4, 4096, 4096), bf), S((4096, 4096), bf)]


@job
def hbm_loop_scalars():
    def f(a, b, n):
        def body(c):
            i, a, b, s = c
            a = jnp.sin(a) * 0.5 + b[:4096] * s
            return i + 1, a, b, s + a[0, 0]

        return lax.while_loop(lambda c: c[0] < n, body, (0, a, b, 0.0))

    return f, [S((4096, 4096), f32), S((8192, 4096), f32), S((), i32)]


# -- programs of the kinds users compile (training steps, attention, MoE, decoding, convs) -----


def _adam(p, g, m, v):
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g.astype(f32), m, g)
    v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * jnp.square(g.astype(f32)), v, g)
    p = jax.tree_util.tree_map(
        lambda p, m, v: (p.astype(f32) - 1e-3 * m / (jnp.sqrt(v) + 1e-8)).astype(p.dtype), p, m, v
    )
    return p, m, v


def _block(x, w, heads, kv_heads=None, causal=True):
    """A pre-norm transformer block: GQA attention with a causal mask, then a gelu MLP."""
    B, T, D = x.shape
    kv_heads = kv_heads or heads
    hd = D // heads
    h = x * lax.rsqrt(jnp.mean(jnp.square(x.astype(f32)), -1, keepdims=True) + 1e-6).astype(x.dtype)
    q = (h @ w["q"]).reshape(B, T, kv_heads, heads // kv_heads, hd)
    k = (h @ w["k"]).reshape(B, T, kv_heads, hd)
    v = (h @ w["v"]).reshape(B, T, kv_heads, hd)
    s = jnp.einsum("btkgd,bskd->bkgts", q, k).astype(f32) / jnp.sqrt(hd).astype(f32)
    if causal:
        s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
    p = jax.nn.softmax(s, -1).astype(x.dtype)
    o = jnp.einsum("bkgts,bskd->btkgd", p, v).reshape(B, T, D)
    x = x + o @ w["o"]
    h = x * lax.rsqrt(jnp.mean(jnp.square(x.astype(f32)), -1, keepdims=True) + 1e-6).astype(x.dtype)
    return x + jax.nn.gelu(h @ w["up"]) @ w["down"]


def _layer_params(D, F, heads, kv_heads):
    kv = D * kv_heads // heads
    return {
        "q": S((D, D), bf),
        "k": S((D, kv), bf),
        "v": S((D, kv), bf),
        "o": S((D, D), bf),
        "up": S((D, F), bf),
        "down": S((F, D), bf),
    }


def _train_step(L, D, F, heads, kv_heads, B, T, V):
    def f(params, m, v, tokens):
        def loss(params):
            x = params["embed"][tokens[:, :-1]]
            for w in params["layers"]:
                x = _block(x, w, heads, kv_heads)
            logits = (x @ params["embed"].T).astype(f32)
            lp = jax.nn.log_softmax(logits, -1)
            return -jnp.mean(jnp.take_along_axis(lp, tokens[:, 1:, None], -1))

        loss_, g = jax.value_and_grad(loss)(params)
        params, m, v = _adam(params, g, m, v)
        return loss_, params, m, v

    params = {"embed": S((V, D), bf), "layers": [_layer_params(D, F, heads, kv_heads)] * L}
    state = jax.tree_util.tree_map(lambda s: S(s.shape, f32), params)
    n = len(jax.tree_util.tree_leaves(params))
    donate = tuple(range(3 * n))
    return f, [params, state, state, S((B, T + 1), i32)], dict(donate=donate)


@job
def train_step_small():
    return _train_step(L=2, D=256, F=1024, heads=4, kv_heads=2, B=4, T=128, V=4096)


@job
def train_step_big():
    return _train_step(L=2, D=1024, F=4096, heads=8, kv_heads=2, B=4, T=512, V=32000)


@job
def attn_causal_gqa():
    def f(x, w):
        return _block(x, w, heads=16, kv_heads=4)

    return f, [S((2, 1024, 1024), bf), _layer_params(1024, 2048, 16, 4)]


@job
def moe_topk():
    E, K, D, F, N = 8, 2, 512, 1024, 2048

    def f(x, router, w_in, w_out):
        gates = jax.nn.softmax((x @ router).astype(f32), -1)
        top_g, top_e = lax.top_k(gates, K)  # [N, K]
        cap = N * K // E
        flat_e = top_e.reshape(-1)
        onehot = jax.nn.one_hot(flat_e, E, dtype=i32)
        pos = (jnp.cumsum(onehot, 0) - 1) * onehot
        slot = jnp.sum(pos, -1)
        keep = slot < cap
        dest = jnp.where(keep, flat_e * cap + slot, E * cap)
        tok = jnp.repeat(jnp.arange(N), K)
        buf = jnp.zeros((E * cap + 1, D), x.dtype).at[dest].set(x[tok])
        h = buf[:-1].reshape(E, cap, D)
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", h, w_in))
        y = jnp.einsum("ecf,efd->ecd", h, w_out).reshape(E * cap, D)
        y = jnp.concatenate([y, jnp.zeros((1, D), y.dtype)])[dest]
        w = (top_g.reshape(-1) * keep).astype(x.dtype)[:, None]
        return jnp.zeros_like(x).at[tok].add(y * w)

    return f, [S((N, D), bf), S((D, E), bf), S((E, D, F), bf), S((E, F, D), bf)]


@job
def remat_scan_layers():
    L, D, B = 6, 512, 256

    def f(ws, x):
        def loss(ws):
            @jax.checkpoint
            def layer(h, w):
                return jnp.tanh(h @ w["a"]) @ w["b"] + h, None

            h, _ = lax.scan(layer, x, ws)
            return jnp.mean(jnp.square(h.astype(f32)))

        return jax.grad(loss)(ws)

    return f, [{"a": S((L, D, 2 * D), bf), "b": S((L, 2 * D, D), bf)}, S((B, D), bf)]


@job
def dp_pmean_step():
    D, B = 512, 64

    def step(w, m, x, y):
        def loss(w):
            h = jax.nn.relu(x @ w["a"]) @ w["b"]
            return jnp.mean(jnp.square((h - y).astype(f32)))

        loss_, g = jax.value_and_grad(loss)(w)
        g = lax.pmean(g, "x")
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g.astype(f32), m, g)
        w = jax.tree_util.tree_map(lambda w, m: (w.astype(f32) - 0.01 * m).astype(w.dtype), w, m)
        return lax.pmean(loss_, "x"), w, m

    mesh4 = Mesh(devs.reshape(-1)[:4], ("x",))
    rep, shard = P(), P("x")
    f = jax.shard_map(
        step,
        mesh=mesh4,
        in_specs=(rep, rep, shard, shard),
        out_specs=(rep, rep, rep),
        check_vma=False,
    )
    w = {"a": S((D, 4 * D), bf), "b": S((4 * D, D), bf)}
    m = {"a": S((D, 4 * D), f32), "b": S((4 * D, D), f32)}
    specs = [rep] * 4 + [shard, shard]
    return f, [w, m, S((4 * B, D), bf), S((4 * B, D), bf)], dict(mesh=4, specs=specs)


@job
def kv_cache_decode():
    L, H, hd, T, B, D, V = 2, 8, 128, 512, 4, 1024, 8192

    def f(embed, wqkv, wo, cache_k, cache_v, tok, n):
        def body(c):
            i, tok, ck, cv, out = c
            x = embed[tok]  # [B, D]
            for layer in range(L):
                q, k, v = jnp.split(x @ wqkv[layer], 3, -1)
                ck = lax.dynamic_update_slice(ck, k.reshape(1, B, 1, H, hd), (layer, 0, i, 0, 0))
                cv = lax.dynamic_update_slice(cv, v.reshape(1, B, 1, H, hd), (layer, 0, i, 0, 0))
                s = jnp.einsum("bhd,bthd->bht", q.reshape(B, H, hd), ck[layer]).astype(f32)
                s = jnp.where(jnp.arange(T) <= i, s, -1e9)
                p = jax.nn.softmax(s, -1).astype(bf)
                o = jnp.einsum("bht,bthd->bhd", p, cv[layer]).reshape(B, D)
                x = x + o @ wo[layer]
            nxt = jnp.argmax((x @ embed.T).astype(f32), -1).astype(i32)
            out = lax.dynamic_update_slice(out, nxt[:, None], (0, i))
            return i + 1, nxt, ck, cv, out

        c = (0, tok, cache_k, cache_v, jnp.zeros((B, 64), i32))
        c = lax.while_loop(lambda c: c[0] < n, body, c)
        return c[4], c[2], c[3]

    cache = S((L, B, T, H, hd), bf)
    args = [S((V, D), bf), S((L, D, 3 * D), bf), S((L, D, D), bf), cache, cache, S((B,), i32)]
    return f, [*args, S((), i32)], dict(donate=(3, 4))


@job
def conv_net():
    def f(params, x, y):
        def loss(params):
            h = x
            for w, g in params:
                h = lax.conv_general_dilated(
                    h, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
                )
                mu = h.mean((0, 1, 2))
                var = jnp.square(h - mu).mean((0, 1, 2))
                h = jax.nn.relu((h - mu) * lax.rsqrt(var + 1e-5) * g)
                h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            logits = h.mean((1, 2)).astype(f32)
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

        g = jax.grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)

    chans = [(3, 64), (64, 128), (128, 256)]
    params = [(S((3, 3, a, b), bf), S((b,), bf)) for a, b in chans]
    return f, [params, S((32, 64, 64, 3), bf), S((32,), i32)]


@job
def embed_large_vocab():
    V, D, B, T = 262144, 512, 8, 256

    def f(table, ids, w):
        def loss(table, w):
            h = table[ids]  # [B, T, D]
            return jnp.mean(jnp.square((h @ w).astype(f32)))

        gt, gw = jax.grad(loss, argnums=(0, 1))(table, w)
        return table - 0.01 * gt, w - 0.01 * gw

    return f, [S((V, D), bf), S((B, T), i32), S((D, D), bf)], dict(donate=(0,))


@job
def layernorm_mlp_infer():
    def f(x, g, w1, w2):
        mu = x.mean(-1, keepdims=True)
        h = (x - mu) * lax.rsqrt(jnp.square(x - mu).mean(-1, keepdims=True) + 1e-5) * g
        return jax.nn.gelu(h @ w1) @ w2

    return f, [S((16, 512, 1024), bf), S((1024,), bf), S((1024, 4096), bf), S((4096, 1024), bf)]


@job
def xent_large_vocab():
    def f(h, w, y):
        def loss(w):
            logits = (h @ w).astype(f32)
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

        return jax.value_and_grad(loss)(w)

    return f, [S((2048, 1024), bf), S((1024, 32768), bf), S((2048,), i32)]


stats = {}
mesh = Mesh(devs[:1], ("x",))
for name, mk in jobs.items():
    if a.only and name not in a.only.split(","):
        continue
    r = mk()
    f, args = r[0], r[1]
    opts = r[2] if len(r) > 2 else {}
    donate = opts.get("donate", ())  # indices of flattened arguments
    flat, tree = jax.tree_util.tree_flatten(args)
    # A job may run over a mesh of `mesh` devices (axis "x") with a spec per flattened argument.
    m_ = Mesh(devs.reshape(-1)[: opts.get("mesh", 1)], ("x",))
    specs = opts.get("specs", [P()] * len(flat))
    sds = [S(x.shape, x.dtype, sharding=NamedSharding(m_, sp)) for x, sp in zip(flat, specs)]
    before = set(os.listdir(raw))

    def g(*fl, f=f, tree=tree):
        return f(*jax.tree_util.tree_unflatten(tree, fl))

    g.__name__ = name
    m = jax.jit(g, donate_argnums=donate).lower(*sds).compile().memory_analysis()
    stats[name] = {k: getattr(m, k) for k in dir(m) if k.endswith("in_bytes")}
    pattern = re.compile(rf"(module_\d+\.jit_{re.escape(name)}\.[^.]+)")
    src = sorted({p.group(1) for n in set(os.listdir(raw)) - before if (p := pattern.match(n))})[-1]
    dst = os.path.join(a.out, name)
    os.makedirs(dst, exist_ok=True)
    for suffix in (
        "after_optimizations.txt",
        "after_optimizations-buffer-assignment.txt",
        "target_arguments.txt",
    ):
        p = os.path.join(raw, f"{src}.{suffix}")
        if os.path.exists(p):
            with open(p) as fh:
                text = re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', fh.read())  # no paths
            with open(
                os.path.join(dst, f"{name}.{suffix.replace('after_optimizations-', '')}"), "w"
            ) as fh:
                fh.write(text)
with open(os.path.join(a.out, "memory_analysis.json"), "w") as fh:
    json.dump(dict(topology=a.topology, jax=jax.__version__, memory_analysis=stats), fh, indent=1)
shutil.rmtree(raw, ignore_errors=True)
print("ok", a.topology, sorted(stats))
