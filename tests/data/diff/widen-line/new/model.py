import jax
import jax.numpy as jnp

WIDTH = 256


def layer(h, w):
    return jnp.tanh(h @ w)


def step(w1, w2, x):
    h = layer(x, w1)
    out = jnp.tanh(h @ jnp.tile(w2, (1, 8)))
    return jnp.sum(out * out)


def make():
    S = jax.ShapeDtypeStruct
    f32 = jnp.float32
    args = [S((WIDTH, WIDTH), f32), S((WIDTH, WIDTH), f32), S((512, WIDTH), f32)]
    return jax.jit(jax.grad(step, argnums=(0, 1))), args
