"""Streaming a dump chunk by chunk gives the whole-file tree's items, with the same lines."""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import parse_file_modules
from hlo_layout.syntax.stream import ModuleHeader, StreamFallback, stream_items
from tests.support import corpus_id, corpus_modules, hlo_files

FILES = hlo_files()


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_stream_equals_whole_file(path: Path) -> None:
    modules = corpus_modules(path)
    try:
        items = list(stream_items(path))
    except StreamFallback:
        pytest.skip("chunks do not parse alone; whole-file parse used")  # counted below
    expected: list[object] = []
    for m in modules:
        if m.name is not None:
            expected.append((m.name, tuple(m.attributes)))
        expected.extend(m.sections)
        expected.extend(m.computations)
    got = [(i.name, i.attributes) if isinstance(i, ModuleHeader) else i for i in items]
    assert got == expected
    whole = [i for m in modules for c in m.computations for i in c.instructions]
    streamed = [i for c in items if not isinstance(c, ModuleHeader) and hasattr(c, "instructions")
                for i in c.instructions]  # fmt: skip
    assert _lines(streamed) == _lines(whole)


def _lines(instructions: list) -> list[int]:
    """`span.line` of each instruction, with one newline table per source (`span.line` alone
    counts from the start of the text each time: quadratic on a 1.7 MB dump)."""
    tables: dict[int, list[int]] = {}
    out = []
    for i in instructions:
        source = i.span.source
        if "\r" in source.text:
            out.append(i.span.line)
            continue
        table = tables.get(id(source))
        if table is None:
            text = source.text
            table = tables[id(source)] = [n for n, c in enumerate(text) if c == "\n"]
        out.append(
            source.first_line + bisect.bisect_left(table, min(i.span.start, len(source.text)))
        )
    return out


def test_most_files_stream() -> None:
    fallbacks = 0
    for path in FILES:
        try:
            list(stream_items(path))
        except StreamFallback:
            fallbacks += 1
    assert fallbacks <= 2


def test_errors_in_a_chunk_fall_back(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[4]{0 parameter(0)\n}\n")
    with pytest.raises(StreamFallback):
        list(stream_items(bad))
    with pytest.raises(HloLayoutError) as info:
        parse_file_modules(bad)
    assert info.value.span.line == 4


_BATCHED = (
    "HloModule m\n"
    "\n"
    "// a comment between computations\n"
    "%r (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(%a, %b)\n"
    "}\n"
    "\n\n"
    "%_.5 (p: f32[]) -> f32[] {\n"  # named as the reader names inline computations
    "  ROOT %p = f32[] parameter(0)\n"
    "}\n"
    "ENTRY %e (x: f32[8]) -> f32[] {\n"
    "  %x = f32[8]{0} parameter(0)\n"
    "  %z = f32[] constant(0)\n"
    "  %y = f32[] reduce(%x, %z), dimensions={0}, to_apply={ %c = f32[] parameter(0) "
    "%d = f32[] parameter(1) ROOT %m = f32[] maximum(%c, %d) }\n"
    "  ROOT %w = f32[] reduce(%x, %y), dimensions={0}, to_apply=%r\n"
    "}\n"
)


@pytest.mark.parametrize("batch", [1, 1 << 20])
def test_batches_keep_items_and_lines(tmp_path: Path, batch: int, monkeypatch) -> None:
    """Computations parsed in batches (`stream._BATCH`: one chunk each, or all at once) give the
    whole-file items and line numbers: across dropped blank and comment lines, and with inline
    computations (named `_`, `_.1`, ... as the whole file names them; a user's `_.5` kept)."""
    from hlo_layout.syntax import stream

    path = tmp_path / "batched.txt"
    path.write_text(_BATCHED)
    monkeypatch.setattr(stream, "_BATCH", batch)
    (module,) = parse_file_modules(path)
    items = [i for i in stream_items(path) if not isinstance(i, ModuleHeader)]
    assert items == list(module.computations)
    assert [c.name for c in items] == [c.name for c in module.computations]
    whole = [i for c in module.computations for i in c.instructions]
    streamed = [i for c in items for i in c.instructions]
    assert _lines(streamed) == _lines(whole) == [i.span.line for i in whole]


def test_reading_is_reported(tmp_path: Path) -> None:
    """`report(done, total)` after each batch: rising, ending at the text's size."""
    path = tmp_path / "batched.txt"
    path.write_text(_BATCHED)
    heard: list[tuple[int, int]] = []
    list(stream_items(path, lambda done, total: heard.append((done, total))))
    assert heard and all(total == len(_BATCHED) for _, total in heard)
    dones = [done for done, _ in heard]
    assert dones == sorted(dones) and dones[-1] == len(_BATCHED)
