"""Peak memory as XLA computes it, from a dump alone (../shared/docs/memory_liveness.md).

Modules mirror XLA's: `dataflow` (HloDataflowAnalysis), `alias` (HloAliasAnalysis), `live_range`
(HloLiveRange), `assigner` (BufferAssigner), `heap_simulator` (HeapSimulator and
GlobalDecreasingSizeBestFitHeap), `peak` (ComputePeakMemorySizes), `backend` (cpu/gpu/tpu
settings). Pure computation: no Rich here.
"""

from hlo_layout.memory.analysis import (
    SCHEMA_VERSION,
    LiveBuffer,
    MemoryAnalysis,
    OpNameRow,
    SpacePeak,
    ValueRow,
    analyze_memory,
)
from hlo_layout.memory.backend import BACKENDS, Backend, backend_named, detect_backend

__all__ = [
    "BACKENDS",
    "SCHEMA_VERSION",
    "Backend",
    "LiveBuffer",
    "MemoryAnalysis",
    "OpNameRow",
    "SpacePeak",
    "ValueRow",
    "analyze_memory",
    "backend_named",
    "detect_backend",
]
