"""Read a dump one computation at a time, so a 1 GB file never sits in memory whole.

The file is cut into chunks at the lines XLA's printer puts between top-level items (a
`HloModule` header, a line ending in `{` that opens a computation, the `}` line that closes it);
each chunk goes through the same parser as a whole file (`parse_modules` on the chunk, line
numbers kept via `Source.first_line`). A chunk that does not parse on its own raises
StreamFallback: the caller then parses the whole file, which decides and reports precisely.
tests/syntax/test_stream.py shows the streamed items equal the whole-file tree on every corpus
file.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from hlo_layout.errors import HloLayoutError, Span
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS
from hlo_layout.syntax.parse import (
    HEAD_BYTES,
    HloInputError,
    check_head,
    open_binary,
    parse_modules,
    source_name,
    text_size,
    undecodable,
)
from hlo_layout.syntax.tree import Attribute, Computation, Module, Section


class StreamFallback(Exception):
    """A chunk did not parse on its own; parse the whole file instead."""


@dataclass(frozen=True, slots=True)
class ModuleHeader:
    """`HloModule name, attrs...`: starts a module; the computations that follow belong to it."""

    name: str
    attributes: tuple[Attribute, ...]
    span: Span | None = None


StreamItem = ModuleHeader | Section | Computation


#: The first bytes of gzip data.
_GZIP_MAGIC = b"\x1f\x8b"


def _open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes, gunzipped when they start as gzip's do; closing it closes the file."""
    raw: IO[bytes] = open_binary(path)
    try:
        magic = _read_ahead(raw, 2)
    except BaseException:
        raw.close()
        raise
    plain = io.BufferedReader(_Prefixed(magic, raw), 1 << 16)
    if magic != _GZIP_MAGIC:
        return plain
    # GzipFile leaves the stream it reads open: the wrapper closes both.
    return io.BufferedReader(_Prefixed(b"", gzip.GzipFile(fileobj=plain), also=plain), 1 << 16)


def _open(path: Path) -> IO[str]:
    """The file as text lines (gzip or plain), with the checks `read_text` makes up front on
    the same first HEAD_BYTES (read whole here: a buffered reader's `peek` may give fewer)."""
    stream = _open_bytes(path)
    try:
        try:
            head = _read_ahead(stream, HEAD_BYTES)
        except (OSError, EOFError) as e:  # a truncated or corrupt .gz (as in stream_items)
            raise HloInputError(f"{path}: broken gzip data ({e})") from None
        check_head(head, source_name(path))
    except BaseException:
        stream.close()
        raise
    return io.TextIOWrapper(
        io.BufferedReader(_Prefixed(head, stream), 1 << 16), encoding="utf-8-sig", newline=""
    )


def _read_ahead(raw: IO[bytes] | io.BufferedIOBase, n: int) -> bytes:
    """Up to `n` bytes of `raw`, fewer only at its end (a pipe or gzip may give less a read)."""
    parts: list[bytes] = []
    left = n
    while left > 0:
        part = raw.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


class _Prefixed(io.RawIOBase):
    """`head`, then the rest of `raw`: bytes read ahead to look at them, put back. Closing it
    closes `raw` (and `also`)."""

    def __init__(
        self,
        head: bytes,
        raw: IO[bytes] | io.BufferedIOBase,
        also: IO[bytes] | io.BufferedIOBase | None = None,
    ) -> None:
        self._head = memoryview(head)
        self._raw = raw
        self._also = also

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._raw.readinto(buffer)  # type: ignore[union-attr, no-any-return]

    def close(self) -> None:
        try:
            self._raw.close()
            if self._also is not None:
                self._also.close()
        finally:
            super().close()


def _opens_computation(stripped: str) -> bool:
    """`[ENTRY] name (params) -> result {` or `name {`, not an instruction ending in `{`."""
    return stripped.endswith("{") and "=" not in stripped.split("(", 1)[0]


def _chunks(lines: Iterator[str]) -> Iterator[tuple[str, int, bool]]:
    """(text, first line number, whether it is one computation) of each top-level piece."""
    buffer: list[str] = []
    first = 1
    number = 0
    inside = False
    for line in lines:
        number += 1
        stripped = line.strip()
        if inside:
            buffer.append(line)
            if stripped.startswith("}"):
                yield "".join(buffer), first, True
                buffer, inside = [], False
            continue
        if stripped.startswith("HloModule") or _opens_computation(stripped):
            if buffer and any(b.strip() for b in buffer):
                yield "".join(buffer), first, False
            buffer, first = [line], number
            if stripped.startswith("HloModule"):
                yield line, number, False
                buffer = []
            else:
                inside = True
            continue
        if not buffer:
            if not stripped or stripped.startswith("//"):
                continue  # blank and comment lines between items are not kept (issue 16)
            first = number
        buffer.append(line)
    if inside:
        raise StreamFallback  # an unterminated computation: the whole-file parse reports it
    if buffer and any(b.strip() for b in buffer):
        yield "".join(buffer), first, False


#: Computations are parsed in batches of about this many characters: one `parse_modules` per
#: computation cost 40 % more than the whole-file parse (9,600 computations in 17.8 MB), while
#: a batch's tree stays a few MB (and under parse._FREEZE_ABOVE, so it is never frozen).
_BATCH = 128 << 10


def _batches(chunks: Iterator[tuple[str, int, bool]]) -> Iterator[tuple[list[str], int]]:
    """Consecutive computation chunks joined into batches (each chunk's lines keep their
    numbers: the blank lines `_chunks` dropped between them are put back as empty lines);
    every other chunk (a module header, a section, stray text) alone, in file order."""
    batch: list[str] = []
    first = next_line = size = 0
    for text, line, computation in chunks:
        if batch and (not computation or size >= _BATCH):
            yield batch, first
            batch = []
        if not computation:
            yield [text], line
            continue
        if not batch:
            first, next_line, size = line, line, 0
        if line > next_line:
            batch.append("\n" * (line - next_line))
        batch.append(text)
        size += len(text)
        next_line = line + text.count("\n")
    if batch:
        yield batch, first


_GENERATED = re.compile(r"_(?:\.[0-9]+)?")


class _InlineNames:
    """Names the computations written inline (`to_apply={ ... }`) as the whole-file reader does:
    `_`, `_.1`, ... unique in the file (grammar.expand_inline, NOTE: [inline instructions and
    computations]). A chunk parsed alone numbers its own from `_` again; this renames them in
    file order. The whole-file reader also avoids names declared *later* in the file, which a
    stream has not read yet: a later declaration of a name given out here raises StreamFallback
    (then the two would differ), so the streamed names are always the whole file's."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.given: set[str] = set()

    def __call__(self, computations: tuple[Computation, ...]) -> tuple[Computation, ...]:
        hoisted = [
            c
            for c in computations[:-1]
            if not c.synthetic and _GENERATED.fullmatch(c.name) is not None
        ]
        ids = {id(c) for c in hoisted}
        for c in computations:
            if id(c) not in ids and c.name in self.given:
                raise StreamFallback
        renames: dict[str, str] = {}
        for c in hoisted:
            name, n = "_", 0
            while name in self.taken:
                n += 1
                name = f"_.{n}"
            renames[c.name] = name
            self.given.add(name)
            self.taken.add(name)
        self.taken.update(c.name for c in computations if id(c) not in ids)
        if all(old == new for old, new in renames.items()):
            return computations
        return tuple(_renamed(c, renames, id(c) in ids) for c in computations)


def _renamed(c: Computation, renames: dict[str, str], hoisted: bool) -> Computation:
    instructions = tuple(
        i._replace(
            attributes=tuple(
                Attribute(a.key, renames[a.raw], a.span)
                if a.key in CALLED_COMPUTATION_KEYS and a.raw in renames
                else a
                for a in i.attributes
            )
        )
        if any(a.key in CALLED_COMPUTATION_KEYS and a.raw in renames for a in i.attributes)
        else i
        for i in c.instructions
    )
    name = renames[c.name] if hoisted else c.name
    return replace(c, name=name, instructions=instructions)


def stream_items(
    path: str | Path, report: Callable[[int, int], None] | None = None
) -> Iterator[StreamItem]:
    """Module headers, sections and computations of a dump, in file order, one chunk in memory.

    `report(done, total)` hears after each batch how much of the text is read (characters of
    the text's size in bytes, `parse.text_size`: equal for ASCII, for a bar). Raises
    HloInputError for unreadable files and StreamFallback where only a whole-file parse can
    decide (the caller then uses `parse_file_modules`).
    """
    path = Path(path)
    inline_names = _InlineNames()
    name = str(path)
    with _open(path) as f:
        try:
            total = text_size(path) if report is not None else 0
            done = 0
            for texts, first_line in _batches(_chunks(iter(f))):
                if report is not None:
                    done += sum(map(len, texts))
                    report(min(done, total), total)
                for module in _parsed(texts, name, first_line):
                    if module.name is not None:
                        yield ModuleHeader(module.name, tuple(module.attributes), module.span)
                    yield from module.sections
                    yield from inline_names(module.computations)
            if report is not None:
                report(total, total)  # the blank and comment lines between chunks too
        except UnicodeDecodeError:
            with _open_bytes(path) as again:  # read again, a line at a time, to say where
                raise undecodable(source_name(path), again) from None
        except (OSError, EOFError) as e:  # a truncated or corrupt .gz, met while reading
            raise HloInputError(f"{path}: broken gzip data ({e})") from None


def _parsed(texts: list[str], name: str, first_line: int) -> Iterator[Module]:
    """The modules of a batch; one that holds computations written inline (named `_`, `_.1`,
    ... by the reader, see `_InlineNames`, which reads one chunk's at a time) is parsed again a
    chunk at a time, so naming is the same as without batches."""
    try:
        modules = parse_modules("".join(texts), name, verify=False, first_line=first_line)
    except HloLayoutError:
        raise StreamFallback from None
    if len(texts) == 1 or not any(
        _GENERATED.fullmatch(c.name) for m in modules for c in m.computations
    ):
        yield from modules
        return
    line = first_line
    for text in texts:
        if text.strip():
            try:
                yield from parse_modules(text, name, verify=False, first_line=line)
            except HloLayoutError:
                raise StreamFallback from None
        line += text.count("\n")
