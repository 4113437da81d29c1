"""A small interpreter of HLO ops that computes *which operand elements* each output element
reads, independently of the indexing rules, to check them.

Values are numpy object arrays whose elements are frozensets of `(operand number, index)`:
operand k starts as `{(k, i)}` at every index i, and each op combines sets the way it combines
values (a data-movement op copies one set, an elementwise op unions its operands', a reduction
unions everything it folds). Offsets and gather indices are real integers, given per case, and
are clamped the way XLA clamps them.

The semantics follow XLA's operation semantics page, written from scratch here; only the
attribute decoders (syntax/attrs.py) are shared with the code under test.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from hlo_layout.indexing.rules import OpContext
from hlo_layout.syntax.attrs import (
    conv_dimension_numbers,
    int_list,
    int_value,
    padding_config,
    slice_ranges,
    window,
)
from hlo_layout.syntax.shape import ArrayShape

Reads = Any  # np.ndarray of frozenset[tuple[int, tuple[int, ...]]]


def leaf_sets(k: int, dims: Sequence[int]) -> Reads:
    """Operand k as sets: element i is `{(k, i)}`."""
    out = np.empty(tuple(dims), dtype=object)
    for idx in itertools.product(*(range(n) for n in dims)):
        out[idx] = frozenset({(k, idx)})
    return out


def _new(dims: Sequence[int]) -> Reads:
    out = np.empty(tuple(dims), dtype=object)
    for idx in itertools.product(*(range(n) for n in dims)):
        out[idx] = frozenset()
    return out


def _indices(dims: Sequence[int]) -> itertools.product:
    return itertools.product(*(range(n) for n in dims))


def _attr_ints(ctx: OpContext, key: str, default: tuple[int, ...] = ()) -> tuple[int, ...]:
    a = ctx.instruction.attr(key)
    return int_list(a) if a is not None else default


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, value))


def interpret(ctx: OpContext, values: dict[int, np.ndarray], output_id: int = 0) -> Reads:
    """The read sets of output `output_id` of `ctx.instruction`.

    `values[k]` holds the integer values of operand k where the op reads values as offsets or
    indices (dynamic-slice offsets, gather indices).
    """
    op = ctx.opcode
    ops = [leaf_sets(k, ctx.operand_shape(k).dims) for k in range(ctx.num_operands)]
    out_shape: ArrayShape = ctx.output_shape(output_id)
    dims = out_shape.dims
    out = _new(dims)
    if op in ("add", "multiply", "select", "clamp", "exponential", "convert", "copy", "negate",
              "maximum", "compare", "subtract", "and", "map"):  # fmt: skip
        for idx in _indices(dims):
            s: frozenset = frozenset()
            for arr in ops:
                s |= arr[()] if arr.ndim == 0 else arr[idx]
            out[idx] = s
        return out
    if op == "broadcast":
        bdims = _attr_ints(ctx, "dimensions")
        for idx in _indices(dims):
            out[idx] = ops[0][tuple(idx[d] for d in bdims)]
        return out
    if op == "transpose":
        return np.transpose(ops[0], _attr_ints(ctx, "dimensions"))
    if op == "reverse":
        return np.flip(ops[0], axis=_attr_ints(ctx, "dimensions")) if ops[0].ndim else ops[0]
    if op == "slice":
        ranges = slice_ranges(ctx.instruction.attr("slice"))  # type: ignore[arg-type]
        return ops[0][tuple(slice(r.start, r.limit, r.stride) for r in ranges)]
    if op == "concatenate":
        return np.concatenate(ops, axis=_attr_ints(ctx, "dimensions")[0])
    if op == "reshape":
        return ops[0].reshape(dims)
    if op == "bitcast":
        return _bitcast(ops[0], ctx.operand_shape(0), out_shape)
    if op == "pad":
        config = padding_config(ctx.instruction.attr("padding"))  # type: ignore[arg-type]
        for idx in _indices(dims):
            src = []
            for d, p in zip(idx, config):
                q = d - p.low
                if q < 0 or q % (p.interior + 1):
                    break
                q //= p.interior + 1
                src.append(q)
            else:
                if all(0 <= q < n for q, n in zip(src, ctx.operand_shape(0).dims)):
                    out[idx] = ops[0][tuple(src)]
                    continue
            out[idx] = ops[1][()]
        return out
    if op == "reduce":
        arity = ctx.num_operands // 2
        rdims = set(_attr_ints(ctx, "dimensions"))
        in_dims = ctx.operand_shape(0).dims
        for idx in _indices(in_dims):
            kept = tuple(i for d, i in enumerate(idx) if d not in rdims)
            for k in range(arity):
                out[kept] = out[kept] | ops[k][idx]
        for idx in _indices(dims):
            for k in range(arity, 2 * arity):
                out[idx] = out[idx] | ops[k][()]
        return out
    if op == "reduce-window":
        arity = ctx.num_operands // 2
        wdims = window(ctx.instruction.attr("window"))  # type: ignore[arg-type]
        in_dims = ctx.operand_shape(0).dims
        for idx in _indices(dims):
            s = frozenset().union(*(ops[k][()] for k in range(arity, 2 * arity)))
            for w in _indices([wd.size for wd in wdims]):
                src = _window_source(idx, w, wdims, in_dims)
                if src is not None:
                    for k in range(arity):
                        s |= ops[k][src]
            out[idx] = s
        return out
    if op == "dot":
        return _dot(ctx, ops, dims)
    if op == "convolution":
        return _convolution(ctx, ops, dims)
    if op == "dynamic-slice":
        sizes = _attr_ints(ctx, "dynamic_slice_sizes")
        in_dims = ctx.operand_shape(0).dims
        starts = [_clamp(int(values[k + 1]), 0, in_dims[k] - sizes[k]) for k in range(len(sizes))]
        offsets = frozenset().union(*(ops[k][()] for k in range(1, ctx.num_operands)))
        for idx in _indices(dims):
            out[idx] = ops[0][tuple(i + s for i, s in zip(idx, starts))] | offsets
        return out
    if op == "dynamic-update-slice":
        upd_dims = ctx.operand_shape(1).dims
        starts = [_clamp(int(values[k + 2]), 0, dims[k] - upd_dims[k]) for k in range(len(dims))]
        offsets = frozenset().union(*(ops[k][()] for k in range(2, ctx.num_operands)))
        for idx in _indices(dims):
            rel = tuple(i - s for i, s in zip(idx, starts))
            if all(0 <= r < n for r, n in zip(rel, upd_dims)):
                out[idx] = ops[1][rel] | offsets
            else:
                out[idx] = ops[0][idx]
        return out
    if op == "gather":
        indices = values[1]
        start_map = _attr_ints(ctx, "start_index_map")
        sizes = _attr_ints(ctx, "slice_sizes")
        in_dims = ctx.operand_shape(0).dims
        for idx in _indices(dims):
            b, offs = idx[0], idx[1:]
            start = [0] * len(in_dims)
            for j, d in enumerate(start_map):
                start[d] = _clamp(int(indices[b, j]), 0, in_dims[d] - sizes[d])
            src = tuple(s + o for s, o in zip(start, offs))
            index_row = frozenset((1, (b, j)) for j in range(indices.shape[1]))
            out[idx] = ops[0][src] | index_row
        return out
    raise NotImplementedError(op)


def _window_source(
    idx: Sequence[int], w: Sequence[int], wdims: Sequence[Any], in_dims: Sequence[int]
) -> tuple[int, ...] | None:
    """The input element under window position `w` of output `idx`, or None for padding or a
    hole left by base dilation."""
    src = []
    for o, p, wd, n in zip(idx, w, wdims, in_dims):
        q = o * wd.stride + p * wd.window_dilation - wd.padding_low
        if q < 0 or q % wd.base_dilation:
            return None
        q //= wd.base_dilation
        if q >= n:
            return None
        src.append(q)
    return tuple(src)


def _dot(ctx: OpContext, ops: list[Reads], dims: Sequence[int]) -> Reads:
    lhs_shape, rhs_shape = ctx.operand_shape(0).dims, ctx.operand_shape(1).dims
    lb, rb = _attr_ints(ctx, "lhs_batch_dims"), _attr_ints(ctx, "rhs_batch_dims")
    lc, rc = _attr_ints(ctx, "lhs_contracting_dims"), _attr_ints(ctx, "rhs_contracting_dims")
    lf = [i for i in range(len(lhs_shape)) if i not in lb and i not in lc]
    rf = [i for i in range(len(rhs_shape)) if i not in rb and i not in rc]
    out = _new(dims)
    for idx in _indices(dims):
        batch, rest = idx[: len(lb)], idx[len(lb) :]
        lfree, rfree = rest[: len(lf)], rest[len(lf) :]
        s: frozenset = frozenset()
        for c in _indices([lhs_shape[d] for d in lc]):
            li, ri = [0] * len(lhs_shape), [0] * len(rhs_shape)
            for d, v in zip(lb, batch):
                li[d] = v
            for d, v in zip(rb, batch):
                ri[d] = v
            for d, v in zip(lf, lfree):
                li[d] = v
            for d, v in zip(rf, rfree):
                ri[d] = v
            for d, v in zip(lc, c):
                li[d] = v
            for d, v in zip(rc, c):
                ri[d] = v
            s |= ops[0][tuple(li)] | ops[1][tuple(ri)]
        out[idx] = s
    return out


def _convolution(ctx: OpContext, ops: list[Reads], dims: Sequence[int]) -> Reads:
    """XLA's convolution: window over the base-dilated, padded input; feature groups split the
    input features, batch groups split the input batch by output feature group."""
    dn = conv_dimension_numbers(ctx.instruction.attr("dim_labels"))  # type: ignore[arg-type]
    wattr = ctx.instruction.attr("window")
    wdims = window(wattr) if wattr is not None else ()
    lhs, kernel = ctx.operand_shape(0).dims, ctx.operand_shape(1).dims
    fgc = int_value(a) if (a := ctx.instruction.attr("feature_group_count")) else 1
    bgc = int_value(a) if (a := ctx.instruction.attr("batch_group_count")) else 1
    in_group = kernel[dn.kernel_input_feature]
    out_features = dims[dn.output_feature]
    out_batch = dims[dn.output_batch]
    out = _new(dims)
    ksizes = [kernel[d] for d in dn.kernel_spatial]
    in_spatial = [lhs[d] for d in dn.input_spatial]
    for idx in _indices(dims):
        b, f = idx[dn.output_batch], idx[dn.output_feature]
        o = [idx[d] for d in dn.output_spatial]
        s: frozenset = frozenset()
        g_feature = f // (out_features // fgc)
        g_batch = f // (out_features // bgc)
        for w in _indices(ksizes):
            # The kernel meets padding and base-dilation holes too (zeros of the padded input).
            src = _window_source(o, w, wdims, in_spatial)
            for c in range(in_group):
                ki = [0] * len(kernel)
                ki[dn.kernel_input_feature] = c
                ki[dn.kernel_output_feature] = f
                for d, v, wd, size in zip(dn.kernel_spatial, w, wdims, ksizes):
                    ki[d] = size - 1 - v if wd.window_reversal else v
                s |= ops[1][tuple(ki)]
                if src is None:
                    continue
                li = [0] * len(lhs)
                li[dn.input_batch] = g_batch * out_batch + b
                li[dn.input_feature] = g_feature * in_group + c
                for d, v in zip(dn.input_spatial, src):
                    li[d] = v
                s |= ops[0][tuple(li)]
        out[idx] = s
    return out


def _bitcast(arr: Reads, src: ArrayShape, dst: ArrayShape) -> Reads:
    """Same bytes, new shape: lay `src` out in memory order, read it back as `dst`."""
    src_order = tuple(reversed(src.minor_to_major))
    flat = np.transpose(arr, src_order).reshape(-1)
    dst_order = tuple(reversed(dst.minor_to_major))
    physical = flat.reshape([dst.dims[d] for d in dst_order])
    inverse = [dst_order.index(d) for d in range(dst.rank)]
    return np.transpose(physical, inverse)
