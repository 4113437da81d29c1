"""This folder's TensorFlow programs: python gen.py OUT_DIR [name,name] (tensorflow-cpu 2.21.0).

Each program is a `tf.function(jit_compile=True)` run once on the CPU with XLA_FLAGS
--xla_dump_to/--xla_dump_hlo_as_text; the modules it compiled are copied to OUT_DIR/<program>/
(XLA's file names kept) with the machine's paths in `source_file` cut to the part after
site-packages/ (TensorFlow's own files) or to the file name (this generator).
"""

import os
import re
import shutil
import sys
import tempfile

out = os.path.abspath(sys.argv[1])
only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
raw = tempfile.mkdtemp(prefix="tf_raw_")
# XLA reads its flags when TensorFlow first compiles, so they must be set before that.
os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from dumptools import copy_kept  # noqa: E402

jobs = {}
KEEP = re.compile(
    r"cpu_after_optimizations(\.txt|-buffer-assignment\.txt|-memory-usage-report\.txt"
    r"|-live-range\.txt)$"
)


def job(fn):
    jobs[fn.__name__] = fn
    return fn


def rand(*shape, dtype=tf.float32, seed=0):
    return tf.constant(np.random.default_rng(seed).standard_normal(shape), dtype=dtype)


@job
def mlp_adam_step():
    """A 3-layer MLP's training step with Adam, the weights and moments tf.Variables."""
    sizes = [(32, 128), (128, 128), (128, 10)]
    ws = [tf.Variable(rand(a, b, seed=i) * 0.1) for i, (a, b) in enumerate(sizes)]
    bs = [tf.Variable(tf.zeros((b,))) for _, b in sizes]
    params = ws + bs
    m = [tf.Variable(tf.zeros_like(p)) for p in params]
    v = [tf.Variable(tf.zeros_like(p)) for p in params]
    t = tf.Variable(0.0)

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = x
            for w, b in zip(ws[:-1], bs[:-1]):
                h = tf.nn.relu(h @ w + b)
            logits = h @ ws[-1] + bs[-1]
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        grads = tape.gradient(loss, params)
        t.assign_add(1.0)
        for p, g, mi, vi in zip(params, grads, m, v):
            mi.assign(0.9 * mi + 0.1 * g)
            vi.assign(0.999 * vi + 0.001 * g * g)
            mhat = mi / (1 - 0.9**t)
            vhat = vi / (1 - 0.999**t)
            p.assign_sub(1e-3 * mhat / (tf.sqrt(vhat) + 1e-7))
        return loss

    return train_step, [rand(64, 32), tf.constant(np.arange(64) % 10, tf.int32)]


@job
def cnn_train_step():
    """Two conv layers, max pooling and a dense head; SGD on tf.Variables."""
    k1 = tf.Variable(rand(3, 3, 3, 16) * 0.1)
    k2 = tf.Variable(rand(3, 3, 16, 32, seed=1) * 0.1)
    dense = tf.Variable(rand(8 * 8 * 32, 10, seed=2) * 0.01)
    params = [k1, k2, dense]

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.conv2d(x, k1, 1, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.nn.conv2d(h, k2, 1, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            logits = tf.reshape(h, (-1, 8 * 8 * 32)) @ dense
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.01 * g)
        return loss

    return train_step, [rand(8, 32, 32, 3), tf.constant(np.arange(8) % 10, tf.int32)]


@job
def rnn_while_loop():
    """An Elman RNN over 20 steps with tf.while_loop (an XLA while) and a TensorArray."""
    wx = tf.Variable(rand(16, 64) * 0.1)
    wh = tf.Variable(rand(64, 64, seed=1) * 0.1)

    @tf.function(jit_compile=True)
    def rnn(xs):
        steps = tf.shape(xs)[0]
        hs = tf.TensorArray(tf.float32, size=steps)

        def body(i, h, hs):
            h = tf.tanh(xs[i] @ wx + h @ wh)
            return i + 1, h, hs.write(i, h)

        _, h, hs = tf.while_loop(lambda i, h, hs: i < steps, body, (0, tf.zeros((8, 64)), hs))
        return h, tf.reduce_sum(hs.stack(), 0)

    return rnn, [rand(20, 8, 16)]


@job
def sort_topk():
    """tf.sort, tf.argsort, tf.math.top_k and a gather by the sorted indices."""

    @tf.function(jit_compile=True)
    def f(x, v):
        s = tf.sort(x, axis=-1)
        a = tf.argsort(-x, axis=-1)
        top, idx = tf.math.top_k(x, k=5)
        g = tf.gather(v, idx[:, 0])
        return s, a, top, g, tf.gather(x, a, batch_dims=1)

    return f, [rand(64, 100), rand(100, 8)]


@job
def reductions():
    """Sums, means, max, logsumexp, softmax, moments, cumsum and argmax over several axes."""

    @tf.function(jit_compile=True)
    def f(x):
        mean, var = tf.nn.moments(x, axes=[0, 1])
        return (
            tf.reduce_sum(x, [1, 2]),
            tf.reduce_max(x, 0),
            tf.reduce_logsumexp(x, -1),
            tf.nn.softmax(x, -1),
            mean,
            var,
            tf.math.cumsum(x, 1),
            tf.argmax(x, -1),
            tf.reduce_all(x > -10.0),
        )

    return f, [rand(16, 32, 48)]


@job
def variable_update_alias():
    """In-place updates of resource variables (assign/assign_add/scatter): TF's aliasing form."""
    table = tf.Variable(rand(1000, 32))
    acc = tf.Variable(tf.zeros((32,)))
    count = tf.Variable(0, dtype=tf.int64)

    @tf.function(jit_compile=True)
    def f(ids, upd):
        rows = tf.gather(table, ids)
        table.scatter_add(tf.IndexedSlices(upd, ids))
        acc.assign_add(tf.reduce_sum(rows, 0))
        count.assign_add(1)
        return tf.reduce_sum(rows)

    return f, [tf.constant(np.arange(0, 64, 2), tf.int32), rand(32, 32)]


@job
def mixed_dtypes():
    """bf16 and f16 matmuls with f32 accumulation, an int8 x int8 -> int32 matmul, casts."""

    @tf.function(jit_compile=True)
    def f(a, b, qa, qb, s):
        hb = tf.matmul(tf.cast(a, tf.bfloat16), tf.cast(b, tf.bfloat16))
        hh = tf.matmul(tf.cast(a, tf.float16), tf.cast(b, tf.float16))
        qi = tf.linalg.matmul(qa, qb, output_type=tf.int32)
        q = tf.cast(tf.clip_by_value(tf.round(tf.cast(qi, tf.float32) * s), -127, 127), tf.int8)
        return tf.cast(hb, tf.float32) + tf.cast(hh, tf.float32), q, tf.cast(hb, tf.float16)

    qa = tf.constant(np.random.default_rng(3).integers(-127, 127, (64, 96)), tf.int8)
    qb = tf.constant(np.random.default_rng(4).integers(-127, 127, (96, 48)), tf.int8)
    return f, [rand(64, 96), rand(96, 48, seed=1), qa, qb, tf.constant(0.01)]


@job
def scan_cumulative():
    """tf.scan (a while loop over a TensorArray) computing a running exponential average."""

    @tf.function(jit_compile=True)
    def f(xs):
        ema = tf.scan(lambda acc, x: 0.9 * acc + 0.1 * tf.nn.sigmoid(x), xs, tf.zeros((128,)))
        return ema, tf.reduce_max(ema, 0)

    return f, [rand(30, 128)]


for name, mk in jobs.items():
    if only and name not in only:
        continue
    fn, args = mk()
    before = set(os.listdir(raw))
    fn(*args)
    new = sorted(set(os.listdir(raw)) - before)
    copy_kept(raw, new, os.path.join(out, name), KEEP)
    print(name, [n for n in new if n.endswith("after_optimizations.txt")])
shutil.rmtree(raw, ignore_errors=True)
