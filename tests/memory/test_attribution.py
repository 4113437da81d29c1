"""Which line of the program put each buffer live at the peak there (memory/metadata.py, NOTE:
[attribution]): on training steps made by jax every byte is attributed to a source line or to
an argument of the program, and the rule is the one documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.memory import Grouping, analyze_memory
from hlo_layout.memory.attribution import ARGUMENTS
from hlo_layout.reader import load
from hlo_layout.syntax import parse
from tests.memory.helpers import CORPUS, DATA

TRAIN_STEPS = [
    CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt",
    CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt",
    DATA / "memory" / "cpu-gen3" / "module_0000.jit_cnn_bn_train.cpu_after_optimizations.txt",
    *sorted((DATA / "memory" / "jax012-cpu").glob("*train*.cpu_after_optimizations.txt")),
]


@pytest.mark.parametrize("path", TRAIN_STEPS, ids=lambda p: p.name)
def test_the_peak_of_a_train_step_is_attributed(path: Path) -> None:
    (d,) = load(path).dumps
    ma = analyze_memory(d.module, d.backend, d.assignment)
    rows = ma.live_at_peak()
    total = sum(r.bytes for r in rows)
    attributed = sum(r.bytes for r in rows if r.source is not None or r.argument)
    assert attributed >= 0.9 * total, (attributed, total)
    groups = ma.grouped(rows, Grouping("source"))
    assert sum(g.bytes for g in groups) == total
    assert all(g.key is not None for g in groups if g.bytes > 0.1 * total)


TEXT = """HloModule m, is_scheduled=true

%fused (p: f32[8], q: f32[8]) -> (f32[8], f32[8]) {
  %p = f32[8]{0} parameter(0)
  %q = f32[8]{0} parameter(1)
  %a = f32[8]{0} add(%p, %q), metadata={op_name="jit(f)/add" source_file="f.py" source_line=3}
  %m = f32[8]{0} multiply(%p, %q), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=4}
  %n = f32[8]{0} negate(%m)
  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%a, %n)
}

ENTRY %e (x: f32[8], y: f32[8]) -> ((f32[8], f32[8]), f32[8]) {
  %x = f32[8]{0} parameter(0), metadata={op_name="x"}
  %y = f32[8]{0} parameter(1)
  %c = f32[8]{0} copy(%y)
  %f = (f32[8]{0}, f32[8]{0}) fusion(%x, %c), kind=kLoop, calls=%fused
  ROOT %r = ((f32[8]{0}, f32[8]{0}), f32[8]{0}) tuple(%f, %c)
}
"""


def test_fusion_elements_take_the_root_most_metadata_of_their_element() -> None:
    from hlo_layout.memory.metadata import SourceInfo

    module = parse(TEXT)
    info = SourceInfo(module)
    entry = module.entry
    assert entry is not None
    f, c, x = entry["f"], entry["c"], entry["x"]
    first, second = info.attribute(f, (0,)), info.attribute(f, (1,))
    assert (first.source, first.via) == ("f.py:3", "a")  # element 0 is %a's
    assert (second.source, second.via) == ("f.py:4", "m")  # %n has none: its operand %m's
    assert info.attribute(x).argument and info.attribute(x).op_name == "x"
    copy = info.attribute(c)  # a copy of an argument without metadata is that argument's
    assert copy.argument and copy.source is None and copy.via == "y"
    assert Grouping("source").key_of(None, None, True) == ARGUMENTS
