"""The compiled writer (`accel/jsonattrs.c`: whole instructions from the scanner's spans) is the
Python branch's, and the skeleton-memoized key pre-filter (`scan.tail_mentions`) finds every key
outside strings."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hlo_layout import accel
from hlo_layout.errors import HloLayoutError, Source
from hlo_layout.memory.footprint import ShapeFacts
from hlo_layout.report import model, skeleton
from hlo_layout.report.json_text import dumps_indented
from hlo_layout.syntax import parse_file_modules, scan
from hlo_layout.syntax.fragments import parse_shape
from hlo_layout.syntax.index import CALLS_RE
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS
from hlo_layout.syntax.parse import parse_modules
from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Operand
from tests.support import hlo_files

COMPILED = accel.load("_hlo_layout_json", accel.ABIS["_hlo_layout_json"])
needs_compiled = pytest.mark.skipif(
    COMPILED is None, reason="_hlo_layout_json is not built (python setup.py build_ext --inplace)"
)
_blank = st.sampled_from(["", " ", "\t", " \t"])
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


# -- whole instructions: `instructions` against the Python branch of `InstructionText.add` ----


def _written(
    computations: Sequence[Computation], compiled: bool
) -> list[tuple[str, list[tuple[str, str]]]]:
    """computation_pieces' text of each computation, with what the streamer gathers (calls), by
    the compiled writer or by the Python branch alone."""
    with pytest.MonkeyPatch.context() as mp:
        if not compiled:
            mp.setattr(model, "_json", None)
        mp.setattr(model, "_BATCH", 3)  # batch boundaries crossed
        text = model.InstructionText(ShapeFacts())
        for c in computations:  # each opcode's and shape's fragments spelled (else Python's)
            for i in c.instructions[::2]:
                text._opcodes.get(i.opcode) or text._opcode(i.opcode)
                text._shapes.get(id(i.shape)) or text._shape(i.shape)
        out = []
        for c in computations:
            calls: list[tuple[str, str]] = []
            text.calls = calls
            out.append(("".join(model.computation_pieces(c, text, "k", False)), calls))
        return out


def _assert_same(fresh: Callable[[], Sequence[Computation]]) -> None:
    """The compiled writer's text and gathered calls are the Python branch's, and the spans it
    kept in each tail are the Python splitter's. `fresh` builds the computations anew for each
    writer (each keeps the spans it asked for)."""
    assert COMPILED is not None
    mine = fresh()
    got = _written(mine, compiled=True)
    want = _written(fresh(), compiled=False)
    for c, written, reference in zip(mine, got, want, strict=True):
        assert written == reference, c.name
        for instruction in c.instructions:
            lazy = instruction.attributes
            if type(lazy) is LazyAttributes and lazy._spans is not None:
                saved, scan._accel = scan._accel, None
                try:
                    assert lazy._spans == scan.attribute_spans(lazy._text), lazy._text
                finally:
                    scan._accel = saved


_name = st.from_regex(r"-?[A-Za-z_.$][A-Za-z0-9_.$+]{0,6}", fullmatch=True)
_escaped = st.text(
    alphabet=st.sampled_from(list('aZ ,={}()[]:%\t\x01\x1fé\u2028🙂"\\')), max_size=8
)
_hlo_string = _escaped.map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')
_json_value = st.recursive(
    _hlo_string | st.sampled_from(["0", "-1", "true", "null", "1.5e3"]),
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda x: "[" + ",".join(x) + "]")
        | st.lists(st.tuples(_hlo_string, inner), max_size=3).map(
            lambda x: "{" + ",".join(f"{k}:{v}" for k, v in x) + "}"
        )
    ),
    max_leaves=6,
)
_attr_value = (
    _name
    | _name.map(lambda n: "%" + n)
    | _hlo_string
    | _json_value
    | st.lists(_name.map(lambda n: "%" + n), max_size=3).map(lambda x: "{" + ", ".join(x) + "}")
    | st.sampled_from(["{1,0}", "{}", "[1,2]", "{0:T(8,128)}", "{{0,1},{2,3}}", "f32[2]{0}"])
)
_other_key = st.sampled_from(["kind", "metadata", "backend_config", "x-y", "%k", "a.b$1", "-z"])
_called_key = st.sampled_from(CALLED_COMPUTATION_KEYS)
_item = st.one_of(
    st.tuples(_other_key, _attr_value),
    st.tuples(_other_key, _json_value),
    st.tuples(_called_key, _name | _name.map(lambda n: "%" + n)),  # written by the compiled
    st.tuples(_called_key, _attr_value),  # `{%a, %b}` and odd forms: left to Python
)
_tail = st.lists(st.tuples(_blank, _blank, _blank, _blank, _item), max_size=4).map(
    lambda items: "".join(f"{a},{b}{k}{c}={d}{v}" for a, b, c, d, (k, v) in items)
)


@st.composite
def _dump(draw: st.DrawFn) -> str:
    """A module of a few instructions: names, operand refs (`%x#1`), roots, parameters and
    constants, generated attribute tails (nested, escaped, non-ASCII, repeated keys)."""
    lines = ["HloModule m", "", "ENTRY %e {"]
    names: list[str] = []
    for n in range(draw(st.integers(1, 6))):
        name = f"{draw(_name)}.{n}"
        kind = draw(st.sampled_from(["op", "op", "op", "parameter", "constant"]))
        if kind == "parameter":
            lines.append(f"  %{name} = f32[2]{{0}} parameter({n})")
        elif kind == "constant":
            lines.append(f"  %{name} = f32[] constant({draw(st.integers(-9, 99))})")
        else:
            refs = [
                "%" + draw(st.sampled_from(names)) + draw(st.sampled_from(["", "#0", "#12"]))
                for _ in range(draw(st.integers(0, 3)) if names else 0)
            ]
            shape = draw(st.sampled_from(["f32[2]{0}", "(f32[2]{0}, s32[])", "bf16[4,8]{0,1}"]))
            opcode = draw(st.sampled_from(["add", "fusion", "call", "custom-call", "while"]))
            lines.append(f"  %{name} = {shape} {opcode}({', '.join(refs)}){draw(_tail)}")
        names.append(name)
    lines[-1] = "  ROOT" + lines[-1][1:]
    lines.append("}")
    return "\n".join(lines) + "\n"


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_dump())
def test_instructions_of_generated_dumps(text: str) -> None:
    """Law: on parsed dumps the compiled instructions are the Python branch's, and both the
    generic encoder's (`instruction_json`)."""
    try:
        parse_modules(text, verify=False)
    except HloLayoutError:
        assume(False)

    def fresh() -> Sequence[Computation]:
        return [c for m in parse_modules(text, verify=False) for c in m.computations]

    _assert_same(fresh)
    facts = ShapeFacts()
    for c, (written, _) in zip(fresh(), _written(fresh(), compiled=True), strict=True):
        generic = model.computation_object(c, facts, "k", False)
        assert written == dumps_indented(generic, model.COMPUTATION_LEVEL)


_any_text = st.text(max_size=12) | st.text(alphabet=st.sampled_from(list('"\\\n\t\x00\x7f')))
_index = st.none() | st.integers(-(2**70), 2**70)


@st.composite
def _instructions(draw: st.DrawFn) -> list[tuple]:
    """Instruction fields built directly: any name, operand, literal text and numbers."""
    out = []
    for _ in range(draw(st.integers(1, 5))):
        tail = draw(_tail | _any_text.map(lambda t: ", k=" + t))
        out.append(
            (
                draw(_any_text),
                draw(st.sampled_from(["add", "fusion", "call", "op\u00e9"])),
                draw(st.sampled_from(["f32[2]{0}", "(f32[], s32[3]{0})", "token[]"])),
                [(draw(_any_text), draw(_index)) for _ in range(draw(st.integers(0, 3)))],
                tail if tail.strip() else "",
                draw(st.booleans()),
                draw(st.none() | _any_text),
                draw(st.none() | st.integers(0, 2**80)),
                draw(st.booleans()),
            )
        )
    return out


def _instruction(fields: tuple) -> Instruction:
    name, opcode, shape, operands, tail, root, literal, number, inferred = fields
    attributes = LazyAttributes(tail, 0, scan.TailSplitter(Source(tail))) if tail else ()
    return Instruction(
        name,
        opcode,
        parse_shape(shape),
        tuple(Operand(n, i) for n, i in operands),
        attributes,
        root,
        literal,
        number,
        None,
        inferred,
    )


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_instructions())
def test_instructions_of_arbitrary_fields(fields: list[tuple]) -> None:
    """Law: names, operand references and literals of any text (escapes, control characters,
    non-ASCII), operand indices and parameter numbers of any size: the compiled writer's text
    is the Python branch's (which must read every tail: one it cannot split is no case)."""
    for f in fields:
        if f[4]:
            try:
                scan.TailSplitter(Source(f[4]))(f[4], 0, scan.attribute_spans(f[4]))
            except HloLayoutError:
                assume(False)
    _assert_same(lambda: [Computation("c", tuple(_instruction(f) for f in fields))])


def _fields(
    name: str = "x", operands: Sequence = (), tail: str = "", literal: str | None = None
) -> tuple:
    return (name, "add", "f32[2]{0}", list(operands), tail, True, literal, 7, True)


_HOSTILE = {
    "huge-name-and-escapes": _fields("n" * 1_000_000, tail=", k=" + '"\\\\"' * 100_000),
    "many-operands": _fields(operands=[(f"o{k}", k % 3 or None) for k in range(100_000)]),
    "control-and-deep": _fields(
        '\x00\x1f"\\\n', [("\x01", None)], ", b={" * 100_000 + "}" * 100_000, '\x02"é' * 5000
    ),
    "many-items": _fields(tail="".join(f", k{k}={{{k}}}" for k in range(10_000))),
    "long-callee": _fields(tail=", calls=%" + "a" * 200_000),
    "long-literal": _fields(literal='\x02"\\a' * 100_000),
    "deep-list": _fields(tail=", backend_config=" + "[" * 10_000 + "]" * 10_000),
}


@needs_compiled
@pytest.mark.parametrize("fields", list(_HOSTILE.values()), ids=list(_HOSTILE))
def test_instructions_of_hostile_fields(fields: tuple) -> None:
    """Huge names, 10^5 operands, control characters, deep nesting, past MAX_ITEMS: the same
    text as the Python branch, never a crash."""
    _assert_same(lambda: [Computation("c", (_instruction(fields),))])


@needs_compiled
def test_instructions_of_the_corpus() -> None:
    """The same on every corpus computation (one writer per dump, as in `inspect`)."""
    for path in hlo_files():
        _assert_same(lambda p=path: [c for m in parse_file_modules(p) for c in m.computations])


@needs_compiled
def test_instructions_rejects_bad_arguments() -> None:
    """Wrong argument types raise; they never crash."""
    assert COMPILED is not None
    fragments = model._FRAGMENTS
    good = (
        (),
        0,
        0,
        {},
        {},
        LazyAttributes,
        scan.attribute_spans,
        CALLED_COMPUTATION_KEYS,
        fragments,
        None,
        "",
        "",
    )
    assert COMPILED.instructions(*good) == ("", 0)
    bad_args = [(0, 5), (3, []), (6, None), (8, ("x",)), (8, (1,) * len(fragments)), (9, ())]
    bad_args.append((11, "é"))
    for k, bad in bad_args:
        args = list(good)
        args[k] = bad
        with pytest.raises((TypeError, ValueError)):
            COMPILED.instructions(*args)
    # a stranger's tuple in the sequence, a shape missing from the memo: left to Python
    odd = list(good)
    odd[0] = (("a",), 1)
    assert COMPILED.instructions(*odd[:1], 0, 2, *odd[3:]) == ("", 0)
    # a prefix of any text; the suffix only once the batch is done
    odd[-2:] = ["ä{", "}"]
    assert COMPILED.instructions(*odd[:1], 0, 2, *odd[3:]) == ("ä{", 0)
    assert COMPILED.instructions(*odd[:1], 2, 2, *odd[3:]) == ("ä{}", 2)


@needs_compiled
def test_the_compiled_writer_takes_common_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a fallback in disguise: once an opcode's and a shape's fragments are spelled, the
    compiled writer takes the instructions of a corpus dump itself (the Python branch gets
    those the grammar split, non-ASCII text, repeated keys)."""
    path = next(p for p in hlo_files() if "transformer.after_optimizations" in p.name)
    computations = [c for m in parse_file_modules(path) for c in m.computations]
    text = model.InstructionText(ShapeFacts())
    for c in computations:
        "".join(model.computation_pieces(c, text, "k", False))  # spells every fragment
    left: list[Instruction] = []
    python_add = model.InstructionText.add
    monkeypatch.setattr(
        model.InstructionText,
        "add",
        lambda self, i, put: (left.append(i), python_add(self, i, put)),
    )
    for c in computations:
        "".join(model.computation_pieces(c, text, "k", False))
    total = sum(len(c.instructions) for c in computations)
    assert total > 1000 and len(left) < total // 100, (len(left), total)
