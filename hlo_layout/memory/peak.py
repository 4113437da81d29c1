"""ComputePeakMemorySizes / ComputePeakMemoryImpl: a program's peak as XLA reports it.

peak = static allocations (the largest value of every parameter, constant and live-out
allocation, every memory space; thread-local ones excluded) + the largest per-space peak of the
refcounted replay of the heap traces (`heap_simulator.peak_of_trace`).
"""

from __future__ import annotations

from hlo_layout.memory.assigner import BufferAssigner


def static_bytes_by_space(assigner: BufferAssigner) -> dict[int, int]:
    """Bytes of parameter, constant and live-out allocations, per memory space."""
    out: dict[int, int] = {}
    for a in assigner.allocations:
        if a.kind in ("parameter", "constant") or (a.live_out and a.kind != "thread_local"):
            largest = max((assigner.size[v] for v in a.values), default=a.size)
            out[a.color] = out.get(a.color, 0) + largest
    return out


def compute_peak(
    assigner: BufferAssigner, heap_sizes: dict[int, int] | None = None
) -> tuple[int, dict[int, int], dict[int, int]]:
    """(peak bytes, static bytes per space, heap peak per space).

    `heap_sizes` gives, for spaces whose packing the compiler decides by other means (TPU
    memory-space assignment), the heap size to count instead of the trace's peak: libtpu reports
    the whole VMEM allocation (data_movement, scan_rnn in the corpus).
    """
    static = static_bytes_by_space(assigner)
    traces = {color: heap.trace_peak for color, heap in assigner.heaps.items()}
    for color, size in (heap_sizes or {}).items():
        traces[color] = max(traces.get(color, 0), size)
    return sum(static.values()) + max(traces.values(), default=0), static, traces
