"""What one operand reads: an indexing map plus where its runtime variables and replica come from.

Mirrors XLA's `OperandIndexing` (xla/hlo/analysis/indexing_analysis.h): the map, one
`RuntimeVarIndexing` per runtime variable (the instruction whose value the variable is, and the map
from the same output index into that instruction), and for collectives a replica-id map. Also
`HloInstructionIndexing`: a set of such values per operand (output-to-input) or per output
(input-to-output).

NOTE: [runtime-variable order] XLA's `ComposeOperandIndexing` lists the consumer's runtime
variables before the producer's, while the composed map numbers the producer's first
(`ComposeIndexingMaps`). Its printed `rt0:` line can then describe the map's `rt2`
(FusionOpWithDynSliceOfDynSlice). We keep the list aligned with the map: entry k always describes
`rt<k>`, so the pairing is right; the conformance test compares the lists as sets.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hlo_layout.indexing.expr import VarSpace
from hlo_layout.indexing.map import UNDEFINED, IndexingMap, compose
from hlo_layout.indexing.simplify import detect_unused_symbols, remove_unused_symbols, simplify
from hlo_layout.indexing.text import format_indexing_map, to_json


@dataclass(frozen=True, slots=True)
class SourceRef:
    """The instruction a runtime variable reads: its computation and name.

    `label` is how XLA prints it (`RuntimeVarIndexing::ToString`): `parameter(N)`, `constant(V)` for
    a scalar constant, `constant` for an array constant, else the instruction name.
    """

    computation: str
    name: str
    label: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.label or self.name


@dataclass(frozen=True, slots=True)
class RuntimeVar:
    """Runtime variable `rt<k>`: its value is `source[map(output index)]` (XLA's
    `RuntimeVarIndexing`). Example: dynamic-slice offset `rt0: parameter(1); (d0, d1) -> ()`."""

    source: SourceRef
    map: IndexingMap

    def __str__(self) -> str:
        return f"{self.source}; {format_indexing_map(self.map)}"


@dataclass(frozen=True, slots=True)
class OperandIndexing:
    """One way an operand is read: `map` from output index to operand index, the sources of its
    runtime variables (`rt_vars[k]` describes the map's `rt<k>`), and for collectives the replica
    read from (`replica_id`, same inputs, one result)."""

    map: IndexingMap
    rt_vars: tuple[RuntimeVar, ...] = ()
    replica_id: IndexingMap | None = None

    @property
    def is_undefined(self) -> bool:
        return self.map.is_undefined

    @property
    def is_known_empty(self) -> bool:
        return self.map.is_known_empty

    def __str__(self) -> str:
        return format_operand_indexing(self)


UNKNOWN = OperandIndexing(UNDEFINED)
#: The empty slot, shared (a tuple of n slots is built n times for n outputs).
NO_MAPS: frozenset[OperandIndexing] = frozenset()


def format_operand_indexing(oi: OperandIndexing) -> str:
    """XLA's `OperandIndexing::ToString`: the map, then `runtime variables:` and `replica id:`.

    Example: `(d0){rt0} -> (d0 + rt0), domain: ...` then `runtime variables:`, a blank line and
    `rt0: parameter(1); (d0) -> (), domain: d0 in [0, 9]`.
    """
    text = format_indexing_map(oi.map)
    if oi.rt_vars:
        text += "\nruntime variables:\n"
        for k, rv in enumerate(oi.rt_vars):
            text += f"\nrt{k}: {rv}"
    if oi.replica_id is not None:
        text += "\nreplica id:\n" + format_indexing_map(oi.replica_id)
    return text


def operand_indexing_json(oi: OperandIndexing) -> dict[str, Any]:
    """The map's JSON form (`to_json`) plus `runtime_variables` and `replica_id`."""
    if oi == UNKNOWN:  # the common unknown map: its form is built once
        if not _UNKNOWN_JSON:
            _UNKNOWN_JSON.update(to_json(oi.map), runtime_variables=[], replica_id=None)
        return dict(_UNKNOWN_JSON)
    out = to_json(oi.map)
    out["runtime_variables"] = [
        {"rt": f"rt{k}", "reads": str(rv.source), "map": to_json(rv.map)}
        for k, rv in enumerate(oi.rt_vars)
    ]
    out["replica_id"] = None if oi.replica_id is None else to_json(oi.replica_id)
    return out


_UNKNOWN_JSON: dict[str, Any] = {}


def _map_key(m: IndexingMap) -> tuple[Any, ...]:
    key: tuple[Any, ...] = (m.state, m.results, m.dims, m.range_vars, m.rt_vars, m.constraints)
    variables = (*m.dims, *m.range_vars, *m.rt_vars)
    if any(v.name for v in variables):
        key += (tuple(v.name for v in variables),)
    return key


def exact_key(oi: OperandIndexing) -> tuple[Any, ...]:
    """A key under which two indexings are the same in every printed detail: equality ignores
    constraint order, variable names and source labels, which simplification and printing
    keep, so memos of derived maps (`fusion._Walk.compose`) key on this instead."""
    rt_vars = tuple(
        (rv.source.computation, rv.source.name, rv.source.label, _map_key(rv.map))
        for rv in oi.rt_vars
    )
    replica = None if oi.replica_id is None else _map_key(oi.replica_id)
    return (_map_key(oi.map), rt_vars, replica)


def compose_operand_indexing(first: OperandIndexing, second: OperandIndexing) -> OperandIndexing:
    """`second ∘ first` for whole operand indexings (XLA's `ComposeOperandIndexing`).

    `first` maps output to an intermediate, `second` the intermediate to the operand. The producer's
    runtime variables are re-expressed from the same output index (their maps are composed with
    `first.map`), then come the consumer's, matching the composed map's rt numbering. Two replica
    maps in a row (chained collectives) are not supported, as in XLA: the result is unknown.
    """
    if first.is_undefined or second.is_undefined:
        return UNKNOWN
    if first.map.num_results != second.map.num_dims:  # XLA's scan carry map (rules.collective)
        return UNKNOWN
    replica_id = first.replica_id
    if second.replica_id is not None:
        if replica_id is not None:
            return UNKNOWN
        replica_id = compose(first.map, second.replica_id)
    rt_vars = tuple(RuntimeVar(rv.source, compose(first.map, rv.map)) for rv in second.rt_vars)
    return OperandIndexing(compose(first.map, second.map), rt_vars + first.rt_vars, replica_id)


def remove_unused_operand_symbols(oi: OperandIndexing) -> OperandIndexing:
    """`remove_unused_symbols` on the map, dropping the sources of removed rt vars with it
    (XLA's `OperandIndexing::RemoveUnusedSymbols`)."""
    if oi.is_undefined or oi.map.num_symbols == 0:
        return oi
    unused, dead = detect_unused_symbols(oi.map)
    if not unused:
        return oi
    kept = tuple(
        rv
        for k, rv in enumerate(oi.rt_vars)
        if not any(v.space is VarSpace.RT and v.value == k for v in unused)
    )
    return OperandIndexing(remove_unused_symbols(oi.map, (unused, dead)), kept, oi.replica_id)


def simplify_operand_indexing(
    oi: OperandIndexing, *, remove_unused: bool = True
) -> OperandIndexing:
    """Simplify the map (XLA's `OperandIndexing::Simplify`), then drop unused symbols.

    Runtime-variable and replica maps are left as composed, as XLA leaves them (its tests print
    them unsimplified, e.g. `d0 / 128 / 128` with always-true constraints).
    """
    if oi.is_undefined:
        return oi
    result = OperandIndexing(simplify(oi.map), oi.rt_vars, oi.replica_id)
    return remove_unused_operand_symbols(result) if remove_unused else result


def sorted_indexings(indexings: Iterable[OperandIndexing]) -> list[OperandIndexing]:
    """A set of operand indexings in a stable order: by printed text (sets have no order)."""
    items = list(indexings)
    return items if len(items) < 2 else sorted(items, key=format_operand_indexing)


@dataclass(frozen=True, slots=True)
class InstructionIndexing:
    """XLA's `HloInstructionIndexing`: one set of `OperandIndexing` per operand (output-to-input)
    or per output (input-to-output). An unsupported op has `{UNKNOWN}` in every slot; an op
    without operands (constant, iota, parameter) has no slots. `notes` say why something is
    unknown, for people."""

    maps: tuple[frozenset[OperandIndexing], ...] = ()
    notes: tuple[str, ...] = ()

    @staticmethod
    def of(*maps: IndexingMap | OperandIndexing) -> InstructionIndexing:
        """One map per slot (XLA's `HloInstructionIndexing::FromIndexingMaps`)."""
        return InstructionIndexing(
            tuple(
                frozenset({m if isinstance(m, OperandIndexing) else OperandIndexing(m)})
                for m in maps
            )
        )

    @staticmethod
    def unknown(count: int, note: str = "") -> InstructionIndexing:
        """`count` slots of unknown indexing (XLA's `CreateUnknownIndexing`)."""
        return InstructionIndexing((frozenset({UNKNOWN}),) * count, (note,) if note else ())

    def simplified(self) -> InstructionIndexing:
        """Simplify every map and drop unknown ones (XLA's `HloInstructionIndexing::Simplify`)."""
        return InstructionIndexing(
            tuple(
                frozenset(simplify_operand_indexing(oi) for oi in slot if not oi.is_undefined)
                for slot in self.maps
            ),
            self.notes,
        )

    def nonempty(self) -> Iterator[tuple[int, frozenset[OperandIndexing]]]:
        """(k, slot) for the slots holding maps: a tuple's rule has one among thousands, and
        this skips the empty ones at C speed."""
        return itertools.compress(enumerate(self.maps), self.maps)

    def to_string(self) -> str:
        """XLA's `HloInstructionIndexing::ToString`: `operand id = k ` then the maps, per line.

        Maps within a slot are printed in text order (XLA's order is a hash set's).
        """
        lines = []
        for k, slot in enumerate(self.maps):
            parts = [
                "unknown indexing" if oi.is_undefined else format_operand_indexing(oi)
                for oi in sorted_indexings(slot)
            ]
            lines.append(f"operand id = {k} " + "".join(parts))
        return "".join(line + "\n" for line in lines)


__all__ = [
    "NO_MAPS",
    "UNKNOWN",
    "InstructionIndexing",
    "OperandIndexing",
    "RuntimeVar",
    "SourceRef",
    "compose_operand_indexing",
    "exact_key",
    "format_operand_indexing",
    "operand_indexing_json",
    "remove_unused_operand_symbols",
    "simplify_operand_indexing",
    "sorted_indexings",
]
