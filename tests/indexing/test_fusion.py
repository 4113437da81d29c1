"""Composition through computations: nested fusions, calls, multi-output roots and tuple
elements, unknown ops inside a fusion, input-to-output walks, the map-count guard."""

from __future__ import annotations

import pytest

from hlo_layout.indexing import fusion as fusion_module
from hlo_layout.indexing.fusion import (
    computation_input_to_output,
    computation_output_to_input,
    epilogue_input_to_output,
)
from hlo_layout.indexing.operand import UNKNOWN, InstructionIndexing
from hlo_layout.indexing.rules import OpContext, output_to_input
from hlo_layout.syntax import Module, parse


def _texts(indexing: InstructionIndexing) -> list[list[str]]:
    return [sorted(str(oi) for oi in slot) for slot in indexing.maps]


def _entry_root(module: Module) -> OpContext:
    entry = module.entry
    assert entry is not None and entry.root is not None
    return OpContext(entry.root, entry, module)


BODY = """
  p0 = f32[6,4] parameter(0)
  t = f32[4,6] transpose(p0), dimensions={1,0}
  s = f32[2,6] slice(t), slice={[1:3], [0:6]}
  ROOT e = f32[2,6] exponential(s)
"""


def test_nested_fusion_equals_the_flat_computation() -> None:
    flat = parse(f"HloModule m\nENTRY f {{{BODY}}}\n")
    nested = parse(
        "HloModule m\n"
        "inner {\n  q = f32[6,4] parameter(0)\n"
        "  ROOT t = f32[4,6] transpose(q), dimensions={1,0}\n}\n"
        "outer {\n  p0 = f32[6,4] parameter(0)\n"
        "  t = f32[4,6] fusion(p0), kind=kLoop, calls=inner\n"
        "  s = f32[2,6] slice(t), slice={[1:3], [0:6]}\n  ROOT e = f32[2,6] exponential(s)\n}\n"
        "ENTRY main {\n  x = f32[6,4] parameter(0)\n"
        "  ROOT f = f32[2,6] fusion(x), kind=kLoop, calls=outer\n}\n"
    )
    want = _texts(computation_output_to_input(flat, flat.entry))  # type: ignore[arg-type]
    assert _texts(output_to_input(_entry_root(nested))) == want
    assert want[0][0].startswith("(d0, d1) -> (d1, d0 + 1)")


def test_call_is_composed_like_a_fusion() -> None:
    module = parse(
        f"HloModule m\nbody {{{BODY}}}\n"
        "ENTRY main {\n  x = f32[6,4] parameter(0)\n  ROOT c = f32[2,6] call(x), to_apply=body\n}\n"
    )
    flat = parse(f"HloModule m\nENTRY f {{{BODY}}}\n")
    assert _texts(output_to_input(_entry_root(module))) == _texts(
        computation_output_to_input(flat, flat.entry)  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("use", ["gte", "shorthand"])
def test_tuple_element_of_a_multi_output_fusion_asks_for_that_output(use: str) -> None:
    """Element 1 of a nested multi-output fusion is read through output 1 (XLA asks every
    producer for output 0, which here would give the transposed map)."""
    read = (
        "  g = f32[4,6] get-tuple-element(mo), index=1\n  ROOT e = f32[4,6] exponential(g)\n"
        if use == "gte"
        else "  ROOT e = f32[4,6] exponential(mo#1)\n"
    )
    module = parse(
        "HloModule m\n"
        "multi {\n  q = f32[4,6] parameter(0)\n  t = f32[6,4] transpose(q), dimensions={1,0}\n"
        "  n = f32[4,6] negate(q)\n  ROOT r = (f32[6,4], f32[4,6]) tuple(t, n)\n}\n"
        "outer {\n  p0 = f32[4,6] parameter(0)\n"
        "  mo = (f32[6,4], f32[4,6]) fusion(p0), kind=kLoop, calls=multi\n" + read + "}\n"
        "ENTRY main {\n  x = f32[4,6] parameter(0)\n"
        "  ROOT f = f32[4,6] fusion(x), kind=kLoop, calls=outer\n}\n"
    )
    root = _entry_root(module)
    ((only,),) = [sorted(slot, key=str) for slot in output_to_input(root).maps]
    direct = parse(
        "HloModule m\nENTRY f {\n  q = f32[4,6] parameter(0)\n  ROOT n = f32[4,6] negate(q)\n}\n"
    )
    ((want,),) = output_to_input(_entry_root(direct)).maps
    assert only == want


def test_multi_output_root_per_output() -> None:
    module = parse(
        "HloModule m\n"
        "f {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n"
        "  r = f32[8] reverse(a), dimensions={0}\n  ROOT t = (f32[8], f32[8]) tuple(r, b)\n}\n"
        "ENTRY main {\n  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n"
        "  ROOT o = (f32[8], f32[8]) fusion(x, y), kind=kLoop, calls=f\n}\n"
    )
    root = _entry_root(module)
    out0, out1 = output_to_input(root, 0), output_to_input(root, 1)
    assert out0.maps[1] == frozenset() and out1.maps[0] == frozenset()
    assert _texts(out0)[0] == ["(d0) -> (-d0 + 7), domain: d0 in [0, 7]"]


def test_unknown_op_inside_a_fusion_only_affects_what_it_reads() -> None:
    module = parse(
        "HloModule m\n"
        "f {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n"
        "  s = f32[8] sort(b), dimensions={0}\n  ROOT r = f32[8] add(a, s)\n}\n"
        "ENTRY main {\n  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n"
        "  ROOT o = f32[8] fusion(x, y), kind=kLoop, calls=f\n}\n",
        verify=False,
    )
    indexing = output_to_input(_entry_root(module))
    assert UNKNOWN not in indexing.maps[0]
    assert indexing.maps[1] == frozenset({UNKNOWN})
    assert any("sort" in n for n in indexing.notes)


def test_input_to_output_walks_every_path() -> None:
    module = parse(
        "HloModule m\nENTRY f {\n  p0 = f32[4,4] parameter(0)\n"
        "  t = f32[4,4] transpose(p0), dimensions={1,0}\n  ROOT a = f32[4,4] add(p0, t)\n}\n"
    )
    comp = module.entry
    assert comp is not None
    ((i2o),) = _texts(computation_input_to_output(module, comp, 0))
    ((o2i),) = _texts(computation_output_to_input(module, comp))
    # p0 + transpose(p0): a self-inverse pair of maps in both directions.
    assert i2o == o2i and len(i2o) == 2
    chain = epilogue_input_to_output(module, comp, "t", "a")
    assert str(chain) == "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]"


def test_too_many_maps_become_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fusion_module, "MAX_MAPS_PER_OPERAND", 1)
    module = parse(
        "HloModule m\nENTRY f {\n  p0 = f32[4,4] parameter(0)\n"
        "  t = f32[4,4] transpose(p0), dimensions={1,0}\n  ROOT a = f32[4,4] add(p0, t)\n}\n"
    )
    indexing = computation_output_to_input(module, module.entry)  # type: ignore[arg-type]
    assert indexing.maps[0] == frozenset({UNKNOWN})
    assert any("more than 1 distinct maps" in n for n in indexing.notes)


def test_a_computation_that_calls_itself_is_unknown() -> None:
    module = parse(
        "HloModule m\nloop {\n  p = f32[4] parameter(0)\n"
        "  ROOT c = f32[4] call(p), to_apply=loop\n}\n"
        "ENTRY main {\n  x = f32[4] parameter(0)\n  ROOT c = f32[4] call(x), to_apply=loop\n}\n",
        verify=False,
    )
    indexing = output_to_input(_entry_root(module))
    assert indexing.maps == (frozenset({UNKNOWN}),)
