"""Row-major arithmetic over a box of dimensions: strides, a flat position from an index, and an
index from a flat position. One copy for every layer (layouts, tile assignments, CuTe layouts);
Lark-free and dependency-free, so the lowest layer can use it."""

from __future__ import annotations

from collections.abc import Sequence


def row_major_strides(dims: Sequence[int]) -> tuple[int, ...]:
    """The stride of each dimension in a row-major array: `(4, 2, 3)` → `(6, 3, 1)`."""
    out, acc = [], 1
    for d in reversed(dims):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def linear_index(e: Sequence[int], d: Sequence[int]) -> int:
    """Row-major position of index `e` in bounds `d` (layout_rules.md's `linear_index(e, d)`)."""
    out = 0
    for i, n in zip(e, d):
        out = out * n + i
    return out


def delinearize(offset: int, d: Sequence[int]) -> tuple[int, ...]:
    """Inverse of `linear_index`: the row-major index of `offset` in bounds `d`."""
    out = []
    for n in reversed(d):
        offset, r = divmod(offset, n) if n else (offset, 0)
        out.append(r)
    return tuple(reversed(out))


__all__ = ["delinearize", "linear_index", "row_major_strides"]
