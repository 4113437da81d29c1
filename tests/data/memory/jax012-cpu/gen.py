"""This folder's programs, and ../jax012-tpu's: jax 0.12.0.1 (Python >= 3.12).

  JAX_PLATFORMS=cpu python gen.py OUT_DIR [--only a,b]                       (XLA:CPU)
  ALLOW_MULTIPLE_LIBTPU_LOAD=1 TPU_ACCELERATOR_TYPE=v6e-4 \
      python gen.py OUT_DIR --topology v6e:2x2 [--only a,b]        (libtpu 0.0.50.1, no TPU)

CPU: OUT_DIR/module_*.jit_<job>.cpu_after_optimizations{,-buffer-assignment,-live-range,
-memory-usage-report}.txt and OUT_DIR/memory_analysis.json (jax's compiled.memory_analysis(),
every integer field, per job). TPU (deviceless ahead-of-time compilation for the topology):
OUT_DIR/<job>/<job>.after_optimizations.txt, .buffer-assignment.txt, .memory-usage-report.txt,
.live-range.txt, .target_arguments.txt, and OUT_DIR/memory_analysis.json ({topology, jax,
memory_analysis}).
Machine paths in metadata are cut to the file name. A run with --only adds to the folder's
memory_analysis.json.
"""

import argparse
import json
import os
import re
import shutil
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--topology", default="", help="a TPU topology (v5e:2x2, v6e:2x2); else CPU")
ap.add_argument("--only", default="")
a = ap.parse_args()
TPU = bool(a.topology)
os.makedirs(a.out, exist_ok=True)
raw = tempfile.mkdtemp(prefix="jax012_raw_")
os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
# XLA reads its flags when jax first initializes a backend, so they must be set before that.
os.environ["XLA_FLAGS"] = (
    "" if TPU else "--xla_force_host_platform_device_count=8 "
) + f"--xla_dump_to={raw} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

if TPU:
    from jax.experimental import topologies

    DEVICES = np.array(
        topologies.get_topology_desc(platform="tpu", topology_name=a.topology).devices
    )
else:
    DEVICES = np.array(jax.devices())
S = jax.ShapeDtypeStruct
bf, f32, f16, i8, i32 = jnp.bfloat16, jnp.float32, jnp.float16, jnp.int8, jnp.int32
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
def scan_rnn():
    def f(h0, xs, w):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum(-1)

        return lax.scan(cell, h0, xs)

    return f, [S((16, 256), f32), S((24, 16, 256), f32), S((256, 256), f32)]


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
            z = jnp.zeros((16, 128), f32)
            _, hs = lax.scan(lambda c, x: cell(c, x, w), (z, z), xs, reverse=True, unroll=2)
            return jnp.sum(hs**2)

        return jax.value_and_grad(loss)(w)

    return f, [S((256, 512), f32), S((12, 16, 128), f32)]


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

    return f, [S((512, 256), f32), S((), f32)]


@job
def fori_dus_cond():
    """A fori_loop writing rows with dynamic_update_slice, a lax.cond inside."""

    def f(x, w):
        def body(i, c):
            out, h = c
            h = lax.cond(i % 2 == 0, lambda h: jnp.tanh(h @ w), lambda h: h * 0.5, h)
            return lax.dynamic_update_slice(out, h[None], (i, 0, 0)), h

        out = jnp.zeros((8, *x.shape), f32)
        return lax.fori_loop(0, 8, body, (out, x))

    return f, [S((64, 256), f32), S((256, 256), f32)]


@job
def adam_donate():
    def f(params, m, v, g, t):
        b1, b2 = 0.9, 0.999

        def upd(p, m, v, g):
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            mh = m / (1 - b1**t)
            vh = v / (1 - b2**t)
            return p - 1e-3 * mh / (jnp.sqrt(vh) + 1e-8), m, v

        out = jax.tree_util.tree_map(upd, params, m, v, g)
        tm = jax.tree_util.tree_map
        return (
            tm(lambda o: o[0], out, is_leaf=lambda x: isinstance(x, tuple)),
            tm(lambda o: o[1], out, is_leaf=lambda x: isinstance(x, tuple)),
            tm(lambda o: o[2], out, is_leaf=lambda x: isinstance(x, tuple)),
        )

    p = {"w1": S((256, 512), f32), "b1": S((512,), f32), "w2": S((512, 128), f32)}
    args = [p, p, p, p, S((), f32)]
    return f, args, donating(args, (0, 1, 2))


@job
def remat_donate():
    """A remat'd MLP train step with its parameters donated (input_output_alias)."""

    def mlp(ws, x):
        for w in ws:
            x = jax.checkpoint(lambda x, w: jax.nn.gelu(x @ w))(x, w)
        return x

    def f(ws, x, y):
        loss, g = jax.value_and_grad(lambda ws: jnp.mean((mlp(ws, x) - y) ** 2))(ws)
        return [w - 0.01 * gw for w, gw in zip(ws, g)], loss

    ws = [S((256, 256), f32) for _ in range(4)]
    args = [ws, S((128, 256), f32), S((128, 256), f32)]
    return f, args, donating(args, (0,))


@job
def sort_topk():
    def f(x, v):
        s = jnp.sort(x, -1)
        idx = jnp.argsort(-x, -1)
        tv, ti = lax.top_k(x, 16)
        r = jnp.searchsorted(s[0], v)
        return s, idx, tv, ti, r, jnp.take_along_axis(x, idx, -1).sum(0)

    return f, [S((64, 512), f32), S((128,), f32)]


@job
def moe_topk():
    E, D, F, T, K = 8, 128, 256, 256, 2

    def f(x, gate, w1, w2):
        logits = x @ gate  # [T, E]
        val, idx = lax.top_k(jax.nn.softmax(logits, -1), K)
        onehot = jax.nn.one_hot(idx, E, dtype=x.dtype) * val[..., None]  # [T, K, E]
        disp = onehot.sum(1)  # [T, E]
        h = jax.nn.gelu(jnp.einsum("td,edf->tef", x, w1))
        y = jnp.einsum("tef,efd->ted", h, w2)
        return jnp.einsum("ted,te->td", y, disp), jnp.bincount(idx.reshape(-1), length=E)

    return f, [S((T, D), f32), S((D, E), f32), S((E, D, F), f32), S((E, F, D), f32)]


@job
def embed_scatter_grad():
    def f(table, ids, w, y):
        def loss(table, w):
            h = table[ids].mean(1)
            return jnp.mean(jnp.square(h @ w - y))

        gt, gw = jax.grad(loss, argnums=(0, 1))(table, w)
        return table - 0.1 * gt, w - 0.1 * gw

    args = [S((8192, 128), f32), S((64, 16), i32), S((128, 128), f32), S((64, 128), f32)]
    return f, args, donating(args, (0,))


@job
def subbyte_fp8():
    def f(a, b, c, d, s):
        q4 = jnp.clip(jnp.round(a * s), -8, 7).astype(jnp.int4)
        u4 = (jnp.abs(a) * 3).astype(jnp.uint4)
        deq = q4.astype(f32) / s
        fp = lax.dot(c, d, preferred_element_type=f32)
        e5 = (b * 0.5).astype(jnp.float8_e5m2)
        return q4, u4, deq @ b, fp.astype(bf), e5

    e4 = jnp.float8_e4m3fn
    return f, [
        S((128, 256), f32),
        S((256, 128), f32),
        S((128, 256), e4),
        S((256, 128), e4),
        S((), f32),
    ]


@job
def train_step():
    """A two-layer transformer training step, parameters donated."""
    L, D, T, H, B = 2, 128, 64, 4, 4

    def fwd(ws, x):
        for wq, wk, wv, wo, w1, w2 in ws:
            q = (x @ wq).reshape(B, T, H, D // H)
            k = (x @ wk).reshape(B, T, H, D // H)
            v = (x @ wv).reshape(B, T, H, D // H)
            s = jnp.einsum("bthd,bshd->bhts", q, k) / 8.0
            o = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, -1), v).reshape(B, T, D)
            x = x + o @ wo
            x = x + jax.nn.gelu(x @ w1) @ w2
        return x

    def f(ws, x):
        loss, g = jax.value_and_grad(lambda w: jnp.mean(fwd(w, x) ** 2))(ws)
        return loss, jax.tree_util.tree_map(lambda p, q: p - 1e-3 * q, ws, g)

    ws = [tuple(S(s, f32) for s in [(D, D)] * 4 + [(D, 4 * D), (4 * D, D)]) for _ in range(L)]
    args = [ws, S((B, T, D), f32)]
    return f, args, donating(args, (0,))


@job
def scan_layers_train():
    """Layers under lax.scan with remat, bf16 weights, gradient: the scan-over-layers idiom."""

    def f(ws, x):
        def loss(ws):
            def layer(h, w):
                return jax.checkpoint(lambda h, w: jnp.tanh(h @ w))(h, w), None

            h, _ = lax.scan(layer, x, ws)
            return jnp.mean(jnp.square(h.astype(f32)))

        value, g = jax.value_and_grad(loss)(ws)
        return value, ws - (0.01 * g).astype(ws.dtype)

    args = [S((6, 256, 256), bf), S((64, 256), bf)]
    return f, args, donating(args, (0,))


@job
def shard_map_collectives():
    def step(w, x):
        full = lax.all_gather(w, "x", axis=1, tiled=True)
        h = jax.nn.relu(x @ full)
        s = lax.psum(h.sum(0), "x")
        p = lax.ppermute(h, "x", [(k, (k + 1) % 4) for k in range(4)])
        g = lax.psum_scatter(x.T @ p, "x", scatter_dimension=1, tiled=True)
        return w - 0.01 * g, s

    mesh = Mesh(DEVICES.reshape(-1)[:4], ("x",))
    f = jax.shard_map(
        step,
        mesh=mesh,
        in_specs=(P(None, "x"), P("x")),
        out_specs=(P(None, "x"), P()),
        check_vma=False,
    )
    args = [S((128, 512), f32), S((256, 128), f32)]
    return f, args, dict(mesh=4, specs=[P(None, "x"), P("x")], donate=(0,))


@job
def sharded_mlp_train():
    def f(w1, w2, x):
        def loss(w1, w2):
            h = jax.nn.gelu(x @ w1)
            return jnp.mean(jnp.square(h @ w2))

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.01 * g1, w2 - 0.01 * g2

    args = [S((256, 1024), f32), S((1024, 256), f32), S((128, 256), f32)]
    return f, args, dict(mesh=4, specs=[P(None, "x"), P("x", None), P("x")], donate=(0, 1))


def main():
    stats = {}
    for name, mk in jobs.items():
        if a.only and name not in a.only.split(","):
            continue
        r = mk()
        f, args = r[0], r[1]
        opts = r[2] if len(r) > 2 else {}
        flat, tree = jax.tree_util.tree_flatten(args)
        # A job may run over a mesh of `mesh` devices (axis "x") with a spec per flat argument.
        mesh = Mesh(DEVICES.reshape(-1)[: opts.get("mesh", 1)], ("x",))
        specs = opts.get("specs", [P()] * len(flat))
        sds = [S(x.shape, x.dtype, sharding=NamedSharding(mesh, sp)) for x, sp in zip(flat, specs)]
        before = set(os.listdir(raw))

        def g(*fl, f=f, tree=tree):
            return f(*jax.tree_util.tree_unflatten(tree, fl))

        g.__name__ = name
        compiled = jax.jit(g, donate_argnums=opts.get("donate", ())).lower(*sds).compile()
        m = compiled.memory_analysis()
        stats[name] = {
            k: getattr(m, k)
            for k in dir(m)
            if not k.startswith("_") and isinstance(getattr(m, k), int)
        }
        pattern = re.compile(rf"(module_\d+\.jit_{re.escape(name)}\.[^.]+)")
        new = set(os.listdir(raw)) - before
        found = sorted({p.group(1) for n in new if (p := pattern.match(n))})
        if TPU:
            _keep_tpu(name, found[-1])
        else:
            _keep_cpu(found)
    path = os.path.join(a.out, "memory_analysis.json")
    old = {}
    if a.only and os.path.exists(path):  # a partial run adds to the folder's figures
        with open(path) as fh:
            old = json.load(fh)
        old = old.get("memory_analysis", old)
    stats = {**old, **stats}
    with open(path, "w") as fh:
        if TPU:
            figures = dict(topology=a.topology, jax=jax.__version__, memory_analysis=stats)
            json.dump(figures, fh, indent=1, sort_keys=True)
        else:
            json.dump(stats, fh, indent=1, sort_keys=True)
    shutil.rmtree(raw, ignore_errors=True)
    print("ok", a.topology or "cpu", sorted(stats))


def _scrub(path, dst):
    with open(path) as fh:
        text = re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', fh.read())  # no machine paths
    with open(dst, "w") as fh:
        fh.write(text)


KEEP_CPU = re.compile(
    r"\.cpu_after_optimizations(-buffer-assignment|-live-range|-memory-usage-report)?\.txt$"
)


def _keep_cpu(found):
    """Keeps the optimized module and XLA's files of each new module."""
    for n in sorted(os.listdir(raw)):
        if any(n.startswith(f + ".") for f in found) and KEEP_CPU.search(n):
            _scrub(os.path.join(raw, n), os.path.join(a.out, n))


def _keep_tpu(name, src):
    dst = os.path.join(a.out, name)
    os.makedirs(dst, exist_ok=True)
    for suffix in (
        "after_optimizations.txt",
        "after_optimizations-buffer-assignment.txt",
        "after_optimizations-memory-usage-report.txt",
        "after_optimizations-live-range.txt",
        "target_arguments.txt",
    ):
        p = os.path.join(raw, f"{src}.{suffix}")
        if os.path.exists(p):
            _scrub(p, os.path.join(dst, f"{name}.{suffix.replace('after_optimizations-', '')}"))


main()
