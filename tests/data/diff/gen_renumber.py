"""Compile one program twice, the second time after an unrelated function (ids shift).

python renumber.py OUTDIR {cpu|tpu} [warm]
"""

import glob
import os
import re
import sys
import tempfile

out, platform = sys.argv[1], sys.argv[2]
warm = len(sys.argv) > 3
raw = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"
if platform == "tpu":
    os.environ.setdefault("TPU_ACCELERATOR_TYPE", "v5litepod-4")
    os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
import jax
import jax.numpy as jnp
import numpy as np

S = jax.ShapeDtypeStruct
bf, f32 = jnp.bfloat16, jnp.float32
if platform == "tpu":
    from jax.experimental import topologies
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    topo = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
    mesh = Mesh(np.array(topo.devices)[:1], ("x",))

    def sd(shape, dt):
        return S(shape, dt, sharding=NamedSharding(mesh, P()))
else:

    def sd(shape, dt):
        return S(shape, dt)


def unrelated(a, b):
    c = jnp.sin(a) @ b
    for _ in range(5):
        c = jnp.tanh(c) + jnp.cos(c) * 2 + c.sum()
    return c, jax.nn.softmax(c)


def mlp_step(ws, x):
    def fwd(ws):
        h = x
        for w1, w2 in ws:
            h = h + jax.nn.gelu(h @ w1) @ w2
        return jnp.mean(h.astype(f32) ** 2)

    l, g = jax.value_and_grad(fwd)(ws)
    return l, jax.tree_util.tree_map(lambda p, q: p - (1e-3 * q).astype(p.dtype), ws, g)


def dead(x):
    # Traced, then removed by XLA's dead-code elimination: later ids shift.
    y = x
    for _ in range(7):
        y = jnp.sin(y) * 3 + jnp.cos(y)
    return y


def step(ws, x):
    if warm:
        # Emitted first (low ids), then removed by XLA (a select on a constant): later ids shift.
        x = jnp.where(jnp.zeros((), bool), dead(x), x)
    return mlp_step(ws, x)


step.__name__ = "mlp_step"

if warm:
    jax.jit(unrelated).lower(sd((64, 64), f32), sd((64, 64), f32)).compile()
D = 256
ws = [(sd((D, 4 * D), bf), sd((4 * D, D), bf)) for _ in range(2)]
jax.jit(step).lower(ws, sd((32, D), bf)).compile()
os.makedirs(out, exist_ok=True)
for p in glob.glob(os.path.join(raw, "*jit_mlp_step*")):
    name = os.path.basename(p)
    if (
        "after_optimizations" in name
        or "before_optimizations" in name
        or "target_arguments" in name
    ):
        text = open(p).read()
        text = re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', text)
        open(os.path.join(out, re.sub(r"module_\d+\.", "", name)), "w").write(text)
print(sorted(os.listdir(out)))
