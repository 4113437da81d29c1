"""Why an array's buffer is bigger than its data: which dimension the first tile padded from what
to what, `L(n)` tail padding, and elements stored wider than they are.

It answers the question a TPU out-of-memory report poses with "Size / Unpadded size / Expansion":
`f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}` is 512 MiB for 40.5 MiB of data because dimension 4 is
padded 18 → 128 and dimension 3 is padded 9 → 16 by the tile (8,128).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hlo_layout.layout.element_type import logical_bits
from hlo_layout.layout.size import (
    element_storage_bits,
    first_tile_step,
    logical_bytes,
    physical_bytes,
    physical_elements,
    sized_physical_dims,
)
from hlo_layout.layout.tiling import physical_axes, tiled_dims
from hlo_layout.syntax.layout_text import PADDING_PROPERTIES
from hlo_layout.syntax.printer import print_property
from hlo_layout.syntax.shape import ArrayShape, Tile


@dataclass(frozen=True, slots=True)
class PaddedDim:
    """One tiled dimension: the logical dimension(s) it stands for (several when `*` merged them,
    none for a unit dimension the tile added above a lower-rank array), its size and padded size,
    and the tile entry that rounds it."""

    dimensions: tuple[int, ...]
    size: int
    padded: int
    tile: int

    @property
    def grew(self) -> bool:
        return self.padded != self.size


@dataclass(frozen=True, slots=True)
class PaddingExplanation:
    """Everything that makes `physical_bytes` exceed `logical_bytes` for one array."""

    shape: ArrayShape
    tile: Tile | None
    dims: tuple[PaddedDim, ...]
    tail_alignment: int
    elements_before_tail: int
    elements: int
    logical_bits: int
    storage_bits: int
    logical_bytes: int
    physical_bytes: int
    strict_nested_elements: int

    @property
    def padding_bytes(self) -> int:
        return self.physical_bytes - self.logical_bytes

    @property
    def expansion(self) -> float:
        """physical / logical, as the TPU OOM report's "(N.Nx expansion)"; 1.0 for empty arrays."""
        return self.physical_bytes / self.logical_bytes if self.logical_bytes else 1.0

    @property
    def padded_dims(self) -> tuple[PaddedDim, ...]:
        return tuple(d for d in self.dims if d.grew)

    def reasons(self) -> tuple[str, ...]:
        """One short phrase per cause, most-minor dimension first, e.g. `dim 1: 5 → 128
        (T(8,128) entry 128)`."""
        out: list[str] = []
        tile_text = f"T{self.tile}" if self.tile is not None else ""
        for d in reversed(self.padded_dims):
            if not d.dimensions:
                what = "scalar" if self.shape.rank == 0 else "unit dim above the array"
            elif len(d.dimensions) == 1:
                what = f"dim {d.dimensions[0]}"
            else:
                what = "dims " + "*".join(map(str, d.dimensions)) + " merged"
            out.append(f"{what}: {d.size:,} → {d.padded:,} ({tile_text} entry {d.tile})")
        layout = self.shape.layout
        if layout is not None and layout.split_configs:
            splits = "".join(str(c) for c in layout.split_configs)
            out.append(f"SC{splits}: sized at the largest split piece, as XLA allocates each piece")
        if self.elements != self.elements_before_tail:
            out.append(
                f"L({self.tail_alignment}): {self.elements_before_tail:,} → {self.elements:,} "
                "elements"
            )
        if self.storage_bits > self.logical_bits:
            out.append(f"{self.storage_bits} bits stored per {self.logical_bits}-bit element")
        if self.strict_nested_elements != self.elements:
            out.append(
                f"later tiles would make {self.strict_nested_elements:,} element slots "
                f"(XLA's ArraySize counts {self.elements:,})"
            )
        return tuple(out)


def explain_padding(shape: ArrayShape) -> PaddingExplanation:
    """Explain the difference between an array's physical and logical bytes.

    >>> from hlo_layout.syntax import parse_shape
    >>> explain_padding(parse_shape("f32[3,5]{1,0:T(2,2)}")).reasons()
    ('dim 1: 5 → 6 (T(2,2) entry 2)', 'dim 0: 3 → 4 (T(2,2) entry 2)')
    """
    axes = physical_axes(shape)
    sized = sized_physical_dims(shape)
    step = first_tile_step(shape)
    dims: list[PaddedDim] = []
    tile: Tile | None = None
    if step is not None and shape.layout is not None:
        tile = shape.layout.tiles[0]
        ones = step.leading_ones
        start = ones + len(sized) - sum(step.groups)
        pos = start
        p = step.prefix_rank
        for g, t, size, padded in zip(step.groups, step.tile, step.combined[p:], step.padded[p:]):
            logical = tuple(axes[q - ones] for q in range(pos, pos + g) if q >= ones)
            dims.append(PaddedDim(logical, size, padded, t))
            pos += g
    layout = shape.layout
    alignment = layout.tail_padding_alignment if layout is not None else 1
    before_tail = math.prod(step.padded) if step is not None else math.prod(sized)
    strict = math.prod(tiled_dims(sized, layout.tiles if layout is not None else ()))
    if alignment > 1:
        strict = -(-strict // alignment) * alignment
    return PaddingExplanation(
        shape=shape,
        tile=tile,
        dims=tuple(dims),
        tail_alignment=alignment,
        elements_before_tail=before_tail,
        elements=physical_elements(shape),
        logical_bits=logical_bits(shape.element_type),
        storage_bits=element_storage_bits(shape),
        logical_bytes=logical_bytes(shape),
        physical_bytes=physical_bytes(shape),
        strict_nested_elements=strict,
    )


def tiling_pattern(shape: ArrayShape) -> str:
    """The layout properties that decide padding, as printed: `T(8,128)(2,1)`, `T(64,128)(8,1)E(4)`,
    `L(128)`; `untiled` when there are none. Used to group padding by pattern."""
    layout = shape.layout
    if layout is None:
        return "untiled"
    return "".join(print_property(layout, p) for p in PADDING_PROPERTIES) or "untiled"
