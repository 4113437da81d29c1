"""Layout engine: byte footprints, padding and tiled offsets of XLA shapes (pure, no I/O but
reading a buffer-assignment file).

Free functions over the frozen shape values of `hlo_layout.syntax`, each mirroring a named XLA
function (ShapeUtil::ArraySize, LayoutUtil::LinearIndexForNestedTiling, …); rules in
../shared/docs/layout_rules.md.
"""

from typing import TYPE_CHECKING, Any

from hlo_layout.layout.element_type import (
    BIT_WIDTH,
    POINTER_BYTES,
    bit_width,
    byte_width,
    logical_bits,
    storage_bits,
)
from hlo_layout.layout.errors import LayoutError
from hlo_layout.layout.memory_space import MemorySpace, memory_space, memory_space_name
from hlo_layout.layout.padding import PaddedDim, PaddingExplanation, explain_padding, tiling_pattern
from hlo_layout.layout.size import (
    TPU_TABLE_ALIGNMENT,
    ArrayBytes,
    Footprint,
    array_bytes,
    element_storage_bits,
    footprint,
    logical_bytes,
    max_split_size,
    padding_bytes,
    physical_bytes,
    physical_elements,
    pointer_table_bytes,
    sized_physical_dims,
)
from hlo_layout.layout.tiling import (
    Grid,
    GridCell,
    PadReshapeTranspose,
    TileStep,
    delinearize,
    element_offset,
    index_at,
    index_at_offset,
    linear_index,
    linear_index_with_tile,
    pad_reshape_transpose,
    physical_axes,
    physical_dims,
    tile_grid,
    tiled_dims,
    tiled_elements,
    tiling_steps,
)

__all__ = [
    "BIT_WIDTH",
    "POINTER_BYTES",
    "TPU_TABLE_ALIGNMENT",
    "Allocation",
    "ArrayBytes",
    "AssignedValue",
    "BufferAssignment",
    "Footprint",
    "Grid",
    "GridCell",
    "LayoutError",
    "MemorySpace",
    "PadReshapeTranspose",
    "PaddedDim",
    "PaddingExplanation",
    "TileStep",
    "array_bytes",
    "bit_width",
    "byte_width",
    "delinearize",
    "element_offset",
    "element_storage_bits",
    "explain_padding",
    "footprint",
    "index_at",
    "index_at_offset",
    "linear_index",
    "linear_index_with_tile",
    "logical_bits",
    "logical_bytes",
    "max_split_size",
    "memory_space",
    "memory_space_name",
    "pad_reshape_transpose",
    "padding_bytes",
    "parse_buffer_assignment",
    "physical_axes",
    "physical_bytes",
    "physical_dims",
    "physical_elements",
    "pointer_table_bytes",
    "read_buffer_assignment",
    "sized_physical_dims",
    "storage_bits",
    "tile_grid",
    "tiled_dims",
    "tiled_elements",
    "tiling_pattern",
    "tiling_steps",
]

#: Loaded on first use: reading a buffer assignment needs the HLO parser, the layout rules don't.
_LAZY = (
    "Allocation",
    "AssignedValue",
    "BufferAssignment",
    "parse_buffer_assignment",
    "read_buffer_assignment",
)

if TYPE_CHECKING:
    from hlo_layout.layout.buffer_assignment import (
        Allocation,
        AssignedValue,
        BufferAssignment,
        parse_buffer_assignment,
        read_buffer_assignment,
    )


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from hlo_layout.layout import buffer_assignment

        return getattr(buffer_assignment, name)
    raise AttributeError(f"module 'hlo_layout.layout' has no attribute {name!r}")
