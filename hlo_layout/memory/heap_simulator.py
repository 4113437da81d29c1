"""HeapSimulator (xla/service/heap_simulator/heap_simulator.cc): replay of allocation events over
the flattened schedule, and GlobalDecreasingSizeBestFitHeap's packing (spatial and temporal
orders; the smaller heap wins, as ChooseBestHeapAlgorithm does).

Free space is found with a sorted list of busy chunks overlapping the interval in time (interval
search over buffers sorted by start) instead of XLA's interval tree; the chunk chosen is XLA's:
the smallest free gap that fits the aligned request, lowest offset on ties.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

INF = 1 << 62


@dataclass(slots=True)
class Interval:
    """BufferInterval: a buffer's size and [start, end] in event time, and its colocations."""

    key: int  # value id
    size: int
    start: int
    end: int = -1
    colocations: list[int] = field(default_factory=list)
    need_allocation: bool = True


@dataclass(slots=True)
class HeapResult:
    heap_size: int
    offsets: dict[int, int]
    sizes: dict[int, int]


class Events:
    """The trace of a heap simulation: ALLOC / SHARE_WITH / FREE of value ids, in order."""

    def __init__(self) -> None:
        self.trace: list[tuple[str, int, int, int]] = []  # kind, value, size, share_with

    def alloc(self, v: int, size: int) -> None:
        self.trace.append(("alloc", v, size, -1))

    def share(self, v: int, other: int, size: int) -> None:
        self.trace.append(("share", v, size, other))

    def free(self, v: int, size: int) -> None:
        self.trace.append(("free", v, size, -1))


def run_heap_simulation(
    values: Sequence[int],
    ranges: dict[int, tuple[int, int]],
    end_time: int,
    size_of: dict[int, int],
    buffer_of: dict[int, int],
    buffer_sizes: dict[int, int],
    operands_of: Callable[[int], Sequence[int]],
    can_share: Callable[[int, int], bool],
) -> Events:
    """HeapSimulator::RunComputation over the values to assign (ids), module scoped.

    `operands_of(v)` lists the candidate operand value ids (top-level values of the defining
    instruction's operands); `can_share(operand, user)` is CanShareOperandBufferWithUser plus the
    simulator's own conditions on the user (not a copy, a direct user).
    """
    order = sorted(values, key=lambda v: (ranges[v][0], ranges[v][1], v))
    defined: list[list[int]] = [[] for _ in range(end_time + 1)]
    freed: list[list[int]] = [[] for _ in range(end_time + 1)]
    for v in order:
        s, e = ranges[v]
        defined[s].append(v)
        freed[e].append(v)
    wanted = set(values)
    buffer_count: dict[int, int] = {}
    for v in values:
        b = buffer_of[v]
        buffer_count[b] = buffer_count.get(b, 0) + 1
    first_in_buffer: dict[int, int] = {}
    ev = Events()
    live_end = {v: ranges[v][1] for v in values}
    for t in range(end_time + 1):
        for v in defined[t]:
            b = buffer_of[v]
            first = first_in_buffer.get(b)
            if first is not None:
                ev.share(v, first, buffer_sizes[b])
                continue
            shared = False
            if buffer_count[b] == 1:
                for o in operands_of(v):
                    if o not in wanted or buffer_count.get(buffer_of[o], 0) > 1:
                        continue
                    if live_end[o] != t or o not in freed[t]:
                        continue
                    if can_share(o, v):
                        ev.free(o, buffer_sizes[buffer_of[o]])
                        freed[t].remove(o)
                        ev.share(v, o, buffer_sizes[buffer_of[o]])
                        live_end[o] = live_end[v]
                        shared = True
                        break
            if not shared:
                ev.alloc(v, buffer_sizes[b])
                first_in_buffer[b] = v
        for v in freed[t]:
            ev.free(v, buffer_sizes[buffer_of[v]])
    return ev


def peak_of_trace(events: Events) -> tuple[int, int]:
    """ComputePeakMemoryLogicalBuffers' refcounted replay: (peak bytes, event index of the peak)."""
    outstanding: dict[int, int] = {}
    canonical: dict[int, int] = {}
    allocated: dict[int, int] = {}
    live = peak = 0
    at = -1
    for n, (kind, v, size, other) in enumerate(events.trace):
        if kind == "alloc":
            outstanding[v] = 1
            allocated[v] = size
            live += size
        elif kind == "share":
            canonical[v] = other
            outstanding[other] = outstanding.get(other, 0) + 1
            if outstanding[other] == 1:
                allocated[v] = size
                live += size
            else:
                allocated[v] = 0
        else:
            key = canonical.get(v, v)
            outstanding[key] = outstanding.get(key, 0) - 1
            live -= allocated.get(v, 0)
        if live > peak:
            peak, at = live, n
    return peak, at


def _intervals(events: Events) -> dict[int, Interval]:
    """GlobalDecreasingSizeBestFitHeap's Alloc/ShareWith/Free: event counter as time."""
    out: dict[int, Interval] = {}
    now = 0
    for kind, v, size, other in events.trace:
        if size == 0:
            continue
        if kind == "alloc":
            out[v] = Interval(v, size, now)
        elif kind == "share":
            out[other].colocations.append(v)
            out[v] = Interval(v, size, now, need_allocation=False)
        else:
            out[v].end = now
        now += 1
    return out


def _transitive(intervals: dict[int, Interval], iv: Interval) -> list[Interval]:
    seen: set[int] = set()
    out: list[Interval] = []
    stack = [iv]
    while stack:
        item = stack.pop()
        for c in item.colocations:
            if c not in seen:
                seen.add(c)
                out.append(intervals[c])
                stack.append(intervals[c])
    return out


class _Committed:
    """Committed chunks, searchable by time overlap (sorted by start; bounded by max length)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.items: list[tuple[int, int, int, int]] = []  # start, end, offset, size
        self.max_len = 0

    def add(self, start: int, end: int, offset: int, size: int) -> None:
        k = bisect.bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.items.insert(k, (start, end, offset, size))
        self.max_len = max(self.max_len, end - start)

    def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        lo = bisect.bisect_left(self.starts, start - self.max_len)
        hi = bisect.bisect_right(self.starts, end)
        return [(o, sz) for s, e, o, sz in self.items[lo:hi] if e >= start]


def _round_up(x: int, a: int) -> int:
    return -(-x // a) * a


def best_fit(events: Events, alignment: int, temporal: bool) -> HeapResult:
    """GlobalDecreasingSizeBestFitHeap::Finish for one sort order (kSpatial or kTemporal)."""
    intervals = _intervals(events)
    colocs = {k: _transitive(intervals, iv) for k, iv in intervals.items() if iv.colocations}

    def key(iv: Interval) -> tuple[int, int, int]:
        if temporal:
            end = max([iv.end] + [c.end for c in colocs.get(iv.key, ())])
            return (iv.start - end, -iv.size, iv.key)
        return (-iv.size, iv.start - iv.end, iv.key)

    committed = _Committed()
    offsets: dict[int, int] = {}
    sizes: dict[int, int] = {}
    heap = 0
    for iv in sorted(intervals.values(), key=key):
        if not iv.need_allocation:
            continue
        group = [iv, *colocs.get(iv.key, ())]
        max_size = max(g.size for g in group)
        used: list[tuple[int, int]] = []
        for g in group:
            used.extend(committed.overlapping(g.start, g.end))
        offset = _find_chunk(used, iv.size, max_size, alignment)
        for g in group:
            committed.add(g.start, g.end, offset, g.size)
            offsets[g.key] = offset
            sizes[g.key] = g.size
        heap = max(heap, offset + max_size)
    return HeapResult(heap, offsets, sizes)


def _find_chunk(used: list[tuple[int, int]], size: int, max_size: int, alignment: int) -> int:
    """MakeFreeChunks + SlicedAllocationFinder::Find for one slice: the smallest free gap that
    holds `max_size` at an aligned offset (lowest offset first on equal gaps)."""
    free: dict[int, int] = {0: INF}  # offset -> end
    keys = [0]
    for off, sz in used:
        end_used = off + sz
        # the free chunk containing end_used-? : XLA looks up by lower_bound in a descending map
        k_end = bisect.bisect_right(keys, end_used) - 1
        if k_end < 0:
            continue
        free_start_end = keys[k_end]
        free_chunk_end = free[free_start_end]
        k_start = bisect.bisect_right(keys, off) - 1
        erase_from = k_start
        if k_start >= 0:
            s0 = keys[k_start]
            if off - s0 >= size:
                free[s0] = min(free[s0], off)
                erase_from = k_start + 1
        else:
            erase_from = 0
        for k in keys[erase_from : k_end + 1]:
            del free[k]
        del keys[erase_from : k_end + 1]
        aligned = _round_up(end_used, alignment)
        if free_chunk_end - aligned >= max_size:
            free[aligned] = free_chunk_end
            bisect.insort(keys, aligned)
    best: tuple[int, int] | None = None
    for off in keys:
        end = free[off]
        first = _round_up(off, alignment)
        if first + max_size <= end:
            cand = (end - off, off)
            if best is None or cand < best:
                best = cand
    assert best is not None
    return _round_up(best[1], alignment)
