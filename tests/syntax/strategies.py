"""Hypothesis strategies for shapes and layouts (shared by syntax and layout tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from hlo_layout.syntax.shape import COMBINE, ArrayShape, Layout, SplitConfig, Tile, TupleShape

ARRAY_TYPES = sorted(
    {
        "pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16",
        "u32", "u64", "f16", "bf16", "f32", "f64", "f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz",
        "f8e4m3", "f8e3m4", "f8e5m2fnuz", "f8e4m3fnuz", "f4e2m1fn", "f8e8m0fnu", "c64", "c128",
    }
)  # fmt: skip


@st.composite
def tiles(draw: st.DrawFn, rank: int) -> tuple[Tile, ...]:
    levels = draw(st.integers(0, 3))
    out = []
    for _ in range(levels):
        n = draw(st.integers(1, max(1, rank + 1)))
        dims = draw(
            st.lists(
                st.sampled_from([1, 2, 4, 8, 16, 32, 128, 256, 3, COMBINE]), min_size=n, max_size=n
            )
        )
        out.append(Tile(tuple(dims)))
    return tuple(out)


@st.composite
def layouts(draw: st.DrawFn, rank: int) -> Layout:
    m2m = tuple(draw(st.permutations(range(rank))))
    split = ()
    if rank and draw(st.booleans()):
        split = (SplitConfig(draw(st.integers(0, rank - 1)), (draw(st.integers(1, 64)),)),)
    return Layout(
        minor_to_major=m2m,
        tiles=draw(tiles(rank)),
        tail_padding_alignment=draw(st.sampled_from([1, 1, 2, 8])),
        element_size_bits=draw(st.sampled_from([0, 0, 4, 8])),
        memory_space=draw(st.sampled_from([0, 0, 1, 2, 5])),
        split_configs=split,
    )


@st.composite
def array_shapes(draw: st.DrawFn, *, max_rank: int = 4, max_dim: int = 300) -> ArrayShape:
    rank = draw(st.integers(0, max_rank))
    dims = tuple(draw(st.lists(st.integers(0, max_dim), min_size=rank, max_size=rank)))
    dynamic: tuple[bool, ...] = ()
    if rank and draw(st.booleans()):
        dynamic = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
        if not any(dynamic):
            dynamic = ()
    layout = draw(st.one_of(st.none(), layouts(rank)))
    if layout is not None and rank == 0 and not layout.has_props:
        layout = None  # XLA prints a scalar's empty layout as nothing: `f32[]`
    return ArrayShape(draw(st.sampled_from(ARRAY_TYPES)), dims, dynamic, layout)


def shapes(max_depth: int = 2) -> st.SearchStrategy:
    return st.recursive(
        array_shapes(),
        lambda children: st.lists(children, max_size=4).map(lambda xs: TupleShape(tuple(xs))),
        max_leaves=8,
    )
