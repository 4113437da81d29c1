"""A module's cost as the `cost` command shows it: XLA's totals, the loop-aware ones, the loops,
and the instructions ranked by their roofline time, as plain data and as the JSON document.

An instruction's figures here are over all its executions (a fusion in a loop body run 10 times
counts 10 times); `bound_seconds` is the sum of those bounds, so the shares add up to 1.
Without a chip (a CPU dump and no `--chip`) there is no roofline: instructions are ranked by
flops, then physical bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hlo_layout.cost.model import InstructionCost, ModuleCost
from hlo_layout.cost.roofline import Roofline, type_class
from hlo_layout.memory.metadata import SourceInfo


@dataclass(frozen=True, slots=True)
class RooflineRow:
    """One instruction (or fusion) with its roofline figures over all its executions."""

    cost: InstructionCost
    arithmetic_intensity: float | None
    bound_seconds: float | None
    bound: str | None
    share: float | None
    op_name: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class CostSummary:
    """What `cost` reports for one module."""

    cost: ModuleCost
    roofline: Roofline | None
    chip_reason: str
    bound_seconds: float | None
    rows: tuple[RooflineRow, ...]
    hidden: int
    notes: tuple[str, ...] = field(default=())
    #: Of `bound_seconds`, the part of compute-bound instructions.
    compute_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """This module's object of the `cost --format json` document."""
        c = self.cost
        xla = c.xla
        roof = self.roofline
        return {
            "module": c.module.name,
            "file": c.file,
            "xla": {
                "flops": xla.flops,
                "transcendentals": xla.transcendentals,
                "bytes_accessed": _number(xla.bytes_accessed),
            },
            "total": {
                "flops": c.total.flops,
                "transcendentals": c.total.transcendentals,
                "bytes_accessed": _number(c.total.bytes_accessed),
                "physical_bytes_accessed": _number(c.total.physical_bytes_accessed),
            },
            "loops": [
                {"instruction": loop.instruction, "trip_count": loop.trip_count, "how": loop.how}
                for loop in c.loops
            ],
            "roofline": None
            if roof is None
            else {
                "chip": roof.chip,
                "peak_flops_per_second": roof.peak_flops_per_second,
                "memory_bandwidth_bytes_per_second": roof.bandwidth,
                "bound_seconds": self.bound_seconds,
            },
            "instructions": [_row_dict(r) for r in self.rows],
            "notes": list(self.notes),
        }


def _number(value: int | float) -> int | float:
    """Bytes as an int when whole (XLA halves some operands: a float then)."""
    return int(value) if float(value).is_integer() else value


def _row_dict(row: RooflineRow) -> dict[str, Any]:
    t = row.cost.totals
    return {
        "name": row.cost.name,
        "opcode": row.cost.opcode,
        "computation": row.cost.computation,
        "flops": t.flops,
        "transcendentals": t.transcendentals,
        "bytes_accessed": _number(t.bytes_accessed),
        "physical_bytes_accessed": _number(t.physical_bytes_accessed),
        "arithmetic_intensity": row.arithmetic_intensity,
        "bound_seconds": row.bound_seconds,
        "bound": row.bound,
        "op_name": row.op_name,
        "source": row.source,
    }


def summarize(
    cost: ModuleCost, roofline: Roofline | None, *, top: int | None, chip_reason: str = ""
) -> CostSummary:
    """Rank `cost`'s instructions by roofline time (or flops without a roofline), keep `top`."""
    rows: list[RooflineRow] = []
    for item in cost.instructions:
        t = item.totals
        intensity = t.flops / t.physical_bytes_accessed if t.physical_bytes_accessed > 0 else None
        if roofline is not None:
            seconds, bound = roofline.bound(t.flops, t.physical_bytes_accessed, item.element_type)
            rows.append(RooflineRow(item, intensity, seconds, bound, None))
        else:
            rows.append(RooflineRow(item, intensity, None, None, None))
    total = sum(r.bound_seconds or 0.0 for r in rows) if roofline is not None else None
    if roofline is not None:
        rows.sort(key=lambda r: (-(r.bound_seconds or 0.0), r.cost.computation, r.cost.name))
    else:
        rows.sort(
            key=lambda r: (-r.cost.totals.flops, -r.cost.totals.physical_bytes_accessed,
                           r.cost.computation, r.cost.name)
        )  # fmt: skip
    kept = rows if top is None else rows[:top]
    info = SourceInfo(cost.module)
    shown = []
    for r in kept:
        computation = cost.module.computation(r.cost.computation)
        instruction = computation.get(r.cost.name) if computation is not None else None
        op_name, source = info.of(instruction) if instruction is not None else (None, None)
        share = r.bound_seconds / total if total and r.bound_seconds is not None else None
        shown.append(
            RooflineRow(r.cost, r.arithmetic_intensity, r.bound_seconds, r.bound, share,
                        op_name, source)
        )  # fmt: skip
    notes = []
    if chip_reason:
        notes.append(chip_reason)
    if roofline is not None:
        notes.extend(roofline.notes)
        used = {type_class(r.cost.element_type) for r in rows if r.cost.per_execution.flops}
        notes.extend(why for cls, why in roofline.substituted.items() if cls in used)
    unknown = [loop for loop in cost.loops if loop.trip_count is None]
    if unknown:
        notes.append(
            f"{len(unknown)} loop(s) with an unknown trip count counted once: "
            + ", ".join(loop.instruction for loop in unknown[:5])
        )
    if cost.unknown_custom_calls:
        notes.append(
            f"{len(cost.unknown_custom_calls)} custom-call(s) of unknown flops counted as 0 "
            f"(XLA counts -1): " + ", ".join(cost.unknown_custom_calls[:5])
        )
    compute = (
        sum(r.bound_seconds or 0.0 for r in rows if r.bound == "compute")
        if roofline is not None
        else None
    )
    return CostSummary(
        cost, roofline, chip_reason, total, tuple(shown), len(rows) - len(kept), tuple(notes),
        compute,
    )  # fmt: skip


__all__ = ["CostSummary", "RooflineRow", "summarize"]
