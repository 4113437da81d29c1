"""Nothing in a dump is silently dropped: every instruction line becomes an instruction, and every
attribute's raw text is exactly the text at its position in the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_layout.syntax import parse_modules, read_text
from tests.support import corpus_id, hlo_files

FILES = hlo_files()
# An instruction line: optional ROOT, a name, '=', then a shape (array or tuple).
_INSTRUCTION_LINE = re.compile(
    r"^\s*(ROOT\s+)?%?[\w.\-$+]+\s*=\s*(?:[a-z][a-z0-9]*\[|\()", re.MULTILINE
)


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_every_instruction_and_attribute_is_kept(path: Path) -> None:
    text = read_text(path)
    modules = parse_modules(text, str(path))
    instructions = [i for m in modules for c in m.computations for i in c.instructions]
    # Count lines that start an instruction (header lines `HloModule x, a=b` do not match:
    # they start with `HloModule`, which is followed by a space, not '=').
    starts = (m.group(0).lstrip() for m in _INSTRUCTION_LINE.finditer(text))
    expected = sum(1 for start in starts if not start.startswith("HloModule"))
    assert len(instructions) == expected
    for instruction in instructions:
        line = text[instruction.span.start : instruction.span.end]
        assert instruction.name in line and instruction.opcode in line
        for attribute in instruction.attributes:
            assert text[attribute.span.start : attribute.span.end] == attribute.raw, (
                instruction.name,
                attribute.key,
            )
            key_end = text.rfind("=", instruction.span.start, attribute.span.start)
            assert text[:key_end].rstrip().endswith(attribute.key)
