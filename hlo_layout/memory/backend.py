"""Which compiler wrote a dump, and that backend's buffer-assignment settings.

Settings from ../shared/docs/memory_liveness.md §6 (verified on the corpus): the heap alignment of
the temp allocation (XLA's `color_alignment`), and the bytes of a tuple's pointer table
(ShapeUtil::ByteSizeOf with the backend's pointer size; libtpu rounds tables up).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hlo_layout.syntax.shape import ArrayShape, BufferShape, Shape, TupleShape
from hlo_layout.syntax.tree import LazyAttributes, Module

BACKENDS = ("cpu", "gpu", "tpu")


@dataclass(frozen=True, slots=True)
class Backend:
    """A backend's name and the buffer-assignment settings we mirror."""

    name: str
    alignment: int
    #: Tuple pointer table: `pointer_bytes` per element, rounded up to `table_alignment`.
    pointer_bytes: int = 8
    table_alignment: int = 1
    #: Whether temps may be packed into output allocations (XLA's allocation reuse).
    reuse_allocations: bool = True

    def tuple_table_bytes(self, shape: TupleShape) -> int:
        raw = self.pointer_bytes * len(shape.elements)
        a = self.table_alignment
        return -(-raw // a) * a if raw else 0


CPU = Backend("cpu", 64)
GPU = Backend("gpu", 256)
TPU = Backend("tpu", 16 * 1024, pointer_bytes=8, table_alignment=512, reuse_allocations=False)
_BY_NAME = {"cpu": CPU, "gpu": GPU, "tpu": TPU}

_GPU_MARKERS = re.compile(
    r"__cudnn\$|__cublas|__triton|sm_\d|\"device_type\"|kCustom.*triton|__gpu\$|cu_threshold"
)


def backend_named(name: str) -> Backend:
    """The settings of `cpu`, `gpu` or `tpu`; raises KeyError for another name."""
    return _BY_NAME[name.lower()]


def _tiled(shape: Shape) -> bool:
    if isinstance(shape, ArrayShape):
        return shape.layout is not None and bool(shape.layout.tiles)
    if isinstance(shape, TupleShape):
        return any(_tiled(e) for e in shape.elements)
    if isinstance(shape, BufferShape):
        return _tiled(shape.element)
    return False


def detect_backend(module: Module, path: str | Path | None = None) -> tuple[Backend, str]:
    """The backend that wrote `module`, and why we think so.

    File names first (`*gpu_after_optimizations*`, `*cpu_after_optimizations*`), then tiled
    layouts (only the TPU compiler prints them), then GPU-only custom calls and backend configs.
    CPU is the fallback.
    """
    name = Path(path).name if path is not None else ""
    if "gpu_after_optimizations" in name or re.search(r"\.sm_\d", name):
        return GPU, "file name"
    if "cpu_after_optimizations" in name:
        return CPU, "file name"
    if "tpu" in name.lower():
        return TPU, "file name"
    for c in module.computations:
        for i in c.instructions:
            if _tiled(i.shape):
                return TPU, "tiled layouts"
    for c in module.computations:
        for i in c.instructions:
            attrs = i.attributes
            text = attrs._text if isinstance(attrs, LazyAttributes) else " ".join(map(str, attrs))
            if text and _GPU_MARKERS.search(text):
                return GPU, "GPU custom calls / backend configs"
    return CPU, "default (no GPU or TPU marks)"
