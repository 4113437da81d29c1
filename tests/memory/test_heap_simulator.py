"""Laws of the best-fit packing (GlobalDecreasingSizeBestFitHeap) on random traces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.memory.heap_simulator import Events, _intervals, best_fit, peak_of_trace


@st.composite
def traces(draw: st.DrawFn) -> Events:
    n = draw(st.integers(1, 25))
    sizes = draw(st.lists(st.integers(1, 5000), min_size=n, max_size=n))
    order: list[tuple[int, int]] = []  # (time, +v alloc / -v-1 free)
    for v in range(n):
        s = draw(st.integers(0, 40))
        e = draw(st.integers(s, 41))
        order.append((2 * s, v))
        order.append((2 * e + 1, -v - 1))
    order.sort()
    ev = Events()
    for _, x in order:
        if x >= 0:
            ev.alloc(x, sizes[x])
        else:
            ev.free(-x - 1, sizes[-x - 1])
    return ev


@settings(max_examples=150, deadline=None)
@given(traces(), st.sampled_from([1, 64, 256]), st.booleans())
def test_no_two_live_buffers_overlap(events: Events, alignment: int, temporal: bool) -> None:
    result = best_fit(events, alignment, temporal)
    intervals = _intervals(events)
    items = list(intervals.values())
    for a in items:
        oa = result.offsets[a.key]
        assert oa % alignment == 0
        assert oa + a.size <= result.heap_size
        for b in items:
            if a.key >= b.key or a.end < b.start or b.end < a.start:
                continue
            ob = result.offsets[b.key]
            assert oa + a.size <= ob or ob + b.size <= oa, (a, b, oa, ob)


@settings(max_examples=150, deadline=None)
@given(traces())
def test_heap_holds_the_trace_peak(events: Events) -> None:
    peak, _ = peak_of_trace(events)
    assert best_fit(events, 1, False).heap_size >= peak
    assert best_fit(events, 1, True).heap_size >= peak
