"""XLA's BufferAssignmentProto (`xla/service/hlo.proto`) read without a protobuf library.

jax hands it over as `compiled.memory_analysis().serialized_buffer_assignment_proto`: the
compiler's own allocations of the program it compiled, the same facts as the
`*buffer-assignment.txt` of a dump. Only the fields we show are decoded (the wire format is
varints and length-delimited fields; unknown fields are skipped), into the
`layout.buffer_assignment.BufferAssignment` records the text reader makes, so every view that
shows the compiler's figures beside ours reads either source alike.
"""

from __future__ import annotations

from collections.abc import Iterator

from hlo_layout.layout.buffer_assignment import Allocation, BufferAssignment

#: Field numbers (hlo.proto): BufferAssignmentProto.buffer_allocations, BufferAllocationProto.
_ALLOCATIONS = 3
_A_INDEX, _A_SIZE, _A_THREAD_LOCAL, _A_PARAMETER, _A_PARAMETER_NUMBER = 1, 2, 3, 5, 6
_A_LIVE_OUT, _A_COLOR, _A_PARAMETER_INDEX, _A_TUPLE, _A_CONSTANT = 7, 8, 10, 11, 12


class ProtoError(ValueError):
    """The bytes are not a BufferAssignmentProto this reader understands."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ProtoError("truncated varint")
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value): an int for varints (and fixed widths), bytes for the rest."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, value
        elif wire == 2:
            length, at = _varint(data, at)
            if at + length > len(data):
                raise ProtoError("truncated field")
            yield number, data[at : at + length]
            at += length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, int.from_bytes(data[at : at + width], "little")
            at += width
        else:
            raise ProtoError(f"unsupported wire type {wire}")


def _ints(value: int | bytes) -> list[int]:
    """A repeated int64: one varint, or a packed run of them."""
    if isinstance(value, int):
        return [value]
    out, at = [], 0
    while at < len(value):
        v, at = _varint(value, at)
        out.append(v)
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_buffer_assignment_proto(
    data: bytes, name: str = "<buffer assignment proto>"
) -> BufferAssignment:
    """The allocations of a serialized BufferAssignmentProto: index, size, color and kind.

    Their values are not named: the proto identifies instructions by their unique ids, which
    the module's text does not print."""
    allocations = []
    for number, value in _fields(data):
        if number != _ALLOCATIONS or not isinstance(value, bytes):
            continue
        f: dict[int, int] = {}
        param_index: list[int] = []
        for n, v in _fields(value):
            if n == _A_PARAMETER_INDEX:
                param_index.extend(_ints(v))
            elif isinstance(v, int):
                f[n] = v
        is_parameter = bool(f.get(_A_PARAMETER))
        live_out = bool(f.get(_A_LIVE_OUT))
        thread_local = bool(f.get(_A_THREAD_LOCAL))
        constant = bool(f.get(_A_CONSTANT))
        allocations.append(
            Allocation(
                f.get(_A_INDEX, 0),
                f.get(_A_SIZE, 0),
                color=_signed(f.get(_A_COLOR, 0)),
                parameter_number=f.get(_A_PARAMETER_NUMBER, 0) if is_parameter else None,
                parameter_index=tuple(param_index) if is_parameter else None,
                is_constant=constant,
                is_thread_local=thread_local,
                maybe_live_out=live_out,
                is_preallocated_temp=not (is_parameter or live_out or thread_local or constant),
                other=("tuple",) if f.get(_A_TUPLE) else (),
            )
        )
    allocations.sort(key=lambda a: a.index)
    return BufferAssignment(tuple(allocations), name)
