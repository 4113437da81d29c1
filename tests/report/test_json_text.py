"""`dumps_indented` spells exactly what `json.dumps(indent=2, ensure_ascii=False)` spells, and
`computation_pieces` exactly what `dumps_indented` spells for a computation."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.memory.footprint import ShapeFacts
from hlo_layout.report import model
from hlo_layout.report.json_text import SPLICE, dumps_indented, write_document
from tests.support import corpus_id, corpus_modules, hlo_files

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
def test_computation_pieces_equal_generic_encoder(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fragment-built computation text is the generic encoder's, on every corpus
    computation (one writer per dump, so cached fragments are reused as in `inspect`; batches
    of 3 instructions, so batch boundaries are crossed)."""
    monkeypatch.setattr(model, "_BATCH", 3)
    text = model.InstructionText(ShapeFacts())
    facts = ShapeFacts()
    for module in corpus_modules(path):
        for n, c in enumerate(module.computations):
            kind, is_entry = ("entry", True) if n % 2 else ("\x00kind\x00", False)
            expected = dumps_indented(
                model.computation_object(c, facts, kind, is_entry), model.COMPUTATION_LEVEL
            )
            assert "".join(model.computation_pieces(c, text, kind, is_entry)) == expected, c.name
