"""The peak: what the device must hold to run the program, as the compiler reserves it.

NOTE: [the headline] One number per module and per memory space, defined here and nowhere
else, shown by every view (`memory`, `inspect`, the HTML report, `diff`, `check --max-peak-bytes`):

- CPU and GPU: the buffer assignment's total, every allocation of the space (parameters,
  constants, outputs, thread-local, and the combined temp allocation: CombineTempAllocations).
  It equals `Total bytes` of XLA's `*memory-usage-report.txt` and the sum of the allocation sizes
  of its `*buffer-assignment.txt` (tests/memory: every CPU and GPU dump we have).
- TPU: jax's `compiled.memory_analysis().peak_memory_in_bytes`, XLA's ComputePeakMemorySizes:
  the static allocations of every space + the largest per-space peak of the heap traces' replay
  (a space's own headline: its static allocations + its trace peak). libtpu reserves the temp
  allocation as it places buffers itself, and jax reports this figure.

Every other figure is a part of it, named for what it is: `static` (parameters, constants,
live-out), `temp allocation` (the heap of temporaries) = `heap peak` (the most temporaries live
at once) + `fragmentation` (what the packing wastes), `thread-local`, and the bytes live at the
peak step (the buffers the live-at-peak table lists), none above its space's headline.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_layout.memory.assigner import BufferAssigner


def legend(tpu: bool) -> str:
    """The one-line legend every view shows under the figures (the README says the same)."""
    if tpu:
        return (
            "peak = jax's peak_memory_in_bytes (static + the largest heap peak); temp allocation = "
            "what the buffer assignment reserves, which jax's peak does not count; live = bytes "
            "live at the peak step"
        )
    return (
        "peak = the compiler's allocations; temp allocation = heap peak (most temporaries live "
        "at once) + fragmentation; live = bytes live at the peak step"
    )


@dataclass(frozen=True, slots=True)
class SpaceFigures:
    """One memory space's share of the headline (see NOTE: [the headline])."""

    peak_bytes: int
    static_bytes: int
    temp_allocation_bytes: int
    heap_peak_bytes: int
    thread_local_bytes: int

    @property
    def fragmentation_bytes(self) -> int:
        """The temp allocation's bytes no temporary needs at the heap's peak."""
        return max(0, self.temp_allocation_bytes - self.heap_peak_bytes)


def static_bytes_by_space(assigner: BufferAssigner) -> dict[int, int]:
    """Bytes of parameter, constant and live-out allocations, per memory space (their largest
    value each: ComputePeakMemorySizes' static part)."""
    out: dict[int, int] = {}
    for a in assigner.allocations:
        if a.kind in ("parameter", "constant") or (a.live_out and a.kind != "thread_local"):
            largest = max((assigner.size[v] for v in a.values), default=a.size)
            out[a.color] = out.get(a.color, 0) + largest
    return out


def allocation_bytes_by_space(assigner: BufferAssigner) -> dict[int, int]:
    """The buffer assignment's total per memory space: every allocation that is not folded into
    the temp allocation, plus the combined temp allocation (BufferAssignment::
    MemoryUsageReport's `Total bytes`)."""
    out: dict[int, int] = {}
    for a in assigner.allocations:
        if not a.preallocated_temp:
            out[a.color] = out.get(a.color, 0) + a.size
    for color, size in assigner.temp_allocation_bytes.items():
        out[color] = out.get(color, 0) + size
    return out


def thread_local_bytes_by_space(assigner: BufferAssigner) -> dict[int, int]:
    out: dict[int, int] = {}
    for a in assigner.allocations:
        if a.kind == "thread_local":
            out[a.color] = out.get(a.color, 0) + a.size
    return out


def compute_peak(
    assigner: BufferAssigner, temp_bytes: dict[int, int] | None = None
) -> tuple[int, dict[int, SpaceFigures]]:
    """The module's headline and each space's figures (NOTE: [the headline]).

    `temp_bytes` overrides the temp allocation of some spaces (the compiler's own, for TPU VMEM
    where ours is an estimate). A space placed by libtpu's memory-space assignment (VMEM) counts
    its trace's peak (heap_simulator.msa_trace_peak), not its allocation's size, whether ours or
    the compiler's: where the allocation is larger, jax's figure is still the trace's (corpus v5e
    conv: the compiler's 1064960 B against a 1061888 B trace; tpu-gen2 moe_topk, 1.09 of jax's
    with our VMEM packing, which we only estimate).
    """
    static = static_bytes_by_space(assigner)
    traces = {color: heap.trace_peak for color, heap in assigner.heaps.items()}
    temps = dict(assigner.temp_allocation_bytes)
    temps.update(temp_bytes or {})
    local = thread_local_bytes_by_space(assigner)
    tpu = assigner.backend.name == "tpu"
    totals = {} if tpu else allocation_bytes_by_space(assigner)
    colors = sorted(set(static) | set(traces) | set(temps) | set(local) | set(totals))
    spaces = {}
    for c in colors:
        peak = static.get(c, 0) + traces.get(c, 0) if tpu else totals.get(c, 0)
        spaces[c] = SpaceFigures(
            peak, static.get(c, 0), temps.get(c, 0), traces.get(c, 0), local.get(c, 0)
        )
    if tpu:
        headline = sum(static.values()) + max(traces.values(), default=0)
    else:
        headline = sum(s.peak_bytes for s in spaces.values())
    return headline, spaces
