"""`sharding={...}`: how an SPMD program splits a value over devices, as typed values.

Mirrors XLA's hlo_parser.cc `ParseSharding` / `ParseSingleSharding` / `ParseTileAssignment` and
the printer `HloSharding::ToString`. The forms:

- `{replicated}`, `{manual}`, `{unknown}`, `{unreduced}`: every device holds the whole value
  (manual: each its own, as the program computed it);
- `{maximal device=3}`: only device 3 holds it;
- `{devices=[2,1,4]0,1,2,3,4,5,6,7}`: a tile assignment; the array of device ids is laid over the
  value's dimensions (row-major), each device holding one tile. An iota tile assignment
  `[2,1,4]<=[8]` or `[4,2]<=[2,4]T(1,0)` means "iota over the reshape dims, transposed, then
  reshaped to the tile dims";
- `last_tile_dim_replicate`: the last tile-assignment dimension is not a data dimension; the
  devices along it hold the same tile. `last_tile_dims={manual, replicated}` generalizes it to
  several trailing subgroup dimensions of the listed types;
- `shard_as N` / `shard_like N`, `metadata={...}`: kept, not interpreted;
- `{{...}, {...}}`: a tuple sharding, one element per array leaf of a tuple shape (XLA prints
  `/*index=5*/` before every fifth element);
- the 2025 named (Shardy mesh) form `{mesh['x'=2,'y'=2], [{'x'}, {'y'}]}` is decoded to the
  tiled sharding it stands for (`decode_mesh`, NamedSharding::ToTileAssignment) and prints as
  written; one with manual axes is kept as text with a reason (`kind == "named"`), as is
  anything this version cannot read (`kind == "unparsed"`).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import re
from dataclasses import dataclass

from hlo_layout import limits
from hlo_layout.errors import HloSemanticError, Span
from hlo_layout.strides import delinearize, linear_index, row_major_strides
from hlo_layout.syntax.tree import Instruction

REPLICATED = "replicated"
MAXIMAL = "maximal"
MANUAL = "manual"
UNKNOWN = "unknown"
UNREDUCED = "unreduced"
TILED = "tiled"
TUPLE = "tuple"
NAMED = "named"
UNPARSED = "unparsed"


@functools.lru_cache(maxsize=1024)
def _iota_devices(
    count: int, reshape: tuple[int, ...], transpose: tuple[int, ...]
) -> tuple[int, ...]:
    """IotaTileAssignment: iota(count) reshaped to `reshape`, transposed by `transpose`, flat."""
    if len(reshape) <= 1:
        return tuple(range(count))
    strides = row_major_strides(reshape)
    shape = [reshape[p] for p in transpose]
    step = [strides[p] for p in transpose]
    out = []
    index = [0] * len(shape)
    for _ in range(count):
        out.append(sum(i * s for i, s in zip(index, step)))
        for k in range(len(shape) - 1, -1, -1):
            index[k] += 1
            if index[k] < shape[k]:
                break
            index[k] = 0
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TileAssignment:
    """The device array of a tiled sharding: explicit `devices` (row-major over `dims`), or an
    iota `<=[reshape]T(transpose)` (XLA's TileAssignment / IotaTileAssignment)."""

    dims: tuple[int, ...]
    devices: tuple[int, ...] = ()
    iota_reshape: tuple[int, ...] = ()
    iota_transpose: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.dims or any(d <= 0 for d in self.dims):
            raise HloSemanticError(f"tile assignment dimensions {list(self.dims)} must be positive")
        n = math.prod(self.dims)
        if self.iota_reshape:
            if math.prod(self.iota_reshape) != n:
                raise HloSemanticError(
                    f"iota {list(self.iota_reshape)} holds {math.prod(self.iota_reshape)} devices "
                    f"but the tile assignment {list(self.dims)} needs {n}"
                )
            perm = self.iota_transpose or tuple(range(len(self.iota_reshape)))
            if sorted(perm) != list(range(len(self.iota_reshape))):
                raise HloSemanticError(
                    f"T{self.iota_transpose} is not a permutation of the iota's "
                    f"{len(self.iota_reshape)} dimensions"
                )
        elif len(self.devices) != n:
            raise HloSemanticError(
                f"tile assignment {list(self.dims)} needs {n} devices, the list has "
                f"{len(self.devices)}"
            )
        elif max(self.devices) >= limits.MAX_DEVICES or min(self.devices) < 0:
            bad = (
                max(self.devices) if max(self.devices) >= limits.MAX_DEVICES else min(self.devices)
            )
            raise HloSemanticError(
                f"device {bad} is outside 0..{limits.MAX_DEVICES - 1} (MAX_DEVICES)"
            )

    @property
    def is_iota(self) -> bool:
        return bool(self.iota_reshape)

    @property
    def num_tiles(self) -> int:
        return math.prod(self.dims)

    @property
    def perm(self) -> tuple[int, ...]:
        """The iota's transpose, the identity when none is written."""
        return self.iota_transpose or tuple(range(len(self.iota_reshape)))

    @property
    def max_device(self) -> int:
        """The highest device id, without listing them (an iota holds exactly 0..n-1)."""
        return self.num_tiles - 1 if self.is_iota else max(self.devices)

    def device_list(self) -> tuple[int, ...]:
        """Every device id, row-major over `dims` (TileAssignment::array()).

        Materializes an iota: callers that may meet a declared device count far beyond the
        file's size use `device_at_flat` / `flat_of_device` instead (limits.MAX_LISTED_DEVICES).
        """
        if not self.is_iota:
            return self.devices
        if self.num_tiles > limits.MAX_LISTED_DEVICES:
            raise limits.LimitExceeded(
                f"listing the {self.num_tiles} devices of {self} is over the limit of "
                f"{limits.MAX_LISTED_DEVICES} (MAX_LISTED_DEVICES)"
            )
        return _iota_devices(self.num_tiles, self.iota_reshape, self.perm)

    def device_at_flat(self, flat: int) -> int:
        """The device at a row-major position of the tile array, in O(rank) for an iota."""
        if not self.is_iota:
            return self.devices[flat]
        reshape, perm = self.iota_reshape, self.perm
        strides = row_major_strides(reshape)
        index = delinearize(flat, tuple(reshape[p] for p in perm))
        return sum(i * strides[p] for i, p in zip(index, perm))

    def flat_of_device(self, device: int) -> int:
        """Where an iota places `device` in the tile array (each device appears once)."""
        if not self.is_iota:
            return self.devices.index(device)
        reshape, perm = self.iota_reshape, self.perm
        coords = delinearize(device, reshape)
        return linear_index([coords[p] for p in perm], [reshape[p] for p in perm])

    def device_at(self, index: tuple[int, ...]) -> int:
        """The device at a tile-assignment index (TileAssignment::operator())."""
        return self.device_at_flat(linear_index(index, self.dims))

    def __str__(self) -> str:
        out = "[" + ",".join(map(str, self.dims)) + "]"
        if not self.is_iota:
            return out + ",".join(map(str, self.devices))
        out += "<=[" + ",".join(map(str, self.iota_reshape)) + "]"
        if len(self.iota_reshape) > 1 and self.iota_transpose:
            out += "T(" + ",".join(map(str, self.iota_transpose)) + ")"
        return out


@dataclass(frozen=True, slots=True)
class Sharding:
    """One decoded `sharding=` value (HloSharding). `kind` is one of the module constants."""

    kind: str
    tile_assignment: TileAssignment | None = None
    device: int | None = None
    last_tile_dim_replicate: bool = False
    last_tile_dims: tuple[str, ...] = ()
    shard_group: tuple[str, int] | None = None
    metadata: str | None = None
    elements: tuple[Sharding, ...] = ()
    text: str | None = None  # the text of a mesh (named) or unparsed sharding, as written
    #: Why a mesh sharding could not be decoded (kind NAMED), for the report.
    reason: str | None = None

    @property
    def subgroup_types(self) -> tuple[str, ...]:
        """Types of the trailing non-data tile-assignment dims (HloSharding::subgroup_types)."""
        return (REPLICATED,) if self.last_tile_dim_replicate else self.last_tile_dims

    @property
    def tile_rank(self) -> int:
        """Number of data dimensions the tile assignment splits (HloSharding::TiledDataRank)."""
        if self.tile_assignment is None:
            return 0
        return len(self.tile_assignment.dims) - len(self.subgroup_types)

    @property
    def tile_dims(self) -> tuple[int, ...]:
        """Tiles per data dimension: `[2,1,4] last_tile_dim_replicate` → (2, 1)."""
        if self.tile_assignment is None:
            return ()
        return self.tile_assignment.dims[: self.tile_rank]

    @property
    def subgroup_dims(self) -> tuple[int, ...]:
        if self.tile_assignment is None:
            return ()
        return self.tile_assignment.dims[self.tile_rank :]

    @property
    def replication(self) -> int:
        """How many devices hold each tile (the product of the replicated subgroup dims)."""
        return math.prod(
            n for n, t in zip(self.subgroup_dims, self.subgroup_types) if t == REPLICATED
        )

    def __str__(self) -> str:
        return print_sharding(self)


# --- printing (HloSharding::ToString) ----------------------------------------------------------


def _tail(s: Sharding) -> str:
    out = ""
    if s.shard_group is not None:
        out += f" {s.shard_group[0]} {s.shard_group[1]}"
    if s.metadata is not None:
        out += f" metadata={s.metadata}"
    return out


def print_sharding(s: Sharding) -> str:
    """XLA's text of a sharding: `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`; a mesh
    sharding (NamedSharding::ToString) prints as written."""
    if s.text is not None or s.kind in (NAMED, UNPARSED):
        return s.text or "{}"
    return tile_form(s)


def tile_form(s: Sharding) -> str:
    """The HloSharding text of a sharding: for a mesh sharding, the tile assignment it stands
    for (NamedSharding::ToTileAssignment), e.g. `{devices=[2,2]<=[4]}`."""
    if s.kind in (NAMED, UNPARSED):
        return s.text or "{}"
    if s.kind == TUPLE:
        parts = []
        for i, e in enumerate(s.elements):
            parts.append((f"/*index={i}*/" if i and i % 5 == 0 else "") + print_sharding(e))
        return "{" + ", ".join(parts) + "}"
    if s.kind == MAXIMAL:
        return f"{{maximal device={s.device}{_tail(s)}}}"
    if s.kind in (REPLICATED, MANUAL, UNKNOWN, UNREDUCED):
        return "{" + s.kind + _tail(s) + "}"
    out = f"{{devices={s.tile_assignment}"
    if s.last_tile_dim_replicate:
        out += " last_tile_dim_replicate"
    elif s.last_tile_dims:
        out += " last_tile_dims={" + ", ".join(s.last_tile_dims) + "}"
    return out + _tail(s) + "}"


# --- parsing (hlo_parser.cc ParseSharding) -----------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<comment>/\*.*?\*/)
      | (?P<le><=)
      | (?P<punct>[{}\[\](),=:?])
      | (?P<int>-?\d+)
      | (?P<ident>[A-Za-z_][\w.\-]*)
      | (?P<string>"[^"\\]*(?:\\.[^"\\]*)*")
      | (?P<axis>'[^']*')
    )""",
    re.VERBOSE | re.DOTALL,
)


class _Unreadable(Exception):
    """Text this version does not know how to read (kept raw, not an error)."""


class _Reader:
    def __init__(self, text: str, span: Span | None) -> None:
        self.text = text
        self.span = span
        self.tokens: list[tuple[str, str, int, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip():
                    raise _Unreadable(f"unexpected character {text[pos]!r}")
                break
            pos = m.end()
            kind = m.lastgroup or ""
            if kind != "comment":
                self.tokens.append((kind, m.group(kind), m.start(kind), m.end(kind)))
        self.i = 0

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        k = self.i + ahead
        if k < len(self.tokens):
            kind, value, _, _ = self.tokens[k]
            return kind, value
        return "eof", ""

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        _, got = self.next()
        if got != value:
            raise _Unreadable(f"expected '{value}', got '{got or 'end of text'}'")

    def int(self) -> int:
        kind, value = self.next()
        if kind != "int":
            raise _Unreadable(f"expected an integer, got '{value or 'end of text'}'")
        if len(value) > 20:  # XLA reads int64; far past any device count we could list
            raise self.error(f"integer {value[:24]}… of {len(value)} digits does not fit in int64")
        return int(value)

    def int_list(self, close: str) -> tuple[builtins.int, ...]:
        out = [self.int()]
        while self.peek()[1] == ",":
            self.next()
            out.append(self.int())
        self.expect(close)
        return tuple(out)

    def balanced(self) -> str:
        """The raw text of a `{...}` group (metadata), braces included."""
        start = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)
        depth = 0
        while True:
            kind, value = self.next()
            if kind == "eof":
                raise _Unreadable("unbalanced braces")
            if value == "{":
                depth += 1
            elif value == "}":
                depth -= 1
                if depth == 0:
                    return self.text[start : self.tokens[self.i - 1][3]]

    def error(self, message: str) -> HloSemanticError:
        return HloSemanticError(f"sharding {self.text}: {message}", self.span)


def _tile_assignment(r: _Reader) -> TileAssignment:
    r.expect("[")
    dims = r.int_list("]")
    if len(dims) > limits.MAX_RANK:
        raise HloSemanticError(
            f"{len(dims)} tile assignment dimensions (limit {limits.MAX_RANK}, MAX_RANK)"
        )
    declared = math.prod(d for d in dims if d > 0)
    if declared > limits.MAX_DEVICES:
        raise HloSemanticError(
            f"the tile assignment {list(dims)} declares {declared} devices, over the limit of "
            f"{limits.MAX_DEVICES} (MAX_DEVICES)"
        )
    if r.peek()[0] == "le":
        r.next()
        r.expect("[")
        reshape = r.int_list("]")
        transpose: tuple[int, ...] = ()
        if len(reshape) > 1:
            if r.peek()[1] != "T":
                raise _Unreadable("expected 'T(' after an iota's reshape dims")
            r.next()
            r.expect("(")
            transpose = r.int_list(")")
        return TileAssignment(dims, iota_reshape=reshape, iota_transpose=transpose)
    devices = [r.int()]
    while r.peek()[1] == "," and r.peek(1)[0] == "int":
        r.next()
        devices.append(r.int())
    return TileAssignment(dims, devices=tuple(devices))


# --- mesh shardings (Shardy's NamedSharding, hlo_parser.cc ParseNamedSharding) -----------------


@dataclass(frozen=True, slots=True)
class _AxisRef:
    """`'x'` or the sub-axis `'x':(pre)size` of mesh axis `axis` (XLA's AxisRef)."""

    axis: int
    pre: int
    size: int


def _axis_name(r: _Reader) -> str:
    kind, value = r.next()
    if kind == "axis":
        return value[1:-1]
    if kind in ("ident", "int"):
        return value
    raise _Unreadable(f"expected a mesh axis name, got '{value or 'end of text'}'")


def _axis_ref(r: _Reader, names: dict[str, int], sizes: list[int]) -> _AxisRef:
    name = _axis_name(r)
    if name not in names:
        raise r.error(f"axis '{name}' is not in the mesh {list(names)}")
    axis = names[name]
    full = sizes[axis]
    if r.peek()[1] != ":":
        return _AxisRef(axis, 1, full)
    r.next()
    r.expect("(")
    pre = r.int()
    r.expect(")")
    size = r.int()
    if pre < 1 or size < 1 or full % (pre * size):
        raise r.error(f"sub-axis '{name}':({pre}){size} does not divide the axis' size {full}")
    return _AxisRef(axis, pre, size)


def _axis_set(r: _Reader, names: dict[str, int], sizes: list[int]) -> tuple[list[_AxisRef], bool]:
    """`{'x', 'y':(1)2, ?}`: the axes and whether the set is closed (no `?`)."""
    r.expect("{")
    refs: list[_AxisRef] = []
    closed = True
    while r.peek()[1] != "}":
        if r.peek()[1] == ",":
            r.next()
        elif r.peek()[1] == "?":
            r.next()
            closed = False
        else:
            refs.append(_axis_ref(r, names, sizes))
    r.next()
    return refs, closed


def _mesh_devices(r: _Reader, n: int) -> tuple[int, ...] | TileAssignment:
    """`device_ids=(3,2,1,0)` or `device_ids=([4,16]T(1,0))` (an iota over `n` devices)."""
    r.expect("(")
    if r.peek()[1] == "[":
        r.next()
        reshape = r.int_list("]")
        transpose: tuple[int, ...] = ()
        if r.peek()[1] == "T":
            r.next()
            r.expect("(")
            transpose = r.int_list(")")
        r.expect(")")
        return TileAssignment((n,), iota_reshape=reshape, iota_transpose=transpose)
    ids = r.int_list(")")
    if sorted(ids) != list(range(n)):
        raise r.error(f"mesh device_ids must be a permutation of 0..{n - 1}")
    return ids


def decode_mesh(r: _Reader, start: int) -> Sharding:
    """A `{mesh[...] ...}` or `{maximal_mesh[device_id=N]}` (`single_device[...]`) sharding,
    after its `{`, decoded to the HloSharding it stands for (NamedSharding::ToTileAssignment).

    `{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{'x'}, {}], replicated={'y'}}`: a mesh of named
    axes over the devices (an iota unless `device_ids` lists them), one axis set per array
    dimension (`'x':(1)2` is a sub-axis: size 2 of axis x, after a pre-size of 1; `?` marks an
    open set and changes nothing here), then `replicated=` / `unreduced=` / `manual=` axis sets,
    or the whole-array words `replicated`, `unreduced`, `manual`. Each data dimension is split
    over the product of its axes; unreduced axes make one trailing subgroup dimension and the
    axes no set names make a last replicated one. Manual axes are kept as text with a reason
    (kind NAMED): XLA's ToTileAssignment does not map them either.
    """
    word = r.next()[1]
    if word in ("maximal_mesh", "single_device"):
        r.expect("[")
        if r.next()[1] != "device_id":
            raise _Unreadable("expected device_id in maximal_mesh[...]")
        r.expect("=")
        device = r.int()
        r.expect("]")
        tail = _mesh_tail_metadata(r)
        text = r.text[r.tokens[start][2] : r.tokens[r.i - 1][3]]
        return Sharding(MAXIMAL, device=device, metadata=tail, text=text)
    r.expect("[")
    names: dict[str, int] = {}
    sizes: list[int] = []
    while r.peek()[1] != "]":
        if r.peek()[1] == ",":
            r.next()
            continue
        name = _axis_name(r)
        r.expect("=")
        size = r.int()
        if name in names or size < 1:
            raise r.error(f"mesh axis '{name}' is repeated or has size {size}")
        names[name] = len(sizes)
        sizes.append(size)
    r.next()
    n = math.prod(sizes)
    if n > limits.MAX_DEVICES:
        raise r.error(f"the mesh declares {n} devices, over the limit (MAX_DEVICES)")
    devices: tuple[int, ...] | TileAssignment = TileAssignment((max(n, 1),), iota_reshape=(n,))
    dims: list[list[_AxisRef]] | None = None
    sets: dict[str, list[_AxisRef]] = {"replicated": [], "unreduced": [], "manual": []}
    whole: str | None = None
    metadata: str | None = None
    while r.peek()[1] != "}":
        word = r.next()[1]
        if word == ",":
            continue
        if word == "[":
            dims = []
            while r.peek()[1] != "]":
                if r.peek()[1] == ",":
                    r.next()
                    continue
                dims.append(_axis_set(r, names, sizes)[0])
            r.next()
        elif word == "device_ids":
            r.expect("=")
            devices = _mesh_devices(r, n)
        elif word in sets and r.peek()[1] == "=":
            r.next()
            if r.peek()[0] == "ident":  # `unreduced=max{...}`: the reduction, not the layout
                r.next()
            sets[word] = _axis_set(r, names, sizes)[0]
        elif word in sets:
            whole = word
        elif word == "metadata":
            r.expect("=")
            metadata = r.balanced()
        else:
            raise _Unreadable(f"unexpected '{word or 'end of text'}' in a mesh sharding")
    r.expect("}")
    text = r.text[r.tokens[start][2] : r.tokens[r.i - 1][3]]
    if whole is not None:
        kind = {"replicated": REPLICATED, "unreduced": UNREDUCED}.get(whole, MANUAL)
        return Sharding(kind, metadata=metadata, text=text)
    if sets["manual"]:
        return Sharding(
            NAMED,
            text=text,
            reason="manual axes are not mapped to devices (XLA's NamedSharding::"
            "ToTileAssignment does not map them either)",
        )
    dims = dims or []
    used = [a for d in dims for a in d] + sets["unreduced"]
    if not used:
        return Sharding(REPLICATED, metadata=metadata, text=text)
    return _mesh_tiled(r, sizes, devices, dims, sets, metadata, text)


def _mesh_tail_metadata(r: _Reader) -> str | None:
    metadata = None
    while r.peek()[1] != "}":
        word = r.next()[1]
        if word == "metadata":
            r.expect("=")
            metadata = r.balanced()
        elif word != ",":
            raise _Unreadable(f"unexpected '{word or 'end of text'}' in a maximal mesh sharding")
    r.expect("}")
    return metadata


def _mesh_tiled(
    r: _Reader,
    sizes: list[int],
    devices: tuple[int, ...] | TileAssignment,
    dims: list[list[_AxisRef]],
    sets: dict[str, list[_AxisRef]],
    metadata: str | None,
    text: str,
) -> Sharding:
    """NamedSharding::ToTileAssignment: the mesh axes cut at every sub-axis boundary
    (GetOrderedAxisRefs), the sharded pieces first in the order the dimensions name them, the
    unnamed ones last as the replicated subgroup."""
    cuts: dict[int, set[int]] = {i: {1, n} for i, n in enumerate(sizes)}
    for a in [a for d in dims for a in d] + sets["replicated"] + sets["unreduced"]:
        cuts[a.axis] |= {a.pre, a.pre * a.size}
    pieces = []
    for i in range(len(sizes)):
        points = sorted(cuts[i])
        pieces += [_AxisRef(i, lo, hi // lo) for lo, hi in itertools.pairwise(points)]
    position: dict[_AxisRef, int] = {}
    tile_dims = []
    for d in dims:
        tile_dims.append(math.prod(a.size for a in d))
        for a in d:
            if a.size > 1:  # a size-1 axis splits nothing
                position[a] = len(position)
    if sets["unreduced"]:
        tile_dims.append(math.prod(a.size for a in sets["unreduced"]))
        for a in sets["unreduced"]:
            if a.size > 1:
                position[a] = len(position)
    named = [a for d in dims for a in d if a.size > 1] + [
        a for a in sets["unreduced"] if a.size > 1
    ]
    if len(set(named)) != len(named) or any(a not in pieces for a in position):
        raise r.error("mesh axes overlap: an axis or sub-axis is used twice")
    perm = [0] * len(pieces)
    replicated = 1
    next_free = len(position)
    for i, piece in enumerate(pieces):
        if piece in position:
            perm[position[piece]] = i
        else:
            perm[next_free] = i
            next_free += 1
            replicated *= piece.size
    subgroups: list[str] = [UNREDUCED] if sets["unreduced"] else []
    if replicated > 1:
        tile_dims.append(replicated)
        subgroups.append(REPLICATED)
    reshape = tuple(p.size for p in pieces)
    if perm == sorted(perm):  # canonical iota, as XLA prints it: `<=[8]`, not `<=[2,4]T(0,1)`
        reshape, perm = (math.prod(reshape),), [0]
    plain_iota = isinstance(devices, TileAssignment) and len(devices.iota_reshape) <= 1
    if plain_iota:
        ta = TileAssignment(tuple(tile_dims), iota_reshape=reshape, iota_transpose=tuple(perm))
    else:
        n = math.prod(sizes)
        if n > limits.MAX_LISTED_DEVICES:
            return Sharding(
                NAMED,
                text=text,
                reason=f"a mesh of {n} devices with its own device order is over the limit of "
                f"{limits.MAX_LISTED_DEVICES} (MAX_LISTED_DEVICES) to list",
            )
        flat = devices.device_list() if isinstance(devices, TileAssignment) else devices
        order = _iota_devices(n, reshape, tuple(perm))  # positions of the permuted mesh
        ta = TileAssignment(tuple(tile_dims), devices=tuple(flat[k] for k in order))
    replicate = subgroups == [REPLICATED]
    return Sharding(
        TILED,
        tile_assignment=ta,
        last_tile_dim_replicate=replicate,
        last_tile_dims=() if replicate else tuple(subgroups),
        metadata=metadata,
        text=text,
    )


def _single(r: _Reader) -> Sharding:
    """`'{' ('replicated' | 'maximal' | 'manual' | 'unknown' | 'unreduced' | 'device=' int
    | 'devices=' tile_assignment | 'last_tile_dim_replicate' | 'last_tile_dims=' '{' type,* '}'
    | ('shard_as' | 'shard_like') int | 'metadata=' {...})* '}'` (ParseSingleSharding)."""
    start = r.i
    r.expect("{")
    if r.peek()[1] in ("mesh", "maximal_mesh", "single_device"):
        return decode_mesh(r, start)
    flags: set[str] = set()
    device: int | None = None
    assignment: TileAssignment | None = None
    last_tile_dims: tuple[str, ...] = ()
    group: tuple[str, int] | None = None
    metadata: str | None = None
    while r.peek()[1] != "}":
        kind, word = r.next()
        if kind != "ident":
            raise _Unreadable(f"unexpected '{word or 'end of text'}'")
        if word in (REPLICATED, MAXIMAL, MANUAL, UNKNOWN, UNREDUCED, "last_tile_dim_replicate"):
            flags.add(word)
        elif word in ("shard_as", "shard_like"):
            group = (word, r.int())
        elif word in ("device", "devices", "metadata", "last_tile_dims"):
            r.expect("=")
            if word == "device":
                device = r.int()
                if device >= limits.MAX_DEVICES:
                    raise r.error(
                        f"device {device} is outside 0..{limits.MAX_DEVICES - 1} (MAX_DEVICES: "
                        "device ids are int64)"
                    )
            elif word == "devices":
                try:
                    assignment = _tile_assignment(r)
                except HloSemanticError as e:
                    raise r.error(e.message) from None
            elif word == "metadata":
                metadata = r.balanced()
            else:
                r.expect("{")
                types = []
                while r.peek()[1] != "}":
                    k, t = r.next()
                    if k == "ident":
                        types.append(t)
                    elif t != ",":
                        raise _Unreadable(f"unexpected '{t or 'end of text'}' in last_tile_dims")
                r.next()
                last_tile_dims = tuple(types)
        else:
            raise _Unreadable(f"unknown word '{word}'")
    r.expect("}")
    common = {"shard_group": group, "metadata": metadata}
    for simple in (REPLICATED, MANUAL, UNKNOWN, UNREDUCED):
        if simple in flags:
            if device is not None or assignment is not None:
                raise r.error(f"{simple} shardings should not have any devices assigned")
            return Sharding(simple, **common)  # type: ignore[arg-type]
    if MAXIMAL in flags:
        if device is None:
            raise r.error("maximal shardings should have exactly one device assigned")
        return Sharding(MAXIMAL, device=device, **common)  # type: ignore[arg-type]
    if assignment is None:
        raise r.error("non-maximal shardings must have a tile assignment list including dimensions")
    replicate = "last_tile_dim_replicate" in flags
    subgroups = 1 if replicate else len(last_tile_dims)
    if subgroups > len(assignment.dims):
        raise r.error(
            f"{subgroups} subgroup dimensions but the tile assignment has {len(assignment.dims)}"
        )
    return Sharding(
        TILED,
        tile_assignment=assignment,
        last_tile_dim_replicate=replicate,
        last_tile_dims=() if replicate else last_tile_dims,
        **common,  # type: ignore[arg-type]
    )


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Sharding:
    return parse_sharding(text)


def parse_sharding(text: str, span: Span | None = None) -> Sharding:
    """Decode the text after `sharding=`.

    `sharding ::= '{' single_body '}' | '{' [single (',' single)*] '}'` — a `{` right after the
    opening one starts a tuple sharding; `{}` is the empty tuple. Shardings that break XLA's rules
    (a replicated sharding with devices, a device list of the wrong length) raise
    HloSemanticError; text this version cannot read is kept (`kind == "unparsed"`).

    >>> s = parse_sharding("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    >>> s.tile_dims, s.replication, s.tile_assignment.device_list()
    ((4, 1), 2, (0, 4, 1, 5, 2, 6, 3, 7))
    """
    try:
        r = _Reader(text, span)
        if r.peek()[1] == "{" and r.peek(1)[1] in ("{", "}"):
            r.next()
            elements = []
            if r.peek()[1] != "}":
                elements.append(_single(r))
                while r.peek()[1] == ",":
                    r.next()
                    elements.append(_single(r))
            r.expect("}")
            result = Sharding(TUPLE, elements=tuple(elements))
        else:
            result = _single(r)
        if r.peek()[0] != "eof":
            raise _Unreadable(f"unexpected '{r.peek()[1]}' after the sharding")
        return result
    except _Unreadable:
        return Sharding(UNPARSED, text=text.strip())


def instruction_sharding(instruction: Instruction) -> Sharding | None:
    """The decoded `sharding=` of an instruction, None when it has none (memoized by text)."""
    attr = instruction.attr("sharding")
    if attr is None:
        return None
    try:
        return _parse(attr.raw)
    except HloSemanticError as e:
        raise HloSemanticError(e.message, attr.span) from None


__all__ = [
    "MANUAL",
    "MAXIMAL",
    "NAMED",
    "REPLICATED",
    "TILED",
    "TUPLE",
    "UNKNOWN",
    "UNPARSED",
    "UNREDUCED",
    "Sharding",
    "TileAssignment",
    "decode_mesh",
    "instruction_sharding",
    "parse_sharding",
    "print_sharding",
    "tile_form",
]
