"""`inspect --format json` for dumps too big to hold as one tree: one computation at a time.

An implementation detail of `hlo_layout.api.write_inspect_json`, which picks it for big dumps.
Each computation is parsed (`syntax/stream.py`), verified as the in-memory path verifies it
(`syntax/verify.ModuleVerifier`), turned into its JSON text, written to a binary spool as UTF-8
and dropped. What the module-level keys need is kept aside: the opcodes calling each
computation (its kind), the backend vote, and a skeleton of the computation (opcode, shape,
operands, the few attributes the memory analysis reads: `report/skeleton.py`) in a second spool
on disk. When the module ends, the skeleton of every computation reachable from the entry is
read back and the in-memory path's own `memory_report` runs on it: totals, `largest_buffers`
(`top`), `padding_groups` and `peak` come from the same code on the same records. At the end the
document is written in the same order and spelling as the in-memory path
(`report/model.write_inspect_json`), so the two are byte-identical
(tests/report/test_stream_json.py).

Anything the in-memory path would reject (a chunk that does not parse alone, a broken
whole-module rule, a missing ENTRY) raises StreamFallback before any output: the caller then
reads the whole file, which reports the error exactly as it always does.

Memory: the largest computation's tree while reading; then the module's reachable skeleton
(about 200 bytes an instruction) and the peak analysis over it, not the whole dump's tree.
"""

from __future__ import annotations

import codecs
import os
import tempfile
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO

from hlo_layout import collector
from hlo_layout.memory.backend import BackendChoice
from hlo_layout.memory.buffer_assignment import BufferAssignment
from hlo_layout.memory.footprint import ShapeFacts, memory_report
from hlo_layout.report.json_text import write_document
from hlo_layout.report.model import (
    SCHEMA_VERSION,
    InstructionText,
    computation_pieces,
    module_head,
)
from hlo_layout.report.skeleton import BackendVote, SkeletonSpool
from hlo_layout.syntax.index import computation_kind, forget_tails
from hlo_layout.syntax.stream import ModuleHeader, StreamFallback, stream_items
from hlo_layout.syntax.tree import Attribute, Computation
from hlo_layout.syntax.verify import ModuleVerifier

#: Above this much text, `inspect --format json` streams. The whole tree costs about 8 bytes per
#: byte of text (70 MB at 8 MiB), streaming about 1.5-3x the text in all (the skeleton of the
#: computations that hold buffers and the peak analysis over it) for 20-40 % more time; below
#: it the tree is small next to the interpreter and the in-memory path is faster (measured:
#: README, "Streaming big dumps").
STREAM_THRESHOLD = 8 << 20
#: Stands for the computation's kind in the spool until every caller has been seen.
_KIND = "\x00kind\x00"
_KIND_JSON = '"\\u0000kind\\u0000"'
_KIND_BYTES = _KIND_JSON.encode()
_BLOCK = 1 << 20
_SHARED: dict[frozenset[str], frozenset[str]] = {}


@dataclass
class _Module:
    name: str | None
    attributes: tuple[Attribute, ...]
    #: Each computation's name, and where its JSON starts in the spool and how long it is (in
    #: arrays: a dump's ten thousand computations then cost no tuple or int objects)
    fragments: list[str] = field(default_factory=list)
    starts: array[int] = field(default_factory=lambda: array("q"))
    lengths: array[int] = field(default_factory=lambda: array("q"))
    callers: dict[str, frozenset[str]] = field(default_factory=dict)  # callee -> caller opcodes
    entry: str | None = None
    backend: BackendVote = field(default_factory=BackendVote)
    verifier: ModuleVerifier = field(default_factory=ModuleVerifier)
    head: dict | None = None  # the module's object, once finished
    choice: BackendChoice | None = None  # the backend its figures used, once finished

    def finish(
        self,
        skeletons: SkeletonSpool,
        file: str,
        assignment: BufferAssignment | None,
        top: int | None,
        beside: Beside,
    ) -> None:
        """The whole-module rules once all computations are in (else StreamFallback), then the
        memory report of the skeleton, by the in-memory path's own `memory_report`."""
        if self.name is not None and self.verifier.unknown_callees():
            raise StreamFallback
        if self.verifier.has_cycle():
            raise StreamFallback
        if self.entry is None and self.fragments:
            raise StreamFallback  # the in-memory path takes the last computation as the entry
        self.verifier = ModuleVerifier()  # drop the names: nothing more to check
        module = skeletons.module(self.name, self.attributes, self.entry)
        backend = beside.backend or self.backend.choice(
            file, beside.target_arguments, beside.assignment
        )
        report = memory_report(module, assignment=assignment, top=top, backend=backend)
        self.choice = backend
        self.head = module_head(
            self.name,
            file,
            self.entry,
            {a.key: a.raw for a in self.attributes},
            report,
            has_computations=bool(self.fragments),
        )


def _add(
    m: _Module, c: Computation, spool: IO[bytes], skeletons: SkeletonSpool, text: InstructionText
) -> None:
    verifier = m.verifier
    verifier.add(c)
    if verifier.problems:
        raise StreamFallback
    if c.is_entry:
        m.entry = c.name
    calls: list[tuple[str, str]] = []  # (callee, calling opcode) of each call, in text order
    text.calls = calls  # gathered by the writer
    start = spool.tell()
    for piece in computation_pieces(c, text, _KIND, c.is_entry):
        spool.write(piece.encode("utf-8"))
    text.calls = None
    m.fragments.append(c.name)
    m.starts.append(start)
    m.lengths.append(spool.tell() - start)
    callers = m.callers
    for callee, opcode in calls:
        old = callers.get(callee)
        if old is None or opcode not in old:
            # The distinct calling opcodes, one shared set per combination (all the kind
            # needs): a dump's thousands of callees then cost a dict entry each.
            new = old | {opcode} if old is not None else frozenset((opcode,))
            callers[callee] = _SHARED.setdefault(new, new)
    verifier.add_callees(c.name, [callee for callee, _ in calls])
    m.backend.add(c)
    skeletons.add(c, calls)  # the attributes it keeps read from the spans the writer kept
    forget_tails()


@dataclass(frozen=True, slots=True)
class Beside:
    """What the reader found beside the dump (`hlo_layout.reader`) that decides the backend:
    `backend` when given (`--backend`), else the target arguments (name, text) and the
    buffer assignment the text's signs are weighed with (`memory.backend.choose_backend`)."""

    backend: BackendChoice | None = None
    target_arguments: tuple[str, str] | None = None
    assignment: BufferAssignment | None = None


def stream_inspect_json(
    path: Path,
    out: TextIO,
    assignment: BufferAssignment | None = None,
    *,
    assignment_for_all: bool = False,
    top: int | None = None,
    stage: Callable[[str], None] | None = None,
    report: Callable[[int, int], None] | None = None,
    beside: Beside | None = None,
) -> tuple[BackendChoice, ...]:
    """Write the whole `inspect --format json` document of one dump to `out`; the backend each
    module was measured with is returned (the caller says those assumed, as for any dump).

    `assignment` goes with a single-module dump (with `assignment_for_all`, with every module,
    as for an explicit `--buffers`); `top` as `memory_report`'s; `beside` what decides the
    backend (as the whole-file reader decides it). `stage(name)` hears when
    reading, measuring and writing begin, `report(done, total)` how much is read (a bar's
    callbacks, `api.Progress`). Raises StreamFallback before
    writing anything when the dump needs the whole-file reader; HloInputError for an unreadable
    file.
    """
    # The cyclic collector is paused throughout: the trees, skeletons and analysis made here
    # hold no cycles and are freed by reference counting, while its passes (one after each
    # batch's parse, and over the analysis' objects) cost 5-8 % of the run.
    with collector.paused():
        return _stream(
            path,
            out,
            assignment,
            assignment_for_all,
            top,
            stage or _silent,
            report,
            beside or Beside(),
        )


def _stream(
    path: Path,
    out: TextIO,
    assignment: BufferAssignment | None,
    assignment_for_all: bool,
    top: int | None,
    stage: Callable[[str], None],
    report: Callable[[int, int], None] | None,
    beside: Beside,
) -> tuple[BackendChoice, ...]:
    text = InstructionText(ShapeFacts())
    file = str(path)
    modules: list[_Module] = []
    with tempfile.TemporaryFile("w+b") as spool, tempfile.TemporaryFile("w+b") as skeleton_file:
        skeletons = SkeletonSpool(skeleton_file)
        stage(f"reading {path.name}")
        for item in stream_items(path, report):
            if isinstance(item, ModuleHeader):
                if modules:  # a second module: a buffer assignment found beside goes with none
                    # a second module: nothing found beside the file goes with either
                    modules[-1].finish(
                        skeletons,
                        file,
                        assignment if assignment_for_all else None,
                        top,
                        Beside(beside.backend),
                    )
                modules.append(_Module(item.name, item.attributes, backend=BackendVote(file)))
                continue
            if not isinstance(item, Computation):
                continue  # stack-frame sections are not in the JSON
            if not modules:
                modules.append(_Module(None, (), backend=BackendVote(file)))
            _add(modules[-1], item, spool, skeletons, text)
            del item
        if not modules:
            raise StreamFallback  # nothing to read: the whole-file path says so
        single = len(modules) == 1 or assignment_for_all
        stage("measuring")
        modules[-1].finish(
            skeletons,
            file,
            assignment if single else None,
            top,
            beside if len(modules) == 1 else Beside(beside.backend),
        )
        heads = [m.head for m in modules]
        spliced = [m for m in modules if m.fragments]

        raw = _utf8_buffer(out)
        sink: Any = _Sink(out, raw) if raw is not None else out

        def fill(n: int) -> Iterator[Iterator[str]]:
            m = spliced[n]
            for name, start, length in zip(m.fragments, m.starts, m.lengths):
                kind = computation_kind(name == m.entry, m.callers.get(name, ()))
                if raw is not None:
                    yield _fragment_bytes(spool, start, length, kind)  # type: ignore[misc]
                else:
                    yield _fragment(spool, start, length, kind)

        stage("writing")
        write_document(sink, {"schema_version": SCHEMA_VERSION, "modules": heads}, fill)
        out.flush()
        return tuple(m.choice for m in modules if m.choice is not None)


def _silent(_: str) -> None:
    pass


def _utf8_buffer(out: TextIO) -> BinaryIO | None:
    """`out`'s byte stream when writing the spool's UTF-8 bytes there is the same as writing
    their text to `out` (a UTF-8 text stream that turns no newline into another): the spool is
    then copied without being decoded and encoded again."""
    buffer = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is None or encoding != "utf8" or os.linesep != "\n":
        return None
    return buffer  # type: ignore[no-any-return]


class _Sink:
    """`write_document`'s stream: text to `out`, spooled bytes straight to its buffer."""

    def __init__(self, out: TextIO, raw: BinaryIO) -> None:
        self._out, self._raw = out, raw

    def write(self, piece: str | bytes) -> None:
        if type(piece) is bytes:
            self._out.flush()
            self._raw.write(piece)
        else:
            self._out.write(piece)  # type: ignore[arg-type]


def _fragment_bytes(spool: IO[bytes], start: int, length: int, kind: str) -> Iterator[bytes]:
    """A computation's JSON from the spool, as the UTF-8 bytes there, in blocks, its kind
    filled in."""
    spool.seek(start)
    first = True
    left = length
    while left > 0:
        block = spool.read(min(_BLOCK, left))
        left -= len(block)
        if first:  # the kind is the second key, always in the first block
            block = block.replace(_KIND_BYTES, f'"{kind}"'.encode(), 1)
            first = False
        yield block


def _fragment(spool: IO[bytes], start: int, length: int, kind: str) -> Iterator[str]:
    """`_fragment_bytes` decoded incrementally (a block boundary may split a character)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    for block in _fragment_bytes(spool, start, length, kind):
        yield decoder.decode(block)
    yield decoder.decode(b"", final=True)


__all__ = ["STREAM_THRESHOLD", "StreamFallback", "stream_inspect_json"]
