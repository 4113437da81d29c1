"""XLA's `*buffer-assignment.txt`: the compiler's own allocations, read as frozen values.

The text is what BufferAssignment::ToString writes (xla/service/buffer_assignment.cc)::

    BufferAssignment:
    allocation 1: size 196608, color 1, page 0, parameter 0, shape |bf16[8,32]| at ShapeIndex {}:
     value: <23 fl_0_.1 @0> (size=196608,offset=0): bf16[8,32]{1,0:T(8,128)(2,1)}

An allocation line is `allocation N: size S` then comma-separated properties (BufferAllocation::
ToShortString: `color`, `page`, `parameter N, shape |…| at ShapeIndex {…}`, `output shape is
|…|`, `constant`, `thread-local`, `maybe-live-out`, `preallocated-temp`; unknown ones are kept).
Each value line is HloValue::ToShortString (`<id name{index} (phi) @color>`), the value's slice
and its shape with layout. Sections after the allocations (`Total bytes used`, `Used values`,
heap traces) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hlo_layout.errors import HloSyntaxError, Source, Span
from hlo_layout.syntax.parse import parse_shape, read_text
from hlo_layout.syntax.shape import Shape


@dataclass(frozen=True, slots=True)
class AssignedValue:
    """One HloValue placed in an allocation: `<id instruction{index} @color>` at offset, size."""

    id: int
    instruction: str
    index: tuple[int, ...]
    color: int
    size: int
    offset: int
    shape_text: str
    is_phi: bool = False

    @property
    def shape(self) -> Shape:
        """The value's shape, parsed on first use (memoized by text)."""
        return parse_shape(self.shape_text)


@dataclass(frozen=True, slots=True)
class Allocation:
    """One BufferAllocation: its size, color (memory space) and what it is for."""

    index: int
    size: int
    values: tuple[AssignedValue, ...] = ()
    color: int = 0
    page: int | None = None
    parameter_number: int | None = None
    parameter_shape: str | None = None
    parameter_index: tuple[int, ...] | None = None
    output_shape: str | None = None
    is_constant: bool = False
    is_thread_local: bool = False
    maybe_live_out: bool = False
    is_preallocated_temp: bool = False
    size_is_exact: bool = True
    other: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """`parameter`, `output`, `constant`, `thread-local`, `temp`, `live-out` or `other`."""
        if self.parameter_number is not None:
            return "parameter"
        if self.output_shape is not None:
            return "output"
        if self.is_constant:
            return "constant"
        if self.is_thread_local:
            return "thread-local"
        if self.is_preallocated_temp:
            return "temp"
        if self.maybe_live_out:
            return "live-out"
        return "other"


@dataclass(frozen=True, slots=True)
class BufferAssignment:
    """All allocations of one module, in file order; `name` is where they were read from."""

    allocations: tuple[Allocation, ...]
    name: str = "<string>"

    @property
    def total_bytes(self) -> int:
        return sum(a.size for a in self.allocations)

    @property
    def values(self) -> tuple[AssignedValue, ...]:
        return tuple(v for a in self.allocations for v in a.values)

    def bytes_by_color(self) -> tuple[tuple[int, int, int], ...]:
        """(color, allocation count, bytes) per color, by color."""
        out: dict[int, list[int]] = {}
        for a in self.allocations:
            entry = out.setdefault(a.color, [0, 0])
            entry[0] += 1
            entry[1] += a.size
        return tuple((c, n, b) for c, (n, b) in sorted(out.items()))


_ALLOCATION_RE = re.compile(r"allocation (\d+): (?:0x[0-9a-fA-F]+, )?size ([0-9.]+)([KMGTPE]iB|B)?")
_VALUE_RE = re.compile(
    r" value: <(\d+) ([^\s{>]+)(?:\{([\d,]*)\})?( \(phi\))?(?: @(\d+))?> "
    r"\(size=(\d+),offset=(\d+)\): (.+)"
)
_PROPERTY_RES = (
    ("color", re.compile(r"color (\d+)")),
    ("page", re.compile(r"page (\d+)")),
    ("parameter", re.compile(r"parameter (\d+), shape \|([^|]*)\| at ShapeIndex \{([\d,]*)\}")),
    ("parameter", re.compile(r"parameter (\d+)(?: at ShapeIndex \{([\d,]*)\})?")),
    ("output", re.compile(r"output shape is \|([^|]*)\|")),
)
_FLAGS = {
    "constant": "is_constant",
    "thread-local": "is_thread_local",
    "maybe-live-out": "maybe_live_out",
    "preallocated-temp": "is_preallocated_temp",
}
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def _index(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x) if text else ()


def _error(message: str, source: Source, start: int, end: int) -> HloSyntaxError:
    return HloSyntaxError(message, Span(start, max(end, start + 1), source))


def _allocation(line: str, source: Source, at: int) -> dict:
    m = _ALLOCATION_RE.match(line)
    if m is None or not line.endswith(":"):
        raise _error("expected `allocation N: size S, ...:`", source, at, at + len(line))
    number, unit = m.group(2), m.group(3)
    exact = unit is None or unit == "B"
    size = round(float(number) * _UNITS[unit]) if unit else int(number)
    fields: dict = {"index": int(m.group(1)), "size": size, "size_is_exact": exact}
    other: list[str] = []
    rest = line[m.end() : -1]
    pos = 0
    while pos < len(rest):
        if not rest.startswith(", ", pos):
            raise _error("expected `, ` between allocation properties", source, at + m.end() + pos,
                         at + len(line))  # fmt: skip
        pos += 2
        for key, regex in _PROPERTY_RES:
            pm = regex.match(rest, pos)
            if pm is None or (pm.end() < len(rest) and not rest.startswith(", ", pm.end())):
                continue
            if key == "color":
                fields["color"] = int(pm.group(1))
            elif key == "page":
                fields["page"] = int(pm.group(1))
            elif key == "output":
                fields["output_shape"] = pm.group(1)
            elif pm.re.groups == 3:
                fields["parameter_number"] = int(pm.group(1))
                fields["parameter_shape"] = pm.group(2)
                fields["parameter_index"] = _index(pm.group(3))
            else:
                fields["parameter_number"] = int(pm.group(1))
                fields["parameter_index"] = _index(pm.group(2))
            pos = pm.end()
            break
        else:
            end = rest.find(", ", pos)
            end = len(rest) if end < 0 else end
            item = rest[pos:end]
            if item in _FLAGS:
                fields[_FLAGS[item]] = True
            else:
                other.append(item)
            pos = end
    fields["other"] = tuple(other)
    return fields


def parse_buffer_assignment(text: str, name: str = "<string>") -> BufferAssignment:
    """Read the allocations of a `*buffer-assignment.txt` (see the module docstring).

    Raises HloSyntaxError, with the line and column, on an allocation or value line it cannot read.
    """
    source = Source(text, name)
    allocations: list[Allocation] = []
    current: dict | None = None
    values: list[AssignedValue] = []
    offset = 0
    seen_header = False

    def close() -> None:
        if current is not None:
            allocations.append(Allocation(values=tuple(values), **current))

    for raw in text.splitlines(keepends=True):
        at = offset
        offset += len(raw)
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("BufferAssignment"):
            seen_header = True
            continue
        if line.startswith("allocation "):
            close()
            current = _allocation(line, source, at)
            values = []
            continue
        if line.startswith(" value:"):
            if current is None:
                raise _error("value line before any allocation", source, at, at + len(line))
            vm = _VALUE_RE.fullmatch(line)
            if vm is None:
                raise _error(
                    "expected ` value: <id name{index} @color> (size=S,offset=O): shape`",
                    source,
                    at,
                    at + len(line),
                )
            values.append(
                AssignedValue(
                    id=int(vm.group(1)),
                    instruction=vm.group(2),
                    index=_index(vm.group(3)),
                    is_phi=vm.group(4) is not None,
                    color=int(vm.group(5) or 0),
                    size=int(vm.group(6)),
                    offset=int(vm.group(7)),
                    shape_text=vm.group(8).strip(),
                )
            )
            continue
        if current is None and not seen_header:
            raise _error("not a buffer assignment (expected `BufferAssignment:`)", source, at,
                         at + len(line))  # fmt: skip
        break  # `Total bytes used: …`, `Used values:` and later sections
    close()
    return BufferAssignment(tuple(allocations), name)


def read_buffer_assignment(path: str | Path) -> BufferAssignment:
    """`parse_buffer_assignment` on a file (plain or gzip)."""
    return parse_buffer_assignment(read_text(path), str(path))
