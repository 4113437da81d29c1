"""HeapSimulator (xla/service/heap_simulator/heap_simulator.cc): replay of allocation events over
the flattened schedule, and GlobalDecreasingSizeBestFitHeap's packing (spatial and temporal
orders; the smaller heap wins, as ChooseBestHeapAlgorithm does; or one order a backend asks for).

Free space is found among the committed chunks overlapping the buffer in time, selected from
one array of all intervals sorted by start (every interval is known before packing) instead of
XLA's interval tree; the chunk chosen is XLA's: the smallest free gap that fits the aligned
request, lowest offset on ties (see _Packer). The packing loop has a compiled twin
(`accel/heap.c`, `_hlo_layout_heap`), used when built; the Python loop is the reference.
The index and the compiled loop's arrays are built without numpy (`array`), whose import costs
0.1 s and 14 MB of memory; only the Python loop's vectorized gap search, on traces of
_NUMPY_FROM intervals or more, imports it.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from hlo_layout import accel

if TYPE_CHECKING:  # imported where used: `import hlo_layout.memory` stays free of numpy's ~0.1 s
    import numpy as np

#: The compiled packing loop (accel/heap.c) or None: `_Packer.pack` then runs the Python loop.
_HEAP = accel.load("_hlo_layout_heap", accel.ABIS["_hlo_layout_heap"])

INF = 1 << 62


class Span(Protocol):
    """A value's live range [start, end] in schedule steps (live_range.TimeBound)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


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
    ranges: Mapping[int, Span],
    end_time: int,
    size_of: Sequence[int],
    buffer_of: Sequence[int],
    buffer_sizes: dict[int, int],
    operands_of: Callable[[int], Sequence[int]],
    can_share: Callable[[int, int], bool],
    views: frozenset[int] = frozenset(),
) -> Events:
    """HeapSimulator::RunComputation over the values to assign (ids), module scoped.

    `operands_of(v)` lists the candidate operand value ids (top-level values of the defining
    instruction's operands); `can_share(operand, user)` is CanShareOperandBufferWithUser plus the
    simulator's own conditions on the user (not a copy, a direct user). `views`: values laid
    over their operands' memory (Backend.concat_views); operands dying there are freed first.
    """
    order = sorted(values, key=lambda v: (ranges[v].start, ranges[v].end, v))
    # By time step, only the steps where something starts or ends (a list per step of the
    # whole schedule cost more than the values).
    defined: dict[int, list[int]] = {}
    freed: dict[int, list[int]] = {}
    for v in order:
        r = ranges[v]
        s, e = r.start, r.end
        got = defined.get(s)
        if got is None:
            defined[s] = [v]
        else:
            got.append(v)
        got = freed.get(e)
        if got is None:
            freed[e] = [v]
        else:
            got.append(v)
    del order
    nothing: list[int] = []
    wanted = set(values)
    buffer_count: dict[int, int] = {}
    for v in values:
        b = buffer_of[v]
        buffer_count[b] = buffer_count.get(b, 0) + 1
    first_in_buffer: dict[int, int] = {}
    ev = Events()
    live_end = {v: ranges[v].end for v in values}
    for t in range(end_time + 1):
        freed_now = freed.get(t, nothing)
        for v in defined.get(t, nothing):
            if v in views:
                for o in operands_of(v):
                    if o in wanted and live_end[o] == t and o in freed_now:
                        freed_now.remove(o)
                        ev.free(o, buffer_sizes[buffer_of[o]])
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
                    if live_end[o] != t or o not in freed_now:
                        continue
                    if can_share(o, v):
                        ev.free(o, buffer_sizes[buffer_of[o]])
                        freed_now.remove(o)
                        ev.share(v, o, buffer_sizes[buffer_of[o]])
                        live_end[o] = live_end[v]
                        shared = True
                        break
            if not shared:
                ev.alloc(v, buffer_sizes[b])
                first_in_buffer[b] = v
        for v in freed_now:
            ev.free(v, buffer_sizes[buffer_of[v]])
    return ev


def msa_trace_peak(
    events: Events,
    buffer_of: Sequence[int],
    computation_of: Callable[[int], object],
    ranges: Mapping[int, Span],
    unchained_end: Sequence[int],
) -> int:
    """The peak libtpu reports for a memory-space-assignment space (VMEM).

    Not XLA's refcounted replay (peak_of_trace), which counts a buffer once however many of its
    aliased values are live. libtpu's accounting is closed; this model of it is fitted to jax's
    figures: values of one buffer (`buffer_of`) live at once *in the same computation* (a
    pallas_call output aliasing its input, a loop body's new carry beside the old) each hold
    their own memory, while a value joining live aliases from *another* computation (a callee's
    parameter or root, a while's or conditional's result) shares theirs. Memory is released
    when the last value sharing it is freed, and a value is held until its own last use
    (`unchained_end`) even where HloLiveRange::NormalizeAliasedBuffers ends it earlier, at the
    next value of its buffer: a while body's carries stay held across a conditional whose branch
    writes their successors (tpu-gen2 while_cond_live: 2 x (a + b), not a + b). With it 77 of
    the first 80 TPU programs in the tests were exact (the replay: 53; chained ends: 67;
    tpu-alias and tpu-gen2 hold the ones that tell them apart). `events` is a replay in which
    no value takes an operand's memory (BufferAssigner._heap): libtpu's peak counts each in its
    own, even where its placement shares (jax012-tpu adam_donate's in-place VMEM updates).
    """
    # Replay order: a free moves to the end of the step of its unchained end when that is later.
    step = 0
    deferred: dict[int, list[tuple[str, int, int, int]]] = {}
    ordered: list[tuple[str, int, int, int]] = []
    for e in events.trace:
        kind, v = e[0], e[1]
        if kind == "free":
            end = unchained_end[v]
            if end > ranges[v].end:
                deferred.setdefault(end, []).append(e)
            else:
                ordered.append(e)
            continue
        while step < ranges[v].start:
            ordered.extend(deferred.pop(step, ()))
            step += 1
        ordered.append(e)
    for t in sorted(deferred):
        ordered.extend(deferred[t])
    live = peak = next_unit = 0
    unit_of: dict[int, int] = {}  # value -> the memory unit it holds
    units: dict[int, list] = {}  # unit -> [bytes, values holding it]
    alive: dict[int, list[int]] = {}  # buffer -> its live values
    for kind, v, size, _other in ordered:
        b = buffer_of[v]
        members = alive.setdefault(b, [])
        if kind == "free":
            if v in members:
                members.remove(v)
            u = unit_of.pop(v, None)
            if u is not None:
                holders = units[u][1]
                holders.discard(v)
                if not holders:
                    live -= units.pop(u)[0]
            continue
        here = computation_of(v)
        joined = None
        if kind == "share" and members and all(computation_of(m) != here for m in members):
            joined = unit_of.get(members[0])
        if joined is not None:
            units[joined][1].add(v)
            unit_of[v] = joined
        else:
            next_unit += 1
            unit_of[v] = next_unit
            units[next_unit] = [size, {v}]
            live += size
        members.append(v)
        peak = max(peak, live)
    return peak


def peak_of_trace(events: Events, hold_shared: bool = False) -> tuple[int, int]:
    """The peak of a replay of a heap trace: (peak bytes, event index of the peak).

    Default: ComputePeakMemoryLogicalBuffers' refcounted replay, which stops counting a chunk
    when the value that took it is freed though values sharing it live on. `hold_shared`
    (Backend.peak_holds_shared): a chunk counts until the last value sharing it (SHARE_WITH,
    transitively) is freed, as libtpu's peak_memory_in_bytes does: with the default replay a
    while loop's counter (512 B, sort_in_scan) and a carry (scan_rnn) on v5p dropped out of
    jax's figure, 2 of the 82 TPU programs in the tests; none counts the other way."""
    if hold_shared:
        return _peak_holding_shared(events)
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


def _peak_holding_shared(events: Events) -> tuple[int, int]:
    """peak_of_trace where a chunk is held while any value sharing it lives."""
    canonical: dict[int, int] = {}
    holders: dict[int, int] = {}  # canonical value -> live values sharing its chunk
    held: dict[int, int] = {}  # canonical value -> the bytes its chunk counted when taken
    live = peak = 0
    at = -1
    for n, (kind, v, size, other) in enumerate(events.trace):
        if kind == "free":
            key = canonical.get(v, v)
            holders[key] = holders.get(key, 1) - 1
            if holders[key] == 0:
                live -= held.pop(key, size)
            continue
        key = v if kind == "alloc" else canonical.get(other, other)
        canonical[v] = key
        if holders.get(key, 0) == 0:
            held[key] = size
            live += size
        holders[key] = holders.get(key, 0) + 1
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


def _groups(intervals: dict[int, Interval]) -> dict[int, list[Interval]]:
    """Each allocated interval with every interval colocated with it, transitively.

    Every shared interval is appended to exactly one other interval's colocations, so the
    colocation graph is a forest rooted at the allocated intervals: one walk per root, O(n)
    in all (a per-interval closure was quadratic on long in-place chains).
    """
    out: dict[int, list[Interval]] = {}
    for iv in intervals.values():
        if not iv.need_allocation:
            continue
        group = [iv]
        seen = {iv.key}
        stack = [iv]
        while stack:
            item = stack.pop()
            for c in item.colocations:
                if c not in seen:
                    seen.add(c)
                    group.append(intervals[c])
                    stack.append(intervals[c])
        out[iv.key] = group
    return out


def _round_up(x: int, a: int) -> int:
    return -(-x // a) * a


#: Above this many time-overlapping chunks the gap search runs in numpy, below in Python.
_VECTOR_FROM = 48
#: Traces with fewer intervals are packed by the Python loop without numpy (_Packer.small).
_NUMPY_FROM = 1024
_NO_GAP = (1 << 63) - 1  # int64 max


#: GlobalDecreasingSizeBestFitHeap's sort orders we model: kSpatial (size first), kTemporal
#: (live duration first) and "start" (GetColocationStartTimeBufferIntervalCompare: start time,
#: then size descending, then value id), which libtpu passes as its custom compare for HBM
#: (Backend.heap_order).
ORDERS = ("spatial", "temporal", "start")


def best_fit(events: Events, alignment: int, order: str) -> HeapResult:
    """GlobalDecreasingSizeBestFitHeap::Finish for one sort order (one of ORDERS)."""
    return _Packer(_intervals(events)).pack(alignment, order)


def best_fit_both(events: Events, alignment: int) -> tuple[HeapResult, HeapResult]:
    """The spatial and the temporal packing of one trace (ChooseBestHeapAlgorithm's two runs)."""
    packer = _Packer(_intervals(events))
    return packer.pack(alignment, "spatial"), packer.pack(alignment, "temporal")


def choose_best_fit(events: Events, alignment: int, order: str | None = None) -> HeapResult:
    """ChooseBestHeapAlgorithm over the spatial and temporal packings: the smaller heap, spatial
    on ties. In Python the temporal packing is skipped when the spatial one already reaches a
    lower bound no packing can beat (_Packer.lower_bound): it could then only tie, and ties go to
    spatial. The compiled loop packs faster than that bound is summed: it runs both, and the
    offsets are read out of the winner only.
    `order`: one packing in that order alone, as AssignBuffersWithSequentialOrdering runs when
    given a heap_buffer_interval_compare (kCustom; Backend.heap_order)."""
    packer = _Packer(_intervals(events))
    if order is not None:
        return packer.pack(alignment, order)
    if _HEAP is not None and not packer.small:
        s_heap, s_offsets = packer._run_compiled(_HEAP, alignment, "spatial")
        t_heap, t_offsets = packer._run_compiled(_HEAP, alignment, "temporal")
        if s_heap <= t_heap:
            return packer._compiled_result("spatial", s_heap, s_offsets)
        return packer._compiled_result("temporal", t_heap, t_offsets)
    spatial = packer.pack(alignment, "spatial")
    if spatial.heap_size <= packer.lower_bound(alignment):
        return spatial
    temporal = packer.pack(alignment, "temporal")
    return spatial if spatial.heap_size <= temporal.heap_size else temporal


class _Packer:
    """GlobalDecreasingSizeBestFitHeap over a trace's intervals, packed in either order.

    XLA asks an interval tree for the committed chunks that overlap a buffer in time, then
    subtracts them from a free map. Every interval is known before packing starts, so we index
    them once, statically: sorted by start, with checkpoints every `stride` time units that list
    the intervals alive there. The intervals that can meet [s, e] are those alive at the last
    checkpoint c <= s, plus those starting in (c, e] (a contiguous run in start order); the
    committed ones among them (an uncommitted interval has end -1) with end >= s are the chunks
    the gap search (_find_chunk_sorted, vectorized when they are many) reads. The chunk chosen
    is the one XLA chooses.
    """

    def __init__(self, intervals: dict[int, Interval]) -> None:
        self.intervals = intervals
        by_start = sorted(intervals.values(), key=lambda iv: (iv.start, iv.key))
        self.position = {iv.key: n for n, iv in enumerate(by_start)}
        self.starts = [iv.start for iv in by_start]
        self.groups = _groups(intervals)
        n = len(by_start)
        #: A small trace is packed in Python with the sorted gap search only, never the
        #: vectorized one: numpy's import would cost more than the packing.
        self.small = n < _NUMPY_FROM
        #: The index as numpy arrays, for the Python loop's vectorized gap search on a big
        #: trace (made when that loop first runs: the compiled loop takes `array`s, so a
        #: built install never imports numpy here, whose import costs 0.1 s and 14 MB).
        self.alive: list[np.ndarray] = []
        self.start_array: np.ndarray | None = None
        self.alive_lists: list[list[int]] = []
        self._flat_cache: tuple[array, ...] | None = None
        self._orders: dict[str, array] = {}
        self._position_keys: list[int] = []  # value ids by position (_flat)
        self._index_python([iv.end for iv in by_start])

    def _numpy_index(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """(`start_array`, `alive`): starts and alive_lists as numpy arrays, made once."""
        import numpy as np

        if self.start_array is None:
            self.start_array = np.array(self.starts, dtype=np.int64)
            self.alive = [np.array(ids, dtype=np.int64) for ids in self.alive_lists]
        return self.start_array, self.alive

    def _index_python(self, ends: list[int]) -> None:
        """__init__'s stride and checkpoint lists (alive_lists only), without numpy."""
        n, starts = len(ends), self.starts
        horizon = max(ends) + 1 if n else 1
        sorted_ends = sorted(ends)
        stride = 64
        while True:
            alive = sum(
                bisect.bisect_right(starts, c) - bisect.bisect_left(sorted_ends, c)
                for c in range(0, horizon, stride)
            )
            if alive <= 4 * n + 64 or stride >= horizon:
                break
            stride *= 2
        self.stride = stride
        lists: list[list[int]] = [[] for _ in range(0, horizon, stride)]
        for k, (s, e) in enumerate(zip(starts, ends)):
            for c in range(max(0, -(-s // stride)), min(e, horizon - 1) // stride + 1):
                lists[c].append(k)  # ascending k: as flatnonzero lists them
        self.alive_lists = lists

    def lower_bound(self, alignment: int) -> int:
        """A heap size no packing can go below.

        Groups alive at one time hold disjoint chunks at aligned offsets, each at least as big
        as the group's smallest member; a chunk ends where the next one may start only after
        rounding up. So heap >= max over time of the sum of sizes, and, with R the max over time
        of the sum of rounded-up sizes, heap >= R - (align - 1) and heap >= R - the largest
        rounding any group needs (the top chunk needs no rounding).
        """
        if not self.groups:
            return 0
        horizon = max(iv.end for iv in self.intervals.values()) + 2
        plain, rounded = [0] * (horizon + 1), [0] * (horizon + 1)
        waste = 0
        for group in self.groups.values():
            size = min(g.size for g in group)
            up = _round_up(size, alignment)
            waste = max(waste, up - size)
            for s, e in _windows(group):
                plain[s] += size
                plain[e + 1] -= size
                rounded[s] += up
                rounded[e + 1] -= up
        r = max(itertools.accumulate(rounded))
        return max(max(itertools.accumulate(plain)), r - min(waste, alignment - 1))

    def pack(self, alignment: int, order: str) -> HeapResult:
        """One GlobalDecreasingSizeBestFitHeap::Finish: compiled when built (and the trace is
        not small), else in Python."""
        if _HEAP is not None and not self.small:
            return self._pack_compiled(_HEAP, alignment, order)
        return self._pack_python(alignment, order)

    def _flat(self) -> tuple[array, ...]:
        """The index as int64 arrays for the compiled loop (see accel/heap.c), made once.

        Leaders are numbered in `self.groups` order; returns (gptr, gmem, starts, ends, sizes,
        aptr, aids); the packing orders (ORDERS) are made by `_order` when first asked for."""
        if self._flat_cache is None:
            by_start = sorted(self.intervals.values(), key=lambda iv: (iv.start, iv.key))
            position = self.position
            sizes = array("q", [iv.size for iv in by_start])
            self._position_keys = [iv.key for iv in by_start]
            ends = array("q", [iv.end for iv in by_start])
            gptr = array("q", [0])
            gmem = array("q")
            total = 0
            for members in self.groups.values():
                total += len(members)
                gptr.append(total)
                gmem.extend([position[g.key] for g in members])
            aptr = array("q", [0])
            aids = array("q")
            total = 0
            for ids in self.alive_lists:
                total += len(ids)
                aptr.append(total)
                aids.extend(ids)
            self._flat_cache = (gptr, gmem, array("q", self.starts), ends, sizes, aptr, aids)
        return self._flat_cache

    def _order(self, sort: str) -> array:
        """The leaders' packing order (numbers into `self.groups`), by `_pack_python`'s key."""
        hit = self._orders.get(sort)
        if hit is None:
            key = self._key(sort)
            leaders = [self.intervals[k] for k in self.groups]
            ranked = sorted(range(len(leaders)), key=lambda j: key(leaders[j]))
            hit = self._orders[sort] = array("q", ranked)
        return hit

    def _key(self, order: str) -> Callable[[Interval], tuple[int, int, int]]:
        """GlobalDecreasingSizeBestFitHeap's sort key of a leader in `order` (one of ORDERS);
        the value id last makes each key unique."""
        groups = self.groups

        def key(iv: Interval) -> tuple[int, int, int]:
            if order == "temporal":
                end = max(g.end for g in groups[iv.key])
                return (iv.start - end, -iv.size, iv.key)
            if order == "start":
                return (iv.start, -iv.size, iv.key)
            return (-iv.size, iv.start - iv.end, iv.key)

        return key

    def _pack_compiled(self, heap_module: ModuleType, alignment: int, sort: str) -> HeapResult:
        heap, out = self._run_compiled(heap_module, alignment, sort)
        return self._compiled_result(sort, heap, out)

    def _run_compiled(
        self, heap_module: ModuleType, alignment: int, sort: str
    ) -> tuple[int, array]:
        """The compiled packing: (heap size, offset per position in start order)."""
        flat = self._flat()
        order = self._order(sort)
        out = array("q", bytes(8 * len(self.starts)))
        gptr, gmem, starts, ends, sizes, aptr, aids = flat
        heap = heap_module.pack(
            order, gptr, gmem, starts, ends, sizes, aptr, aids, self.stride, alignment, out
        )
        return int(heap), out

    def _compiled_result(self, sort: str, heap: int, out: array) -> HeapResult:
        """_run_compiled's packing as a HeapResult: the dicts in the Python loop's order
        (packing order, each group's members in turn)."""
        gptr, gmem, _starts, _ends, sizes, _aptr, _aids = self._flat()
        keys = self._position_keys
        offsets: dict[int, int] = {}
        sizes_of: dict[int, int] = {}
        for j in self._order(sort):
            for m in range(gptr[j], gptr[j + 1]):
                pos = gmem[m]
                key = keys[pos]
                offsets[key] = out[pos]
                sizes_of[key] = sizes[pos]
        return HeapResult(int(heap), offsets, sizes_of)

    def _pack_python(self, alignment: int, order: str) -> HeapResult:
        """The reference packing loop (the compiled one must give the same HeapResult)."""
        groups = self.groups
        key = self._key(order)
        n = len(self.starts)
        end_list = [-1] * n
        chunk_list = [(0, 0)] * n
        starts, position = self.starts, self.position
        alive, alive_lists, stride = self.alive, self.alive_lists, self.stride
        vector_from = n + 1 if self.small else _VECTOR_FROM  # small: never (len(ids) + p - lo <= n)
        if not self.small:
            import numpy as np

            start_array, alive = self._numpy_index()
            committed_end = np.full(n, -1, dtype=np.int64)
            chunks = np.zeros((n, 2), dtype=np.int64)  # offset, aligned end
        offsets: dict[int, int] = {}
        sizes: dict[int, int] = {}
        heap = 0
        leaders = [iv for iv in self.intervals.values() if iv.need_allocation]
        for iv in sorted(leaders, key=key):
            group = groups[iv.key]
            max_size = max(g.size for g in group)
            windows = _windows(group)
            s, e = windows[0][0], windows[-1][1]
            cp = s // stride
            lo = bisect.bisect_right(starts, cp * stride)
            p = bisect.bisect_right(starts, e)
            ids = alive_lists[cp] if cp < len(alive_lists) else []
            if len(ids) + p - lo < vector_from:
                if len(windows) == 1:
                    used = [chunk_list[k] for k in ids if end_list[k] >= s]
                    used += [chunk_list[k] for k in range(lo, p) if end_list[k] >= s]
                else:
                    used = [
                        chunk_list[k]
                        for k in (*ids, *range(lo, p))
                        if any(end_list[k] >= ws and starts[k] <= we for ws, we in windows)
                    ]
                used.sort()
                offset = _find_chunk_sorted(used, max_size)
            else:
                hits = np.concatenate((alive[cp], np.arange(lo, p))) if ids else np.arange(lo, p)
                got = committed_end[hits]
                if len(windows) == 1:
                    mask = got >= s
                else:
                    begins = start_array[hits]
                    mask = (got >= windows[0][0]) & (begins <= windows[0][1])
                    for ws, we in windows[1:]:
                        mask |= (got >= ws) & (begins <= we)
                offset = _find_chunk_vector(chunks[hits[mask]], max_size)
            for g in group:
                k = position[g.key]
                aligned = _round_up(offset + g.size, alignment)
                end_list[k] = g.end
                chunk_list[k] = (offset, aligned)
                if not self.small:
                    committed_end[k] = g.end
                    chunks[k] = (offset, aligned)
                offsets[g.key] = offset
                sizes[g.key] = g.size
            heap = max(heap, offset + max_size)
        return HeapResult(heap, offsets, sizes)


def _windows(group: list[Interval]) -> list[tuple[int, int]]:
    """The union of a group's time intervals as disjoint [start, end] windows, in order."""
    if len(group) == 1:
        return [(group[0].start, group[0].end)]
    return union_spans((g.start, g.end) for g in group)


def union_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive [start, end] spans merged where they overlap or touch, in order."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1] + 1:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _find_chunk_sorted(used: list[tuple[int, int]], max_size: int) -> int:
    """MakeFreeChunks + SlicedAllocationFinder::Find for one slice: the smallest free gap that
    holds `max_size` at an aligned offset, lowest offset first on equal gaps; past the last
    chunk when none does. `used` is (offset, aligned end) of the time-overlapping chunks, sorted.

    XLA subtracts the used chunks one by one from a map of free chunks (a free chunk after a used
    one starts at its aligned end; pieces too small for the buffer are dropped). The gaps that can
    hold the buffer are the same as those of the complement of the union swept in offset order,
    which is what we compute.
    """
    best_len = -1
    best_off = 0
    cur = 0
    for off, end in used:
        gap = off - cur
        if gap >= max_size and (best_len < 0 or gap < best_len):
            best_len, best_off = gap, cur
        if end > cur:
            cur = end
    return best_off if best_len >= 0 else cur


def _find_chunk_vector(used: np.ndarray, max_size: int) -> int:
    """_find_chunk_sorted over a numpy array of (offset, aligned end) rows, in any order."""
    import numpy as np

    if not len(used):
        return 0
    used = used[used[:, 0].argsort()]
    reach = np.maximum.accumulate(used[:, 1])
    gaps = used[:, 0].copy()
    gaps[1:] -= reach[:-1]
    gaps[gaps < max_size] = _NO_GAP
    j = int(gaps.argmin())
    if gaps[j] == _NO_GAP:
        return int(reach[-1])
    return int(reach[j - 1]) if j else 0
