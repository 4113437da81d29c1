"""`dumps_indented` spells exactly what `json.dumps(indent=2, ensure_ascii=False)` spells, and
`InstructionText` exactly what `dumps_indented` spells for an instruction."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.layout.module_memory import ShapeFacts
from hlo_layout.report.json_text import SPLICE, dumps_indented, write_document
from hlo_layout.report.model import INSTRUCTION_LEVEL, InstructionText, instruction_json
from tests.conftest import corpus_id, corpus_modules, hlo_files

FILES = hlo_files()

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_dumps_indented_equals_json_dumps(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


@given(st.lists(st.lists(_json, min_size=1, max_size=3), min_size=1, max_size=3))
def test_write_document_splices_items_in_place(groups: list[list[object]]) -> None:
    skeleton = {"a": 1, "groups": [{"items": [SPLICE], "n": n} for n in range(len(groups))]}
    out = io.StringIO()
    write_document(out, skeleton, lambda n: ([dumps_indented(v, 4)] for v in groups[n]))
    whole = {"a": 1, "groups": [{"items": g, "n": n} for n, g in enumerate(groups)]}
    assert out.getvalue() == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_instruction_text_equals_generic_encoder(path: Path) -> None:
    """The fragment-built instruction text is the generic encoder's, on every corpus
    instruction (one writer per dump, so cached fragments are reused as in `inspect`)."""
    text = InstructionText(ShapeFacts())
    facts = ShapeFacts()
    for module in corpus_modules(path):
        for computation in module.computations:
            for i in computation.instructions:
                expected = dumps_indented(instruction_json(i, facts), INSTRUCTION_LEVEL)
                assert text(i) == expected, i.name
