"""`dumps_indented` spells exactly what `json.dumps(indent=2, ensure_ascii=False)` spells."""

from __future__ import annotations

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.report.json_text import SPLICE, dumps_indented, write_document

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
