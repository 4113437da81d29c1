"""A roofline per chip: the public peak figures of a few accelerators, and the time lower bound
`max(flops / peak, bytes / bandwidth)` of each instruction.

Figures are the vendors' published ones, dense (no structured sparsity), per chip, with the
source beside each row. NVIDIA publishes Tensor Core figures "with sparsity" and notes that dense
is half of that: we keep the published number and halve it in code (`_dense`), so each row can be
checked against its datasheet. Where a vendor publishes no figure for a type (f32 and fp8 on TPUs,
fp8 on A100), the bf16 peak stands in and a note says so: XLA runs those matmuls on
the same units (TPU f32 dots are bf16 passes at DEFAULT precision; A100 has no fp8).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hlo_layout.memory.backend import BackendChoice
    from hlo_layout.syntax.tree import Module

#: Roofline element-type classes.
TYPE_CLASSES = ("bf16", "fp8", "int8", "f32")


def _dense(published_with_sparsity: float) -> float:
    """NVIDIA's datasheets: "Shown with sparsity. Specifications 1/2 lower without sparsity"."""
    return published_with_sparsity / 2


@dataclass(frozen=True, slots=True)
class Chip:
    """One accelerator: peak FLOP/s per element-type class (None: not published) and HBM
    bandwidth in bytes per second."""

    name: str
    peaks: Mapping[str, float | None]
    bandwidth: float
    source: str
    aliases: tuple[str, ...] = field(default=())

    def peak(self, type_class: str) -> tuple[float, str | None]:
        """The peak for a type class, and a note when the bf16 peak stands in for it."""
        found = self.peaks.get(type_class)
        if found is not None:
            return found, None
        bf16 = self.peaks["bf16"]
        assert bf16 is not None
        return bf16, f"{self.name} publishes no {type_class} peak: the bf16 peak is used"


T = 1e12
P = 1e15
GB = 1e9
TB = 1e12

CHIPS: tuple[Chip, ...] = (
    # Cloud TPU docs, "TPU v4" (cloud.google.com/tpu/docs/v4): peak compute per chip 275 TFLOPs
    # bf16 and 275 TOPs int8; HBM2 32 GiB at 1200 GBps.
    Chip("tpu-v4", {"bf16": 275 * T, "int8": 275 * T, "fp8": None, "f32": None}, 1200 * GB,
         "Cloud TPU docs, TPU v4", ("v4",)),
    # Cloud TPU docs, "TPU v5e" and the v6e page's comparison table
    # (cloud.google.com/tpu/docs/v5e, /v6e): 197 TFLOPs bf16, 393 TOPs int8, 819 GBps HBM2.
    Chip("tpu-v5e", {"bf16": 197 * T, "int8": 393 * T, "fp8": None, "f32": None}, 819 * GB,
         "Cloud TPU docs, TPU v5e", ("v5e", "v5litepod", "v5lite")),
    # Cloud TPU docs, "TPU v5p" (cloud.google.com/tpu/docs/v5p): 459 TFLOPs bf16, HBM2e 95 GB
    # at 2765 GBps; 918 TOPs int8 from Google Cloud's v5p announcement (December 2023).
    Chip("tpu-v5p", {"bf16": 459 * T, "int8": 918 * T, "fp8": None, "f32": None}, 2765 * GB,
         "Cloud TPU docs, TPU v5p", ("v5p",)),
    # Cloud TPU docs, "TPU v6e" (cloud.google.com/tpu/docs/v6e, Trillium): 918 TFLOPs bf16,
    # 1836 TOPs int8, HBM 32 GB at 1640 GBps.
    Chip("tpu-v6e", {"bf16": 918 * T, "int8": 1836 * T, "fp8": None, "f32": None}, 1640 * GB,
         "Cloud TPU docs, TPU v6e", ("v6e", "trillium")),
    # NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: FP32 19.5 TFLOPS; BF16 Tensor Core
    # 624 TFLOPS*, INT8 1248 TOPS* (*with sparsity); no FP8; HBM2e 2,039 GB/s.
    Chip("a100", {"bf16": _dense(624 * T), "int8": _dense(1248 * T), "fp8": None,
                  "f32": 19.5 * T}, 2039 * GB,
         "NVIDIA A100 datasheet (80GB SXM)", ("a100-sxm", "a100-80gb", "a100-sxm-80gb")),
    # NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: FP32 67 TFLOPS; BF16 Tensor Core
    # 1,979 TFLOPS*, FP8 3,958 TFLOPS*, INT8 3,958 TOPS* (*with sparsity); HBM3 3.35 TB/s.
    Chip("h100", {"bf16": _dense(1979 * T), "fp8": _dense(3958 * T), "int8": _dense(3958 * T),
                  "f32": 67 * T}, 3.35 * TB,
         "NVIDIA H100 datasheet (SXM)", ("h100-sxm",)),
    # NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: the H100 SXM's compute (FP32 67 TFLOPS,
    # BF16 1,979*, FP8 3,958*, INT8 3,958* TOPS, *with sparsity); HBM3e 141 GB at 4.8 TB/s.
    Chip("h200", {"bf16": _dense(1979 * T), "fp8": _dense(3958 * T), "int8": _dense(3958 * T),
                  "f32": 67 * T}, 4.8 * TB,
         "NVIDIA H200 datasheet (SXM)", ("h200-sxm",)),
    # NVIDIA Blackwell datasheet, HGX B200 per GPU: FP32 75 TFLOPS; FP16/BF16 Tensor Core
    # 4.5 PFLOPS*, FP8 9 PFLOPS*, INT8 9 POPS* (*with sparsity); HBM3e 180 GB at 7.7 TB/s.
    Chip("b200", {"bf16": _dense(4.5 * P), "fp8": _dense(9 * P), "int8": _dense(9 * P),
                  "f32": 75 * T}, 7.7 * TB,
         "NVIDIA Blackwell datasheet (HGX B200)", ("b200-sxm", "hgx-b200")),
)  # fmt: skip

_BY_NAME = {name: c for c in CHIPS for name in (c.name, *c.aliases)}


def chip_named(name: str) -> Chip:
    """The chip called `name` (case and `_`/space insensitive); KeyError lists the names."""
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    found = _BY_NAME.get(key)
    if found is None:
        raise KeyError(f"unknown chip '{name}'; known: {', '.join(c.name for c in CHIPS)}")
    return found


def type_class(element_type: str | None) -> str:
    """The roofline class of an element type: bf16 (and f16), fp8 (`f8*`), int8 (8- and 4-bit
    integers), f32 (everything else: f32, f64, s32, pred; the general-purpose units' figure)."""
    if element_type in ("bf16", "f16"):
        return "bf16"
    if element_type is not None and element_type.startswith(("f8", "f4")):
        return "fp8"
    if element_type in ("s8", "u8", "s4", "u4", "s2", "u2"):
        return "int8"
    return "f32"


@dataclass(frozen=True, slots=True)
class Roofline:
    """What a bound is computed against: a chip (or `custom` figures), with overrides."""

    chip: str
    bandwidth: float
    peaks: Mapping[str, float]
    #: Type class → why its peak is another's (the chip publishes none for it).
    substituted: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def peak(self, element_type: str | None) -> float:
        return self.peaks[type_class(element_type)]

    def bound(self, flops: float, nbytes: float, element_type: str | None) -> tuple[float, str]:
        """`max(flops / peak, bytes / bandwidth)` and which side binds (`compute`/`memory`)."""
        compute = flops / self.peak(element_type) if flops > 0 else 0.0
        memory = nbytes / self.bandwidth if nbytes > 0 else 0.0
        return (compute, "compute") if compute > memory else (memory, "memory")

    @property
    def peak_flops_per_second(self) -> float:
        """The headline peak: bf16."""
        return self.peaks["bf16"]


def roofline(
    chip: str | None, *, peak_flops: float | None = None, bandwidth: float | None = None
) -> Roofline | None:
    """The roofline of `chip` with optional overrides (`peak_flops` replaces every type's peak),
    or of the overrides alone (chip `custom`), or None when neither is given."""
    notes: list[str] = []
    substituted: dict[str, str] = {}
    if chip is not None:
        c = chip_named(chip)
        peaks: dict[str, float] = {}
        for cls in TYPE_CLASSES:
            peaks[cls], note = c.peak(cls)
            if note is not None:
                substituted[cls] = note
        bw = c.bandwidth
        name = c.name
    elif peak_flops is not None and bandwidth is not None:
        peaks, bw, name = dict.fromkeys(TYPE_CLASSES, peak_flops), bandwidth, "custom"
    else:
        return None
    if peak_flops is not None:
        peaks = dict.fromkeys(TYPE_CLASSES, peak_flops)
        substituted = {}
        notes = [f"--peak-flops {peak_flops:g} for every element type"]
    if bandwidth is not None:
        bw = bandwidth
    if not all(math.isfinite(v) and v > 0 for v in (*peaks.values(), bw)):
        raise ValueError("peak FLOP/s and bandwidth must be positive numbers")
    return Roofline(name, bw, peaks, substituted, tuple(notes))


#: A CUDA compute capability in a dump's name: `sm_9.0a` (major.minor) or `sm_90`.
_SM = re.compile(r"\bsm_(\d+)(?:\.(\d+))?")


def default_chip(backend: str, generation: str, hint: str = "") -> tuple[str | None, str]:
    """The chip a dump was most likely compiled for, and why: a GPU's `sm_NN` in the file name
    (80/86 → a100, 90 → h100 — H200 shares sm_90, 100 → b200), a TPU generation; None on CPU
    or when nothing says which."""
    if backend == "gpu":
        found = _SM.search(hint)
        if found is not None:
            digits = found.group(1)
            major = int(digits) if found.group(2) is not None else int(digits) // 10
            sm = found.group(0)
            if major == 8:
                return "a100", f"{sm} (Ampere)"
            if major == 9:
                return "h100", f"{sm} (Hopper; an H200 has the same: --chip h200)"
            if major == 10:
                return "b200", f"{sm} (Blackwell)"
        return "h100", "GPU dump without an sm_ version: H100 assumed (--chip for another)"
    if backend.startswith("tpu"):
        if generation in ("v5p", "v6e", "v5e", "v4"):
            return f"tpu-{generation}", f"TPU {generation}"
        return "tpu-v5e", "TPU v4/v5e (no target arguments beside the dump): v5e assumed"
    return None, "no chip for a CPU dump: --chip or --peak-flops with --bandwidth for a roofline"


def chip_for(
    module: Module,
    file: str | None,
    backend: BackendChoice | None = None,
    target_arguments: str | None = None,
) -> tuple[str | None, str]:
    """The chip `module` was compiled for, and why: `default_chip` of its backend (`backend`,
    as the reader chose it, else detected from the module and file name) and generation (a
    TPU's from the text of the `*.target_arguments.txt` beside it, which tells v4 from v5e)."""
    from hlo_layout.memory.backend import detect_backend, tpu_chip_of

    choice = backend if backend is not None else detect_backend(module, file)
    be = choice.backend
    generation = be.generation
    if be.name == "tpu":
        named = tpu_chip_of(target_arguments) if target_arguments else None
        if named is not None:
            generation = named
        elif "TPU v4 " in choice.reason:
            generation = "v4"
    found, why = default_chip(be.name, generation, file or "")
    if found is not None and choice.assumed:
        why += f" (the backend is assumed: {choice.reason})"
    return found, why


__all__ = [
    "CHIPS",
    "TYPE_CLASSES",
    "Chip",
    "Roofline",
    "chip_for",
    "chip_named",
    "default_chip",
    "roofline",
    "type_class",
]
