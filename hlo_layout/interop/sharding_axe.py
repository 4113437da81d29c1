"""Sharded arrays: what each device holds, and the whole distribution as one Axe layout.

An instruction's `sharding=` (syntax/sharding.py) plus its shape and layout says which tile of the
array each device stores and how that tile sits in the device's buffer. This module computes:

- the per-device shard shape, as XLA's SPMD partitioner makes it: each data dimension of size d
  split into t tiles holds ⌈d/t⌉ elements on every device (the last tiles are padded;
  hlo_sharding_util / ShapeUtil, `CeilOfRatio`), with the array's layout;
- each device's tile: its index, where it starts, how many of its elements are real;
- the Axe layout over the axes `device` and `m` (the element offset inside the device's buffer):
  a data dimension splits into its tile iters on `device` and the shard layout's CuTe sub-modes
  on `m`; replicated subgroup dimensions become `R` iters; a constant first device becomes `O`;
- the physical bytes of a shard (ShapeUtil::ArraySize of the shard shape), and per device, the
  bytes of a module's entry parameters and of every value that carries a sharding.

NOTE: [declared devices] A 100-byte line can declare four million devices
(`{devices=[2048,2048]<=[4194304]}`, `num_partitions=1000000000`). Nothing here is made per
declared device: shards are made on demand (`TiledShards`, `AllDevices`), holders are ranges when
they are 0..n-1, and the per-device totals are runs of devices with equal figures
(`DeviceGroup`), swept from one contribution per array. Only an explicit device list, which the
file spells out, is ever held whole.

NOTE: [padded Axe shapes] An Axe layout splits one row-major index, so a dimension's iters must
multiply to its extent. When tiles split a dimension unevenly, or the shard layout pads the shard
(a 30-row shard under `T(8,128)` has 32 rows of slots), the layout's shape is the padded one:
per dimension `tiles × padded shard extent`. `ShardedArray.axe_coordinate` maps a coordinate of
the real array into it (`tile × padded extent + position in the tile`); it is the identity when
nothing is padded.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeVar, overload

from hlo_layout import limits
from hlo_layout.errors import HloLayoutError
from hlo_layout.interop.axe import MEMORY, AxeLayout, Iter
from hlo_layout.interop.cute import cute_layout, flatten, is_tuple
from hlo_layout.interop.errors import InteropError
from hlo_layout.layout.errors import LayoutError
from hlo_layout.layout.size import array_bytes
from hlo_layout.limits import LimitExceeded
from hlo_layout.strides import delinearize, row_major_strides
from hlo_layout.syntax.opcodes import PARAMETER
from hlo_layout.syntax.parse import parse_shape
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.sharding import (
    MANUAL,
    MAXIMAL,
    NAMED,
    REPLICATED,
    TILED,
    TUPLE,
    UNPARSED,
    UNREDUCED,
    Sharding,
    TileAssignment,
    instruction_sharding,
    tile_form,
)
from hlo_layout.syntax.tree import Instruction, Module

T = TypeVar("T")

DEVICE = "device"
#: Axis of the fallback view when the device array is not affine: position in the tile array.
TILE = "tile"

# --- device arrays as strided iters -----------------------------------------------------------


def _iota_iters(ta: TileAssignment) -> list[list[tuple[int, int]]] | None:
    """The iota device array as iters per tile-assignment dim (most significant first).

    The transposed iota is a row-major array over `reshape` permuted, each of its axes a device
    stride; the tile dims reshape it. Walking both factorizations from the minor end and cutting
    at every boundary of either gives pieces that each lie in one tile dim and one iota axis.
    None when the two do not nest (a 6 reshaped as 2×3 against 3×2).
    """
    reshape = ta.iota_reshape
    perm = ta.iota_transpose or tuple(range(len(reshape)))
    base = row_major_strides(reshape)
    axes = [reshape[p] for p in perm]
    strides = [base[p] for p in perm]
    out: list[list[tuple[int, int]]] = [[] for _ in ta.dims]
    i, j = len(ta.dims) - 1, len(axes) - 1
    a, b, consumed = ta.dims[i], axes[j], 1
    while i >= 0:
        if a == 1:
            i -= 1
            a = ta.dims[i] if i >= 0 else 1
            continue
        if b == 1:
            j -= 1
            b, consumed = axes[j], 1
            continue
        if a % b == 0:
            g = b
        elif b % a == 0:
            g = a
        else:
            return None
        out[i].append((g, strides[j] * consumed))
        a //= g
        b //= g
        consumed *= g
    return [list(reversed(x)) for x in out]


def _affine_iters(ta: TileAssignment) -> tuple[list[list[tuple[int, int]]], int] | None:
    """An explicit device list that is `base + Σ index_k × stride_k`, as one iter per dim."""
    devices = ta.device_list()
    base = devices[0]
    unit = row_major_strides(ta.dims)
    strides = [devices[u] - base if n > 1 else 0 for n, u in zip(ta.dims, unit)]
    if any(s <= 0 for n, s in zip(ta.dims, strides) if n > 1):
        return None  # an Axe stride counts up; `[2]1,0` is left to the tile table
    for pos, index in enumerate(itertools.product(*(range(n) for n in ta.dims))):
        if devices[pos] != base + sum(i * s for i, s in zip(index, strides)):
            return None
    return [[(n, s)] if n > 1 else [] for n, s in zip(ta.dims, strides)], base


def device_iters(ta: TileAssignment) -> tuple[list[list[tuple[int, int]]], int] | None:
    """Per tile-assignment dim, (extent, device stride) iters, most significant first, and the
    first device; None when the device array is not affine over the dims or a refinement."""
    if ta.is_iota:
        iters = _iota_iters(ta)
        return (iters, 0) if iters is not None else None
    return _affine_iters(ta)


# --- shards ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceShard:
    """The tile one device holds: its tile index per data dim, where it starts in the array, how
    many of its elements per dim are real (the rest is padding), and which copy it is."""

    device: int
    tile: tuple[int, ...]
    start: tuple[int, ...]
    extent: tuple[int, ...]
    replica: int = 0


@dataclass(frozen=True, slots=True)
class ShardedArray:
    """One array leaf of a sharded value."""

    index: tuple[int, ...]
    shape: ArrayShape
    sharding: Sharding
    shard_shape: ArrayShape
    tile_dims: tuple[int, ...]
    shards: Sequence[DeviceShard]
    axe: AxeLayout | None = None
    device_table: tuple[int, ...] = ()
    note: str | None = None

    @property
    def devices(self) -> tuple[int, ...]:
        """The devices holding a piece, ascending."""
        return tuple(self.device_ids)

    @property
    def device_ids(self) -> Sequence[int]:
        """`devices` without materializing them when they are 0..n-1 (a range): every device of
        a replicated value, every device of an iota tile assignment."""
        if isinstance(self.shards, AllDevices):
            return range(self.shards.n)
        if isinstance(self.shards, TiledShards):
            ta = self.shards.ta
            return range(ta.num_tiles) if ta.is_iota else tuple(sorted(set(ta.devices)))
        return tuple(sorted({s.device for s in self.shards}))

    @property
    def device_ranges(self) -> tuple[tuple[int, int], ...]:
        """The holders as (first, last) runs: `((0, 4194303),)` for a 4M-device iota."""
        return id_ranges(self.device_ids)

    @property
    def shards_by_device(self) -> Sequence[DeviceShard]:
        """The shards ordered by device, each made on demand."""
        if isinstance(self.shards, AllDevices):
            return self.shards
        if isinstance(self.shards, TiledShards):
            return _ByDevice(self.shards)
        return sorted(self.shards, key=lambda s: s.device)

    def holds(self, device: int) -> bool:
        """Whether `device` holds a piece of this array."""
        ids = self.device_ids
        if isinstance(ids, range):
            return device in ids
        return device in set(ids)

    @property
    def shard_physical_bytes(self) -> int | None:
        return array_bytes(self.shard_shape).physical_bytes

    @property
    def shard_logical_bytes(self) -> int | None:
        return array_bytes(self.shard_shape).logical_bytes

    def axe_coordinate(self, coord: tuple[int, ...]) -> tuple[int, ...]:
        """A coordinate of the array in the Axe layout's (padded) shape; see NOTE [padded Axe
        shapes]."""
        if self.axe is None:
            raise InteropError(f"{self.shape} with sharding {self.sharding} has no Axe layout")
        out = []
        for x, t, s, n in zip(coord, self.tile_dims, self.shard_shape.dims, self.axe.shape):
            padded = n // t if t else 0
            out.append((x // s) * padded + x % s if s else x)
        return tuple(out)

    def holders(self, coord: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """Every (device, offset in its buffer) holding element `coord`, from the Axe layout."""
        if self.axe is None:
            raise InteropError(f"{self.shape} with sharding {self.sharding} has no Axe layout")
        out = []
        for point in self.axe.forward(self.axe_coordinate(coord)):
            values = point.as_dict()
            if DEVICE in values or TILE not in values:
                device = values.get(DEVICE, 0)
            else:
                device = self.device_table[values[TILE]]
            out.append((device, values.get(MEMORY, 0)))
        return tuple(out)


def shard_shape(shape: ArrayShape, sharding: Sharding) -> ArrayShape:
    """What each device stores: `f32[256,1024]{1,0}` under `[1,4,2] last_tile_dim_replicate` is
    `f32[256,256]{1,0}`. The layout is kept (split configs, which name global indices, are
    dropped); a dynamic `<=N` dim keeps its flag."""
    tiles = _tile_dims(shape, sharding)
    dims = tuple(-(-d // t) for d, t in zip(shape.dims, tiles))
    layout = shape.layout
    if layout is not None and layout.split_configs:
        layout = replace(layout, split_configs=())
    return replace(shape, dims=dims, layout=layout)


def _tile_dims(shape: ArrayShape, sharding: Sharding) -> tuple[int, ...]:
    if sharding.kind != TILED:
        return (1,) * shape.rank
    if sharding.tile_rank != shape.rank:
        raise InteropError(
            f"sharding {sharding} tiles {sharding.tile_rank} dimensions but {shape} has "
            f"{shape.rank}"
        )
    return sharding.tile_dims


def _memory_iters(shard: ArrayShape) -> tuple[list[list[Iter]], tuple[int, ...]]:
    """Per dimension, the shard layout's CuTe sub-modes as `m` iters (most significant first)."""
    cute = cute_layout(shard)
    modes = cute.shape if is_tuple(cute.shape) else (cute.shape,)
    strides = cute.stride if is_tuple(cute.stride) else (cute.stride,)
    out = []
    for mode, stride in zip(modes, strides):  # type: ignore[arg-type]
        out.append(
            [Iter(e, s, MEMORY) for e, s in reversed(list(zip(flatten(mode), flatten(stride))))]
        )
    return out, cute.mode_extents() if shard.rank else ()


def memory_axe(shape: ArrayShape) -> AxeLayout:
    """The Axe layout of one unsharded array: its CuTe sub-modes as `m` iters, each dimension's
    most significant first, over the padded extents.

    >>> from hlo_layout.syntax import parse_shape
    >>> str(memory_axe(parse_shape("f32[3,5]{1,0:T(2,2)}")))
    'S[(2,2,3,2):(12@m,2@m,4@m,1@m)]'
    """
    memory, padded = _memory_iters(shape)
    return AxeLayout(padded, tuple(it for dim in memory for it in dim))


class _LazySequence(Sequence[T]):
    """A read-only sequence whose items are made on demand by `_item(i)` (0 <= i < len):
    slicing, negative indices and bounds handled once here."""

    __slots__ = ()

    def _item(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._item(i)


class AllDevices(_LazySequence[DeviceShard]):
    """The shards of a value every one of `n` devices holds whole, made on demand: a module
    declaring many devices costs per device only where a report lists them."""

    __slots__ = ("extent", "n")

    def __init__(self, n: int, extent: tuple[int, ...]) -> None:
        self.n = n
        self.extent = extent

    def __len__(self) -> int:
        return self.n

    def _item(self, i: int) -> DeviceShard:
        zeros = (0,) * len(self.extent)
        return DeviceShard(i, zeros, zeros, self.extent, i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AllDevices):
            return (self.n, self.extent) == (other.n, other.extent)
        return isinstance(other, Sequence) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash((self.n, self.extent))


def _all_devices(n: int, extent: tuple[int, ...]) -> Sequence[DeviceShard]:
    return AllDevices(n, extent)


class TiledShards(_LazySequence[DeviceShard]):
    """The shards of a tiled sharding in tile-array order, each made on demand from the tile
    assignment: an iota over millions of devices costs nothing until a report lists them."""

    __slots__ = ("dims", "rank", "sub_dims", "ta")

    def __init__(
        self, ta: TileAssignment, rank: int, shard: tuple[int, ...], dims: tuple[int, ...]
    ) -> None:
        self.ta = ta
        self.rank = rank
        self.sub_dims = ta.dims[rank:]
        self.dims = (shard, dims)

    def __len__(self) -> int:
        return self.ta.num_tiles

    def _item(self, i: int) -> DeviceShard:
        idx = delinearize(i, self.ta.dims)
        tile = idx[: self.rank]
        shard, dims = self.dims
        start = tuple(t * s for t, s in zip(tile, shard))
        extent = tuple(max(0, min(s, d - b)) for s, d, b in zip(shard, dims, start))
        replica = 0
        for k, n in zip(idx[self.rank :], self.sub_dims):
            replica = replica * n + k
        return DeviceShard(self.ta.device_at_flat(i), tile, start, extent, replica)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash((self.ta, self.rank, self.dims))


class _ByDevice(_LazySequence[DeviceShard]):
    """The shards of a tile assignment in device order: an iota holds device d at one position
    it computes; an explicit list (file-sized) is sorted once as positions, not shards."""

    __slots__ = ("order", "shards")

    def __init__(self, shards: TiledShards) -> None:
        self.shards = shards
        ta = shards.ta
        self.order: list[int] | None = None
        if not ta.is_iota:
            self.order = sorted(range(len(ta.devices)), key=ta.devices.__getitem__)

    def __len__(self) -> int:
        return len(self.shards)

    def _item(self, i: int) -> DeviceShard:
        flat = self.order[i] if self.order is not None else self.shards.ta.flat_of_device(i)
        return self.shards[flat]


def id_ranges(ids: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Ascending ids as (first, last) runs; a `range` in O(1)."""
    if isinstance(ids, range):
        return ((ids.start, ids.stop - 1),) if len(ids) else ()
    out: list[tuple[int, int]] = []
    for d in ids:
        if out and d == out[-1][1] + 1:
            out[-1] = (out[-1][0], d)
        else:
            out.append((d, d))
    return tuple(out)


def shard_array(
    shape: ArrayShape,
    sharding: Sharding,
    *,
    num_devices: int = 1,
    partitioned: bool = False,
    index: tuple[int, ...] = (),
) -> ShardedArray:
    """One array under one (non-tuple) sharding.

    `partitioned=True` means `shape` is already the per-device shape (a module after SPMD
    partitioning); the global shape is then taken as shard × tiles, an upper bound when the
    program split a dimension unevenly.

    >>> from hlo_layout.syntax import parse_shape
    >>> from hlo_layout.syntax.sharding import parse_sharding
    >>> a = shard_array(parse_shape("f32[256,1024]{1,0}"),
    ...                 parse_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"))
    >>> a.shard_shape.dims, str(a.axe)
    ((256, 256), 'S[(256,4,256):(256@m,1@device,1@m)] + R[2:4@device]')
    """
    if sharding.kind == TUPLE:
        raise InteropError(f"a tuple sharding {sharding} on the array {shape}")
    if partitioned:
        tiles = _tile_dims(shape, sharding)
        shard = shape
        shape = replace(shape, dims=tuple(d * t for d, t in zip(shape.dims, tiles)))
    else:
        tiles = _tile_dims(shape, sharding)
        shard = shard_shape(shape, sharding)
    note: str | None = None
    memory: list[list[Iter]] | None
    try:
        memory, padded = _memory_iters(shard)
    except (InteropError, LayoutError) as e:  # LayoutError: `?` dims, `T(*)` tiles
        memory, padded = None, ()
        note = f"the shard layout has no shape:stride form: {e}"
    if sharding.text is not None and sharding.kind not in (NAMED, UNPARSED):
        note = f"a mesh sharding: {tile_form(sharding)}" + (f"; {note}" if note else "")
    if sharding.kind == TILED:
        return _tiled(shape, sharding, shard, tiles, memory, padded, note, index)
    kind = sharding.kind
    shards: Sequence[DeviceShard]
    axe: AxeLayout | None = None
    d_iters = [it for dim in memory or () for it in dim]
    if kind == MAXIMAL:
        device = sharding.device or 0
        zeros = (0,) * shape.rank
        shards = (DeviceShard(device, zeros, zeros, shape.dims),)
        if memory is not None:
            axe = AxeLayout(padded, tuple(d_iters), (), ((DEVICE, device),) if device else ())
    elif kind in (REPLICATED, MANUAL, UNREDUCED):
        shards = _all_devices(num_devices, shape.dims)
        if memory is not None:
            replica = (Iter(num_devices, 1, DEVICE),) if num_devices > 1 else ()
            axe = AxeLayout(padded, tuple(d_iters), replica)
        if kind == MANUAL:
            note = "manual: each device holds its own data, computed by the program itself"
        elif kind == UNREDUCED:
            note = "unreduced: each device holds a partial sum of the whole array"
    else:
        shards = ()
        note = sharding.reason or f"a {kind} sharding places no data this tool can describe"
    return ShardedArray(index, shape, sharding, shard, tiles, shards, axe, (), note)


def _tiled(
    shape: ArrayShape,
    sharding: Sharding,
    shard: ArrayShape,
    tiles: tuple[int, ...],
    memory: list[list[Iter]] | None,
    padded: tuple[int, ...],
    note: str | None,
    index: tuple[int, ...],
) -> ShardedArray:
    ta = sharding.tile_assignment
    if ta is None:
        raise InteropError(f"sharding {sharding} has no tile assignment")
    rank = sharding.tile_rank
    shards = TiledShards(ta, rank, shard.dims, shape.dims)
    axe: AxeLayout | None = None
    table: tuple[int, ...] = ()
    per_dim: list[list[tuple[int, int]]] | None = None
    base, axis = 0, DEVICE
    if memory is not None:
        found = device_iters(ta)
        if found is not None:
            per_dim, base = found
        elif ta.is_iota and ta.num_tiles > limits.MAX_LISTED_DEVICES:
            note = (
                f"the iota device array {ta} is not affine and too long to tabulate "
                f"(MAX_LISTED_DEVICES={limits.MAX_LISTED_DEVICES})"
            )
        else:
            per_dim = [
                [(n, s)] if n > 1 else [] for n, s in zip(ta.dims, row_major_strides(ta.dims))
            ]
            base, axis, table = 0, TILE, ta.device_list()
            note = (note + "; " if note else "") + (
                "the device array is not affine: the layout places tiles; device_table maps them"
            )
    if memory is not None and per_dim is not None:
        d_iters: list[Iter] = []
        for i in range(rank):
            d_iters += [Iter(e, s, axis) for e, s in per_dim[i] if e > 1]
            d_iters += memory[i]
        r_iters = tuple(Iter(e, s, axis) for dim in per_dim[rank:] for e, s in dim if e > 1)
        axe_shape = tuple(t * p for t, p in zip(tiles, padded))
        axe = AxeLayout(axe_shape, tuple(d_iters), r_iters, ((axis, base),) if base else ())
        if MANUAL in sharding.subgroup_types:
            note = "manual subgroup dimensions are shown as replicas; each holds its own data"
        elif UNREDUCED in sharding.subgroup_types:
            note = (note + "; " if note else "") + (
                "the unreduced subgroup dimension is shown as replicas; each holds a partial sum"
            )
    return ShardedArray(index, shape, sharding, shard, tiles, shards, axe, table, note)


def _leaves(shape: Shape, prefix: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], Shape]]:
    """Every non-tuple leaf in ShapeUtil order, tokens and opaques included (each takes one
    element of a tuple sharding)."""
    if isinstance(shape, TupleShape):
        out = []
        for i, e in enumerate(shape.elements):
            out += _leaves(e, (*prefix, i))
        return out
    return [(prefix, shape)]


def shard_value(
    shape: Shape, sharding: Sharding, *, num_devices: int = 1, partitioned: bool = False
) -> tuple[ShardedArray, ...]:
    """Every array leaf of a value under its sharding: a tuple sharding gives one sharding per
    leaf; any other sharding of a tuple applies to every leaf (HloSharding::GetSubSharding)."""
    leaves = _leaves(shape)
    if sharding.kind == TUPLE:
        if len(sharding.elements) != len(leaves):
            raise InteropError(
                f"tuple sharding has {len(sharding.elements)} elements but the shape has "
                f"{len(leaves)} leaves"
            )
        pairs = list(zip(leaves, sharding.elements))
    else:
        pairs = [(leaf, sharding) for leaf in leaves]
    return tuple(
        shard_array(leaf, s, num_devices=num_devices, partitioned=partitioned, index=index)
        for (index, leaf), s in pairs
        if isinstance(leaf, ArrayShape)
    )


# --- modules -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShardedValue:
    """An instruction with a `sharding=`, its arrays sharded, or why that failed."""

    computation: str
    instruction: str
    opcode: str
    parameter_number: int | None
    shape: Shape
    sharding: Sharding
    arrays: tuple[ShardedArray, ...] = ()
    error: str | None = None

    def bytes_on(self, device: int) -> int:
        """Physical bytes of this value on one device (0 where it holds nothing)."""
        total = 0
        for a in self.arrays:
            size = a.shard_physical_bytes
            if size is not None and a.holds(device):
                total += size
        return total


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Per device: bytes of the entry parameters (what the program is given) and of every value
    that carries a sharding."""

    device: int
    argument_bytes: int
    annotated_bytes: int


@dataclass(frozen=True, slots=True)
class DeviceGroup:
    """Devices `first..last` (inclusive), each holding the same bytes: the per-device table in
    runs, so a module declaring a billion devices costs what its file costs."""

    first: int
    last: int
    argument_bytes: int
    annotated_bytes: int


class DeviceRows(_LazySequence[DeviceMemory]):
    """The per-device rows of `DeviceGroup`s, made on demand."""

    __slots__ = ("groups", "n")

    def __init__(self, groups: tuple[DeviceGroup, ...]) -> None:
        self.groups = groups
        self.n = groups[-1].last + 1 if groups else 0

    def __len__(self) -> int:
        return self.n

    def _item(self, i: int) -> DeviceMemory:
        lo, hi = 0, len(self.groups) - 1
        while lo < hi:  # the group holding device i
            mid = (lo + hi + 1) // 2
            if self.groups[mid].first <= i:
                lo = mid
            else:
                hi = mid - 1
        g = self.groups[lo]
        return DeviceMemory(i, g.argument_bytes, g.annotated_bytes)


@dataclass(frozen=True, slots=True)
class ModuleSharding:
    module: str | None
    num_devices: int
    partitioned: bool
    values: tuple[ShardedValue, ...]
    #: Per-device bytes as runs of devices with the same figures, covering 0..num_devices-1.
    device_groups: tuple[DeviceGroup, ...]
    #: Entry parameters without a sharding, counted as replicated.
    unannotated_parameters: tuple[str, ...] = ()

    @property
    def devices(self) -> Sequence[DeviceMemory]:
        """One row per device (made on demand from `device_groups`)."""
        return DeviceRows(self.device_groups)


def _device_groups(
    n: int, added: list[tuple[tuple[tuple[int, int], ...], int, int]]
) -> tuple[DeviceGroup, ...]:
    """Sweep `(ranges, argument bytes, annotated bytes)` contributions over devices 0..n-1 into
    runs of equal figures: O(contributions log contributions), never O(n)."""
    delta: dict[int, list[int]] = {0: [0, 0], n: [0, 0]}
    for ranges, arg, ann in added:
        for first, last in ranges:
            first, last = max(first, 0), min(last, n - 1)
            if first > last:
                continue
            for at, sign in ((first, 1), (last + 1, -1)):
                d = delta.setdefault(at, [0, 0])
                d[0] += sign * arg
                d[1] += sign * ann
    out: list[DeviceGroup] = []
    arg = ann = 0
    points = sorted(delta)
    for at, nxt in itertools.pairwise(points):
        arg += delta[at][0]
        ann += delta[at][1]
        if at >= n:
            break
        if out and (out[-1].argument_bytes, out[-1].annotated_bytes) == (arg, ann):
            out[-1] = replace(out[-1], last=nxt - 1)
        else:
            out.append(DeviceGroup(at, nxt - 1, arg, ann))
    return tuple(out)


def is_partitioned(module: Module) -> bool:
    """Whether the module is already SPMD-partitioned (shapes are per device): the partitioner
    renames the entry computation `<name>_spmd` (SpmdPartitioner::Run)."""
    entry = module.entry
    return entry is not None and entry.name.endswith("_spmd")


def num_partitions(module: Module) -> int | None:
    """The header's `num_partitions=`; over `limits.MAX_DEVICES` is an input error (the report
    has a row per device)."""
    attr = module.attr("num_partitions")
    if attr is None:
        return None
    raw = attr.raw.strip()
    if not raw.isdigit():
        return None
    if len(raw) > 20 or int(raw) > limits.MAX_DEVICES:
        shown = raw if len(raw) <= 24 else raw[:24] + "…"
        raise LimitExceeded(
            f"num_partitions={shown} is over the limit of {limits.MAX_DEVICES} devices "
            "(MAX_DEVICES)",
            attr.span,
        )
    return int(raw)


def entry_parameter_layouts(module: Module) -> dict[int, Shape]:
    """Parameter shapes, with layouts, from the header's `entry_computation_layout` (the
    external layouts; before layout assignment the instructions print plain `{1,0}`)."""
    attr = module.attr("entry_computation_layout")
    if attr is None:
        return {}
    text = attr.raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return {}
    params, arrow, _ = text[1:-1].rpartition("->")
    if not arrow:
        return {}
    try:
        shape = parse_shape(params)
    except HloLayoutError:  # a header we cannot read only loses the better layouts
        return {}
    if not isinstance(shape, TupleShape):
        return {}
    return dict(enumerate(shape.elements))


def _with_layouts(shape: Shape, external: Shape | None) -> Shape:
    if external is None or _dims_of(external) != _dims_of(shape):
        return shape
    return external


def _dims_of(shape: Shape) -> object:
    if isinstance(shape, ArrayShape):
        return (shape.element_type, shape.dims)
    if isinstance(shape, TupleShape):
        return tuple(_dims_of(e) for e in shape.elements)
    return type(shape).__name__


def module_sharding(
    module: Module, *, partitioned: bool | None = None, instruction: str | None = None
) -> ModuleSharding:
    """Every instruction of the module that carries a sharding, sharded, and per-device totals
    (over the whole module, also when `instruction` keeps only that one's values).

    Entry parameters take their layouts from `entry_computation_layout` when it has them; an
    entry parameter with no sharding counts as replicated (it is whole on every device).
    `partitioned=None` detects a partitioned module by its `_spmd` entry name.
    """
    if partitioned is None:
        partitioned = is_partitioned(module)
    entry = module.entry
    external = entry_parameter_layouts(module)
    found: list[tuple[str, Instruction, Sharding]] = []
    highest = -1
    for comp in module.computations:
        for ins in comp.instructions:
            s = instruction_sharding(ins)
            if s is None:
                continue
            found.append((comp.name, ins, s))
            highest = max(highest, _highest_device(s))
    n = max(num_partitions(module) or 1, highest + 1, 1)
    values = []
    for comp_name, ins, s in found:
        shape = ins.shape
        is_param = entry is not None and comp_name == entry.name and ins.opcode == PARAMETER
        if is_param and ins.parameter_number is not None:
            shape = _with_layouts(shape, external.get(ins.parameter_number))
        try:
            arrays = shard_value(shape, s, num_devices=n, partitioned=partitioned)
            error = None
        except InteropError as e:
            arrays, error = (), e.message
        values.append(
            ShardedValue(
                comp_name, ins.name, ins.opcode, ins.parameter_number, shape, s, arrays, error
            )
        )
    unannotated: list[tuple[str, Shape]] = []
    if entry is not None:
        for p in entry.parameter_instructions:
            if instruction_sharding(p) is None:
                shape = _with_layouts(p.shape, external.get(p.parameter_number or 0))
                unannotated.append((p.name, shape))
    entry_name = entry.name if entry is not None else None
    # Unannotated entry parameters are whole on every device.
    replicated = sum(
        a.shard_physical_bytes or 0
        for _, shape in unannotated
        for a in shard_value(shape, Sharding(REPLICATED), num_devices=n)
    )
    added: list[tuple[tuple[tuple[int, int], ...], int, int]] = [(((0, n - 1),), replicated, 0)]
    for v in values:
        is_argument = v.computation == entry_name and v.opcode == PARAMETER
        for a in v.arrays:
            size = a.shard_physical_bytes or 0
            added.append((a.device_ranges, size if is_argument else 0, size))
    groups = _device_groups(n, added)
    if instruction is not None:
        values = [v for v in values if v.instruction == instruction.removeprefix("%")]
    return ModuleSharding(
        module.name,
        n,
        partitioned,
        tuple(values),
        groups,
        tuple(name for name, _ in unannotated),
    )


def _highest_device(s: Sharding) -> int:
    if s.kind == TUPLE:
        return max((_highest_device(e) for e in s.elements), default=-1)
    if s.kind == MAXIMAL:
        return s.device or 0
    if s.kind == TILED and s.tile_assignment is not None:
        return s.tile_assignment.max_device
    return -1


__all__ = [
    "DEVICE",
    "TILE",
    "AllDevices",
    "DeviceGroup",
    "DeviceMemory",
    "DeviceRows",
    "DeviceShard",
    "ModuleSharding",
    "ShardedArray",
    "ShardedValue",
    "TiledShards",
    "device_iters",
    "entry_parameter_layouts",
    "id_ranges",
    "is_partitioned",
    "memory_axe",
    "module_sharding",
    "num_partitions",
    "shard_array",
    "shard_shape",
    "shard_value",
]
