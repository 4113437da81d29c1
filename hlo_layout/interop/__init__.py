"""Interop views: XLA layouts and shardings in the CuTe/TLA and Axe layout languages (pure).

- `cute`: hierarchical `shape:stride` layouts (pycute / CATLASS TLA), and `cute_layout(shape)`,
  an XLA array layout as one;
- `axe`: Axe `D/R/O` layouts over named hardware axes;
- `sharding_axe`: an instruction's `sharding=` and layout as per-device shards and one Axe layout
  over the axes `device` and `m`.

`cute_string` and `axe_json` are what `hlo-layout layout --cute / --axe` print for one array.
"""

from __future__ import annotations

from typing import Any

from hlo_layout.interop.axe import MEMORY, AxeLayout, HwCoord, Iter, format_axe, parse_axe
from hlo_layout.interop.cute import (
    CuteLayout,
    column_major,
    crd2idx,
    crd2offset,
    cute_layout,
    idx2crd,
    make_layout_tile,
    nN,
    nZ,
    parse_cute,
    row_major,
    zN,
    zZ,
)
from hlo_layout.interop.errors import InteropError
from hlo_layout.interop.sharding_axe import (
    DeviceMemory,
    DeviceShard,
    ModuleSharding,
    ShardedArray,
    ShardedValue,
    memory_axe,
    module_sharding,
    shard_array,
    shard_shape,
    shard_value,
)
from hlo_layout.syntax.parse import parse_shape
from hlo_layout.syntax.shape import ArrayShape


def _array(shape: ArrayShape | str) -> ArrayShape:
    parsed = parse_shape(shape) if isinstance(shape, str) else shape
    if not isinstance(parsed, ArrayShape):
        raise InteropError(f"{parsed} is not an array shape: pass each tuple element on its own")
    return parsed


def cute_string(shape: ArrayShape | str) -> str:
    """An array's layout as a CuTe `shape:stride` string over its logical coordinates.

    Raises InteropError (an HloLayoutError) when the layout has no shape:stride form, and
    HloSyntaxError for a string that is not a shape.

    >>> cute_string("bf16[8,256]{1,0:T(8,128)(2,1)}")
    '((2,4,1),(128,2)):((1,256,2048),(2,1024))'
    """
    return str(cute_layout(_array(shape)))


def axe_json(shape: ArrayShape | str) -> dict[str, Any]:
    """An array's layout as an Axe layout on the memory axis `m`, as JSON-ready data:
    `{"shape", "D": [{"extent", "stride", "axis"}], "R": [], "O": {}, "text"}` (shape and extents
    padded, like the CuTe view).

    >>> axe_json("f32[3,5]{1,0:T(2,2)}")["text"]
    'S[(2,2,3,2):(12@m,2@m,4@m,1@m)]'
    """
    return memory_axe(_array(shape)).to_json()


__all__ = [
    "MEMORY",
    "AxeLayout",
    "CuteLayout",
    "DeviceMemory",
    "DeviceShard",
    "HwCoord",
    "InteropError",
    "Iter",
    "ModuleSharding",
    "ShardedArray",
    "ShardedValue",
    "axe_json",
    "column_major",
    "crd2idx",
    "crd2offset",
    "cute_layout",
    "cute_string",
    "format_axe",
    "idx2crd",
    "make_layout_tile",
    "memory_axe",
    "module_sharding",
    "nN",
    "nZ",
    "parse_axe",
    "parse_cute",
    "row_major",
    "shard_array",
    "shard_shape",
    "shard_value",
    "zN",
    "zZ",
]
