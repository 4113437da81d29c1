"""The compiled attribute items (`accel/jsonattrs.c`) are the Python branch's, and the
skeleton-memoized key pre-filter (`scan.tail_mentions`) finds every key outside strings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout import accel
from hlo_layout.layout import skeleton
from hlo_layout.report import model
from hlo_layout.report.json_text import encode_str
from hlo_layout.syntax import scan
from hlo_layout.syntax.index import CALLS_RE
from hlo_layout.syntax.tree import LazyAttributes
from tests.conftest import corpus_modules, hlo_files

COMPILED = accel.load("_hlo_layout_json", accel.ABIS["_hlo_layout_json"])
needs_compiled = pytest.mark.skipif(
    COMPILED is None, reason="_hlo_layout_json is not built (python setup.py build_ext --inplace)"
)
PREFIX = model._ITEM


def reference(tail: str) -> str | None:
    """What the Python branch of `InstructionText.add` writes between the braces of
    `attributes`, where the compiled items may stand for it (else None)."""
    if not tail.isascii() or scan._SIMPLE_TAIL.fullmatch(tail) is None:
        return None
    pairs = scan._SIMPLE_ATTR_RE.findall(tail)
    if not pairs or len({k for k, _ in pairs}) < len(pairs):
        return None
    return ",".join(PREFIX + encode_str(k) + ": " + encode_str(v) for k, v in pairs)


_word = st.text(alphabet=st.sampled_from(list("az09_.$+-%")), min_size=1, max_size=4)
_string = st.text(alphabet=st.sampled_from(list('a \\"\n\t\x01\x1f{},=')), max_size=6).map(
    lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "") + '"'
)
_brace = st.lists(_word | _string | st.just(","), max_size=3).map(lambda x: "{" + "".join(x) + "}")
_value = _word | _string | _brace
_key = st.sampled_from(["kind", "index", "metadata", "a-b", "%x", "-y", "x.1", "calls"])
_blank = st.sampled_from(["", " ", "\t", " \t"])


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_blank, _blank, _key, _value), max_size=5), _blank)
def test_items_of_generated_tails(items: list[tuple[str, str, str, str]], end: str) -> None:
    """Law: on a tail of the simple kind the compiled items are the Python branch's."""
    tail = "".join(f"{a},{b}{k}={v}" for a, b, k, v in items) + end
    assert COMPILED is not None
    assert COMPILED.attributes(tail, PREFIX) == reference(tail), tail


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(' \t\f\r,={}()[]"\\\n\x1c09a_.%k-><é')), max_size=40))
def test_items_never_guess(text: str) -> None:
    """Law: on any text the compiled items are the Python branch's or None (which hands the
    tail to the Python branch); None only where that branch does something else."""
    assert COMPILED is not None
    for tail in (text, ", k=" + text, ", k=" + text + ", b={" + text + "}", ", k=1, k=2"):
        got = COMPILED.attributes(tail, PREFIX)
        assert got == reference(tail) or (got is None and reference(tail) is None), tail


@needs_compiled
def test_items_of_the_corpus() -> None:
    """The same on every distinct attribute tail of the corpus dumps."""
    assert COMPILED is not None
    tails = {
        i.attributes._text
        for path in hlo_files()
        for m in corpus_modules(path)
        for c in m.computations
        for i in c.instructions
        if type(i.attributes) is LazyAttributes
    }
    written = 0
    for tail in tails:
        got = COMPILED.attributes(tail, PREFIX)
        assert got == reference(tail), tail
        written += got is not None
    assert written > len(tails) // 2  # the common kind is most tails


_tail_text = st.text(alphabet=st.sampled_from(list(' ,={}"\\09a_%-.k')), max_size=30)
_KEY_PATTERNS = [CALLS_RE, skeleton._KEPT_KEY]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_tail_text | st.sampled_from(["calls=%c", "index=3", '"kind=x"', "to_apply"])),
    st.sampled_from(_KEY_PATTERNS),
)
def test_tail_mentions_finds_keys_outside_strings(pieces: list[str], pattern: re.Pattern) -> None:
    """Law: `tail_mentions` is the pattern's search over the tail with its strings emptied
    (with the compiled skeleton), else over the tail; either way every key outside a string is
    found, which is all its callers (key pre-filters) need."""
    tail = ", " + "".join(pieces)
    outside = pattern.search(scan._STRINGS.sub('""', tail)) is not None
    got = scan.tail_mentions(tail, pattern)
    assert got == outside or (got and scan._accel is None) or scan._accel.skeleton(tail) is None
    if outside:
        assert got
