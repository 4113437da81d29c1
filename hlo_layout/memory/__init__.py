"""Peak memory as XLA computes it, from a dump alone (../shared/docs/memory_liveness.md).

Modules mirror XLA's: `dataflow` (HloDataflowAnalysis), `alias` (HloAliasAnalysis), `live_range`
(HloLiveRange), `assigner` (BufferAssigner), `heap_simulator` (HeapSimulator and
GlobalDecreasingSizeBestFitHeap), `peak` (the headline: the compiler's allocations, or
ComputePeakMemorySizes on TPU), `backend` (cpu/gpu/tpu settings), `metadata` and `attribution`
(which line of the user's program put a buffer there). Pure computation: no Rich here.
"""

from hlo_layout.memory.analysis import (
    SCHEMA_VERSION,
    LiveBuffer,
    MemoryAnalysis,
    SpacePeak,
    ValueRow,
    analyze_memory,
)
from hlo_layout.memory.attribution import Group, Grouping, parse_grouping
from hlo_layout.memory.backend import (
    BACKENDS,
    Backend,
    BackendChoice,
    backend_named,
    detect_backend,
)

__all__ = [
    "BACKENDS",
    "SCHEMA_VERSION",
    "Backend",
    "BackendChoice",
    "Group",
    "Grouping",
    "LiveBuffer",
    "MemoryAnalysis",
    "SpacePeak",
    "ValueRow",
    "analyze_memory",
    "backend_named",
    "detect_backend",
    "parse_grouping",
]
