"""The program every pair of this folder compiles: a training step of residual MLP blocks.

gen.py copies this file to each side of a pair as `mlp.py` with at most one line replaced, so
the line numbers (and the `source_line` of each op in the dumps) stay put.
"""

import jax
import jax.numpy as jnp

S = jax.ShapeDtypeStruct
f32, bf16 = jnp.float32, jnp.bfloat16
BATCH = 256
DIM, HIDDEN, OUT = 64, [256, 256, 256], 128
DONATE = ()


def block(h, w1, b1, w2):
    return h + jax.nn.relu(h @ w1 + b1) @ w2


def loss(params, x, y):
    h = x
    for w1, b1, w2 in params["blocks"]:
        h = jax.checkpoint(block)(h, w1, b1, w2)
    logits = h @ params["out"]
    return jnp.mean((logits - y) ** 2)


def step(params, mom, x, y):
    value, g = jax.value_and_grad(loss)(params, x, y)
    mom = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, mom, g)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, mom)
    return value, params, mom


def make():
    """(function, argument shapes, donated argument positions) for jax.jit."""
    blocks = [(S((DIM, n), f32), S((n,), f32), S((n, DIM), f32)) for n in HIDDEN]
    params = {"blocks": blocks, "out": S((DIM, OUT), f32)}
    x, y = S((BATCH, DIM), f32), S((BATCH, OUT), f32)
    return step, [params, params, x, y], DONATE
