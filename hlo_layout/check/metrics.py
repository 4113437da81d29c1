"""The figures a CI gate compares: one frozen ModuleMetrics per module, all plain numbers.

Structure comes from the tree; bytes come from the layout engine (`hlo_layout.layout`), and the
allocation total from the compiler's buffer assignment when one sits beside the dump. Rules and
baselines read only this model, so `check` and `diff` agree by construction.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hlo_layout.syntax.opcodes import COPIES, CUSTOM_CALL, FUSION
from hlo_layout.syntax.tree import Module
from hlo_layout.units import ratio_percent

if TYPE_CHECKING:
    from hlo_layout.memory.analysis import MemoryAnalysis
    from hlo_layout.memory.footprint import MemoryReport
    from hlo_layout.reader.loader import Dump


@dataclass(frozen=True, slots=True)
class Buffer:
    """One array the module holds: where it is defined and its footprint."""

    name: str  # instruction name, with `{i}` for a tuple leaf
    computation: str
    shape: str
    physical_bytes: int
    logical_bytes: int
    memory_space: int


@dataclass(frozen=True, slots=True)
class ModuleMetrics:
    """Everything `check` and `diff` know about one module."""

    module: str
    file: str
    instructions: int
    computations: int
    fusions: int
    copies: int
    custom_calls: int
    opcodes: dict[str, int] = field(hash=False)
    fusion_kinds: dict[str, int] = field(hash=False)
    custom_call_targets: dict[str, int] = field(hash=False)
    argument_bytes: int = 0
    output_bytes: int = 0
    #: Bytes XLA's buffer assignment allocates per memory space (static + temp allocation).
    space_bytes: dict[int, int] = field(default_factory=dict, hash=False)
    #: Per memory space: its peak, the headline of `hlo-layout memory` (memory/peak.py).
    peak_bytes: dict[int, int] = field(default_factory=dict, hash=False)
    #: Per memory space: the temp allocation XLA's buffer assigner gives it.
    temp_bytes: dict[int, int] = field(default_factory=dict, hash=False)
    logical_bytes: int = 0
    physical_bytes: int = 0
    largest: tuple[Buffer, ...] = ()
    #: Entry parameters and outputs as (name, shape, physical bytes, memory space).
    entry_buffers: tuple[Buffer, ...] = ()
    allocation_bytes: int | None = None
    #: The loop-aware cost totals (`hlo_layout.cost`): flops and bytes accessed of one run of
    #: the module, while bodies times their trip count. None when not measured (no cost rule
    #: asked for them) or the module cannot be costed.
    flops: int | None = None
    bytes_accessed: int | None = None
    #: The module's headline peak (`MemoryAnalysis.peak_bytes`, what `memory` prints); None
    #: for a module with no entry computation.
    module_peak_bytes: int | None = None
    #: How the backend was assumed, when nothing in or beside the dump decided it ("" else):
    #: the command says so once.
    backend_note: str = ""

    @property
    def padding_bytes(self) -> int:
        return self.physical_bytes - self.logical_bytes

    @property
    def padding_percent(self) -> float:
        """Share of the physical bytes that is padding (0 when nothing is stored)."""
        return ratio_percent(self.padding_bytes, self.physical_bytes, 6) or 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "module": self.module,
            "file": self.file,
            "instructions": self.instructions,
            "computations": self.computations,
            "fusions": self.fusions,
            "copies": self.copies,
            "custom_calls": self.custom_calls,
            "argument_bytes": self.argument_bytes,
            "output_bytes": self.output_bytes,
            "space_bytes": {str(k): v for k, v in sorted(self.space_bytes.items())},
            "peak_bytes": {str(k): v for k, v in sorted(self.peak_bytes.items())},
            "temp_bytes": {str(k): v for k, v in sorted(self.temp_bytes.items())},
            "logical_bytes": self.logical_bytes,
            "physical_bytes": self.physical_bytes,
            "padding_bytes": self.padding_bytes,
            "padding_percent": ratio_percent(self.padding_bytes, self.physical_bytes) or 0.0,
            "largest_buffer_bytes": self.largest[0].physical_bytes if self.largest else 0,
            "allocation_bytes": self.allocation_bytes,
            "module_peak_bytes": self.module_peak_bytes,
            "opcodes": dict(sorted(self.opcodes.items())),
            "fusion_kinds": dict(sorted(self.fusion_kinds.items())),
        }


def structure_counts(module: Module) -> dict[str, object]:
    """Instruction, fusion, copy and custom-call counts of a module."""
    opcodes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    targets: Counter[str] = Counter()
    for computation in module.computations:
        for instruction in computation.instructions:
            opcodes[instruction.opcode] += 1
            if instruction.opcode == FUSION:
                kinds[instruction.fusion_kind or "?"] += 1
            elif instruction.opcode == CUSTOM_CALL:
                target = instruction.attr("custom_call_target")
                targets[target.raw.strip('"') if target else "?"] += 1
    return {
        "instructions": sum(opcodes.values()),
        "computations": len(module.computations),
        "fusions": opcodes[FUSION],
        "copies": sum(opcodes[o] for o in COPIES),
        "custom_calls": opcodes[CUSTOM_CALL],
        "opcodes": dict(opcodes),
        "fusion_kinds": dict(kinds),
        "custom_call_targets": dict(targets),
    }


def cost_figures(module: Module, file: str) -> dict[str, int | None]:
    """The loop-aware flops and bytes accessed of a module (None when it cannot be costed)."""
    from hlo_layout.cost.model import module_cost
    from hlo_layout.errors import HloLayoutError

    try:
        total = module_cost(module, file, physical=False).total
    except HloLayoutError:
        return {"flops": None, "bytes_accessed": None}
    # Whole bytes (XLA halves a triangular-solve's or cholesky's operand; budgets are ints).
    return {"flops": total.flops, "bytes_accessed": round(total.bytes_accessed)}


def module_metrics(dump: Dump, *, cost: bool = False) -> ModuleMetrics:
    """All figures of one module of a dump, as the reader found it (`hlo_layout.reader`). With
    `cost`, also the cost totals (flops, bytes accessed), which only the cost rules read."""
    return measure_module(dump, cost=cost)[0]


def measure_module(
    dump: Dump, report: MemoryReport | None = None, *, cost: bool = False
) -> tuple[ModuleMetrics, MemoryAnalysis | None]:
    """`module_metrics`, and the memory analysis its figures come from (None for a module with
    no entry computation): `diff` explains the peak with it. `report`: the module's memory
    report when already made (the HTML report's)."""
    from hlo_layout.check.figures import figures_of, report_for

    counts = structure_counts(dump.module)
    if report is None:
        report = report_for(dump.module, dump.assignment, dump.file, dump.backend)
    costs = cost_figures(dump.module, dump.file) if cost else {}
    metrics = ModuleMetrics(
        module=dump.module.name or "(snippet)",
        file=dump.file,
        **counts,  # type: ignore[arg-type]
        **figures_of(report),
        **costs,  # type: ignore[arg-type]
    )
    return metrics, report.peak
