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


def donating(args, positions):
    """Flattened indices of the leaves of the positional arguments `positions`."""
    out, k = [], 0
    for n, arg in enumerate(args):
        leaves = len(jax.tree_util.tree_leaves(arg))
        out += list(range(k, k + leaves)) if n in positions else []
        k += leaves
    return dict(donate=tuple(out))


@job
def cnn_bn_train():
    def f(params, stats, x, y):
        def loss(params):
            h, new = x, []
            for (w, g, b), (rm, rv) in zip(params, stats):
                h = lax.conv_general_dilated(
                    h, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
                )
                hf = h.astype(f32)
                mu, var = hf.mean((0, 1, 2)), hf.var((0, 1, 2))
                h = jax.nn.relu((hf - mu) * lax.rsqrt(var + 1e-5) * g + b).astype(bf)
                new.append((0.9 * rm + 0.1 * mu, 0.9 * rv + 0.1 * var))
            logits = h.mean((1, 2)).astype(f32) @ jnp.ones((h.shape[-1], 10), f32)
            xent = -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))
            return xent, new

        (xent, new), g = jax.value_and_grad(loss, has_aux=True)(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)
        return xent, params, new

    chans = [(3, 64), (64, 128)]
    params = [(S((3, 3, a, b), bf), S((b,), f32), S((b,), f32)) for a, b in chans]
    stats = [(S((b,), f32), S((b,), f32)) for _, b in chans]
    args = [params, stats, S((16, 32, 32, 3), bf), S((16,), i32)]
    return f, args, donating(args, (0, 1))


@job
def causal_attn_remat():
    pol = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def block(x, wq, wk, wv):
        q, k, v = x @ wq, x @ wk, x @ wv
        s = jnp.einsum("btd,bsd->bts", q, k).astype(f32) / 16.0
        mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
        p = jax.nn.softmax(jnp.where(mask, s, -1e9), -1).astype(bf)
        return x + jnp.einsum("bts,bsd->btd", p, v)

    def f(ws, x):
        def loss(ws):
            h = x
            for w in ws:
                h = jax.checkpoint(block, policy=pol)(h, *w)
            return jnp.mean(jnp.square(h.astype(f32)))

        return jax.grad(loss)(ws)

    ws = [tuple(S((256, 256), bf) for _ in range(3)) for _ in range(2)]
    return f, [ws, S((4, 256, 256), bf)]


@job
def grad_accum_scan():
    def loss(w, x, y):
        return jnp.mean(jnp.square((jnp.tanh(x @ w["a"]) @ w["b"] - y).astype(f32)))

    def f(w, xs, ys):
        def body(acc, xy):
            g = jax.grad(loss)(w, *xy)
            return jax.tree_util.tree_map(lambda a, g: a + g.astype(f32), acc, g), None

        zero = jax.tree_util.tree_map(lambda t: jnp.zeros(t.shape, f32), w)
        g, _ = lax.scan(body, zero, (xs, ys))
        return jax.tree_util.tree_map(lambda w, g: (w - 0.01 * g / 4).astype(bf), w, g)

    w = {"a": S((512, 1024), bf), "b": S((1024, 256), bf)}
    args = [w, S((4, 128, 512), bf), S((4, 128, 256), bf)]
    return f, args, donating(args, (0,))


@job
def loss_scale_mixed():
    def f(w, scale, x, y):
        def loss(w):
            h = jax.nn.gelu(x.astype(bf) @ w["a"].astype(bf))
            out = (h @ w["b"].astype(bf)).astype(f32)
            return jnp.mean((out - y) ** 2) * scale

        g = jax.grad(loss)(w)
        g = jax.tree_util.tree_map(lambda g: g / scale, g)
        leaves = jax.tree_util.tree_leaves(g)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(t)) for t in leaves]))
        new_w = lax.cond(
            finite,
            lambda: jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, w, g),
            lambda: w,
        )
        return new_w, jnp.where(finite, scale * 2.0, scale / 2.0)

    w = {"a": S((512, 1024), f32), "b": S((1024, 256), f32)}
    args = [w, S((), f32), S((256, 512), f32), S((256, 256), f32)]
    return f, args, donating(args, (0,))


@job
def embed_scatter_grad():
    def f(table, ids, w, y):
        def loss(table, w):
            h = table[ids].mean(1)
            return jnp.mean(jnp.square((h @ w).astype(f32) - y))

        gt, gw = jax.grad(loss, argnums=(0, 1))(table, w)
        return table - 0.1 * gt, w - 0.1 * gw

    args = [S((32000, 256), f32), S((64, 20), i32), S((256, 128), f32), S((64, 128), f32)]
    return f, args, donating(args, (0,))


@job
def beam_search_kv():
    B, K, T, D, V = 4, 4, 128, 256, 2048

    def f(emb, w, cache, tok0):
        def body(c):
            i, toks, scores, cache, seqs = c
            x = emb[toks]  # [B, K, D]
            cache = lax.dynamic_update_slice(cache, x[:, :, None, :], (0, 0, i, 0))
            att = jnp.einsum("bkd,bktd->bkt", x, cache).astype(f32)
            att = jnp.where(jnp.arange(T) <= i, att, -1e9)
            ctx = jnp.einsum("bkt,bktd->bkd", jax.nn.softmax(att, -1).astype(bf), cache)
            logp = jax.nn.log_softmax((ctx @ w).astype(f32), -1)  # [B, K, V]
            cand = (scores[:, :, None] + logp).reshape(B, K * V)
            scores, idx = lax.top_k(cand, K)
            beam, toks = idx // V, (idx % V).astype(i32)
            cache = jnp.take_along_axis(cache, beam[:, :, None, None], 1)
            seqs = jnp.take_along_axis(seqs, beam[:, :, None], 1)
            seqs = lax.dynamic_update_slice(seqs, toks[:, :, None], (0, 0, i))
            return i + 1, toks, scores, cache, seqs

        c = (0, tok0, jnp.zeros((B, K), f32), cache, jnp.zeros((B, K, T), i32))
        c = lax.while_loop(lambda c: c[0] < T, body, c)
        return c[4], c[2], c[3]

    args = [S((V, D), bf), S((D, V), bf), S((B, K, T, D), bf), S((B, K), i32)]
    return f, args, donating(args, (2,))


@job
def topk_sample_decode():
    def f(w, key, tok):
        def body(i, c):
            key, tok, out = c
            key, sub = jax.random.split(key)
            logits = (w[tok] @ w.T).astype(f32)
            v, ix = lax.top_k(logits, 40)
            pick = jax.random.categorical(sub, v)
            tok = jnp.take_along_axis(ix, pick[:, None], 1)[:, 0]
            return key, tok, out.at[:, i].set(tok)

        return lax.fori_loop(0, 32, body, (key, tok, jnp.zeros((8, 32), i32)))[2]

    return f, [S((8192, 512), bf), S((2,), jnp.uint32), S((8,), i32)]


@job
def vmap_ensemble():
    def loss(w, x, y):
        return jnp.mean(jnp.square(jnp.tanh(x @ w["a"]) @ w["b"] - y))

    def f(ws, x, y):
        gs = jax.vmap(jax.grad(loss), in_axes=(0, None, None))(ws, x, y)
        per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(
            jax.tree_util.tree_map(lambda t: t[0], ws), x[:, None], y[:, None]
        )
        return jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, ws, gs), per_ex

    ws = {"a": S((8, 128, 256), f32), "b": S((8, 256, 128), f32)}
    return f, [ws, S((64, 128), f32), S((64, 128), f32)]


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

    return f, [S((256, 1024), f32), S((128,), f32)]


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
            return jnp.sum(h.astype(f32))

        return jax.grad(loss)(ws)

    return f, [S((8, 512, 512), bf), S((256, 512), bf)]


@job
def cond_in_vmap():
    def one(x, k):
        return lax.cond(
            k > 0, lambda x: (jnp.sin(x) * 2, x.sum()), lambda x: (jnp.cos(x), -x.max()), x
        )

    def f(xs, ks):
        ys, ss = jax.vmap(one)(xs, ks)
        sw = jax.vmap(lambda x, k: lax.switch(k, [jnp.sin, jnp.cos, jnp.exp], x))(xs, ks % 3)
        return ys + sw, ss

    return f, [S((64, 4096), f32), S((64,), i32)]


@job
def fori_mixed_dtypes():
    def f(a, b, c, d):
        def body(i, s):
            a, b, c, d, e = s
            a = a * 1.01 + b.astype(jnp.float16)
            b = (b + i.astype(i8)) % 100
            c = c ^ (i.astype(jnp.uint32) * jnp.uint32(2654435761))
            d = jnp.logical_xor(d, a > 0)
            e = e + a.astype(bf).sum()
            return a, b, c, d, e

        return lax.fori_loop(0, 7, body, (a, b, c, d, jnp.zeros((), bf)))

    sh = (333, 170)
    return f, [S(sh, jnp.float16), S(sh, i8), S(sh, jnp.uint32), S(sh, jnp.bool_)]


@job
def int8_fp8_matmul():
    def f(a, b, c, d, sa, sb):
        i = lax.dot(a, b, preferred_element_type=i32)
        fp = lax.dot(c, d, preferred_element_type=f32)
        q = jnp.clip(jnp.round(i.astype(f32) * sa * sb), -127, 127).astype(i8)
        return q, fp.astype(bf)

    e4 = jnp.float8_e4m3fn
    return f, [
        S((512, 1024), i8),
        S((1024, 768), i8),
        S((512, 1024), e4),
        S((1024, 768), e4),
        S((), f32),
        S((768,), f32),
    ]


@job
def donate_partial():
    def f(a, b, c, d):
        return a + 1, (b * 2).astype(bf), c[:256] + d, d

    args = [S((512, 512), f32), S((512, 512), f32), S((512, 512), f32), S((256, 512), f32)]
    return f, args, donating(args, (0, 1, 2))


@job
def donate_swap():
    def f(a, b, n):
        return lax.fori_loop(0, n, lambda i, c: (c[1] * 0.5, c[0] + 1.0), (a, b))

    args = [S((1024, 256), f32), S((1024, 256), f32), S((), i32)]
    return f, args, donating(args, (0, 1))


@job
def tiny_scalars():
    def f(a, b, c):
        x = a * b + c
        y = jnp.where(x > 0, x, -x)
        u = jnp.uint8(3) + c.astype(jnp.uint8)
        return x, y, a.astype(jnp.int16), jnp.stack([a, b, c]), (a > b), u

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
        gates = (jnp.concatenate([x, h], -1) @ w).astype(f32)
        i, fg, o, g = jnp.split(gates, 4, -1)
        cs = jax.nn.sigmoid(fg) * cs + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = (jax.nn.sigmoid(o) * jnp.tanh(cs)).astype(bf)
        return (h, cs), h

    def f(w, xs):
        def loss(w):
            c0 = (jnp.zeros((64, 256), bf), jnp.zeros((64, 256), f32))
            _, hs = lax.scan(lambda c, x: cell(c, x, w), c0, xs, reverse=True, unroll=2)
            return jnp.sum(jnp.square(hs.astype(f32)))

        return jax.value_and_grad(loss)(w)

    return f, [S((512, 1024), bf), S((16, 64, 256), bf)]


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

    return f, [S((1024, 512), f32), S((), f32)]


@job
def fsdp_allgather_rs():
    D, B = 512, 128

    def step(w, x):
        def loss(w):
            full = lax.all_gather(w, "x", axis=1, tiled=True)  # [D, 4D]
            h = jax.nn.relu(x @ full)
            return jnp.mean(jnp.square(h.astype(f32)))

        g = jax.grad(lambda w: loss(w))(w)
        g = lax.all_gather(g, "x", axis=1, tiled=True)
        g = lax.psum_scatter(g, "x", scatter_dimension=1, tiled=True)
        return w - (0.01 * g).astype(w.dtype)

    mesh4 = Mesh(devs.reshape(-1)[:4], ("x",))
    f = jax.shard_map(
        step, mesh=mesh4, in_specs=(P(None, "x"), P("x")), out_specs=P(None, "x"), check_vma=False
    )
    args = [S((D, 4 * D), bf), S((4 * B, D), bf)]
    return f, args, dict(mesh=4, specs=[P(None, "x"), P("x")], donate=(0,))


@job
def pjit_sharded_mlp():
    def f(w1, w2, x):
        def loss(w1, w2):
            h = jax.nn.gelu(x @ w1)
            return jnp.mean(jnp.square((h @ w2).astype(f32)))

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.01 * g1, w2 - 0.01 * g2

    args = [S((1024, 4096), bf), S((4096, 1024), bf), S((256, 1024), bf)]
    return f, args, dict(mesh=4, specs=[P(None, "x"), P("x", None), P("x")], donate=(0, 1))


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
path = os.path.join(a.out, "memory_analysis.json")
if a.only and os.path.exists(path):  # a partial run adds to the folder's figures
    with open(path) as fh:
        stats = {**json.load(fh)["memory_analysis"], **stats}
with open(path, "w") as fh:
    json.dump(dict(topology=a.topology, jax=jax.__version__, memory_analysis=stats), fh, indent=1)
shutil.rmtree(raw, ignore_errors=True)
print("ok", a.topology, sorted(stats))
