"""The report model of `hlo-layout sharding DUMP`: which devices hold what, in plain frozen data.

Built from `interop.sharding_axe`; `sharding_view.py` draws it with Rich and `sharding_json`
turns it into the JSON document the command prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hlo_layout import limits
from hlo_layout.interop.cute import cute_layout
from hlo_layout.interop.errors import InteropError
from hlo_layout.interop.sharding_axe import (
    DeviceGroup,
    DeviceRows,
    DeviceShard,
    ShardedArray,
    module_sharding,
)
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.sharding import TILED, tile_form
from hlo_layout.syntax.tree import Module

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class ArrayRow:
    """One array leaf of a sharded value, as printed."""

    index: tuple[int, ...]
    shape: str
    sharding: str
    #: The HloSharding form: differs from `sharding` for a mesh sharding (what it stands for).
    tile_sharding: str
    kind: str
    tile_dims: tuple[int, ...]
    replication: int
    shard_shape: str
    shard_logical_bytes: int | None
    shard_physical_bytes: int | None
    devices: Sequence[int]  # a range when the holders are 0..n-1 (never listed in memory)
    device_ranges: tuple[tuple[int, int], ...]
    axe: dict[str, Any] | None
    cute: str | None
    device_table: tuple[int, ...]
    note: str | None
    shards: Sequence[DeviceShard]  # kept for the --instruction JSON, tile-array order
    shards_by_device: Sequence[DeviceShard]  # the --instruction view's order, made on demand


@dataclass(frozen=True, slots=True)
class ValueRow:
    computation: str
    instruction: str
    opcode: str
    parameter_number: int | None
    shape: str
    sharding: str
    arrays: tuple[ArrayRow, ...]
    error: str | None


@dataclass(frozen=True, slots=True)
class ShardingReport:
    """One module: how many devices, whether its shapes are already per device, every value
    with a sharding, the per-device totals; `detail` when one instruction was asked for."""

    file: str
    module: str | None
    num_devices: int
    partitioned: bool
    values: tuple[ValueRow, ...]
    #: Per-device bytes in runs of devices with equal figures (interop.sharding_axe.DeviceGroup).
    device_groups: tuple[DeviceGroup, ...]
    unannotated_parameters: tuple[str, ...]
    detail: bool = False

    @property
    def devices(self) -> DeviceRows:
        """One row per device (`device`, `argument_bytes`, `annotated_bytes`), made on demand
        from `device_groups`: a module may declare millions of devices."""
        return DeviceRows(self.device_groups)


def _array_row(a: ShardedArray) -> ArrayRow:
    try:
        cute = str(cute_layout(a.shard_shape))
    except InteropError:
        cute = None
    return ArrayRow(
        index=a.index,
        shape=print_shape(a.shape, default_layout=True),
        sharding=str(a.sharding),
        tile_sharding=tile_form(a.sharding),
        kind=a.sharding.kind,
        tile_dims=a.tile_dims,
        replication=a.sharding.replication if a.sharding.kind == TILED else len(a.device_ids),
        shard_shape=print_shape(a.shard_shape, default_layout=True),
        shard_logical_bytes=a.shard_logical_bytes,
        shard_physical_bytes=a.shard_physical_bytes,
        devices=a.device_ids,
        device_ranges=a.device_ranges,
        axe=a.axe.to_json() if a.axe is not None else None,
        cute=cute,
        device_table=a.device_table,
        note=a.note,
        shards=a.shards,
        shards_by_device=a.shards_by_device,
    )


def sharding_report(
    module: Module,
    file: str,
    *,
    instruction: str | None = None,
    partitioned: bool | None = None,
) -> ShardingReport:
    """The report of one module (or of one instruction of it)."""
    found = module_sharding(module, partitioned=partitioned, instruction=instruction)
    values = tuple(
        ValueRow(
            computation=v.computation,
            instruction=v.instruction,
            opcode=v.opcode,
            parameter_number=v.parameter_number,
            shape=print_shape(v.shape, default_layout=True),
            sharding=str(v.sharding),
            arrays=tuple(_array_row(a) for a in v.arrays),
            error=v.error,
        )
        for v in found.values
    )
    return ShardingReport(
        file=file,
        module=found.module,
        num_devices=found.num_devices,
        partitioned=found.partitioned,
        values=values,
        device_groups=found.device_groups,
        unannotated_parameters=found.unannotated_parameters,
        detail=instruction is not None,
    )


def _shard_json(s: DeviceShard) -> dict[str, Any]:
    return {
        "device": s.device,
        "tile": list(s.tile),
        "start": list(s.start),
        "extent": list(s.extent),
        "replica": s.replica,
    }


def _array_json(a: ArrayRow, detail: bool, listed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": list(a.index),
        "shape": a.shape,
        "sharding": a.sharding,
        "tile_sharding": a.tile_sharding,
        "kind": a.kind,
        "tile_dims": list(a.tile_dims),
        "replication": a.replication,
        "shard_shape": a.shard_shape,
        "shard_logical_bytes": a.shard_logical_bytes,
        "shard_physical_bytes": a.shard_physical_bytes,
        "devices": list(a.devices) if listed else None,
        "device_count": len(a.devices),
        "device_ranges": [list(r) for r in a.device_ranges],
        "cute": a.cute,
        "axe": a.axe,
        "note": a.note,
    }
    if a.device_table:
        out["device_table"] = list(a.device_table)
    if detail:
        out["shards"] = [_shard_json(s) for s in a.shards] if listed else None
    return out


def _listed_ids(reports: list[ShardingReport]) -> int:
    """How many device ids (and shards, per-device rows) the document would spell out."""
    total = 0
    for r in reports:
        total += r.num_devices
        for v in r.values:
            for a in v.arrays:
                total += len(a.devices) * (2 if r.detail else 1)
    return total


def sharding_json(reports: list[ShardingReport]) -> dict[str, Any]:
    """`{"schema_version", "modules": [{"module", "file", "num_devices", "partitioned",
    "values": [...], "devices": [...], "device_groups": [...], "unannotated_parameters"}]}`;
    see the README.

    Device sets are always given compactly (`device_count`, `device_ranges` per array,
    `device_groups` per module: runs of devices with the same bytes). They are also spelled out
    one by one (`devices`, per-device rows, `shards` with --instruction) while the whole document
    would list at most `limits.MAX_JSON_DEVICE_IDS` ids; past that those lists are `null`, so a
    module declaring millions of devices costs what its file costs."""
    listed = _listed_ids(reports) <= limits.MAX_JSON_DEVICE_IDS
    return {
        "schema_version": SCHEMA_VERSION,
        "modules": [
            {
                "module": r.module,
                "file": r.file,
                "num_devices": r.num_devices,
                "partitioned": r.partitioned,
                "values": [
                    {
                        "computation": v.computation,
                        "instruction": v.instruction,
                        "opcode": v.opcode,
                        "parameter_number": v.parameter_number,
                        "shape": v.shape,
                        "sharding": v.sharding,
                        "error": v.error,
                        "arrays": [_array_json(a, r.detail, listed) for a in v.arrays],
                    }
                    for v in r.values
                ],
                "devices": [
                    {
                        "device": d,
                        "argument_bytes": g.argument_bytes,
                        "annotated_bytes": g.annotated_bytes,
                    }
                    for g in r.device_groups
                    for d in range(g.first, g.last + 1)
                ]
                if listed
                else None,
                "device_groups": [
                    {
                        "first": g.first,
                        "last": g.last,
                        "argument_bytes": g.argument_bytes,
                        "annotated_bytes": g.annotated_bytes,
                    }
                    for g in r.device_groups
                ],
                "unannotated_parameters": list(r.unannotated_parameters),
            }
            for r in reports
        ],
    }
