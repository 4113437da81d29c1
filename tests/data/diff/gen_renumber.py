"""Two compiles of one program whose instruction ids differ and nothing else: the second trace
holds dead code (emitted first, so later ids shift) that XLA removes (a select on a constant).

  python gen_renumber.py OUTDIR {cpu|tpu} [shifted]     (jax 0.10.2; libtpu 0.0.52 for tpu)

OUTDIR/jit_mlp_step.*after_optimizations.txt and the compiler's buffer assignment beside it.
renumber-cpu and renumber-tpu here: `old` without `shifted`, `new` with it.
"""

import glob
import os
import re
import sys
import tempfile
from pathlib import Path

out, platform = sys.argv[1], sys.argv[2]
shifted = len(sys.argv) > 3
raw = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"
if platform == "tpu":
    os.environ.setdefault("TPU_ACCELERATOR_TYPE", "v5litepod-4")
    os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

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


def mlp_step(ws, x):
    def fwd(ws):
        h = x
        for w1, w2 in ws:
            h = h + jax.nn.gelu(h @ w1) @ w2
        return jnp.mean(h.astype(f32) ** 2)

    loss, g = jax.value_and_grad(fwd)(ws)
    return loss, jax.tree_util.tree_map(lambda p, q: p - (1e-3 * q).astype(p.dtype), ws, g)


def dead(x):
    y = x
    for _ in range(7):
        y = jnp.sin(y) * 3 + jnp.cos(y)
    return y


def step(ws, x):
    if shifted:
        x = jnp.where(jnp.zeros((), bool), dead(x), x)
    return mlp_step(ws, x)


step.__name__ = "mlp_step"
D = 256
ws = [(sd((D, 4 * D), bf), sd((4 * D, D), bf)) for _ in range(2)]
jax.jit(step).lower(ws, sd((32, D), bf)).compile()
os.makedirs(out, exist_ok=True)
for p in glob.glob(os.path.join(raw, "*jit_mlp_step*")):
    name = os.path.basename(p)
    if re.search(r"after_optimizations(-buffer-assignment)?\.txt$|target_arguments", name):
        text = Path(p).read_text()
        text = re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', text)  # no machine paths
        Path(out, re.sub(r"module_\d+\.", "", name)).write_text(text)
print(sorted(os.listdir(out)))
