"""Record what `hlo_layout.from_compiled` reads off a `jax.stages.Compiled`, for the tests.

  python record.py OUT.json                 # CPU, with whichever jax is installed
  python record.py OUT.json --tpu v5e:2x2   # TPU via libtpu's deviceless compile (jax 0.10.2)

Each program's `as_text()`, the platform and device kind of its executable, and every field of
`memory_analysis()` (the serialized buffer assignment proto in base64) go into OUT.json, which
tests/interop/test_jax_compiled.py replays through a stand-in Compiled object.
"""

import argparse
import base64
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--tpu", default="")
a = ap.parse_args()
if a.tpu:
    os.environ.setdefault("TPU_ACCELERATOR_TYPE", "v5litepod-4")
    os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

S = jax.ShapeDtypeStruct
f32, bf = jnp.float32, jnp.bfloat16


def mlp_step(p, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"]) @ p["w2"]
        return ((h - y) ** 2).mean()

    g = jax.grad(loss)(p)
    return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)


def scan_rnn(w, xs):
    def body(c, x):
        c = jnp.tanh(c @ w + x)
        return c, c.sum()

    return lax.scan(body, xs[0], xs)


def while_sort(x):
    def cond(s):
        return s[1] < 3

    def body(s):
        return jnp.sort(s[0] * 1.5, axis=-1), s[1] + 1

    return lax.while_loop(cond, body, (x, 0))[0]


def remat_chain(w, x):
    @jax.checkpoint
    def block(x):
        return jnp.tanh(x @ w) @ w

    return block(block(x)).sum()


PROGRAMS = {
    "mlp_step_donated": (
        mlp_step,
        ({"w1": S((128, 256), f32), "w2": S((256, 64), f32)}, S((32, 128), f32), S((32, 64), f32)),
        (0,),
    ),
    "scan_rnn": (scan_rnn, (S((128, 128), f32), S((12, 128, 128), f32)), ()),
    "while_sort": (while_sort, (S((64, 256), f32),), ()),
    "remat_chain_bf16": (remat_chain, (S((256, 256), bf), S((64, 256), bf)), ()),
}

kw = {}
if a.tpu:
    import numpy as np
    from jax.experimental import topologies
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    topo = topologies.get_topology_desc(platform="tpu", topology_name=a.tpu)
    mesh = Mesh(np.array(topo.devices).reshape(-1)[:1], ("x",))


def with_sharding(tree):
    if not a.tpu:
        return tree
    return jax.tree_util.tree_map(
        lambda s: S(s.shape, s.dtype, sharding=NamedSharding(mesh, P())), tree
    )


out = {"jax": jax.__version__, "tpu": a.tpu or None, "programs": {}}
for name, (fn, args, donate) in PROGRAMS.items():
    compiled = jax.jit(fn, donate_argnums=donate).lower(*with_sharding(args)).compile()
    stats = compiled.memory_analysis()
    fields = {}
    for k in dir(stats):
        if k.startswith("_"):
            continue
        v = getattr(stats, k)
        if isinstance(v, bytes):
            fields[k] = base64.b64encode(v).decode()
        elif isinstance(v, int):
            fields[k] = v
    device = next(iter(jax.tree_util.tree_leaves(compiled.input_shardings)[0].device_set))
    out["programs"][name] = {
        "text": compiled.as_text(),
        "platform": str(device.platform),
        "device_kind": str(device.device_kind),
        "memory_analysis": fields,
    }
    print(name, "ok")
with open(a.out, "w") as fh:
    json.dump(out, fh, indent=1)
