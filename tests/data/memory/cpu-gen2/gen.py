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
def adam_step():
    def f(params, grads, m, v, t):
        b1, b2 = 0.9, 0.999
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1**t, 1 - b2**t
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - 1e-3 * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), params, m, v
        )
        return params, m, v

    tree = {"w": S((256, 128), f32), "b": S((128,), f32), "e": S((64, 32), f32)}
    return f, [tree, tree, tree, tree, S((), f32)], (0, 2, 3)


@job
def layernorm_xent():
    def loss(w, g, x, y):
        mu = x.mean(-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g
        logits = h @ w
        lp = jax.nn.log_softmax(logits, -1)
        return -jnp.mean(jnp.take_along_axis(lp, y[:, None], 1))

    def f(w, g, x, y):
        loss_, (gw, gg) = jax.value_and_grad(loss, argnums=(0, 1))(w, g, x, y)
        return loss_, w - 0.1 * gw, g - 0.1 * gg

    return f, [S((128, 100), f32), S((128,), f32), S((32, 128), f32), S((32,), i32)]


@job
def fori_tuple_dus():
    def f(buf, x):
        def body(i, c):
            buf, acc, k = c
            row = lax.dynamic_slice(x, (i, 0), (1, 64))
            buf = lax.dynamic_update_slice(buf, row * acc[:1], (k, 0))
            return buf, acc + row[0], (k + 3) % 16

        return lax.fori_loop(0, 10, body, (buf, jnp.zeros((64,), f32), jnp.int32(0)))

    return f, [S((16, 64), f32), S((32, 64), f32)]


@job
def lax_map_rows():
    def f(x, w):
        return lax.map(lambda r: jnp.tanh(r @ w).sum() * r, x)

    return f, [S((24, 96), f32), S((96, 96), f32)]


@job
def segment_sum_dups():
    def f(data, seg, upd, idx):
        s = jax.ops.segment_sum(data, seg, num_segments=10)
        t = jnp.zeros((50, 16), f32).at[idx].add(upd)
        u = jnp.zeros((50,), i32).at[idx].add(1)
        return s, t, u, jax.ops.segment_max(data, seg, num_segments=10)

    return f, [S((200, 16), f32), S((200,), i32), S((40, 16), f32), S((40,), i32)]


@job
def argmax_topk_multi():
    def f(x, y):
        v, i = lax.top_k(x, 5)
        return jnp.argmax(x, -1), jnp.argmin(y, 0), v, i, jnp.argsort(y, axis=-1, descending=True)

    return f, [S((40, 300), f32), S((40, 30), i32)]


@job
def where_dtypes():
    def f(a, b, c, d, e):
        m = a > 0
        x = jnp.where(m, b.astype(f32), c.astype(f32))
        y = jnp.where(b > 3, d, (d * 2).astype(f16))
        z = jnp.where(m, e, e * (1 + 2j))
        return x.astype(bf), y, z, jnp.where(c > 0, a, jnp.int8(-1)), m & (b < 0)

    return f, [
        S((64, 64), i8),
        S((64, 64), bf),
        S((64, 64), f16),
        S((64, 64), f16),
        S((64, 64), jnp.complex64),
    ]


@job
def gather_batch():
    def f(x, idx):
        g = jax.vmap(lambda r, i: r[i])(x, idx)
        h = jax.vmap(lambda r, i: jnp.take(r, i, axis=0))(x, idx % 7)
        return g * 2, h.sum(1)

    return f, [S((8, 100, 16), f32), S((8, 12), i32)]


@job
def pad_concat_rev():
    def f(x, y):
        p = jnp.pad(x, ((2, 1), (0, 5)), constant_values=1.0)
        c = jnp.concatenate([p, p[::-1, ::-1]], axis=1)
        t = jnp.transpose(y, (2, 0, 1))
        return c.T, t[:, ::-1] + 1, lax.pad(x, 0.0, ((1, 1, 1), (0, 0, 2)))

    return f, [S((30, 20), f32), S((8, 16, 24), f32)]


@job
def custom_vjp_clip():
    @jax.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (jnp.clip(g, -1, 1),)

    clip_grad.defvjp(fwd, bwd)

    def f(w, x):
        return jax.grad(lambda w: jnp.sum(jnp.sin(clip_grad(x @ w)) ** 2))(w)

    return f, [S((64, 64), f32), S((32, 64), f32)]


@job
def checkpoint_policy():
    def f(ws, x):
        def layer(x, w):
            return jax.nn.gelu(x @ w)

        pol = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
        lay = jax.checkpoint(layer, policy=pol)

        def loss(ws):
            h = x
            for w in ws:
                h = lay(h, w)
            return jnp.sum(h**2)

        return jax.grad(loss)(ws)

    return f, [[S((96, 96), f32)] * 3, S((32, 96), f32)]


@job
def while_cond_live():
    def f(x, y, n):
        def body(c):
            i, a, b = c
            a, b = lax.cond(
                i % 3 == 0,
                lambda a, b: (a * 2.0, b),
                lambda a, b: (a + jnp.tanh(b @ b).sum(), b + a[:, :32].sum()),
                a,
                b,
            )
            return i + 1, a, b

        return lax.while_loop(lambda c: c[0] < n, body, (0, x, y))

    return f, [S((48, 64), f32), S((32, 32), f32), S((), i32)]


@job
def nested_scans():
    def f(xs, h):
        def outer(h, x):
            def inner(g, y):
                g = jnp.tanh(g + y)
                return g, g.sum()

            g, s = lax.scan(inner, h, x)
            return g * 0.5, s

        return lax.scan(outer, h, xs)

    return f, [S((5, 7, 32), f32), S((32,), f32)]


@job
def vmap_while():
    def one(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.01 + 1), (0, x))[1]

    def f(xs, ns):
        return jax.vmap(one)(xs, ns)

    return f, [S((12, 40), f32), S((12,), i32)]


@job
def large_constant():
    table = np.arange(64 * 1024, dtype=np.float32).reshape(256, 256) / 7.0

    def f(x, i):
        return x @ table + jnp.asarray(table)[i], jnp.asarray(np.float32([1, 2, 3]))

    return f, [S((16, 256), f32), S((), i32)]


@job
def passthrough_param():
    def f(x, y, z):
        return x, y * 2, z, x

    return f, [S((64, 64), f32), S((32,), f32), S((8, 8), i32)]


@job
def multi_out_same_input():
    def f(x, y):
        return x, x + 1, x, y.reshape(-1), y

    return f, [S((128, 32), f32), S((16, 16), f32)], (0,)


@job
def bool_tuples():
    def f(a, b):
        def body(i, c):
            p, q = c
            return jnp.logical_xor(p, q), jnp.logical_or(p, a[i % 4])

        p, q = lax.fori_loop(0, 5, body, (a[0], b))
        return p, q, jnp.all(a, 0), a.any()

    return f, [S((4, 128), jnp.bool_), S((128,), jnp.bool_)]


@job
def multi_sort_keys():
    def f(k1, k2, v):
        return lax.sort((k1, k2, v), num_keys=2), lax.sort(v[::-1], dimension=0)

    return f, [S((500,), i32), S((500,), f32), S((500,), f32)]


@job
def switch_tuples():
    def f(i, x, y):
        return lax.switch(
            i,
            [
                lambda x, y: (x, y.astype(f16), jnp.int32(0)),
                lambda x, y: (x * 2, (y + 1).astype(f16), jnp.int32(1)),
                lambda x, y: (jnp.sin(x) @ jnp.cos(x), y.T.astype(f16), jnp.int32(2)),
            ],
            x,
            y,
        )

    return f, [S((), i32), S((48, 48), f32), S((16, 16), f32)]


@job
def scan_donated_carry():
    def f(c, xs):
        def step(c, x):
            c = lax.dynamic_update_slice(c, x[None], (jnp.argmax(x) % 8, 0))
            return c, c.sum(0)

        return lax.scan(step, c, xs)

    return f, [S((8, 64), f32), S((20, 64), f32)], (0,)


@job
def variadic_reduce():
    def f(x, y):
        def red(a, b):
            return (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1]))

        m, am = lax.reduce((x, y), (-jnp.inf, 0), red, (1,))
        return m, am, lax.reduce_precision(x, 5, 10)

    return f, [S((64, 200), f32), S((64, 200), i32)]


@job
def int_bitops():
    def f(a, b):
        c = (a << 2) ^ (b.astype(jnp.uint8) >> 1)
        d = lax.population_count(b) + lax.clz(b)
        return c, d.astype(jnp.int16), (a.astype(i32) * b) % 7, lax.shift_right_logical(b, 3)

    return f, [S((96, 64), jnp.uint8), S((96, 64), i32)]


@job
def while_passthrough():
    def f(x, y, z):
        def body(c):
            i, a, b, zz = c
            return i + 1, a + b, b, zz

        return lax.while_loop(lambda c: c[0] < 7, body, (0, x, y, z))

    return f, [S((32, 32), f32), S((32, 32), f32), S((100,), i32)]


@job
def cond_branch_passthrough():
    def f(p, x, y):
        return lax.cond(p, lambda x, y: (x, y), lambda x, y: (y + 1, x * 2), x, y)

    return f, [S((), jnp.bool_), S((40, 40), f32), S((40, 40), f32)]


@job
def constant_outputs():
    def f(x):
        return (
            jnp.zeros((64, 64), f32),
            jnp.arange(10),
            x + 1,
            jnp.float32(3.0),
            jnp.zeros((0,), f32),
        )

    return f, [S((16,), f32)]


@job
def opt_barrier():
    def f(x, y):
        a, b = lax.optimization_barrier((x * 2, y + 1))
        c = lax.optimization_barrier(a @ b)
        return c + a.sum(), b

    return f, [S((64, 64), f32), S((64, 64), f32)]


@job
def sort_in_while():
    def f(x):
        def body(i, x):
            return jnp.sort(x * -1.0 + i, axis=-1)

        return lax.fori_loop(0, 3, body, x)

    return f, [S((16, 256), f32)]


@job
def donate_unused():
    def f(x, y, z):
        return (y * 2).astype(f16), x.sum(), z[:8]

    return f, [S((64, 64), f32), S((64, 64), f32), S((16, 16), f32)], (0, 1, 2)


@job
def while_in_cond_in_while():
    def f(x, n):
        def body(c):
            i, x = c

            def loop(x):
                return lax.fori_loop(0, 2, lambda j, y: y * 1.5 - j, x)

            x = lax.cond(i % 2 == 0, loop, lambda x: x[::-1], x)
            return i + 1, x

        return lax.while_loop(lambda c: c[0] < n, body, (0, x))[1]

    return f, [S((300,), f32), S((), i32)]


@job
def scatter_ops():
    def f(x, idx, u):
        a = x.at[idx].set(u)
        b = x.at[idx].max(u)
        c = x.at[idx].mul(u)
        return a, b, c, x.at[idx[:3]].get()

    return f, [S((64, 24), f32), S((10,), i32), S((10, 24), f32)]


@job
def complex_math():
    def f(z, w):
        y = z * jnp.conj(w) + jnp.exp(z)
        return jnp.abs(y), jnp.angle(y), y.real @ w.imag, (y @ w).astype(jnp.complex64)

    return f, [S((32, 32), jnp.complex64), S((32, 32), jnp.complex64)]


@job
def shard_map_collectives():
    def body(x, y):
        s = lax.psum(x.sum(0), "model")
        g = lax.all_gather(y, "model", tiled=True)
        r = lax.ppermute(x, "model", [(i, (i + 1) % 4) for i in range(4)])
        t = lax.psum_scatter(g, "model", scatter_dimension=0, tiled=True)
        a = lax.all_to_all(x, "model", 0, 1, tiled=True)
        return s[None] + r.sum(), t, a

    f = jax.shard_map(
        body,
        mesh=MESH,
        in_specs=(P("data", "model"), P(None, "model")),
        out_specs=(P("data", "model"), P(None, "model"), P("data", "model")),
        check_vma=False,
    )
    return f, [sharded((32, 64), f32, "data", "model"), sharded((16, 64), f32, None, "model")]


@job
def sharded_mlp_train():
    def f(w1, w2, x):
        def loss(w1, w2):
            return jnp.mean((jax.nn.relu(x @ w1) @ w2) ** 2)

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    return (
        f,
        [
            sharded((128, 512), f32, None, "model"),
            sharded((512, 128), f32, "model", None),
            sharded((64, 128), f32, "data", None),
        ],
        (0, 1),
    )


@job
def maxpool_grad():
    def f(x):
        def pool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

        return jax.grad(lambda x: jnp.sum(pool(x) ** 2))(x), lax.reduce_window(
            x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 1), (1, 1), (0, 0))
        )

    return f, [S((2, 32, 32, 8), f32)]


@job
def eig_trisolve():
    def f(a, b):
        w, v = jnp.linalg.eig(a)
        low = jnp.tril(a) + 8 * jnp.eye(24)
        return w, v, lax.linalg.triangular_solve(low, b, left_side=True, lower=True)

    return f, [S((24, 24), f32), S((24, 5), f32)]


@job
def bf16_train():
    def f(w1, w2, x):
        def loss(w1, w2):
            h = jax.nn.silu((x @ w1).astype(bf))
            return jnp.mean((h @ w2).astype(f32) ** 2)

        loss_, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
        return loss_, (w1 - 0.1 * g1).astype(bf), (w2 - 0.1 * g2).astype(bf)

    return f, [S((128, 256), bf), S((256, 128), bf), S((64, 128), bf)], (0, 1)


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
