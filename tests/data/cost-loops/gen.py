"""This folder's loop pairs: JAX_PLATFORMS=cpu python gen.py OUT_DIR [pair,pair] (jax 0.10.2).

Each pair is one computation written twice: with a loop (`<pair>_loop`) and unrolled in Python
(`<pair>_unrolled`). Both are compiled on XLA:CPU; OUT_DIR gets each module's
`*.cpu_after_optimizations.txt` (the generator's path in the metadata cut to its file name) and
beside it `<dump>.cost.json`:

- `hlo_module_cost_analysis`: XLA's HloCostAnalysis of the dump's text as stored here, by
  jaxlib: `_jax.hlo_module_cost_analysis(client, jaxlib._hlo.hlo_module_from_text(text))`, run
  in a child process (`gen.py cost FILE`) since some texts CHECK-fail inside XLA; on failure
  `{"error": ..., "returncode": ...}`;
- `compiled_cost_analysis`: jax's `compiled.cost_analysis()` of the same compile;
- `pair`, `variant`, `trip_counts` (what the program meant: the loops' trip counts, outer
  first), `known_trip_count` (the `known_trip_count` of each `while` in the dump, None where
  the backend_config has none).

`pairs.json` sums it up per pair.
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dumptools import clean

S = None  # jax.ShapeDtypeStruct once jax is imported
pairs = {}


def pair(trips, note):
    def register(fn):
        pairs[fn.__name__] = (fn, trips, note)
        return fn

    return register


# Each pair's function returns {"loop": (fn, args), "unrolled": (fn, args)}.


@pair([8], "fori_loop(0, 8) of h = tanh(h @ w): dot flops and tanh transcendentals")
def fori_matmul(jnp, lax):
    def loop(h, w):
        return lax.fori_loop(0, 8, lambda i, h: jnp.tanh(h @ w), h)

    def unrolled(h, w):
        for _ in range(8):
            h = jnp.tanh(h @ w)
        return h

    args = [S((16, 64), jnp.float32), S((64, 64), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([10], "lax.scan of an Elman RNN cell over 10 steps, collecting the hidden states")
def scan_rnn(jnp, lax):
    def cell(h, x, wx, wh):
        h = jnp.tanh(x @ wx + h @ wh)
        return h, h

    def loop(h, xs, wx, wh):
        return lax.scan(lambda h, x: cell(h, x, wx, wh), h, xs)

    def unrolled(h, xs, wx, wh):
        ys = []
        for t in range(10):
            h, y = cell(h, xs[t], wx, wh)
            ys.append(y)
        return h, jnp.stack(ys)

    args = [
        S((8, 32), jnp.float32),
        S((10, 8, 16), jnp.float32),
        S((16, 32), jnp.float32),
        S((32, 32), jnp.float32),
    ]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([4, 3], "nested fori_loops: 4 outer x 3 inner matmuls, an exp per outer step")
def nested_fori(jnp, lax):
    def inner(h, w):
        return lax.fori_loop(0, 3, lambda j, h: h @ w, h)

    def loop(h, w):
        return lax.fori_loop(0, 4, lambda i, h: jnp.exp(-jnp.abs(inner(h, w))), h)

    def unrolled(h, w):
        for _ in range(4):
            for _ in range(3):
                h = h @ w
            h = jnp.exp(-jnp.abs(h))
        return h

    args = [S((16, 32), jnp.float32), S((32, 32), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([5], "fori_loop whose bound is computed in the graph ((iota(10) < 5).sum()): constant 5")
def iota_bound(jnp, lax):
    def loop(h, w):
        n = (jnp.arange(10) < 5).sum()
        return lax.fori_loop(0, n, lambda i, h: jnp.tanh(h @ w), h)

    def unrolled(h, w):
        for _ in range(5):
            h = jnp.tanh(h @ w)
        return h

    args = [S((16, 64), jnp.float32), S((64, 64), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([6], "fori_loop with lax.cond inside: even steps exp(h @ w), odd steps tanh(h) * 2")
def fori_cond(jnp, lax):
    def step(i, h, w):
        return lax.cond(
            i % 2 == 0, lambda h: jnp.exp(-((h @ w) ** 2)), lambda h: jnp.tanh(h) * 2, h
        )

    def loop(h, w):
        return lax.fori_loop(0, 6, lambda i, h: step(i, h, w), h)

    def unrolled(h, w):
        for i in range(6):
            h = jnp.exp(-((h @ w) ** 2)) if i % 2 == 0 else jnp.tanh(h) * 2
        return h

    args = [S((16, 32), jnp.float32), S((32, 32), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([10], "fori_loop of elementwise transcendentals only (exp, tanh, log1p, sqrt)")
def elementwise(jnp, lax):
    def body(x):
        return jnp.tanh(jnp.exp(-x * x)) + jnp.log1p(jnp.sqrt(jnp.abs(x)))

    def loop(x):
        return lax.fori_loop(0, 10, lambda i, x: body(x), x)

    def unrolled(x):
        for _ in range(10):
            x = body(x)
        return x

    args = [S((1024,), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([6], "fori_loop accumulating reductions: row sums, a max and a mean of a scaled matrix")
def reductions(jnp, lax):
    def body(i, c, x):
        rows, top, mean = c
        y = x * (i + 1).astype(jnp.float32)
        return rows + y.sum(1), jnp.maximum(top, y.max()), mean + y.mean(0)

    def loop(x):
        z = (jnp.zeros(64), jnp.float32(-jnp.inf), jnp.zeros(128))
        return lax.fori_loop(0, 6, lambda i, c: body(i, c, x), z)

    def unrolled(x):
        c = (jnp.zeros(64), jnp.float32(-jnp.inf), jnp.zeros(128))
        for i in range(6):
            c = body(jnp.int32(i), c, x)
        return c

    args = [S((64, 128), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([12], "while_loop with an s32[1] counter (i[0] < 12, i + 1): no backend_config at all")
def array_counter(jnp, lax):
    def loop(h, w):
        def body(c):
            i, h = c
            return i + 1, jnp.tanh(h @ w)

        return lax.while_loop(lambda c: c[0][0] < 12, body, (jnp.zeros(1, jnp.int32), h))[1]

    def unrolled(h, w):
        for _ in range(12):
            h = jnp.tanh(h @ w)
        return h

    args = [S((16, 32), jnp.float32), S((32, 32), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair(
    [200],
    "while_loop with an f32 counter 0.0, 1.0, ... < 200.0: XLA finds the induction variable but"
    " not the trip count (over its brute-force limit); elementwise body",
)
def float_counter(jnp, lax):
    def loop(x):
        def body(c):
            i, x = c
            return i + 1.0, jnp.tanh(x) * 0.5 + 1.0

        return lax.while_loop(lambda c: c[0] < 200.0, body, (jnp.float32(0.0), x))[1]

    def unrolled(x):
        for _ in range(200):
            x = jnp.tanh(x) * 0.5 + 1.0
        return x

    args = [S((256,), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([4], "lax.scan over 8 steps, reverse=True, unroll=2: a while of 4 trips, 2 cells each")
def scan_unroll2(jnp, lax):
    def cell(h, x, w):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()

    def loop(h, xs, w):
        return lax.scan(lambda h, x: cell(h, x, w), h, xs, reverse=True, unroll=2)

    def unrolled(h, xs, w):
        ys = [None] * 8
        for t in reversed(range(8)):
            h, ys[t] = cell(h, xs[t], w)
        return h, jnp.stack(ys)

    args = [S((8, 32), jnp.float32), S((8, 8, 32), jnp.float32), S((32, 32), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


@pair([7], "while_loop counting down: i = 20, 17, ..., 2 (i > 0, i - 3)")
def countdown(jnp, lax):
    def loop(h, w):
        def body(c):
            i, h = c
            return i - 3, jnp.tanh(h @ w)

        return lax.while_loop(lambda c: c[0] > 0, body, (jnp.int32(20), h))[1]

    def unrolled(h, w):
        for _ in range(7):
            h = jnp.tanh(h @ w)
        return h

    args = [S((16, 32), jnp.float32), S((32, 32), jnp.float32)]
    return {"loop": (loop, args), "unrolled": (unrolled, args)}


def cost_child(path):
    """Child: XLA's HloCostAnalysis of one dump text, printed as JSON."""
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jaxlib._hlo as hlo
    from jax._src.lib import _jax

    with open(path) as fh:
        module = hlo.hlo_module_from_text(fh.read())
    print(json.dumps(_jax.hlo_module_cost_analysis(jax.devices()[0].client, module)))


def text_cost(path):
    r = subprocess.run(
        [sys.executable, __file__, "cost", path], capture_output=True, text=True, timeout=600
    )
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1:], "returncode": r.returncode}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(out, only):
    import tempfile

    raw = tempfile.mkdtemp(prefix="costloops_raw_")
    os.environ["JAX_PLATFORMS"] = "cpu"
    # XLA reads its flags when jax first initializes a backend, so they must be set before that.
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text"
    import jax
    import jax.numpy as jnp
    from jax import lax

    global S
    S = jax.ShapeDtypeStruct
    os.makedirs(out, exist_ok=True)
    summary_path = os.path.join(out, "pairs.json")
    summary = {}
    if only and os.path.exists(summary_path):
        with open(summary_path) as fh:
            summary = json.load(fh)
    for name, (mk, trips, note) in pairs.items():
        if only and name not in only:
            continue
        entry = {"note": note, "trip_counts": trips}
        for variant, (fn, args) in mk(jnp, lax).items():
            jit_name = f"{name}_{variant}"

            def g(*a, fn=fn):
                return fn(*a)

            g.__name__ = jit_name
            before = set(os.listdir(raw))
            compiled = jax.jit(g).lower(*args).compile()
            pattern = re.compile(rf"module_\d+\.jit_{jit_name}\.cpu_after_optimizations\.txt$")
            (dump,) = [n for n in set(os.listdir(raw)) - before if pattern.match(n)]
            with open(os.path.join(raw, dump)) as fh:
                text = clean(fh.read())
            path = os.path.join(out, dump)
            with open(path, "w") as fh:
                fh.write(text)
            whiles = re.findall(r"^\s*(?:ROOT )?%\S+ = .*? while\(.*$", text, re.M)
            known = []
            for line in whiles:
                k = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', line)
                known.append(int(k.group(1)) if k else None)
            cost = {
                "pair": name,
                "variant": variant,
                "trip_counts": trips if variant == "loop" else [],
                "known_trip_count": known,
                "hlo_module_cost_analysis": text_cost(path),
                "compiled_cost_analysis": compiled.cost_analysis(),
            }
            with open(path + ".cost.json", "w") as fh:
                json.dump(cost, fh, indent=1, sort_keys=True)
                fh.write("\n")
            entry[variant] = {"dump": dump, "whiles": len(whiles), "known_trip_count": known}
            for key in ("flops", "transcendentals", "bytes accessed"):
                for src in ("hlo_module_cost_analysis", "compiled_cost_analysis"):
                    entry[variant].setdefault(src, {})[key] = cost[src].get(key)
        summary[name] = entry
        print(
            name, {v: entry[v]["hlo_module_cost_analysis"]["flops"] for v in ("loop", "unrolled")}
        )
    with open(summary_path, "w") as fh:
        json.dump(summary, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    if sys.argv[1] == "cost":
        cost_child(sys.argv[2])
    else:
        main(
            os.path.abspath(sys.argv[1]),
            set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set(),
        )
