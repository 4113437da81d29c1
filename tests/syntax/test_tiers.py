"""The fast scanner and the pure grammar parse build identical trees on every corpus file.

The grammar is the one definition of the syntax; the scanner is only allowed to be faster.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.syntax.parse import parse_modules, read_text
from hlo_layout.syntax.scan import ScanFallback
from tests.support import corpus_id, hlo_files

FILES = hlo_files()


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_scanner_equals_grammar(path: Path) -> None:
    text = read_text(path)
    reference = parse_modules(text, str(path), engine="lark")
    try:
        fast = parse_modules(text, str(path), engine="scan")
    except ScanFallback:
        # The scanner declined (e.g. an instruction wrapped over lines); "auto" then uses Lark.
        assert parse_modules(text, str(path)) == reference
        return
    assert fast == reference
    # Same positions too, for every instruction and attribute (errors point at the same place).
    for m_fast, m_ref in zip(fast, reference):
        for c_fast, c_ref in zip(m_fast.computations, m_ref.computations):
            for i_fast, i_ref in zip(c_fast.instructions, c_ref.instructions):
                assert i_fast.span.start == i_ref.span.start, i_ref.name
                for a_fast, a_ref in zip(i_fast.attributes, i_ref.attributes):
                    assert (a_fast.span.start, a_fast.span.end) == (
                        a_ref.span.start,
                        a_ref.span.end,
                    ), (i_ref.name, a_ref.key)


def test_scanner_handles_most_files() -> None:
    """The fast tier is not a fallback in disguise: it frames all but a handful of files."""
    declined = []
    for path in FILES:
        try:
            parse_modules(read_text(path), str(path), engine="scan")
        except ScanFallback:
            declined.append(corpus_id(path))
    assert len(declined) <= 2, declined


def test_no_lark_objects_leak() -> None:
    """No lark.Tree or lark.Token survives in the tree (the transformer covers every rule)."""
    from lark import Token, Tree

    text = read_text(FILES[0])
    (module,) = parse_modules(text, engine="lark")
    stack: list[object] = [module]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        assert not isinstance(node, Tree | Token), node
        if isinstance(node, tuple | list):
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__ if f != "span")
        elif hasattr(node, "_fields"):
            stack.extend(getattr(node, f) for f in node._fields if f != "span")
    assert seen > 100


def test_scanned_instructions_have_every_field() -> None:
    """The scanner builds instructions with tuple.__new__ (no defaults): every field must be set."""
    from hlo_layout.syntax import Instruction, parse

    module = parse("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n")
    instruction = module.computations[0].instructions[0]
    assert len(instruction) == len(Instruction._fields)
    assert instruction.shape_inferred is False
