"""End to end against XLA itself: real compiled HLO from `jax.jit(f)`, real values from running it.

Each function only moves data, so every output element is a copy of one input element (or a
padding zero). Inputs hold distinct ids (1, 2, ...; 0 is left for padding), XLA runs the
compiled module, and the ids in the result say which element each output element read. Our
composed maps from the entry result to the entry parameters, through XLA's fusions, bitcasts and
copies, must predict exactly that element (and nothing else) at every output index.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from hlo_layout.indexing.fusion import computation_input_to_output, computation_output_to_input
from hlo_layout.indexing.map import evaluate_domain
from hlo_layout.syntax import parse

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

FUNCTIONS: dict[str, tuple[Callable[..., object], list[tuple[int, ...]]]] = {
    "transpose": (lambda x: x.T, [(3, 5)]),
    "strided-slice": (lambda x: x[1:, ::2], [(3, 5)]),
    "flip": (lambda x: jnp.flip(x, 0), [(3, 5)]),
    "reshape": (lambda x: x.reshape(5, 3), [(3, 5)]),
    "concat-with-reverse": (lambda x: jnp.concatenate([x, x[::-1]], axis=0), [(3, 5)]),
    "pad": (lambda x: jnp.pad(x, ((1, 0), (2, 1))), [(3, 5)]),
    "pad-interior": (
        lambda x: jax.lax.pad(x, 0, [(1, 1, 1), (0, 2, 2)]),
        [(3, 4)],
    ),
    "reshape-transpose-reverse": (
        lambda x: jnp.transpose(x.reshape(3, 5, 1), (2, 0, 1)).reshape(15)[::-1],
        [(3, 5)],
    ),
    "two-inputs": (lambda x, y: jnp.concatenate([x, y.T], 1), [(3, 5), (2, 3)]),
    "broadcast": (lambda x: jnp.broadcast_to(x[:, None, :], (3, 2, 5)), [(3, 5)]),
    "roll": (lambda x: jnp.roll(x, 2, axis=1), [(3, 5)]),
    "swap-and-slice": (lambda x: jnp.swapaxes(x, 0, 2)[::2, 1], [(2, 3, 4)]),
}


def _inputs(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    arrays, base = [], 1
    for dims in shapes:
        n = int(np.prod(dims))
        arrays.append(np.arange(base, base + n, dtype=np.int32).reshape(dims))
        base += n
    return arrays


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_maps_predict_what_xla_reads(name: str) -> None:
    f, shapes = FUNCTIONS[name]
    inputs = _inputs(shapes)
    compiled = jax.jit(f).lower(*inputs).compile()
    result = np.asarray(compiled(*inputs))
    module = parse(compiled.as_text())
    entry = module.entry
    assert entry is not None
    indexing = computation_output_to_input(module, entry)
    # Where each id lives: (parameter number, index).
    where = {}
    for k, array in enumerate(inputs):
        for idx in itertools.product(*(range(n) for n in array.shape)):
            where[int(array[idx])] = (k, idx)
    predicted: dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]] = {}
    for k, slot in enumerate(indexing.maps):
        for oi in slot:
            assert not oi.is_undefined, indexing.notes
            assert not oi.rt_vars
            if oi.is_known_empty:
                continue
            points, results = evaluate_domain(oi.map)
            nd = oi.map.num_dims
            for point, res in zip(points, results):
                out_idx = tuple(int(x) for x in point[:nd])
                predicted.setdefault(out_idx, set()).add((k, tuple(int(x) for x in res)))
    for idx in itertools.product(*(range(n) for n in result.shape)):
        value = int(result[idx])
        want = {where[value]} if value else set()
        assert predicted.get(idx, set()) == want, (name, idx, value)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_input_to_output_maps_predict_where_xla_writes(name: str) -> None:
    """The other direction: for each input element, the output elements holding its id. Where a
    path has no input-to-output rule (XLA has none for pad), the maps are unknown; then only the
    known maps are checked, as a subset."""
    f, shapes = FUNCTIONS[name]
    inputs = _inputs(shapes)
    compiled = jax.jit(f).lower(*inputs).compile()
    result = np.asarray(compiled(*inputs))
    module = parse(compiled.as_text())
    entry = module.entry
    assert entry is not None
    written: dict[int, set[tuple[int, ...]]] = {}
    for idx in itertools.product(*(range(n) for n in result.shape)):
        written.setdefault(int(result[idx]), set()).add(idx)
    for k, array in enumerate(inputs):
        (slot,) = computation_input_to_output(module, entry, k).maps
        unknown = any(oi.is_undefined for oi in slot)
        predicted: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
        for oi in slot:
            if oi.is_undefined or oi.is_known_empty:
                continue
            points, results = evaluate_domain(oi.map)
            nd = oi.map.num_dims
            for point, res in zip(points, results):
                key = tuple(int(x) for x in point[:nd])
                predicted.setdefault(key, set()).add(tuple(int(x) for x in res))
        for idx in itertools.product(*(range(n) for n in array.shape)):
            want = written.get(int(array[idx]), set())
            got = predicted.get(idx, set())
            if unknown:
                assert got <= want, (name, k, idx)
            else:
                assert got == want, (name, k, idx)
