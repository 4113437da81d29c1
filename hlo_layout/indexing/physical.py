"""Physical indexing: from logical indices to where the data sits in memory.

Two things live here:

* XLA's physical-layout test helper (`use_physical_layout=true` in indexing_analysis_test.cc):
  an instruction's maps pre-composed with physical → logical of the output and post-composed
  with logical → physical of the operand, so every index is in memory (major-first) order;
* what XLA does not have (indexing.md §(e), "opportunity"): the map from an output index to the
  *element offset* an operand read lands on, through the operand's `minor_to_major` order and its
  tiles (`T(8,128)(2,1)`, `*` combine entries), following the tiled-layout document's nested rule
  (LayoutUtil::LinearIndexForNestedTiling). Offsets count elements, not bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_layout.indexing.expr import AffineExpr, const, dim
from hlo_layout.indexing.map import IndexingMap
from hlo_layout.indexing.operand import (
    InstructionIndexing,
    OperandIndexing,
    compose_operand_indexing,
    simplify_operand_indexing,
)
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.indexing.rules.shapes import (
    logical_to_physical,
    physical_dims,
    physical_order,
    physical_to_logical,
)
from hlo_layout.syntax.shape import COMBINE, ArrayShape


def _wrap(
    indexing: InstructionIndexing,
    before: OperandIndexing | None,
    after: list[OperandIndexing | None],
) -> InstructionIndexing:
    slots = []
    for slot, post in zip(indexing.maps, after):
        out = set()
        for oi in slot:
            if before is not None:
                oi = compose_operand_indexing(before, oi)
            if post is not None:
                oi = compose_operand_indexing(oi, post)
            out.add(oi)
        slots.append(frozenset(out))
    return InstructionIndexing(tuple(slots), indexing.notes)


def physical_output_to_input(ctx: OpContext, output_id: int = 0) -> InstructionIndexing:
    """Output-to-input indexing between physical (memory-order) indices, as XLA's test helper
    builds it. Exponential from `f32[10,20,30]` into `f32[10,20,30]{1,0,2}`:
    `(d0, d1, d2) -> (d1, d2, d0)` over `[0,29] x [0,9] x [0,19]`."""
    indexing = output_to_input(ctx, output_id)
    before = OperandIndexing(physical_to_logical(ctx.output_shape(output_id)))
    after = [
        OperandIndexing(logical_to_physical(ctx.operand_shape(k)))
        for k in range(len(indexing.maps))
    ]
    return _wrap(indexing, before, list(after))


def physical_input_to_output(ctx: OpContext, input_id: int) -> InstructionIndexing:
    """Input-to-output indexing between physical indices (the same helper, other direction)."""
    indexing = input_to_output(ctx, input_id)
    before = OperandIndexing(physical_to_logical(ctx.operand_shape(input_id)))
    after: list[OperandIndexing | None] = [
        OperandIndexing(logical_to_physical(ctx.output_shape(j))) for j in range(len(indexing.maps))
    ]
    return _wrap(indexing, before, after)


# -- element offsets through tiles --------------------------------------------------------------


def _tile_step(
    sizes: list[int], index: list[AffineExpr], tile: Sequence[int]
) -> tuple[list[int], list[AffineExpr]]:
    """One tile level on (sizes, index), both major → minor: prepend unit dims if the tile is
    longer, merge `*` entries into the next more-minor dim, then split each tiled dim into
    (outer, inner) = (e / t, e mod t) with sizes (ceil(d / t), t)."""
    k = len(tile)
    if len(sizes) < k:
        pad = k - len(sizes)
        sizes = [1] * pad + sizes
        index = [const(0)] * pad + index
    start = len(sizes) - k
    merged_sizes, merged_index, entries = [], [], []
    size, expr = 1, const(0)
    for j, t in enumerate(tile):
        size *= sizes[start + j]
        expr = expr * sizes[start + j] + index[start + j]
        if t == COMBINE:
            continue
        merged_sizes.append(size)
        merged_index.append(expr)
        entries.append(t)
        size, expr = 1, const(0)
    outer_sizes = [-(-d // t) for d, t in zip(merged_sizes, entries)]
    new_sizes = sizes[:start] + outer_sizes + entries
    new_index = (
        index[:start]
        + [e.floordiv(t) for e, t in zip(merged_index, entries)]
        + [e % t for e, t in zip(merged_index, entries)]
    )
    return new_sizes, new_index


def element_offset_map(shape: ArrayShape) -> IndexingMap:
    """Logical index → element offset in the buffer of `shape` (one result).

    The dims are put in memory order (`minor_to_major` reversed), each tile level splits the
    most-minor dims into tile number and position in the tile, and the result is linearized
    row-major. `f32[3,5]{1,0:T(2,2)}`: element (2, 3) is at offset 17 (the tiled-layout
    document's Figure 1).
    """
    order = physical_order(shape)
    sizes = list(physical_dims(shape))
    index: list[AffineExpr] = [dim(d) for d in order]
    tiles = shape.layout.tiles if shape.layout is not None else ()
    for tile in tiles:
        if (
            not tile.dims
            or tile.dims[-1] == COMBINE
            or any(t != COMBINE and t <= 0 for t in tile.dims)
        ):
            raise ValueError(f"tile {tile} of {shape} cannot be applied")
        sizes, index = _tile_step(sizes, index, tile.dims)
    offset = const(0)
    for size, expr in zip(sizes, index):
        offset = offset * size + expr
    return IndexingMap.from_tensor_sizes([offset], shape.dims)


def physical_operand_indexing(oi: OperandIndexing, operand: ArrayShape) -> OperandIndexing:
    """An operand read composed with the operand's element-offset map, simplified: output index
    → element offset read."""
    composed = compose_operand_indexing(oi, OperandIndexing(element_offset_map(operand)))
    return simplify_operand_indexing(composed)
