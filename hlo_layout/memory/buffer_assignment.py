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
from collections.abc import Container
from dataclasses import dataclass
from fractions import Fraction

from hlo_layout.errors import HloSemanticError, HloSyntaxError, Source, Span
from hlo_layout.limits import MAX_INT_DIGITS, LimitExceeded, read_int
from hlo_layout.syntax.parse import parse_shape
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


_ALLOCATION_RE = re.compile(r"allocation ([0-9]+): (?:0x[0-9a-fA-F]+, )?size ([^,:]*)")
_VALUE_RE = re.compile(
    r" value: <([0-9]+) ([^\s{>]+)(?:\{([0-9,]*)\})?( \(phi\))?(?: @([0-9]+))?> "
    r"\(size=([0-9]+),offset=([0-9]+)\): (.+)"
)
_PROPERTY_RES = (
    ("color", re.compile(r"color ([0-9]+)")),
    ("page", re.compile(r"page ([0-9]+)")),
    ("parameter", re.compile(r"parameter ([0-9]+), shape \|([^|]*)\| at ShapeIndex \{([0-9,]*)\}")),
    ("parameter", re.compile(r"parameter ([0-9]+)(?: at ShapeIndex \{([0-9,]*)\})?")),
    ("output", re.compile(r"output shape is \|([^|]*)\|")),
)
_FLAGS = {
    "constant": "is_constant",
    "thread-local": "is_thread_local",
    "maybe-live-out": "maybe_live_out",
    "preallocated-temp": "is_preallocated_temp",
}
#: The units XLA's HumanReadableNumBytes prints (tsl/platform/numbers.cc), to EiB.
_UNITS = {
    "B": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
    "EiB": 2**60,
}
#: A byte count as XLA prints one: `196608`, `1.50KiB`, `3EiB`.
_SIZE = re.compile(r"([0-9]+)(?:\.([0-9]+))?(" + "|".join(_UNITS) + r")?")
#: Byte sizes are int64 in XLA.
_MAX_BYTES = 2**63 - 1
#: A number past the digit limit in a shape (where `_Line.shape` reports one).
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_INT_DIGITS + 1},}}")


class _Line:
    """One line of the file being read: numbers and shapes in it are read with their place."""

    def __init__(self, source: Source, at: int) -> None:
        self.source = source
        self.at = at

    def span(self, start: int, end: int) -> Span:
        return Span(self.at + start, self.at + max(end, start + 1), self.source)

    def error(self, message: str, start: int, end: int) -> HloSyntaxError:
        return HloSyntaxError(message, self.span(start, end))

    def number(self, m: re.Match[str], group: int, what: str) -> int:
        """Group `group` of `m` (digits), read with the digit limit (`limits.read_int`)."""
        return read_int(m.group(group), what, self.span(m.start(group), m.end(group)))

    def index(self, m: re.Match[str], group: int) -> tuple[int, ...]:
        text = m.group(group)
        if not text:
            return ()
        return tuple(read_int(x, "a ShapeIndex entry", self.span(m.start(group), m.end(group)))
                     for x in text.split(",") if x)  # fmt: skip

    def size(self, text: str, start: int) -> tuple[int, bool]:
        """`size S` of an allocation: (bytes, exact), a human-readable `1.50KiB` being rounded
        (XLA prints two decimals) and not exact. Read as a fraction: no float to overflow."""
        m = _SIZE.fullmatch(text)
        if m is None:
            raise self.error(
                f"size '{text}' is not a byte count (expected N, or N.NN followed by B, KiB, "
                f"MiB, GiB, TiB, PiB or EiB)",
                start,
                start + len(text),
            )
        where = self.span(start, start + len(text))
        number = Fraction(read_int(m.group(1), "size", where))
        if m.group(2):
            number += Fraction(read_int(m.group(2), "size", where), 10 ** len(m.group(2)))
        unit = m.group(3)
        size = round(number * _UNITS[unit]) if unit else int(number)
        if size > _MAX_BYTES:
            raise self.error(f"size {text} does not fit in int64", start, start + len(text))
        return size, unit is None or unit == "B"

    def shape(self, text: str, start: int) -> None:
        """Check that `text` (at `start` in the line) is a shape, reporting what is wrong at its
        place in the file rather than in the shape text alone."""
        try:
            parse_shape(text)
        except LimitExceeded as e:  # located by `parse_shape`'s caller: here, at the digits
            long = _LONG_NUMBER.search(text)
            inner = long.start() if long is not None else 0
            raise LimitExceeded(e.message, self.span(start + inner, start + inner + 1)) from None
        except (HloSyntaxError, HloSemanticError) as e:
            inner = e.span.start if e.span is not None else 0
            message = getattr(e, "message", str(e))
            raise type(e)(message, self.span(start + inner, start + inner + 1)) from None


def _allocation(line: str, source: Source, at: int) -> dict:
    here = _Line(source, at)
    m = _ALLOCATION_RE.match(line)
    if m is None or not line.endswith(":"):
        raise here.error("expected `allocation N: size S, ...:`", 0, len(line))
    size, exact = here.size(m.group(2), m.start(2))
    fields: dict = {"index": here.number(m, 1, "allocation number"), "size": size,
                    "size_is_exact": exact}  # fmt: skip
    other: list[str] = []
    rest = line[m.end() : -1]
    base = m.end()
    pos = 0
    while pos < len(rest):
        if not rest.startswith(", ", pos):
            raise here.error("expected `, ` between allocation properties", base + pos, len(line))
        pos += 2
        for key, regex in _PROPERTY_RES:
            pm = regex.match(rest, pos)
            if pm is None or (pm.end() < len(rest) and not rest.startswith(", ", pm.end())):
                continue
            at_line = _Line(source, at + base)  # `pm` is a match in `rest`
            if key == "color":
                fields["color"] = at_line.number(pm, 1, "color")
            elif key == "page":
                fields["page"] = at_line.number(pm, 1, "page")
            elif key == "output":
                fields["output_shape"] = pm.group(1)
            elif pm.re.groups == 3:
                fields["parameter_number"] = at_line.number(pm, 1, "parameter number")
                fields["parameter_shape"] = pm.group(2)
                fields["parameter_index"] = at_line.index(pm, 3)
            else:
                fields["parameter_number"] = at_line.number(pm, 1, "parameter number")
                fields["parameter_index"] = at_line.index(pm, 2)
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


def _value(line: str, source: Source, at: int) -> AssignedValue:
    here = _Line(source, at)
    vm = _VALUE_RE.fullmatch(line)
    if vm is None:
        raise here.error(
            "expected ` value: <id name{index} @color> (size=S,offset=O): shape`", 0, len(line)
        )
    shape_text = vm.group(8).strip()
    here.shape(shape_text, vm.start(8) + len(vm.group(8)) - len(vm.group(8).lstrip()))
    return AssignedValue(
        id=here.number(vm, 1, "value id"),
        instruction=vm.group(2),
        index=here.index(vm, 3),
        is_phi=vm.group(4) is not None,
        color=here.number(vm, 5, "color") if vm.group(5) is not None else 0,
        size=here.number(vm, 6, "size"),
        offset=here.number(vm, 7, "offset"),
        shape_text=shape_text,
    )


def parse_buffer_assignment(text: str, name: str = "<string>") -> BufferAssignment:
    """Read the allocations of a `*buffer-assignment.txt` (see the module docstring).

    Raises HloSyntaxError (or LimitExceeded, HloSemanticError for a value's shape), with the
    file's line and column, on an allocation or value line it cannot read.
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
                raise _Line(source, at).error("value line before any allocation", 0, len(line))
            values.append(_value(line, source, at))
            continue
        if current is None and not seen_header:
            raise _Line(source, at).error(
                "not a buffer assignment (expected `BufferAssignment:`)", 0, len(line)
            )
        break  # `Total bytes used: …`, `Used values:` and later sections
    close()
    return BufferAssignment(tuple(allocations), name)


def foreign_values(assignment: BufferAssignment, names: Container[str]) -> int:
    """How many of the assignment's values name an instruction not in `names` (the
    instructions of a module's global computations): a buffer assignment written for another
    compile. Thread-local and constant allocations are not looked at: their values may lie in
    reducers, comparators and fusion bodies, which a streamed skeleton (`report/skeleton.py`)
    does not hold. Values read from XLA's BufferAssignmentProto carry no name and are not
    counted."""
    return sum(
        1
        for a in assignment.allocations
        if not (a.is_thread_local or a.is_constant)
        for v in a.values
        if v.instruction and v.instruction not in names
    )
