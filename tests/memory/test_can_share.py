"""CanShareOperandBufferWithUser's general rules (assigner.BufferAssigner.can_share), seen
through the temp allocation they change."""

from __future__ import annotations

import dataclasses

from hlo_layout.memory import analyze_memory
from hlo_layout.memory.backend import CPU, TPU
from hlo_layout.syntax import parse_modules

OUTPUT_FUSION = """
HloModule m, is_scheduled=true

%fused (p0: f32[1024], p1: f32[1024]) -> f32[1024] {
  %p0 = f32[1024]{0} parameter(0)
  %p1 = f32[1024]{0} parameter(1)
  %a = f32[1024]{0} add(%p0, %p1)
  ROOT %c = f32[1024]{0} negate(%a)
}

ENTRY %e (x: f32[1024]) -> f32[2] {
  %x = f32[1024]{0} parameter(0)
  %t = f32[1024]{0} exponential(%x)
  %f = f32[1024]{0} fusion(%t, %x), kind=kOutput, calls=%fused
  ROOT %r = f32[2]{0} slice(%f), slice={[0:2]}
}
"""


def _temps(text: str, backend: object) -> int:
    (module,) = parse_modules(text, "m.hlo")
    return analyze_memory(module, backend).spaces[0].temp_allocation_bytes  # type: ignore[arg-type]


def test_an_output_fusion_elementwise_on_its_operand_takes_its_buffer() -> None:
    """Not a loop fusion, root not an add: XLA's last rule, IsElementwiseOnOperand, lets %f
    reuse %t's buffer (one 4 KiB temp); libtpu's hook does not (TPU keeps two)."""
    assert _temps(OUTPUT_FUSION, CPU) == 4096
    assert _temps(OUTPUT_FUSION, dataclasses.replace(CPU, fusion_elementwise_shares=False)) == 8192
    assert _temps(OUTPUT_FUSION, TPU) == 16 * 1024 + 4096  # two chunks, at 16 KiB alignment


def test_a_fusion_reading_the_operand_otherwise_keeps_its_own_buffer() -> None:
    text = OUTPUT_FUSION.replace(
        "%a = f32[1024]{0} add(%p0, %p1)", "%a = f32[1024]{0} reverse(%p0), dimensions={0}"
    )
    assert _temps(text, CPU) == 8192
