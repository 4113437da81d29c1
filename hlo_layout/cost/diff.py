"""How the cost changed between two compiles of a program: the totals, and the instructions
whose cost changed most — paired by what they compute, not by their HLO names.

Two compiles rename instructions freely (`fusion.12` becomes `fusion.7`), so instructions are
grouped on each side by (op_name, opcode, shape) — the user's source op, what kind of
instruction, what it makes — and a group is compared with the group of the same key on the
other side (a group holds every running instruction with that key, its figures summed over its
executions). A group on one side only is added or removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hlo_layout.cost.model import InstructionCost, ModuleCost, Totals, module_cost
from hlo_layout.memory.metadata import op_name_of
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.tree import Module
from hlo_layout.units import TOP_DEFAULT

#: (op_name, opcode, shape text) — what pairs an instruction across compiles.
Key = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class CostChange:
    """One group of instructions on each side (either may be absent) and its figures."""

    op_name: str
    opcode: str
    shape: str
    old: Totals | None
    new: Totals | None
    old_names: tuple[str, ...] = ()
    new_names: tuple[str, ...] = ()

    @property
    def flops_delta(self) -> int:
        return (self.new.flops if self.new else 0) - (self.old.flops if self.old else 0)

    @property
    def bytes_delta(self) -> int | float:
        new = self.new.physical_bytes_accessed if self.new else 0
        old = self.old.physical_bytes_accessed if self.old else 0
        return new - old

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_name": self.op_name,
            "opcode": self.opcode,
            "shape": self.shape,
            "old": _totals_dict(self.old),
            "new": _totals_dict(self.new),
            "flops_delta": self.flops_delta,
            "physical_bytes_delta": _whole(self.bytes_delta),
            "old_names": list(self.old_names),
            "new_names": list(self.new_names),
        }


@dataclass(frozen=True, slots=True)
class CostDiff:
    """The cost change of one module pair: XLA's totals, the loop-aware ones, the groups that
    changed most (largest |flops change|, then |physical bytes change|), and how many others."""

    old_xla: Totals
    new_xla: Totals
    old_total: Totals
    new_total: Totals
    changes: tuple[CostChange, ...]
    hidden: int = 0
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "xla": _change(self.old_xla, self.new_xla, physical=False),
            "total": _change(self.old_total, self.new_total, physical=True),
            "changes": [c.to_dict() for c in self.changes],
            "changes_hidden": self.hidden,
        }


def _whole(value: int | float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _totals_dict(t: Totals | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "flops": t.flops,
        "transcendentals": t.transcendentals,
        "bytes_accessed": _whole(t.bytes_accessed),
        "physical_bytes_accessed": _whole(t.physical_bytes_accessed),
    }


def _change(old: Totals, new: Totals, *, physical: bool) -> dict[str, Any]:
    keys = ["flops", "transcendentals", "bytes_accessed"]
    if physical:
        keys.append("physical_bytes_accessed")
    out = {}
    for key in keys:
        a, b = getattr(old, key), getattr(new, key)
        out[key] = {
            "old": _whole(a),
            "new": _whole(b),
            "delta": _whole(b - a),
            "percent": round(100 * (b - a) / a, 3) if a else None,
        }
    return out


def _groups(cost: ModuleCost) -> dict[Key, tuple[Totals, list[str]]]:
    out: dict[Key, tuple[Totals, list[str]]] = {}
    for item in cost.instructions:
        key = _key(cost.module, item)
        totals, names = out.get(key, (Totals(), []))
        names.append(item.name)
        out[key] = (totals + item.totals, names)
    return out


def _key(module: Module, item: InstructionCost) -> Key:
    computation = module.computation(item.computation)
    instruction = computation.get(item.name) if computation is not None else None
    if instruction is None:
        return ("", item.opcode, "")
    # (read from the unsplit attribute tail: a module's every instruction is keyed)
    return (op_name_of(instruction) or "", item.opcode, print_shape(instruction.shape))


def cost_diff(
    old: Module | ModuleCost, new: Module | ModuleCost, *, top: int | None = TOP_DEFAULT
) -> CostDiff:
    """The cost change from `old` to `new` (modules, or their `module_cost`): totals in XLA's
    convention and loop-aware, and the `top` instruction groups whose cost changed most.

    >>> from hlo_layout.syntax import parse
    >>> a = parse("HloModule m\\nENTRY e { p = f32[8]{0} parameter(0)\\n"
    ...           "ROOT n = f32[8]{0} negate(p) }")
    >>> b = parse("HloModule m\\nENTRY e { p = f32[8]{0} parameter(0)\\n"
    ...           "ROOT x = f32[8]{0} exponential(p) }")
    >>> d = cost_diff(a, b)
    >>> d.new_total.flops - d.old_total.flops, [c.opcode for c in d.changes]
    (-8, ['negate', 'exponential'])
    """
    old_cost = old if isinstance(old, ModuleCost) else module_cost(old)
    new_cost = new if isinstance(new, ModuleCost) else module_cost(new)
    before, after = _groups(old_cost), _groups(new_cost)
    changes: list[CostChange] = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None and a[0] == b[0]:
            continue
        changes.append(
            CostChange(
                key[0], key[1], key[2],
                a[0] if a else None, b[0] if b else None,
                tuple(a[1]) if a else (), tuple(b[1]) if b else (),
            )
        )  # fmt: skip
    changes.sort(key=lambda c: (-abs(c.flops_delta), -abs(c.bytes_delta), c.op_name, c.opcode))
    kept = changes if top is None else changes[:top]
    return CostDiff(
        old_cost.xla, new_cost.xla, old_cost.total, new_cost.total, tuple(kept),
        len(changes) - len(kept),
    )  # fmt: skip


__all__ = ["CostChange", "CostDiff", "cost_diff"]
