"""In-place input/output pairs (alias.output_operand_pairs) follow XLA's
AliasInfo::GetInPlaceInputOutputPairs, fusion rules included (alias_info.cc)."""

from __future__ import annotations

from hlo_layout.memory.alias import output_operand_pairs
from hlo_layout.syntax import parse_modules

TEXT = """
HloModule m

%inner (p0: f32[8], p1: f32[2], i: s32[]) -> f32[8] {
  %p0 = f32[8] parameter(0)
  %p1 = f32[2] parameter(1)
  %i = s32[] parameter(2)
  ROOT %dus = f32[8] dynamic-update-slice(%p0, %p1, %i)
}

%nested (a: f32[8], b: f32[2], c: s32[]) -> f32[8] {
  %a = f32[8] parameter(0)
  %b = f32[2] parameter(1)
  %c = s32[] parameter(2)
  ROOT %f = f32[8] fusion(%a, %b, %c), kind=kCustom, calls=%inner
}

%peephole (a: f32[8], b: f32[2], c: s32[]) -> f32[8] {
  %a = f32[8] parameter(0)
  %b = f32[2] parameter(1)
  %c = s32[] parameter(2)
  %f = f32[8] fusion(%a, %b, %c), kind=kLoop, calls=%inner
  ROOT %dus2 = f32[8] dynamic-update-slice(%f, %b, %c)
}

%tupled (a: f32[8], b: f32[2], c: s32[], d: f32[4]) -> (f32[4], f32[8]) {
  %a = f32[8] parameter(0)
  %b = f32[2] parameter(1)
  %c = s32[] parameter(2)
  %d = f32[4] parameter(3)
  %neg = f32[4] negate(%d)
  %dus = f32[8] dynamic-update-slice(%a, %b, %c)
  ROOT %t = (f32[4], f32[8]) tuple(%neg, %dus)
}

%bitcast_root (a: f32[8], b: f32[2], c: s32[]) -> f32[2,4] {
  %a = f32[8] parameter(0)
  %b = f32[2] parameter(1)
  %c = s32[] parameter(2)
  %dus = f32[8] dynamic-update-slice(%a, %b, %c)
  ROOT %bc = f32[2,4] bitcast(%dus)
}

%bitcast_operand (a: f32[2,4], b: f32[2], c: s32[]) -> f32[8] {
  %a = f32[2,4] parameter(0)
  %b = f32[2] parameter(1)
  %c = s32[] parameter(2)
  %bc = f32[8] bitcast(%a)
  ROOT %dus = f32[8] dynamic-update-slice(%bc, %b, %c)
}

ENTRY %e (x: f32[8], y: f32[2], z: s32[], w: f32[4], v: f32[2,4]) -> f32[8] {
  %x = f32[8] parameter(0)
  %y = f32[2] parameter(1)
  %z = s32[] parameter(2)
  %w = f32[4] parameter(3)
  %v = f32[2,4] parameter(4)
  %nested = f32[8] fusion(%x, %y, %z), kind=kCustom, calls=%nested
  %peephole = f32[8] fusion(%x, %y, %z), kind=kLoop, calls=%peephole
  %tupled = (f32[4], f32[8]) fusion(%x, %y, %z, %w), kind=kLoop, calls=%tupled
  %bitcast_root = f32[2,4] fusion(%x, %y, %z), kind=kLoop, calls=%bitcast_root
  %bitcast_operand = f32[8] fusion(%v, %y, %z), kind=kLoop, calls=%bitcast_operand
  %ars = (f32[8], f32[2]) all-reduce-start(%x, %y), to_apply=%inner
  %ars_nv = f32[8] all-reduce-start(%x), to_apply=%inner, backend_config={"b":"NVSHMEM"}
  %cp = f32[8] collective-permute(%x, %x, %z, %z), source_target_pairs={{0,1}}
  %ncp = f32[8] negate(%x)
  ROOT %out = f32[8] add(%nested, %peephole)
}
"""


def _pairs() -> dict[str, list]:
    (module,) = parse_modules(TEXT, "pairs.hlo", verify=False)
    entry = module.entry
    assert entry is not None
    return {i.name: output_operand_pairs(i, module) for i in entry.instructions}


def test_fusion_rules() -> None:
    got = _pairs()
    assert got["nested"] == [((), 0, ())]  # a fusion rooted in a fusion rooted in a DUS
    assert got["peephole"] == [((), 0, ())]  # a DUS of a fusion's output: through to its input
    assert got["tupled"] == [((1,), 0, ())]  # through the root tuple, output {1}
    assert got["bitcast_root"] == []  # a bitcast at the root hides the DUS (as in XLA)
    assert got["bitcast_operand"] == [((), 0, ())]  # one bitcast on the input is skipped


def test_other_in_place_ops() -> None:
    got = _pairs()
    assert got["ars"] == [((0,), 0, ()), ((1,), 1, ())]
    assert got["ars_nv"] == []
    assert got["cp"] == [((), 1, ())]
    assert got["ncp"] == []
