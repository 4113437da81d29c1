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
from hlo_layout.interop.sharding_axe import DeviceShard, ShardedArray, module_sharding
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.tree import Module

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class ArrayRow:
    """One array leaf of a sharded value, as printed."""

    index: tuple[int, ...]
    shape: str
    sharding: str
    kind: str
    tile_dims: tuple[int, ...]
    replication: int
    shard_shape: str
    shard_logical_bytes: int | None
    shard_physical_bytes: int | None
    devices: Sequence[int]
    axe: dict[str, Any] | None
    cute: str | None
    device_table: tuple[int, ...]
    note: str | None
    shards: Sequence[DeviceShard]  # kept for the --instruction view and JSON


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
class DeviceRow:
    device: int
    argument_bytes: int
    annotated_bytes: int


@dataclass(frozen=True, slots=True)
class ShardingReport:
    """One module: how many devices, whether its shapes are already per device, every value
    with a sharding, the per-device totals; `detail` when one instruction was asked for."""

    file: str
    module: str | None
    num_devices: int
    partitioned: bool
    values: tuple[ValueRow, ...]
    devices: tuple[DeviceRow, ...]
    unannotated_parameters: tuple[str, ...]
    detail: bool = False


def _array_row(a: ShardedArray) -> ArrayRow:
    try:
        cute = str(cute_layout(a.shard_shape))
    except InteropError:
        cute = None
    return ArrayRow(
        index=a.index,
        shape=print_shape(a.shape, default_layout=True),
        sharding=str(a.sharding),
        kind=a.sharding.kind,
        tile_dims=a.tile_dims,
        replication=a.sharding.replication if a.sharding.kind == "tiled" else len(a.device_ids),
        shard_shape=print_shape(a.shard_shape, default_layout=True),
        shard_logical_bytes=a.shard_logical_bytes,
        shard_physical_bytes=a.shard_physical_bytes,
        devices=a.device_ids,
        axe=a.axe.to_json() if a.axe is not None else None,
        cute=cute,
        device_table=a.device_table,
        note=a.note,
        shards=a.shards,
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
    devices = tuple(DeviceRow(d.device, d.argument_bytes, d.annotated_bytes) for d in found.devices)
    return ShardingReport(
        file=file,
        module=found.module,
        num_devices=found.num_devices,
        partitioned=found.partitioned,
        values=values,
        devices=devices,
        unannotated_parameters=found.unannotated_parameters,
        detail=instruction is not None,
    )


def device_groups(devices: tuple[DeviceRow, ...]) -> tuple[tuple[int, int, DeviceRow], ...]:
    """Runs of consecutive devices with the same figures: (first, last, figures)."""
    out: list[tuple[int, int, DeviceRow]] = []
    for d in devices:
        if out:
            first, last, row = out[-1]
            same = (row.argument_bytes, row.annotated_bytes) == (
                d.argument_bytes,
                d.annotated_bytes,
            )
            if same and d.device == last + 1:
                out[-1] = (first, d.device, row)
                continue
        out.append((d.device, d.device, d))
    return tuple(out)


def _shard_json(s: DeviceShard) -> dict[str, Any]:
    return {
        "device": s.device,
        "tile": list(s.tile),
        "start": list(s.start),
        "extent": list(s.extent),
        "replica": s.replica,
    }


def _array_json(a: ArrayRow, detail: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": list(a.index),
        "shape": a.shape,
        "sharding": a.sharding,
        "kind": a.kind,
        "tile_dims": list(a.tile_dims),
        "replication": a.replication,
        "shard_shape": a.shard_shape,
        "shard_logical_bytes": a.shard_logical_bytes,
        "shard_physical_bytes": a.shard_physical_bytes,
        "devices": list(a.devices),
        "cute": a.cute,
        "axe": a.axe,
        "note": a.note,
    }
    if a.device_table:
        out["device_table"] = list(a.device_table)
    if detail:
        out["shards"] = [_shard_json(s) for s in a.shards]
    return out


def sharding_json(reports: list[ShardingReport]) -> dict[str, Any]:
    """`{"schema_version", "modules": [{"module", "file", "num_devices", "partitioned",
    "values": [...], "devices": [...], "unannotated_parameters"}]}`; see the README.

    Every array lists its devices, so a module declaring many devices and many replicated values
    asks for a document of values × devices ids: over `limits.MAX_JSON_DEVICE_IDS` that is an
    input error (exit 3) raised before anything is built."""
    listed = sum(len(a.devices) for r in reports for v in r.values for a in v.arrays)
    if listed > limits.MAX_JSON_DEVICE_IDS:
        raise limits.LimitExceeded(
            f"the JSON would list {listed:,} device ids (arrays × the devices holding each), over "
            f"the limit of {limits.MAX_JSON_DEVICE_IDS:,} (MAX_JSON_DEVICE_IDS); the text view "
            "and --instruction show the same figures"
        )
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
                        "arrays": [_array_json(a, r.detail) for a in v.arrays],
                    }
                    for v in r.values
                ],
                "devices": [
                    {
                        "device": d.device,
                        "argument_bytes": d.argument_bytes,
                        "annotated_bytes": d.annotated_bytes,
                    }
                    for d in r.devices
                ],
                "unannotated_parameters": list(r.unannotated_parameters),
            }
            for r in reports
        ],
    }
