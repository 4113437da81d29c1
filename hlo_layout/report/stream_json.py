"""`inspect --format json` for dumps too big to hold as one tree: one computation at a time.

An implementation detail of `hlo_layout.api.write_inspect_json`, which picks it for big dumps.
Each computation is parsed (`syntax/stream.py`), verified as the in-memory path verifies it
(`syntax/verify.ModuleVerifier`), turned into its JSON text, written to a binary spool as UTF-8
and dropped; what the module-level keys need is kept in small tallies (the opcodes calling each
computation, for its kind and `holds_buffers`; the memory totals of each computation as
`ValueTally`; the entry's parameter and output rows). At the end the document is written in the
same order and spelling as the in-memory path (`report/model.write_inspect_json`), so the two are
byte-identical (tests/report/test_stream_json.py).

Anything the in-memory path would reject (a chunk that does not parse alone, a broken
whole-module rule, a missing ENTRY) raises StreamFallback before any output: the caller then
reads the whole file, which reports the error exactly as it always does.

Memory: the largest computation's tree plus the per-computation tallies, not the whole dump.
"""

from __future__ import annotations

import codecs
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TextIO

from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.layout.module_memory import HeadRows, ShapeFacts, ValueTally, head_rows
from hlo_layout.report.json_text import write_document
from hlo_layout.report.model import SCHEMA_VERSION, computation_pieces, module_head
from hlo_layout.syntax.index import callees, computation_kind, holds_buffers
from hlo_layout.syntax.stream import ModuleHeader, StreamFallback, stream_items
from hlo_layout.syntax.tree import Computation
from hlo_layout.syntax.verify import ModuleVerifier

#: Above this size, `inspect --format json` streams (below it the in-memory path is as fast).
STREAM_THRESHOLD = 64 << 20
#: Stands for the computation's kind in the spool until every caller has been seen.
_KIND = "\x00kind\x00"
_KIND_JSON = '"\\u0000kind\\u0000"'
_BLOCK = 1 << 20


@dataclass
class _Module:
    name: str | None
    attributes: dict[str, str]
    fragments: list[tuple[str, int, int]] = field(default_factory=list)  # (name, start, bytes)
    callers: dict[str, list[str]] = field(default_factory=dict)  # callee -> caller opcodes
    tallies: dict[str, tuple] = field(default_factory=dict)  # ValueTally.compact()
    entry: str | None = None
    head: HeadRows = field(default_factory=HeadRows)
    verifier: ModuleVerifier = field(default_factory=ModuleVerifier)

    def finish(self) -> None:
        """The whole-module rules once all computations are in (else StreamFallback)."""
        if self.name is not None and self.verifier.unknown_callees():
            raise StreamFallback
        if self.entry is None and self.fragments:
            raise StreamFallback  # the in-memory path takes the last computation as the entry
        self.verifier = ModuleVerifier()  # drop the names: nothing more to check


def _add(m: _Module, c: Computation, spool: IO[bytes], facts: ShapeFacts) -> None:
    verifier = m.verifier
    verifier.add(c)
    if verifier.problems:
        raise StreamFallback
    if c.is_entry:
        m.entry = c.name
        m.head = head_rows(c, facts)
    names = []
    for callee, instruction in callees(c):
        m.callers.setdefault(callee, []).append(instruction.opcode)
        names.append(callee)
    verifier.add_callees(names)
    tally = ValueTally(0)
    tally.add(c, is_entry=c.is_entry, facts=facts)
    m.tallies[c.name] = tally.compact()
    start = spool.tell()
    for piece in computation_pieces(c, facts, _KIND, c.is_entry):
        spool.write(piece.encode("utf-8"))
    m.fragments.append((c.name, start, spool.tell() - start))


def stream_inspect_json(
    path: Path,
    out: TextIO,
    assignment: BufferAssignment | None = None,
    *,
    assignment_for_all: bool = False,
) -> None:
    """Write the whole `inspect --format json` document of one dump to `out`.

    `assignment` goes with a single-module dump (with `assignment_for_all`, with every module,
    as for an explicit `--buffers`). Raises StreamFallback before writing anything when the dump
    needs the whole-file reader; HloInputError for an unreadable file.
    """
    facts = ShapeFacts()
    wanted = {v.instruction for v in assignment.values} if assignment is not None else set()
    seen_names: set[str] = set()
    modules: list[_Module] = []
    with tempfile.TemporaryFile("w+b") as spool:
        for item in stream_items(path):
            if isinstance(item, ModuleHeader):
                if modules:
                    modules[-1].finish()
                modules.append(_Module(item.name, {a.key: a.raw for a in item.attributes}))
                continue
            if not isinstance(item, Computation):
                continue  # stack-frame sections are not in the JSON
            if not modules:
                modules.append(_Module(None, {}))
            _add(modules[-1], item, spool, facts)
            if wanted:
                seen_names.update(i.name for i in item.instructions if i.name in wanted)
            del item
        if not modules:
            raise StreamFallback  # nothing to read: the whole-file path says so
        modules[-1].finish()
        single = len(modules) == 1 or assignment_for_all
        heads = [
            _module_object(m, str(path), facts, assignment if single else None, seen_names)
            for m in modules
        ]
        spliced = [m for m in modules if m.fragments]

        def fill(n: int) -> Iterator[Iterator[str]]:
            m = spliced[n]
            for name, start, length in m.fragments:
                kind = computation_kind(name == m.entry, m.callers.get(name, ()))
                yield _fragment(spool, start, length, kind)

        write_document(out, {"schema_version": SCHEMA_VERSION, "modules": heads}, fill)
        out.flush()


def _fragment(spool: IO[bytes], start: int, length: int, kind: str) -> Iterator[str]:
    """A computation's text from the spool, its kind filled in, in blocks of UTF-8 decoded
    incrementally (a block boundary may split a character)."""
    spool.seek(start)
    decoder = codecs.getincrementaldecoder("utf-8")()
    first = True
    left = length
    while left > 0:
        block = spool.read(min(_BLOCK, left))
        left -= len(block)
        text = decoder.decode(block, final=left <= 0)
        if first:  # the kind is the second key, always in the first block
            text = text.replace(_KIND_JSON, f'"{kind}"', 1)
            first = False
        yield text


def _module_object(
    m: _Module,
    file: str,
    facts: ShapeFacts,
    assignment: BufferAssignment | None,
    names: set[str],
) -> dict:
    total = ValueTally(0)
    for name, _, _ in m.fragments:
        if holds_buffers(name == m.entry, m.callers.get(name, ())):
            total.merge(ValueTally.from_compact(m.tallies[name]))
    report = total.report(facts, m.head, scope=None, assignment=assignment, names=names)
    return module_head(
        m.name, file, m.entry, m.attributes, report, has_computations=bool(m.fragments)
    )


__all__ = ["STREAM_THRESHOLD", "StreamFallback", "stream_inspect_json"]
