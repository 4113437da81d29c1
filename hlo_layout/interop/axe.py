"""Axe layouts: logical coordinates → sets of coordinates on named hardware axes.

An Axe layout (Hou et al., "Axe: A Simple Unified Layout Abstraction for Machine Learning
Compilers", 2026; the TIRx `TileLayout` implements it) is a triple:

- `D` (shard): ordered iters (extent, stride, axis). The logical coordinate is flattened row-major
  over the logical shape, then split across the iter extents row-major (the last iter fastest);
  digit k adds `digit × stride` on its axis. It generalizes shape:stride to several axes.
- `R` (replica): iters that do not read the coordinate; every combination of their digits is added
  to the `D` result, which gives replication (broadcast).
- `O` (offset): one constant per axis added to every result.

`L(x) = { D(x) + r + O | r ∈ R }`. Written as TIRx does, with every axis named:
`S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + O[5@warp]`; a stride with no axis
means the memory axis `m`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hlo_layout.interop.errors import InteropError

#: The memory axis: offsets in elements inside one buffer.
MEMORY = "m"


@dataclass(frozen=True, slots=True)
class Iter:
    """One iter: `extent` values, each step adds `stride` on `axis`."""

    extent: int
    stride: int
    axis: str = MEMORY

    def __post_init__(self) -> None:
        if self.extent < 0:
            raise InteropError(f"iter extent {self.extent} is negative")
        if not self.axis:
            raise InteropError("an iter needs an axis name")

    @property
    def term(self) -> str:
        return f"{self.stride}@{self.axis}"


@dataclass(frozen=True, slots=True)
class HwCoord:
    """One point of the hardware space: a value per axis, in the layout's axis order."""

    items: tuple[tuple[str, int], ...]

    def __getitem__(self, axis: str) -> int:
        for name, value in self.items:
            if name == axis:
                return value
        raise KeyError(axis)

    def as_dict(self) -> dict[str, int]:
        return dict(self.items)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{a}:{v}" for a, v in self.items) + "}"


def _axes(*groups: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for group in groups:
        for a in group:
            if a not in out:
                out.append(a)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class AxeLayout:
    """`L = (D, R, O)` over a logical shape; the product of the `D` extents is the shape's size.

    >>> lay = parse_axe("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + O[5@warp]",
    ...                 (8, 16))
    >>> [c.as_dict() for c in lay.forward((2, 9))]
    [{'lane': 8, 'warp': 6, 'reg': 1}, {'lane': 8, 'warp': 10, 'reg': 1}]
    """

    shape: tuple[int, ...]
    shard: tuple[Iter, ...]
    replica: tuple[Iter, ...] = ()
    offset: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if any(d < 0 for d in self.shape):
            raise InteropError(f"logical shape {self.shape} has a negative extent")
        size = math.prod(self.shape)
        extents = math.prod(i.extent for i in self.shard)
        if size != extents:
            raise InteropError(
                f"the shard iters hold {extents} elements but the shape {self.shape} has {size}"
            )
        names = [a for a, _ in self.offset]
        if len(set(names)) != len(names):
            raise InteropError(f"offset {self.offset} names an axis twice")

    @property
    def axes(self) -> tuple[str, ...]:
        """Every axis the layout touches: first seen in D, then R, then O."""
        return _axes(
            [i.axis for i in self.shard],
            [i.axis for i in self.replica],
            [a for a, _ in self.offset],
        )

    @property
    def replicas(self) -> int:
        return math.prod(i.extent for i in self.replica)

    def axis_span(self, axis: str) -> int:
        """One past the largest value the layout reaches on `axis` (non-negative strides)."""
        top = dict(self.offset).get(axis, 0)
        for i in (*self.shard, *self.replica):
            if i.axis == axis and i.extent:
                top += (i.extent - 1) * i.stride
        return top + 1

    def _check(self, coord: Sequence[int]) -> int:
        if len(coord) != len(self.shape):
            raise InteropError(f"coordinate {tuple(coord)} does not match shape {self.shape}")
        flat = 0
        for c, n in zip(coord, self.shape):
            if not 0 <= c < n:
                raise InteropError(f"coordinate {tuple(coord)} is outside shape {self.shape}")
            flat = flat * n + c
        return flat

    def base(self, coord: Sequence[int]) -> dict[str, int]:
        """`D(x) + O`: the coordinate's place before replication."""
        flat = self._check(coord)
        out = dict.fromkeys(self.axes, 0)
        for axis, value in self.offset:
            out[axis] += value
        for it in reversed(self.shard):
            flat, digit = divmod(flat, it.extent) if it.extent else (flat, 0)
            out[it.axis] += digit * it.stride
        return out

    def forward(self, coord: Sequence[int]) -> tuple[HwCoord, ...]:
        """`L(x)`: every hardware coordinate that holds element `x`, replicas in row-major order
        of the `R` iters (the first iter slowest)."""
        base = self.base(coord)
        out = []
        for digits in itertools.product(*(range(i.extent) for i in self.replica)):
            point = dict(base)
            for it, d in zip(self.replica, digits):
                point[it.axis] += d * it.stride
            out.append(HwCoord(tuple((a, point[a]) for a in self.axes)))
        return tuple(out)

    def backward(self, point: Mapping[str, int] | HwCoord) -> tuple[int, ...] | None:
        """The logical coordinate held at a hardware coordinate, or None when none is.

        Axes missing from `point` count as 0. For each replica it subtracts `O` and the replica,
        reads the `D` digits of each axis from the largest stride down, and keeps the answer only
        if `forward` gives `point` back, so a layout whose iters overlap still answers correctly
        or not at all.
        """
        values = point.as_dict() if isinstance(point, HwCoord) else dict(point)
        if any(v and a not in self.axes for a, v in values.items()):
            return None
        target = tuple((a, values.get(a, 0)) for a in self.axes)
        order = sorted(
            (k for k, it in enumerate(self.shard) if it.extent > 1 and it.stride > 0),
            key=lambda k: -self.shard[k].stride,
        )
        for digits in itertools.product(*(range(i.extent) for i in self.replica)):
            rest = {a: values.get(a, 0) for a in self.axes}
            for axis, value in self.offset:
                rest[axis] -= value
            for it, d in zip(self.replica, digits):
                rest[it.axis] -= d * it.stride
            shard_digits = [0] * len(self.shard)
            for k in order:
                it = self.shard[k]
                d = min(max(rest[it.axis], 0) // it.stride, it.extent - 1)
                shard_digits[k] = d
                rest[it.axis] -= d * it.stride
            if any(rest.values()):
                continue
            flat = 0
            for it, d in zip(self.shard, shard_digits):
                flat = flat * it.extent + d
            coord = []
            for n in reversed(self.shape):
                flat, c = divmod(flat, n) if n else (flat, 0)
                coord.append(c)
            result = tuple(reversed(coord))
            if any(c.items == target for c in self.forward(result)):
                return result
        return None

    def __str__(self) -> str:
        return format_axe(self)

    def to_json(self) -> dict[str, Any]:
        """`{"shape", "D": [{extent, stride, axis}], "R": [...], "O": {axis: value}, "text"}`."""

        def iters(its: tuple[Iter, ...]) -> list[dict[str, Any]]:
            return [{"extent": i.extent, "stride": i.stride, "axis": i.axis} for i in its]

        return {
            "shape": list(self.shape),
            "D": iters(self.shard),
            "R": iters(self.replica),
            "O": dict(self.offset),
            "text": str(self),
        }


def _iters_text(its: tuple[Iter, ...], *, parens: bool) -> str:
    if len(its) == 1 and not parens:
        return f"{its[0].extent}:{its[0].term}"
    return "(" + ",".join(str(i.extent) for i in its) + "):(" + ",".join(i.term for i in its) + ")"


def format_axe(layout: AxeLayout) -> str:
    """TIRx notation with every axis named:
    `S[(2,32):(1@device,1@m)] + R[2:4@device] + O[1@device]`."""
    out = f"S[{_iters_text(layout.shard, parens=True)}]"
    if layout.replica:
        out += f" + R[{_iters_text(layout.replica, parens=False)}]"
    if layout.offset:
        out += " + O[" + ",".join(f"{v}@{a}" for a, v in layout.offset) + "]"
    return out


_TERM = re.compile(r"^\s*(-?\d+)\s*(?:@\s*([A-Za-z_][\w.]*))?\s*$")
_PART = re.compile(r"([SRO])\s*\[(.*?)\]")


def _terms(text: str) -> list[tuple[int, str]]:
    out = []
    for part in text.strip().strip("()").split(","):
        m = _TERM.match(part)
        if m is None:
            raise InteropError(f"cannot read {part.strip()!r} as `stride@axis`")
        out.append((int(m.group(1)), m.group(2) or MEMORY))
    return out


def _parse_iters(text: str) -> tuple[Iter, ...]:
    extents_text, colon, strides_text = text.partition(":")
    if not colon:
        raise InteropError(f"expected `extents:strides` in {text!r}")
    extents = [int(x) for x in extents_text.strip().strip("()").split(",") if x.strip()]
    terms = _terms(strides_text)
    if len(extents) != len(terms):
        raise InteropError(f"{text!r} has {len(extents)} extents but {len(terms)} strides")
    return tuple(Iter(e, s, a) for e, (s, a) in zip(extents, terms))


def parse_axe(text: str, shape: Sequence[int] | None = None) -> AxeLayout:
    """Read `S[...] + R[...] + O[...]` (R and O optional; a bare stride is on axis `m`).

    The logical shape defaults to one dimension of all the shard extents.
    """
    parts = {kind: body for kind, body in _PART.findall(text)}
    if "S" not in parts:
        raise InteropError(f"an Axe layout needs an S[...] part: {text!r}")
    shard = _parse_iters(parts["S"])
    replica = _parse_iters(parts["R"]) if "R" in parts else ()
    offset = tuple((a, v) for v, a in _terms(parts["O"])) if "O" in parts else ()
    if shape is None:
        shape = (math.prod(i.extent for i in shard),)
    return AxeLayout(tuple(shape), shard, replica, offset)


__all__ = ["MEMORY", "AxeLayout", "HwCoord", "Iter", "format_axe", "parse_axe"]
