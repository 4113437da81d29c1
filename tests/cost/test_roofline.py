"""The chips' figures are the vendors' published ones, and the roofline bound is
max(flops / peak, bytes / bandwidth) with each instruction's type's peak."""

from __future__ import annotations

import pytest

from hlo_layout.cost.model import module_cost
from hlo_layout.cost.roofline import CHIPS, chip_named, default_chip, roofline, type_class
from hlo_layout.cost.summary import summarize
from hlo_layout.syntax import parse
from tests.support import CORPUS

T, P = 1e12, 1e15
#: chip → (published figures, bandwidth in B/s). Google's Cloud TPU docs give dense figures;
#: NVIDIA's datasheets give Tensor Core figures "with sparsity" (dense is half: halved here).
PUBLISHED = {
    "tpu-v4": ({"bf16": 275 * T, "int8": 275 * T}, 1200e9),
    "tpu-v5e": ({"bf16": 197 * T, "int8": 393 * T}, 819e9),
    "tpu-v5p": ({"bf16": 459 * T, "int8": 918 * T}, 2765e9),
    "tpu-v6e": ({"bf16": 918 * T, "int8": 1836 * T}, 1640e9),
    "a100": ({"bf16": 624 * T / 2, "int8": 1248 * T / 2, "f32": 19.5 * T}, 2039e9),
    "h100": ({"bf16": 1979 * T / 2, "fp8": 3958 * T / 2, "int8": 3958 * T / 2, "f32": 67 * T},
             3.35e12),
    "h200": ({"bf16": 1979 * T / 2, "fp8": 3958 * T / 2, "int8": 3958 * T / 2, "f32": 67 * T},
             4.8e12),
    "b200": ({"bf16": 4.5 * P / 2, "fp8": 9 * P / 2, "int8": 9 * P / 2, "f32": 75 * T}, 7.7e12),
}  # fmt: skip


@pytest.mark.parametrize("chip", CHIPS, ids=[c.name for c in CHIPS])
def test_chip_figures_are_the_published_ones(chip) -> None:  # type: ignore[no-untyped-def]
    peaks, bandwidth = PUBLISHED[chip.name]
    assert chip.bandwidth == bandwidth
    assert {k: v for k, v in chip.peaks.items() if v is not None} == pytest.approx(peaks)
    assert chip.source
    assert chip_named(chip.name.upper().replace("-", "_")) is chip


def test_every_chip_of_the_issue_is_there() -> None:
    assert sorted(PUBLISHED) == sorted(c.name for c in CHIPS)


def test_unpublished_types_use_bf16_and_say_so() -> None:
    r = roofline("tpu-v5e")
    assert r is not None and r.peak("f32") == r.peak("bf16") == 197 * T
    assert "f32" in r.substituted and "fp8" in r.substituted and "int8" not in r.substituted
    assert roofline("h100").peak("f8e4m3fn") == 3958 * T / 2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("element_type", "cls"),
    [("bf16", "bf16"), ("f16", "bf16"), ("f8e5m2", "fp8"), ("s8", "int8"), ("u4", "int8"),
     ("f32", "f32"), ("f64", "f32"), ("s32", "f32"), (None, "f32")],
)  # fmt: skip
def test_type_classes(element_type: str | None, cls: str) -> None:
    assert type_class(element_type) == cls


def test_bound_is_the_slower_roof() -> None:
    r = roofline(None, peak_flops=100.0, bandwidth=10.0)
    assert r is not None and r.chip == "custom"
    assert r.bound(1000, 50, "f32") == (10.0, "compute")
    assert r.bound(100, 50, "f32") == (5.0, "memory")
    assert roofline(None) is None
    with pytest.raises(ValueError):
        roofline("h100", bandwidth=-1.0)


def test_overrides_replace_the_chips_figures() -> None:
    r = roofline("h100", peak_flops=1e12)
    assert r is not None and r.bandwidth == 3.35e12 and set(r.peaks.values()) == {1e12}


@pytest.mark.parametrize(
    ("backend", "generation", "hint", "chip"),
    [("gpu", "", "m.sm_9.0a_gpu_after_optimizations.txt", "h100"),
     ("gpu", "", "m.sm_80_gpu_after_optimizations.txt", "a100"),
     ("gpu", "", "m.sm_100a_gpu_after_optimizations.txt", "b200"),
     ("tpu", "v6e", "", "tpu-v6e"), ("tpu", "v4", "", "tpu-v4"), ("tpu", "v4/v5e", "", "tpu-v5e"),
     ("cpu", "", "m.cpu_after_optimizations.txt", None)],
)  # fmt: skip
def test_default_chip(backend: str, generation: str, hint: str, chip: str | None) -> None:
    assert default_chip(backend, generation, hint)[0] == chip


MATMULS = """HloModule m
fused {
  a = bf16[256,512]{1,0} parameter(0)
  b = bf16[512,1024]{1,0} parameter(1)
  ROOT d = f32[256,1024]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  a = bf16[256,512]{1,0} parameter(0)
  b = bf16[512,1024]{1,0} parameter(1)
  f = f32[256,1024]{1,0} fusion(a, b), kind=kOutput, calls=fused
  i = s8[4096,4096]{1,0} parameter(2)
  ROOT n = s8[4096,4096]{1,0} negate(i)
}"""


def test_rows_use_their_types_peak_and_shares_add_up() -> None:
    cost = module_cost(parse(MATMULS))
    summary = summarize(cost, roofline("h100"), top=None)
    rows = {r.cost.name: r for r in summary.rows}
    fusion, negate = rows["f"], rows["n"]
    assert fusion.cost.element_type == "bf16"  # the dot's operand, not the fusion's f32 output
    flops = 2 * 256 * 1024 * 512
    nbytes = 2 * (256 * 512 + 512 * 1024) + 4 * 256 * 1024
    expected = max(flops / (1979 * T / 2), nbytes / 3.35e12)
    assert fusion.bound_seconds == pytest.approx(expected)
    assert fusion.arithmetic_intensity == pytest.approx(flops / nbytes)
    assert negate.bound == "memory"
    assert sum(r.share or 0 for r in summary.rows) == pytest.approx(1.0)
    assert summary.bound_seconds == pytest.approx(sum(r.bound_seconds or 0 for r in summary.rows))


def test_tpu_dump_ranks_fusions_on_its_chip() -> None:
    path = CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"
    cost = module_cost(parse(path.read_text()), str(path))
    summary = summarize(cost, roofline("tpu-v5e"), top=5)
    assert len(summary.rows) == 5 and summary.hidden > 0
    assert all(r.op_name for r in summary.rows)
    assert [r.bound_seconds for r in summary.rows] == sorted(
        (r.bound_seconds for r in summary.rows), reverse=True
    )
