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


stats = {}
mesh = Mesh(devs[:1], ("x",))
for name, mk in jobs.items():
    if a.only and name not in a.only.split(","):
        continue
    r = mk()
    f, args = r[0], r[1]
    donate = r[2].get("donate", ()) if len(r) > 2 else ()  # indices of flattened arguments
    flat, tree = jax.tree_util.tree_flatten(args)
    sds = [S(x.shape, x.dtype, sharding=NamedSharding(mesh, P())) for x in flat]
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
