"""The buffer-assignment reader: every corpus file, XLA's line forms, errors with locations."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.errors import HloLayoutError, HloSyntaxError
from hlo_layout.memory.buffer_assignment import parse_buffer_assignment
from hlo_layout.reader.sidefiles import buffer_assignment_beside, read_buffer_assignment
from hlo_layout.syntax import parse_file
from tests.support import CORPUS, SAMPLES, corpus_id, hlo_files

FILES = sorted(CORPUS.rglob("*buffer-assignment.txt"))


@pytest.mark.parametrize("path", FILES, ids=corpus_id)
def test_reads_every_corpus_file(path: Path) -> None:
    text = path.read_text()
    ba = read_buffer_assignment(path)
    assert len(ba.allocations) == text.count("\nallocation ")
    assert [a.index for a in ba.allocations] == list(range(len(ba.allocations)))
    for a in ba.allocations:
        assert a.values, f"allocation {a.index} has no values"
        # Values sit inside their allocation.
        assert all(v.offset + v.size <= a.size for v in a.values)
        # Each value's `@color` is its allocation's color.
        assert {v.color for v in a.values} == {a.color}
    # Every value names an instruction of the dump beside it.
    dump = next(p for p in hlo_files() if buffer_assignment_beside(p) == path)
    names = {i.name for c in parse_file(dump).computations for i in c.instructions}
    assert {v.instruction for v in ba.values} <= names


def test_allocation_properties() -> None:
    ba = parse_buffer_assignment(
        "BufferAssignment:\n"
        "allocation 0: size 196608, page 0, parameter 3, shape |(f32[2], s32[])| at ShapeIndex "
        "{0,1}:\n"
        " value: <23 p.1{0,1} @0> (size=196608,offset=0): bf16[8,32,32,3]{2,1,3,0:T(8,128)(2,1)}\n"
        "allocation 1: size 8, color 2, page 0, preallocated-temp, new-flag:\n"
        " value: <19 copy-start{2} (phi) @2> (size=4,offset=4): u32[]{:S(2)}\n"
        "allocation 2: size 2048, output shape is |(bf16[8,64], f32[])|, maybe-live-out:\n"
        " value: <30 f @0> (size=2048,offset=0): bf16[8,64]{1,0:T(8,128)(2,1)}\n"
        "allocation 3: size 1.50MiB, constant, thread-local:\n"
        " value: <31 c @0> (size=1572864,offset=0): f32[393216]{0}\n"
        "\nTotal bytes used: 3 (3B)\n\nUsed values:\n<23 p.1 @0>\n positions:\n",
        "x.txt",
    )
    a0, a1, a2, a3 = ba.allocations
    assert (a0.kind, a0.parameter_number, a0.parameter_index) == ("parameter", 3, (0, 1))
    assert a0.parameter_shape == "(f32[2], s32[])" and a0.page == 0
    assert a0.values[0].index == (0, 1) and a0.values[0].instruction == "p.1"
    assert (a1.color, a1.kind, a1.other) == (2, "temp", ("new-flag",))
    assert a1.values[0].is_phi and a1.values[0].color == 2 and a1.values[0].offset == 4
    assert (a2.kind, a2.output_shape, a2.maybe_live_out) == ("output", "(bf16[8,64], f32[])", True)
    assert a3.kind == "constant" and a3.is_thread_local
    assert a3.size == 1_572_864 and not a3.size_is_exact  # XLA's human-readable form
    assert ba.bytes_by_color() == ((0, 3, 196608 + 2048 + 1_572_864), (2, 1, 8))


def test_errors_point_at_the_line() -> None:
    text = "BufferAssignment:\nallocation 0: size 4:\n value: <0 p @0> (size=4,offset=0) f32[]\n"
    with pytest.raises(HloSyntaxError) as info:
        parse_buffer_assignment(text, "ba.txt")
    assert (info.value.line, info.value.column) == (3, 1)
    with pytest.raises(HloSyntaxError) as info:
        parse_buffer_assignment("HloModule m\n", "dump.txt")
    assert info.value.line == 1 and "BufferAssignment" in info.value.message


@pytest.mark.parametrize(
    ("size", "expected"),
    [("196608", 196_608), ("1.50KiB", 1536), ("2.34MiB", 2_453_668), ("3EiB", 3 * 2**60),
     ("8B", 8), ("1PiB", 2**50)],
)  # fmt: skip
def test_sizes_in_every_unit_xla_prints(size: str, expected: int) -> None:
    """HumanReadableNumBytes goes up to EiB; the fraction is read exactly (no float)."""
    (a,) = parse_buffer_assignment(f"BufferAssignment:\nallocation 0: size {size}:\n").allocations
    assert a.size == expected
    assert a.size_is_exact == (size[-2:] not in ("iB",))


BIG = "9" * 5000


@pytest.mark.parametrize(
    ("lines", "where", "says"),
    [
        ("allocation 0: size 1.2.3KiB:", (2, 20), "is not a byte count"),
        ("allocation 0: size .KiB:", (2, 20), "is not a byte count"),
        ("allocation 0: size 4ZiB:", (2, 20), "is not a byte count"),
        (f"allocation 0: size {'9' * 400}KiB:", (2, 20), "does not fit in int64"),
        (f"allocation 0: size {BIG}:", (2, 20), "MAX_INT_DIGITS"),
        (f"allocation {BIG}: size 4:", (2, 12), "MAX_INT_DIGITS"),
        (f"allocation 0: size 4, color {BIG}:", (2, 29), "MAX_INT_DIGITS"),
        (f"allocation 0: size 4, page {BIG}:", (2, 28), "MAX_INT_DIGITS"),
        (f"allocation 0: size 4, parameter {BIG}:", (2, 33), "MAX_INT_DIGITS"),
        (f"allocation 0: size 4, parameter 0 at ShapeIndex {{{BIG}}}:", (2, 50), "MAX_INT_DIGITS"),
        (f"allocation 0: size 4:\n value: <{BIG} p @0> (size=4,offset=0): f32[]", (3, 10), "MAX"),
        (f"allocation 0: size 4:\n value: <0 p{{{BIG}}} @0> (size=4,offset=0): f32[]", (3, 14), ""),
        (f"allocation 0: size 4:\n value: <0 p @{BIG}> (size=4,offset=0): f32[]", (3, 15), ""),
        (f"allocation 0: size 4:\n value: <0 p @0> (size={BIG},offset=0): f32[]", (3, 24), ""),
        (f"allocation 0: size 4:\n value: <0 p @0> (size=4,offset={BIG}): f32[]", (3, 33), ""),
        # the value's shape, at its place in the file (not at `<shape>:1:9`)
        (f"allocation 0: size 4:\n value: <0 p @0> (size=4,offset=0): f32[{BIG}]", (3, 41), "MAX"),
        ("allocation 0: size 4:\n value: <0 p @0> (size=4,offset=0): f32[2]{0:T(", (3, 48), ""),
        ("allocation 0: size 4:\n value: <0 p @0> (size=4,offset=0): f32[2]{0,1}", (3, 43), "rank"),
    ],
)
def test_bad_lines_are_errors_at_their_place_in_the_file(
    lines: str, where: tuple[int, int], says: str
) -> None:
    with pytest.raises(HloLayoutError) as info:
        parse_buffer_assignment(f"BufferAssignment:\n{lines}\n", "ba.txt")
    error = info.value
    assert error.span is not None and error.span.source.name == "ba.txt"  # type: ignore[attr-defined]
    assert (error.span.line, error.span.column) == where, str(error)  # type: ignore[attr-defined]
    assert says in str(error)


def test_beside_finds_xla_and_corpus_names() -> None:
    sample = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
    assert buffer_assignment_beside(sample) == sample.with_name("transformer.buffer-assignment.txt")
    cpu = next((CORPUS / "jax-cpu").glob("*cpu_after_optimizations.txt"))
    found = buffer_assignment_beside(cpu)
    assert found is not None and found.name == cpu.name.replace(".txt", "-buffer-assignment.txt")
    no_ba = next((CORPUS / "jax-gpu-h100").glob("*broadcast_in_dim*after_optimizations.txt"))
    assert buffer_assignment_beside(no_ba) is None
