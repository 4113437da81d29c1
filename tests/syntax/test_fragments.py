"""The grammar-free shortcut for flat constant literals accepts only what the grammar accepts."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloLayoutError, Source
from hlo_layout.syntax.fragments import _FLAT_LITERAL, check_literal, lark_parse


def _grammar_accepts(text: str) -> bool:
    try:
        lark_parse(text, Source(text, "<literal>"), start="literal")
    except HloLayoutError:
        return False
    return True


_PIECES = ["{", "}", ",", " ", "\t", "-", ".", "e", "E", "+", "0", "1", "9", "inf", "nan"]
_PIECES += ["true", "false", "...", "x", "(", ")", "/*", "*/", "\n", "->", "%"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
@example("{...}")
@example("{1, 2.5, -inf, nan, 1e-05}")
@example("{0 1 2}")
@example("{}")
def test_flat_literal_shortcut_implies_grammar(text):
    if _FLAT_LITERAL.fullmatch(text) is not None:
        assert _grammar_accepts(text), text


@pytest.mark.parametrize(
    "text", ["{...}", "{1, 2}", "{ -1.5e+03 , inf }", "{true false}", "{}", "{ }"]
)
def test_flat_literals_take_the_shortcut(text):
    assert _FLAT_LITERAL.fullmatch(text) is not None
    assert _grammar_accepts(text)
    check_literal(text)


@pytest.mark.parametrize("text", ["{1,}", "{,1}", "{1,,2}", "{1 -}", "{{1}"])
def test_malformed_flat_literals_still_fail(text):
    assert _FLAT_LITERAL.fullmatch(text) is None
    with pytest.raises(HloLayoutError):
        check_literal(text)
