"""`inspect --format json` for dumps too big to hold as one tree: one computation at a time.

Each computation is parsed (`syntax/stream.py`), turned into its JSON object, written to a spool
file and dropped; what the module-level keys need is kept in small tallies (call edges for each
computation's kind, the memory totals of each computation as `ValueTally`, the entry's parameter
and output rows). At the end the document is written in the same order and spelling as the
in-memory path, so the two are byte-identical (tests/report/test_stream_json.py).

Memory: the largest computation's tree plus the per-computation tallies, not the whole dump.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.layout.module_memory import (
    CONTROL_FLOW_OPCODES,
    HeadRows,
    ShapeFacts,
    ValueTally,
    head_rows,
)
from hlo_layout.report.model import (
    SCHEMA_VERSION,
    _ShapeText,
    computation_object,
    instruction_json,
    memory_json,
)
from hlo_layout.syntax.stream import ModuleHeader, stream_items
from hlo_layout.syntax.tree import Computation, computation_kind

#: Above this size, `inspect --format json` streams (below it the in-memory path is as fast).
STREAM_THRESHOLD = 64 << 20
_KIND = "\x00kind\x00"
_SPLICE = "\x00computations\x00"


class NeedsWholeFile(Exception):
    """The dump cannot be streamed faithfully (no ENTRY marker); use the in-memory path."""


@dataclass
class _Module:
    name: str | None
    attributes: dict[str, str]
    fragments: list[tuple[str, int, int]] = field(default_factory=list)  # (name, start, length)
    callers: dict[str, list[str]] = field(default_factory=dict)
    tallies: dict[str, tuple] = field(default_factory=dict)  # ValueTally.compact()
    entry: str | None = None
    head: HeadRows = field(default_factory=HeadRows)


def _callees(c: Computation) -> list[tuple[str, str]]:
    out = []
    for i in c.instructions:
        for callee in i.called_computations:
            out.append((callee, i.opcode))
    return out


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.split("\n"))


def _write_computation(spool: TextIO, c: Computation, shape_text: _ShapeText) -> None:
    """`json.dumps(computation_object(...), indent=2)` indented to its place in the document,
    written one instruction at a time (a computation of a million instructions never becomes
    one Python structure)."""
    if not c.instructions:
        shell = computation_object(c, shape_text, _KIND, c.is_entry, [])
        spool.write(_indent(json.dumps(shell, indent=2, ensure_ascii=False), 8))
        return
    shell = computation_object(c, shape_text, _KIND, c.is_entry, [_SPLICE])
    head, _, tail = _indent(json.dumps(shell, indent=2, ensure_ascii=False), 8).partition(
        " " * 12 + json.dumps(_SPLICE)
    )
    spool.write(head)
    last = len(c.instructions) - 1
    for n, instruction in enumerate(c.instructions):
        text = json.dumps(instruction_json(instruction, shape_text), indent=2, ensure_ascii=False)
        spool.write(_indent(text, 12))
        if n != last:
            spool.write(",\n")
    spool.write(tail)


def stream_inspect_json(
    path: Path, out: TextIO, assignment: BufferAssignment | None = None
) -> None:
    """Write the whole `inspect --format json` document of one dump to `out`.

    Raises StreamFallback / NeedsWholeFile before writing anything when the dump needs the
    whole-file parser; input errors surface as HloLayoutError, also before any output.
    """
    facts = ShapeFacts()
    shape_text = _ShapeText()
    wanted = {v.instruction for v in assignment.values} if assignment is not None else set()
    seen_names: set[str] = set()
    modules: list[_Module] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for item in stream_items(path):
            if isinstance(item, ModuleHeader):
                modules.append(_Module(item.name, {a.key: a.raw for a in item.attributes}))
                continue
            if not isinstance(item, Computation):
                continue  # stack-frame sections are not in the JSON
            if not modules:
                modules.append(_Module(None, {}))
            m = modules[-1]
            if item.is_entry:
                m.entry = item.name
                m.head = head_rows(item, facts)
            for callee, opcode in _callees(item):
                m.callers.setdefault(callee, []).append(opcode)
            tally = ValueTally(0)
            tally.add(item, is_entry=item.is_entry, facts=facts)
            m.tallies[item.name] = tally.compact()
            if wanted:
                seen_names.update(i.name for i in item.instructions if i.name in wanted)
            start = spool.tell()
            _write_computation(spool, item, shape_text)
            m.fragments.append((item.name, start, spool.tell() - start))
            del item, tally
        if any(m.entry is None and m.fragments for m in modules):
            raise NeedsWholeFile
        _write_document(modules, spool, out, facts, assignment, seen_names, str(path))


def _module_object(m: _Module, file: str, facts: ShapeFacts, assignment, names) -> dict:
    total = ValueTally(0)
    for name, _, _ in m.fragments:
        opcodes = m.callers.get(name, ())
        if name == m.entry or any(op in CONTROL_FLOW_OPCODES for op in opcodes):
            total.merge(ValueTally.from_compact(m.tallies[name]))
    report = total.report(facts, m.head, scope=None, assignment=assignment, names=names)
    return {
        "module": m.name,
        "file": file,
        "entry": m.entry,
        "attributes": m.attributes,
        "computations": [_SPLICE] if m.fragments else [],
        **memory_json(report),
    }


def _write_document(
    modules: list[_Module],
    spool: Any,
    out: TextIO,
    facts: ShapeFacts,
    assignment: BufferAssignment | None,
    names: set[str],
    file: str,
) -> None:
    skeleton = {
        "schema_version": SCHEMA_VERSION,
        "modules": [
            _module_object(m, file, facts, assignment if len(modules) == 1 else None, names)
            for m in modules
        ],
    }
    text = json.dumps(skeleton, indent=2, ensure_ascii=False)
    marker = json.dumps(_SPLICE)
    pieces = text.split("\n")
    module_index = 0
    for line in pieces:
        if line.strip() != marker:
            out.write(line + "\n")
            continue
        m = modules[module_index]
        module_index += 1
        for n, (name, start, length) in enumerate(m.fragments):
            spool.seek(start)
            fragment = spool.read(length)
            kind = computation_kind(name == m.entry, m.callers.get(name, []))
            fragment = fragment.replace(json.dumps(_KIND), json.dumps(kind), 1)
            out.write(fragment + (",\n" if n + 1 < len(m.fragments) else "\n"))
    out.flush()


__all__ = ["STREAM_THRESHOLD", "NeedsWholeFile", "stream_inspect_json"]
