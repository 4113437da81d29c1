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
from operator import itemgetter

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
    """Committed chunks, found by time overlap in O(log n + k): a centered interval tree whose
    skeleton is built from every interval up front (XLA grows a BufferIntervalTree instead).

    Each interval belongs to the highest node whose center it contains; a node keeps its
    intervals sorted by start and by end, so a query reads only the ones that overlap.
    """

    def __init__(self, intervals: list[tuple[int, int]]) -> None:
        points = sorted({p for iv in intervals for p in iv})
        self.center: list[int] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.by_start: list[list[tuple[int, int, int, int]]] = []
        self.by_end: list[list[tuple[int, int, int, int]]] = []
        self.count: list[int] = []  # intervals in each subtree: empty ones are never visited
        self.root = self._build(points, 0, len(points))

    def _build(self, points: list[int], lo: int, hi: int) -> int:
        if lo >= hi:
            return -1
        # Iterative would be faster; depth is log2(points), so recursion is safe.
        mid = (lo + hi) // 2
        n = len(self.center)
        self.center.append(points[mid])
        self.left.append(-1)
        self.right.append(-1)
        self.by_start.append([])
        self.by_end.append([])
        self.count.append(0)
        left = self._build(points, lo, mid)
        right = self._build(points, mid + 1, hi)
        self.left[n] = left
        self.right[n] = right
        return n

    def add(self, start: int, end: int, offset: int, size: int) -> None:
        node = self.root
        center, left, right, count = self.center, self.left, self.right, self.count
        while True:
            count[node] += 1
            c = center[node]
            if end < c and left[node] >= 0:
                node = left[node]
            elif start > c and right[node] >= 0:
                node = right[node]
            else:
                break
        bisect.insort(self.by_start[node], (start, end, offset, size))
        bisect.insort(self.by_end[node], (end, start, offset, size))

    def overlapping(self, start: int, end: int) -> list[tuple[int, int, int, int]]:
        """Chunks whose time interval meets [start, end], as (time, time, offset, size)."""
        out: list[tuple[int, int, int, int]] = []
        stack = [self.root]
        center, left, right = self.center, self.left, self.right
        by_start, by_end, count = self.by_start, self.by_end, self.count
        while stack:
            node = stack.pop()
            if node < 0 or not count[node]:
                continue
            c = center[node]
            if end < c:  # the node's intervals hold c > end: those starting by `end` overlap
                items = by_start[node]
                out.extend(items[: bisect.bisect_right(items, (end, INF))])
                stack.append(left[node])
            elif start > c:  # they hold c < start: those ending at `start` or later overlap
                items = by_end[node]
                out.extend(items[bisect.bisect_left(items, (start,)) :])
                stack.append(right[node])
            else:
                out.extend(by_start[node])
                stack.append(left[node])
                stack.append(right[node])
        return out


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

    committed = _Committed([(iv.start, iv.end) for iv in intervals.values()])
    offsets: dict[int, int] = {}
    sizes: dict[int, int] = {}
    heap = 0
    for iv in sorted(intervals.values(), key=key):
        if not iv.need_allocation:
            continue
        group = [iv, *colocs.get(iv.key, ())]
        max_size = max(g.size for g in group)
        used: list[tuple[int, int, int, int]] = []
        for g in group:
            used.extend(committed.overlapping(g.start, g.end))
        offset = _find_chunk(used, iv.size, max_size, alignment)
        for g in group:
            committed.add(g.start, g.end, offset, g.size)
            offsets[g.key] = offset
            sizes[g.key] = g.size
        heap = max(heap, offset + max_size)
    return HeapResult(heap, offsets, sizes)


def _find_chunk(
    used: list[tuple[int, int, int, int]], size: int, max_size: int, alignment: int
) -> int:
    """MakeFreeChunks + SlicedAllocationFinder::Find for one slice: the smallest free gap that
    holds `max_size` at an aligned offset (lowest offset first on equal gaps).

    XLA subtracts the used chunks one by one from a map of free chunks (a free chunk after a used
    one starts at its aligned end; pieces too small for the buffer are dropped). The gaps that can
    hold the buffer are the same as those of the complement of the union swept in offset order,
    which is what we compute. `size` is kept for the signature's sake (XLA's drop threshold).
    """
    del size
    best_len = INF + 1
    best_off = 0
    cur = 0
    used.sort(key=_BY_OFFSET)
    for _, _, off, sz in used:
        if off > cur and off - cur < best_len and cur + max_size <= off:
            best_len, best_off = off - cur, cur
        end = off + sz
        if end > cur:
            cur = -(-end // alignment) * alignment
    if INF - cur < best_len:
        best_off = cur
    return best_off


_BY_OFFSET = itemgetter(2, 3)
