"""The compiled packing loop (accel/heap.c, `_hlo_layout_heap`) against its Python twin
(`_Packer._pack_python`, the reference): the same HeapResult, dict order included, on
generated traces big enough to cross the checkpoint stride and the inline sort's cut-off."""

from __future__ import annotations

import bisect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hlo_layout import accel
from hlo_layout.memory import heap_simulator
from hlo_layout.memory.heap_simulator import ORDERS, Events, _intervals, _Packer

from .test_heap_simulator import shared_traces

HEAP = accel.load("_hlo_layout_heap", 1)
needs_build = pytest.mark.skipif(
    HEAP is None, reason="accel/heap.c not built (python setup.py build_ext --inplace)"
)


@st.composite
def long_traces(draw: st.DrawFn) -> Events:
    """Hundreds of values over a few hundred steps: long-lived ones beside short ones, so that a
    buffer meets many committed chunks, sizes from a few values, so offsets and keys tie."""
    n = draw(st.integers(50, 300))
    horizon = draw(st.sampled_from([100, 400]))
    size = st.sampled_from([16, 64, 100, 256, 4096])
    spans = [
        (s, draw(st.integers(s, min(horizon, s + draw(st.sampled_from([2, 20, horizon]))))))
        for s in (draw(st.integers(0, horizon - 1)) for _ in range(n))
    ]
    sizes = [draw(size) for _ in range(n)]
    events: list[tuple[int, int, str]] = []
    for v, (s, e) in enumerate(spans):
        events.append((2 * s, v, "alloc"))
        events.append((2 * e + 1, v, "free"))
    events.sort()
    ev = Events()
    for _, v, kind in events:
        (ev.alloc if kind == "alloc" else ev.free)(v, sizes[v])
    return ev


def _packer(events: Events, small: bool) -> _Packer:
    """A packer indexed with numpy (small=False, whatever the trace's size) or without."""
    keep = heap_simulator._NUMPY_FROM
    heap_simulator._NUMPY_FROM = 1 << 62 if small else 0
    try:
        return _Packer(_intervals(events))
    finally:
        heap_simulator._NUMPY_FROM = keep


def _both(events: Events, alignment: int, order: str) -> None:
    packer = _packer(events, small=False)
    python = packer._pack_python(alignment, order)
    compiled = packer._pack_compiled(HEAP, alignment, order)  # type: ignore[arg-type]
    # A small trace's index and loop, without numpy (no vectorized gap search).
    small = _packer(events, small=True)
    assert (small.stride, small.alive_lists) == (packer.stride, packer.alive_lists)
    assert small.lower_bound(alignment) == packer.lower_bound(alignment)
    plain = small.pack(alignment, order)
    for got in (compiled, plain):
        assert list(got.offsets.items()) == list(python.offsets.items())
        assert list(got.sizes.items()) == list(python.sizes.items())
        assert got.heap_size == python.heap_size


@needs_build
@settings(max_examples=300, deadline=None)
@given(shared_traces(), st.sampled_from([1, 8, 64, 256]), st.sampled_from(ORDERS))
def test_compiled_equals_python_with_colocations(
    events: Events, alignment: int, order: str
) -> None:
    _both(events, alignment, order)


@needs_build
@settings(max_examples=60, deadline=None)
@given(long_traces(), st.sampled_from([1, 64, 256]), st.sampled_from(ORDERS))
def test_compiled_equals_python_on_long_traces(events: Events, alignment: int, order: str) -> None:
    _both(events, alignment, order)


@needs_build
def test_bad_arrays_are_refused() -> None:
    """Indices are checked before the loop runs: a wrong array is a ValueError, not a crash."""
    z = np.zeros(1, dtype=np.int64)
    ptr = np.array([0, 1], dtype=np.int64)
    with pytest.raises(ValueError):
        HEAP.pack(np.array([5]), ptr, z, z, z, z, ptr, z, 64, 1, z.copy())  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        HEAP.pack(z.astype(np.int32), ptr, z, z, z, z, ptr, z, 64, 1, z.copy())  # type: ignore[union-attr]


def test_pure_python_switch_turns_the_loop_off() -> None:
    """HLO_LAYOUT_PURE_PYTHON=1: the packer runs its Python loop (`_HEAP` is None)."""
    code = "from hlo_layout.memory import heap_simulator as h; print(h._HEAP is None)"
    env = {**os.environ, accel.PURE_PYTHON_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr
    assert (heap_simulator._HEAP is None) == (HEAP is None)


def test_small_dump_needs_no_numpy() -> None:
    """Importing the analysis, and analysing a dump of a few hundred values, loads no numpy
    (its import costs more than such an analysis): small traces are packed in Python."""
    dump = Path(__file__).resolve().parents[1] / "data/corpus/jax-cpu"
    path = sorted(dump.glob("*after_optimizations.txt"))[0]
    code = (
        "import sys\n"
        "from hlo_layout.syntax import parse_file\n"
        "from hlo_layout.memory import analyze_memory\n"
        f"analyze_memory(parse_file({str(path)!r}))\n"
        "print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _pack_model(order, gptr, gmem, starts, ends, sizes, aptr, aids, stride, alignment):  # type: ignore[no-untyped-def]
    """accel/heap.c's pack() over its flat arrays, written plainly: each buffer's used chunks
    are those of its checkpoint's list and of positions [lo, p) that meet it in time, sorted.
    Takes any valid index (a position in several groups is committed again, a checkpoint may
    list anything), so the C's offset-sorted lists are checked beyond what _Packer builds."""
    n, n_cp = len(starts), len(aptr) - 1
    end_list, chunk, out, heap = [-1] * n, [(0, 0)] * n, [0] * n, 0
    for j in order:
        members = list(gmem[gptr[j] : gptr[j + 1]])
        max_size = max((sizes[k] for k in members), default=0)
        windows: list[tuple[int, int]] = []
        for s, e in sorted((starts[k], ends[k]) for k in members):
            if windows and s <= windows[-1][1] + 1:
                windows[-1] = (windows[-1][0], max(windows[-1][1], e))
            else:
                windows.append((s, e))
        s, e = (windows[0][0], windows[-1][1]) if windows else (0, -1)
        cp = s // stride
        lo, p = bisect.bisect_right(starts, cp * stride), bisect.bisect_right(starts, e)
        ids = list(aids[aptr[cp] : aptr[cp + 1]]) if 0 <= cp < n_cp else []
        one = len(windows) == 1
        used = sorted(
            chunk[k]
            for k in (*ids, *range(lo, p))
            if any(end_list[k] >= ws and (one or starts[k] <= we) for ws, we in windows)
        )
        offset = heap_simulator._find_chunk_sorted(used, max_size)
        for k in members:
            end_list[k] = ends[k]
            chunk[k] = (offset, -(-(offset + sizes[k]) // alignment) * alignment)
            out[k] = offset
        heap = max(heap, offset + max_size)
    return heap, out


@st.composite
def flat_indexes(draw: st.DrawFn) -> tuple:  # type: ignore[type-arg]
    """Sorted starts, mostly real lifetimes (some never freed: end -1), groups of one to three
    positions (some in two groups), packed once each in a random order (some again)."""
    n = draw(st.integers(1, 60))
    starts = sorted(draw(st.lists(st.integers(0, 80), min_size=n, max_size=n)))
    ends = [
        -1 if draw(st.integers(0, 9)) == 0 else s + draw(st.sampled_from([0, 1, 3, 10, 40]))
        for s in starts
    ]
    sizes = [draw(st.sampled_from([1, 16, 64, 100, 256])) for _ in range(n)]
    groups = [[k] for k in range(n)]
    for _ in range(draw(st.integers(0, n))):
        groups[draw(st.integers(0, n - 1))].append(draw(st.integers(0, n - 1)))
    groups = [g for g in groups if draw(st.integers(0, 9)) != 0 or len(g) > 1]
    gptr = [0]
    for g in groups:
        gptr.append(gptr[-1] + len(g))
    order = draw(st.permutations(range(len(groups))))
    order += draw(st.lists(st.integers(0, len(groups) - 1), max_size=3)) if groups else []
    stride = draw(st.sampled_from([1, 2, 4, 16]))
    alive = [
        [k for k in range(n) if starts[k] <= c <= ends[k]]
        if draw(st.integers(0, 9))
        else draw(st.lists(st.integers(0, n - 1), max_size=6))
        for c in range(0, 130, stride)
    ]
    aptr = [0]
    for ids in alive:
        aptr.append(aptr[-1] + len(ids))
    return (
        order,
        gptr,
        [k for g in groups for k in g],
        starts,
        ends,
        sizes,
        aptr,
        [k for ids in alive for k in ids],
        stride,
        draw(st.sampled_from([1, 8, 64])),
    )


@needs_build
@settings(max_examples=150, deadline=None)
@given(flat_indexes())
@example(([0, 1], [0, 1, 2], [1, 0], [1, 5], [3, 6], [10, 10], [0, 0], [], 16, 1))  # past e
def test_compiled_loop_equals_its_model_on_any_index(index: tuple) -> None:  # type: ignore[type-arg]
    """The C's sorted lists (per checkpoint, per block of starts; a position committed twice
    is moved) give the chunks a plain sort of each buffer's used chunks gives."""
    *arrays, stride, alignment = index
    flat = [np.array(x, dtype=np.int64) for x in arrays]
    out = np.zeros(len(arrays[3]), dtype=np.int64)
    heap = HEAP.pack(*flat, stride, alignment, out)  # type: ignore[union-attr]
    assert (heap, out.tolist()) == _pack_model(*arrays, stride, alignment)
