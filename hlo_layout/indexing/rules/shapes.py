"""Map builders over shapes: scalars, permutations, reshapes, physical layouts and bitcasts.

Pure functions of dimension sizes and `minor_to_major` orders, shared by the rules and by the
physical-offset maps. Each mirrors one XLA helper (indexing_analysis.cc, indexing_analysis_utils.cc,
shape_util.cc), named in its docstring.
"""

from __future__ import annotations

from collections.abc import Sequence

from hlo_layout.indexing.expr import AffineExpr, VarSpace, const, dim, replace_vars, sym
from hlo_layout.indexing.map import UNDEFINED, IndexingMap
from hlo_layout.indexing.simplify import simplify
from hlo_layout.syntax.shape import ArrayShape


def scalar_map(dims: Sequence[int]) -> IndexingMap:
    """`(d0, ..., dn) -> ()` over `dims`: every output element reads the one scalar element
    (XLA's `CreateScalarIndexingMap`)."""
    return IndexingMap.from_tensor_sizes((), dims)


def spread_map(dims: Sequence[int]) -> IndexingMap:
    """`()[s0, ..., sn] -> (s0, ..., sn)`: a scalar read by every element of `dims` (the init
    value of a reduce, input to output)."""
    return IndexingMap.from_tensor_sizes([sym(i) for i in range(len(dims))], (), dims)


def permutation_map(permutation: Sequence[int], dims: Sequence[int]) -> IndexingMap:
    """`(d...) -> (d_{p[0]}, d_{p[1]}, ...)` over `dims` (XLA's `ComputeTransposeIndexingMap`)."""
    return IndexingMap.from_tensor_sizes([dim(p) for p in permutation], dims)


def inverse_permutation(permutation: Sequence[int]) -> tuple[int, ...]:
    """`q` with `q[p[i]] = i` (XLA's `InversePermutation`)."""
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return tuple(inverse)


def _strides(dims: Sequence[int]) -> list[int]:
    """Row-major strides (XLA's `ComputeStrides` in indexing_analysis.cc)."""
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = dims[i + 1] * strides[i + 1]
    return strides


def linearize(dims: Sequence[int], exprs: Sequence[AffineExpr]) -> AffineExpr:
    """Row-major linear index of a multi-index (XLA's `LinearizeShape`): `d0 * 8 + d1` for
    `[4, 8]`."""
    linear = const(0)
    for stride, expr in zip(_strides(dims), exprs):
        linear = linear + expr * stride
    return linear


def delinearize(dims: Sequence[int], linear: AffineExpr) -> list[AffineExpr]:
    """Multi-index of a row-major linear index (XLA's `DelinearizeIndex`): `d0 / 8, d0 mod 8`."""
    out: list[AffineExpr] = []
    remainder = linear
    for stride in _strides(dims):
        out.append(remainder.floordiv(stride))
        remainder = remainder % stride
    return out


def _minimal_reshape(
    input_dims: Sequence[int], output_dims: Sequence[int], output_exprs: Sequence[AffineExpr]
) -> list[AffineExpr]:
    """XLA's `ComputeMinimalReshapeIndexing`: same, expand, collapse, or linearize-delinearize."""
    if len(input_dims) == 1 and len(output_dims) == 1:
        return list(output_exprs)
    if len(input_dims) == 1:
        return [linearize(output_dims, output_exprs)]
    if len(output_dims) == 1:
        return delinearize(input_dims, output_exprs[0])
    return delinearize(input_dims, linearize(output_dims, output_exprs))


def reshape_exprs(input_dims: Sequence[int], output_dims: Sequence[int]) -> list[AffineExpr]:
    """Input index (one expression per input dim) in terms of the output dims `d_i`.

    XLA's `ComputeReshapeIndexingMap`: split both shapes left to right into the smallest groups
    of equal element count, and index each group on its own. `[4, 8, 12] -> [32, 3, 4]` gives
    `(d0 / 8, d0 mod 8, d1 * 4 + d2)`. A zero-element input gives all zeros.
    """
    if _product(input_dims) == 0:
        return [const(0)] * len(input_dims)
    exprs: list[AffineExpr] = []
    in_sub: list[int] = []
    out_sub: list[int] = []
    out_exprs: list[AffineExpr] = []
    in_count = out_count = 1
    i = o = 0
    while i < len(input_dims) or o < len(output_dims) or in_sub:
        if i < len(input_dims) and (not in_sub or in_count < out_count):
            in_count *= input_dims[i]
            in_sub.append(input_dims[i])
            i += 1
            continue
        if o < len(output_dims) and (not out_sub or out_count < in_count):
            out_count *= output_dims[o]
            out_sub.append(output_dims[o])
            out_exprs.append(dim(o))
            o += 1
            continue
        exprs.extend(_minimal_reshape(in_sub, out_sub, out_exprs))
        in_count = out_count = 1
        in_sub, out_sub, out_exprs = [], [], []
    return exprs


def reshape_map(input_dims: Sequence[int], output_dims: Sequence[int]) -> IndexingMap:
    """Output index → input index of a reshape, simplified keeping point dims (XLA's
    `ComputeOutputToInputReshapeOpIndexing`). `[4, 8] -> [32]`: `(d0) -> (d0 / 8, d0 mod 8)`."""
    raw = IndexingMap.from_tensor_sizes(reshape_exprs(input_dims, output_dims), output_dims)
    return simplify(raw, preserve_point_dims=True)


def _product(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


# -- physical layouts -------------------------------------------------------------------------


def physical_order(shape: ArrayShape) -> tuple[int, ...]:
    """Logical dims listed major to minor in memory: `minor_to_major` reversed (XLA's
    `ToTransposeDimensions`). `f32[10,20,30]{1,0,2}` → (2, 0, 1)."""
    return tuple(reversed(shape.minor_to_major))


def physical_dims(shape: ArrayShape) -> tuple[int, ...]:
    """Sizes in memory order, major first (`MakeShapeWithDescendingLayoutAndSamePhysicalLayout`).
    `f32[10,20,30]{1,0,2}` → (30, 10, 20)."""
    return tuple(shape.dims[d] for d in physical_order(shape))


def logical_to_physical(shape: ArrayShape) -> IndexingMap:
    """Logical index → physical (major-first) index (`GetIndexingMapFromLogicalToPhysicalLayout`).
    `f32[10,20,30]{1,0,2}`: `(d0, d1, d2) -> (d2, d0, d1)`."""
    return permutation_map(physical_order(shape), shape.dims)


def physical_to_logical(shape: ArrayShape) -> IndexingMap:
    """Physical index → logical index over the physical sizes
    (`GetIndexingMapFromPhysicalLayoutToLogical`)."""
    return permutation_map(inverse_permutation(physical_order(shape)), physical_dims(shape))


def _physical_linear_index(shape: ArrayShape, index: Sequence[int]) -> int:
    """Offset of an element in memory, untiled (XLA's `MultidimensionalIndexToLinearIndex`)."""
    offset, scale = 0, 1
    for d in shape.minor_to_major:
        offset += index[d] * scale
        scale *= shape.dims[d]
    return offset


def _row_major_index(dims: Sequence[int], linear: int) -> list[int]:
    out = [0] * len(dims)
    for i in range(len(dims) - 1, -1, -1):
        if dims[i]:
            out[i] = linear % dims[i]
            linear //= dims[i]
    return out


def reshape_is_bitcast(a: ArrayShape, b: ArrayShape) -> bool:
    """Whether reshaping `a` into `b` moves no element in memory (XLA's
    `ShapeUtil::ReshapeIsBitcast`): every unit index of either shape keeps its physical offset."""
    if a.num_elements != b.num_elements:
        return False
    if a.num_elements == 0:
        return True

    def unit_indices_agree(src: ArrayShape, dst: ArrayShape) -> bool:
        for d, size in enumerate(src.dims):
            if size <= 1:
                continue
            unit = [0] * src.rank
            unit[d] = 1
            logical = _physical_linear_index(_descending(src), unit)
            other = _row_major_index(dst.dims, logical)
            if _physical_linear_index(src, unit) != _physical_linear_index(dst, other):
                return False
        return True

    return unit_indices_agree(a, b) and unit_indices_agree(b, a)


def _descending(shape: ArrayShape) -> ArrayShape:
    return ArrayShape(shape.element_type, shape.dims)


def transpose_dims_for_bitcast(a: ArrayShape, b: ArrayShape) -> tuple[int, ...] | None:
    """The permutation `p` with `b.dims[i] == a.dims[p[i]]` that makes bitcast `a -> b` a pure
    transpose, or None (XLA's `ShapeUtil::DeduceTransposeDimensionsForBitcast`)."""
    if a.rank != b.rank:
        return None
    inverse_b = inverse_permutation(b.minor_to_major)
    perm = tuple(a.minor_to_major[inverse_b[i]] for i in range(a.rank))
    if tuple(a.dims[p] for p in perm) != b.dims:
        return None
    return perm


def bitcast_map(src: ArrayShape, dst: ArrayShape) -> IndexingMap:
    """Index of `src` → index of `dst` holding the same bytes (XLA's `GetBitcastMap`).

    Tries, in XLA's order: a pure transpose of the physical layout (preferred since 2026-03), a
    reshape that is a bitcast, then transpose-reshape-transpose through the physical shapes.
    UNDEFINED when the element counts differ. Simplified keeping point dims.
    `f32[16,17,3]` → `f32[51,16]{0,1}`: `(d0, d1, d2) -> (d1 * 3 + d2, d0)`.
    """
    if src.num_elements != dst.num_elements:
        return UNDEFINED
    if src.rank:
        perm = transpose_dims_for_bitcast(src, dst)
        if perm is not None:
            return simplify(permutation_map(perm, src.dims), preserve_point_dims=True)
    if reshape_is_bitcast(src, dst):
        raw = IndexingMap.from_tensor_sizes(reshape_exprs(dst.dims, src.dims), src.dims)
        return simplify(raw, preserve_point_dims=True)
    # Transpose-reshape-transpose (XLA's `DecomposeBitcastToTrt`): logical src → physical src
    # (major first) → reshape into physical dst → logical dst.
    t1 = physical_order(src)
    reshape = reshape_exprs(physical_dims(dst), physical_dims(src))
    t2 = inverse_permutation(physical_order(dst))

    def through_t1(v: AffineExpr) -> AffineExpr | None:
        return dim(t1[v.value]) if v.space is VarSpace.DIM else None

    results = [replace_vars(reshape[t2[i]], through_t1) for i in range(dst.rank)]
    return simplify(IndexingMap.from_tensor_sizes(results, src.dims), preserve_point_dims=True)
