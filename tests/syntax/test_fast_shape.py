"""The regex shape reader gives the grammar's tree for every shape it accepts."""

from __future__ import annotations

import re

from hypothesis import given, settings

from hlo_layout.errors import Source
from hlo_layout.syntax.fast_shape import fast_shape
from hlo_layout.syntax.parse import lark_parse, read_text
from hlo_layout.syntax.printer import print_shape
from tests.support import hlo_files
from tests.syntax.strategies import shapes

# Shape-looking substrings of a dump: arrays with optional layouts, tuples of them.
_CANDIDATE = re.compile(r"[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\})?")


def grammar_shape(text: str):
    return lark_parse(text, Source(text, "<shape>"), start="shape")


def test_every_corpus_shape() -> None:
    seen: set[str] = set()
    for path in hlo_files():
        seen.update(_CANDIDATE.findall(read_text(path)))
    accepted = 0
    for text in sorted(seen):
        fast = fast_shape(text)
        if fast is None:
            continue
        accepted += 1
        assert fast == grammar_shape(text), text
    assert accepted > 0.95 * len(seen), (accepted, len(seen))


@settings(max_examples=400, deadline=None)
@given(shapes())
def test_generated_shapes(shape) -> None:
    text = print_shape(shape)
    fast = fast_shape(text)
    assert fast is not None, text  # canonical spelling is always in the fast subset
    assert fast == grammar_shape(text) == shape


def test_declines_what_it_does_not_know() -> None:
    for text in ("f32[2]{0:P(f32[2]{0})}", "f32[2]<0>", "f32[ 2 ]", "f32[2]{1}", "f32[-1]"):
        assert fast_shape(text) is None, text
