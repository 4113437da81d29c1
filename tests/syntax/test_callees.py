"""Callees found in an unsplit attribute tail (`index.tail_callees`) equal what splitting the
tail gives (`attrs.computation_names` over the split attributes), or it declines (None); so do
the keys naming them (`index.tail_callee_keys`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.syntax import parse_modules
from hlo_layout.syntax.attrs import computation_names
from hlo_layout.syntax.index import tail_callee_keys, tail_callees
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS
from hlo_layout.syntax.tree import LazyAttributes
from tests.support import corpus_id, corpus_modules, hlo_files


def _split_callees(attributes: LazyAttributes) -> tuple[str, ...]:
    out: list[str] = []
    for a in attributes:
        if a.key in CALLED_COMPUTATION_KEYS:
            out.extend(computation_names(a))
    return tuple(out)


def _split_keys(attributes: LazyAttributes) -> tuple[str, ...]:
    return tuple(a.key for a in attributes if a.key in CALLED_COMPUTATION_KEYS)


def _line(tail: str) -> str:
    body = f"  ROOT x = f32[] add(a, b){tail}\n  a = f32[] parameter(0)\n"
    return "HloModule m\nENTRY e {\n" + body + "}\n"


def _lazy_tail(tail: str) -> LazyAttributes | None:
    try:
        (module,) = parse_modules(_line(tail), verify=False)
    except Exception:
        return None
    attributes = module.entry.instructions[0].attributes
    return attributes if isinstance(attributes, LazyAttributes) else None


def _lazy_instructions(path):
    """Every instruction of a corpus dump whose attribute tail is kept unsplit."""
    for module in corpus_modules(path):
        for computation in module.computations:
            for instruction in computation.instructions:
                if isinstance(instruction.attributes, LazyAttributes):
                    yield instruction


@pytest.mark.parametrize("path", hlo_files(), ids=corpus_id)
def test_corpus_callees_equal_split(path):
    for instruction in _lazy_instructions(path):
        attributes = instruction.attributes
        found = tail_callees(attributes)
        assert found is None or found == _split_callees(attributes), instruction
        keys = tail_callee_keys(attributes)
        assert keys is None or keys == _split_keys(attributes), instruction
        assert (keys is None) == (found is None)


@pytest.mark.parametrize("path", hlo_files(), ids=corpus_id)
def test_corpus_fusion_kind_equals_split(path):
    """`fusion_kind` read from the unsplit tail equals the split attribute's raw text."""
    for instruction in _lazy_instructions(path):
        if instruction.opcode != "fusion":
            continue
        attributes = instruction.attributes
        unsplit = LazyAttributes(attributes._text, attributes._offset, attributes._split)
        kind = instruction._replace(attributes=unsplit).fusion_kind
        split = next((a.raw for a in attributes if a.key == "kind"), None)
        assert kind == split, instruction


@pytest.mark.parametrize(
    "tail",
    [
        ", kind=kLoop, calls=%f",
        ", kind = kInput ,calls=%f",
        ", calls=%f, kind=kOutput",
        ', kind="kLoop", calls=%f',
        ", kind=kLoop, kind=kInput, calls=%f",
        ", kind=kCustom",
        ", kind=kLoop /*x*/, calls=%f",
        ", kind={kLoop}, calls=%f",
    ],
)
def test_fusion_kind_forms(tail):
    body = f"  a = f32[] parameter(0)\n  ROOT x = f32[] fusion(a){tail}\n"
    text = "HloModule m\nENTRY e {\n" + body + "}\n"
    try:
        (module,) = parse_modules(text, verify=False)
    except Exception:
        return  # not an attribute tail the grammar reads
    instruction = module.entry.instructions[1]
    attributes = instruction.attributes
    if not isinstance(attributes, LazyAttributes):
        return
    kind = instruction.fusion_kind  # before any split
    assert kind == next((a.raw for a in attributes if a.key == "kind"), None)


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (", calls=%f", ("f",)),
        (', kind=kLoop, calls=%fused.1, metadata={op_name="x"}', ("fused.1",)),
        (", dimensions={1}, to_apply=%add", ("add",)),
        (", condition=%c, body=%b", ("c", "b")),
        (", branch_computations={%a, %b.2}", ("a", "b.2")),
        (', backend_config="{\\"calls=%x\\"}"', ()),
        (', frontend_attributes={calls="y"}', ()),
        (", _xla_calls=%z", ()),
        (", calls = %f", ("f",)),
        (", called_computations={}", ()),
        (", calls=%f->g", None),
    ],
)
def test_examples(tail, expected):
    attributes = _lazy_tail(tail)
    assert attributes is not None
    if expected is not None:
        assert _split_callees(attributes) == expected
    assert tail_callees(attributes) == expected  # all in the forms read unsplit


_PIECES = st.sampled_from(
    [
        ", calls=%f",
        ", to_apply=%g.1",
        ", body=b",
        ", branch_computations={%a, %b}",
        ", called_computations={%c}",
        ", calls={%a,%b}",
        ', backend_config="calls=%x, to_apply=%y"',
        ', frontend_attributes={calls="q", body="r"}',
        ", dimensions={1,2}",
        ', metadata={op_name="a,b" source_line=3}',
        ", slice={[0:2], [1:3]}",
        ",  calls =  %spaced",
        ", sharding={devices=[2,1]0,1}",
        ', custom_call_target="calls"',
        ", condition=%c /*index=1*/",
        ", to_apply=%h, calls=%i",
    ]
)


@given(st.lists(_PIECES, min_size=1, max_size=5))
def test_generated_tails_equal_split(pieces):
    attributes = _lazy_tail("".join(pieces))
    if attributes is None:
        return  # the scanner declined (or the grammar rejects): nothing unsplit to read
    found = tail_callees(attributes)
    assert found is None or found == _split_callees(attributes)
    keys = tail_callee_keys(attributes)
    assert keys is None or keys == _split_keys(attributes)
