"""The compiled packing loop (accel/heap.c, `_hlo_layout_heap`) against its Python twin
(`_Packer._pack_python`, the reference): the same HeapResult, dict order included, on
generated traces big enough to cross the checkpoint stride and the inline sort's cut-off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout import accel
from hlo_layout.memory import heap_simulator
from hlo_layout.memory.heap_simulator import Events, _intervals, _Packer

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


def _both(events: Events, alignment: int, temporal: bool) -> None:
    packer = _packer(events, small=False)
    python = packer._pack_python(alignment, temporal)
    compiled = packer._pack_compiled(HEAP, alignment, temporal)  # type: ignore[arg-type]
    # A small trace's index and loop, without numpy (no vectorized gap search).
    small = _packer(events, small=True)
    assert (small.stride, small.alive_lists) == (packer.stride, packer.alive_lists)
    assert small.lower_bound(alignment) == packer.lower_bound(alignment)
    plain = small.pack(alignment, temporal)
    for got in (compiled, plain):
        assert list(got.offsets.items()) == list(python.offsets.items())
        assert list(got.sizes.items()) == list(python.sizes.items())
        assert got.heap_size == python.heap_size


@needs_build
@settings(max_examples=300, deadline=None)
@given(shared_traces(), st.sampled_from([1, 8, 64, 256]), st.booleans())
def test_compiled_equals_python_with_colocations(
    events: Events, alignment: int, temporal: bool
) -> None:
    _both(events, alignment, temporal)


@needs_build
@settings(max_examples=60, deadline=None)
@given(long_traces(), st.sampled_from([1, 64, 256]), st.booleans())
def test_compiled_equals_python_on_long_traces(
    events: Events, alignment: int, temporal: bool
) -> None:
    _both(events, alignment, temporal)


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
