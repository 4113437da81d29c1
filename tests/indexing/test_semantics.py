"""Semantic tests for every rule: the maps must describe what the op really reads.

For random small shapes and attributes (Hypothesis), each op is run through the set interpreter
of tests/indexing/interpreter.py, which says for every output element which operand elements it
reads. Evaluating the rule's maps over their whole domain must give exactly those elements for
data-movement ops, and for the ops XLA only over-approximates (dynamic-update-slice's operand,
convolution batch groups) a superset of them. Runtime variables take the clamped value the
interpreter used, read through the runtime variable's own map. Input-to-output maps are checked
the other way round: for each input element, the output elements that read it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.indexing.map import evaluate_domain
from hlo_layout.indexing.operand import OperandIndexing
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.syntax import parse
from tests.indexing.interpreter import interpret

Index = tuple[int, ...]

_REDUCER = (
    "r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
)
_REDUCER2 = (
    "r2 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n"
    "  d = f32[] parameter(3)\n  m = f32[] maximum(a, c)\n  n = f32[] maximum(b, d)\n"
    "  ROOT t = (f32[], f32[]) tuple(m, n)\n}\n"
)


@dataclass
class Case:
    """One instruction to check: its HLO, and integer values for offset/index operands."""

    operands: list[str]  # shapes, e.g. "f32[2,3]{0,1}"
    op: str  # text after the result shape: "transpose(p0, ...), dimensions={1,0}" etc.
    result: str
    values: dict[int, np.ndarray]
    exact: bool = True
    #: Operands XLA maps with a superset of what is read (e.g. pad's padding value: every
    #: output element, padded or not).
    superset: frozenset[int] = frozenset()

    def ctx(self) -> OpContext:
        params = "".join(f"  p{k} = {s} parameter({k})\n" for k, s in enumerate(self.operands))
        root = f"  ROOT out = {self.result} {self.op}\n"
        text = f"HloModule m\n{_REDUCER}{_REDUCER2}ENTRY e {{\n{params}{root}}}\n"
        module = parse(text)
        assert module.entry is not None
        return OpContext(module.entry["out"], module.entry, module)


def _shape(dims: tuple[int, ...], dtype: str = "f32", m2m: tuple[int, ...] | None = None) -> str:
    layout = "" if not m2m else "{" + ",".join(map(str, m2m)) + "}"
    return f"{dtype}[{','.join(map(str, dims))}]{layout}"


def _braces(xs: tuple[int, ...] | list[int]) -> str:
    return "{" + ",".join(map(str, xs)) + "}"


def _source_values(case: Case, ctx: OpContext, oi: OperandIndexing, point: np.ndarray) -> list[int]:
    """The clamped value of every runtime variable at one domain point."""
    names = [o.name for o in ctx.instruction.operands]
    out = []
    for k, rv in enumerate(oi.rt_vars):
        at = rv.map.num_dims
        results = [int(x) for x in evaluate_domain_point(rv.map, point[:at])]
        value = int(case.values[names.index(rv.source.name)][tuple(results)])
        bounds = oi.map.rt_vars[k].bounds
        out.append(max(bounds.lo, min(bounds.hi, value)))
    return out


def evaluate_domain_point(m, dims: np.ndarray) -> tuple[int, ...]:
    from hlo_layout.indexing.map import evaluate_map

    return evaluate_map(m, [int(d) for d in dims])


def map_reads(
    case: Case, ctx: OpContext, slot: frozenset[OperandIndexing]
) -> dict[Index, set[Index]]:
    """Output index → operand indices, from evaluating every map of the slot over its domain."""
    reads: dict[Index, set[Index]] = defaultdict(set)
    for oi in slot:
        assert not oi.is_undefined
        if oi.is_known_empty:
            continue
        points, results = evaluate_domain(oi.map)
        nd, nr = oi.map.num_dims, oi.map.num_range_vars
        for point, result in zip(points, results):
            if oi.rt_vars and list(point[nd + nr :]) != _source_values(case, ctx, oi, point):
                continue
            reads[tuple(int(x) for x in point[:nd])].add(tuple(int(x) for x in result))
    return reads


def check_output_to_input(case: Case, output_id: int = 0) -> None:
    ctx = case.ctx()
    actual = interpret(ctx, case.values, output_id)
    indexing = output_to_input(ctx, output_id)
    assert len(indexing.maps) == ctx.num_operands, indexing.notes
    for k, slot in enumerate(indexing.maps):
        bounds = ctx.operand_shape(k).dims
        predicted = map_reads(case, ctx, slot)
        for idx in itertools.product(*(range(n) for n in actual.shape)):
            want = {i for (j, i) in actual[idx] if j == k}
            got = predicted.get(idx, set())
            inside = {i for i in got if all(0 <= x < n for x, n in zip(i, bounds))}
            if case.exact and k not in case.superset:
                assert got == want, (case.op, k, idx, sorted(got), sorted(want))
            else:
                assert want <= inside, (case.op, k, idx, sorted(inside), sorted(want))


def check_input_to_output(case: Case) -> None:
    """For each operand element, the output elements reading it, against the I→O maps."""
    ctx = case.ctx()
    outputs = ctx.num_outputs
    for k in range(ctx.num_operands):
        indexing = input_to_output(ctx, k)
        assert len(indexing.maps) == outputs, indexing.notes
        for j in range(outputs):
            actual = interpret(ctx, case.values, j)
            want: dict[Index, set[Index]] = defaultdict(set)
            for idx in itertools.product(*(range(n) for n in actual.shape)):
                for src_k, i in actual[idx]:
                    if src_k == k:
                        want[i].add(idx)
            got = map_reads(case, ctx, indexing.maps[j])
            for i in itertools.product(*(range(n) for n in ctx.operand_shape(k).dims)):
                if case.exact and k not in case.superset:
                    assert got.get(i, set()) == want.get(i, set()), (case.op, k, j, i)
                else:
                    assert want.get(i, set()) <= got.get(i, set()), (case.op, k, j, i)


# -- strategies -------------------------------------------------------------------------------

dims_st = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)
nonempty_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def layout(draw: st.DrawFn, rank: int) -> tuple[int, ...]:
    return tuple(draw(st.permutations(range(rank))))


def _run(case: Case, both: bool = False) -> None:
    check_output_to_input(case)
    if both:
        check_input_to_output(case)


SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(dims=dims_st, op=st.sampled_from(["add", "multiply", "maximum", "subtract"]))
def test_elementwise_binary(dims: tuple[int, ...], op: str) -> None:
    s = _shape(dims)
    _run(Case([s, s], f"{op}(p0, p1)", s, {}), both=True)


@SETTINGS
@given(dims=nonempty_dims, scalar_pred=st.booleans())
def test_select_with_scalar_predicate(dims: tuple[int, ...], scalar_pred: bool) -> None:
    pred = _shape(() if scalar_pred else dims, "pred")
    s = _shape(dims)
    _run(Case([pred, s, s], "select(p0, p1, p2)", s, {}), both=True)


@SETTINGS
@given(dims=nonempty_dims)
def test_clamp_with_scalar_bounds(dims: tuple[int, ...]) -> None:
    s = _shape(dims)
    _run(Case(["f32[]", s, "f32[]"], "clamp(p0, p1, p2)", s, {}), both=True)


@st.composite
def broadcasts(draw: st.DrawFn) -> Case:
    out = draw(nonempty_dims)
    keep = sorted(draw(st.sets(st.integers(0, len(out) - 1))))
    operand = tuple(out[d] for d in keep)
    return Case([_shape(operand)], f"broadcast(p0), dimensions={_braces(keep)}", _shape(out), {})


@SETTINGS
@given(case=broadcasts())
def test_broadcast(case: Case) -> None:
    _run(case, both=True)


@st.composite
def transposes(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    perm = tuple(draw(st.permutations(range(len(dims)))))
    out = tuple(dims[p] for p in perm)
    return Case([_shape(dims)], f"transpose(p0), dimensions={_braces(perm)}", _shape(out), {})


@SETTINGS
@given(case=transposes())
def test_transpose(case: Case) -> None:
    _run(case, both=True)


@st.composite
def reverses(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    rev = sorted(draw(st.sets(st.integers(0, len(dims) - 1))))
    return Case([_shape(dims)], f"reverse(p0), dimensions={_braces(rev)}", _shape(dims), {})


@SETTINGS
@given(case=reverses())
def test_reverse(case: Case) -> None:
    _run(case, both=True)


@st.composite
def slices(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    parts, out = [], []
    for n in dims:
        start = draw(st.integers(0, n - 1))
        limit = draw(st.integers(start + 1, n))
        stride = draw(st.integers(1, 3))
        parts.append(f"[{start}:{limit}:{stride}]")
        out.append(-(-(limit - start) // stride))
    op = f"slice(p0), slice={{{', '.join(parts)}}}"
    return Case([_shape(dims)], op, _shape(tuple(out)), {})


@SETTINGS
@given(case=slices())
def test_slice(case: Case) -> None:
    _run(case, both=True)


@st.composite
def concatenates(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    axis = draw(st.integers(0, len(dims) - 1))
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    shapes = [tuple(s if d == axis else n for d, n in enumerate(dims)) for s in sizes]
    out = tuple(sum(sizes) if d == axis else n for d, n in enumerate(dims))
    args = ", ".join(f"p{k}" for k in range(len(shapes)))
    return Case(
        [_shape(s) for s in shapes], f"concatenate({args}), dimensions={{{axis}}}", _shape(out), {}
    )


@SETTINGS
@given(case=concatenates())
def test_concatenate(case: Case) -> None:
    _run(case, both=True)


@st.composite
def pads(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    parts, out = [], []
    for n in dims:
        low, high, interior = (
            draw(st.integers(-2, 2)),
            draw(st.integers(-2, 2)),
            draw(st.integers(0, 2)),
        )
        size = low + high + n + (n - 1) * interior
        if size < 1:
            low, high, size = 0, 0, n + (n - 1) * interior
        parts.append(f"{low}_{high}_{interior}")
        out.append(size)
    op = f"pad(p0, p1), padding={'x'.join(parts)}"
    return Case([_shape(dims), "f32[]"], op, _shape(tuple(out)), {}, superset=frozenset({1}))


@SETTINGS
@given(case=pads())
def test_pad(case: Case) -> None:
    _run(case, both=True)


def _factorizations(n: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()] if n == 1 else []
    for first in range(2, n + 1):
        if n % first == 0:
            out += [(first, *rest) for rest in _factorizations(n // first) if len(rest) < 3]
    return out


@st.composite
def reshapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = draw(st.sampled_from([1, 2, 4, 6, 8, 12, 16, 24]))

    def pick() -> tuple[int, ...]:
        dims = list(draw(st.sampled_from(_factorizations(n))))
        for _ in range(draw(st.integers(0, 1))):  # unit dims anywhere
            dims.insert(draw(st.integers(0, len(dims))), 1)
        return tuple(dims)

    return pick(), pick()


@SETTINGS
@given(shapes=reshapes())
def test_reshape(shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    src, dst = shapes
    _run(Case([_shape(src)], "reshape(p0)", _shape(dst), {}), both=True)


@SETTINGS
@given(shapes=reshapes(), data=st.data())
def test_bitcast_with_layouts(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], data: st.DataObject
) -> None:
    src, dst = shapes
    src_m2m = data.draw(layout(len(src)))
    dst_m2m = data.draw(layout(len(dst)))
    case = Case([_shape(src, m2m=src_m2m)], "bitcast(p0)", _shape(dst, m2m=dst_m2m), {})
    _run(case, both=True)


@st.composite
def reduces(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    rdims = sorted(draw(st.sets(st.integers(0, len(dims) - 1))))
    order = draw(st.permutations(rdims))  # XLA accepts any order
    out = tuple(n for d, n in enumerate(dims) if d not in rdims)
    if draw(st.booleans()):
        op = f"reduce(p0, p1), dimensions={_braces(list(order))}, to_apply=r"
        return Case([_shape(dims), "f32[]"], op, _shape(out), {})
    op = f"reduce(p0, p1, p2, p3), dimensions={_braces(list(order))}, to_apply=r2"
    s = _shape(dims)
    return Case([s, s, "f32[]", "f32[]"], op, f"({_shape(out)}, {_shape(out)})", {})


@SETTINGS
@given(case=reduces())
def test_reduce(case: Case) -> None:
    check_output_to_input(case)
    check_input_to_output(case)
    if case.result.startswith("("):
        check_output_to_input(case, 1)


@st.composite
def reduce_windows(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    sizes, strides, pads_, base, wdil, out = [], [], [], [], [], []
    for n in dims:
        b = draw(st.integers(1, 2))
        lo, hi = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        padded = n + lo + hi + (n - 1) * (b - 1)
        wd = draw(st.integers(1, 2))
        size = draw(st.integers(1, max(1, (padded - 1) // wd + 1)))
        stride = draw(st.integers(1, 2))
        span = (size - 1) * wd + 1
        if span > padded:
            size, wd, span = 1, 1, 1
        sizes.append(size), strides.append(stride), pads_.append(f"{lo}_{hi}")
        base.append(b), wdil.append(wd), out.append((padded - span) // stride + 1)
    x = "x".join
    window = (
        f"size={x(map(str, sizes))} stride={x(map(str, strides))} pad={x(pads_)} "
        f"lhs_dilate={x(map(str, base))} rhs_dilate={x(map(str, wdil))}"
    )
    op = f"reduce-window(p0, p1), window={{{window}}}, to_apply=r"
    return Case([_shape(dims), "f32[]"], op, _shape(tuple(out)), {})


@SETTINGS
@given(case=reduce_windows())
def test_reduce_window(case: Case) -> None:
    _run(case)


@st.composite
def dots(draw: st.DrawFn) -> Case:
    nb, nc = draw(st.integers(0, 1)), draw(st.integers(0, 2))
    nlf, nrf = draw(st.integers(0, 2)), draw(st.integers(0, 1))
    batch = [draw(st.integers(1, 3)) for _ in range(nb)]
    contract = [draw(st.integers(1, 3)) for _ in range(nc)]
    lfree = [draw(st.integers(1, 3)) for _ in range(nlf)]
    rfree = [draw(st.integers(1, 3)) for _ in range(nrf)]
    lhs_roles = (
        [("b", i) for i in range(nb)]
        + [("c", i) for i in range(nc)]
        + [("f", i) for i in range(nlf)]
    )
    rhs_roles = (
        [("b", i) for i in range(nb)]
        + [("c", i) for i in range(nc)]
        + [("f", i) for i in range(nrf)]
    )
    lhs_roles = draw(st.permutations(lhs_roles))
    rhs_roles = draw(st.permutations(rhs_roles))
    size = {"b": batch, "c": contract}

    def dims_of(roles: list[tuple[str, int]], free: list[int]) -> tuple[int, ...]:
        return tuple(free[i] if r == "f" else size[r][i] for r, i in roles)

    def where(roles: list[tuple[str, int]], kind: str, n: int) -> list[int]:
        return [roles.index((kind, i)) for i in range(n)]

    lfree_order = [i for r, i in lhs_roles if r == "f"]
    rfree_order = [i for r, i in rhs_roles if r == "f"]
    out = tuple(batch + [lfree[i] for i in lfree_order] + [rfree[i] for i in rfree_order])
    op = (
        f"dot(p0, p1), lhs_batch_dims={_braces(where(lhs_roles, 'b', nb))}, "
        f"rhs_batch_dims={_braces(where(rhs_roles, 'b', nb))}, "
        f"lhs_contracting_dims={_braces(where(lhs_roles, 'c', nc))}, "
        f"rhs_contracting_dims={_braces(where(rhs_roles, 'c', nc))}"
    )
    return Case(
        [_shape(dims_of(lhs_roles, lfree)), _shape(dims_of(rhs_roles, rfree))], op, _shape(out), {}
    )


@SETTINGS
@given(case=dots())
def test_dot(case: Case) -> None:
    _run(case, both=True)


@st.composite
def convolutions(draw: st.DrawFn) -> Case:
    spatial = draw(st.integers(0, 2))
    fgc = draw(st.integers(1, 2))
    bgc = 1 if fgc > 1 else draw(st.integers(1, 2))
    in_group = draw(st.integers(1, 2))
    out_per_group = draw(st.integers(1, 2))
    out_batch = draw(st.integers(1, 2))
    features_out = out_per_group * max(fgc, bgc)
    in_sizes, k_sizes, out_sizes, wins = [], [], [], []
    for _ in range(spatial):
        n = draw(st.integers(1, 4))
        lo, hi = draw(st.integers(0, 1)), draw(st.integers(0, 1))
        b = draw(st.integers(1, 2))
        padded = n + lo + hi + (n - 1) * (b - 1)
        wd = draw(st.integers(1, 2))
        k = draw(st.integers(1, max(1, (padded - 1) // wd + 1)))
        stride = draw(st.integers(1, 2))
        reverse = draw(st.integers(0, 1))
        span = (k - 1) * wd + 1
        in_sizes.append(n), k_sizes.append(k)
        out_sizes.append((padded - span) // stride + 1)
        wins.append((k, stride, f"{lo}_{hi}", b, wd, reverse))

    # Roles in random positions: input b/f/0.., kernel i/o/0.., output b/f/0..
    def labels(roles: str) -> str:
        return "".join(draw(st.permutations(list(roles + "".join(map(str, range(spatial)))))))

    lhs_l, rhs_l, out_l = labels("bf"), labels("io"), labels("bf")

    def dims_for(lab: str, named: dict[str, int], spatial_sizes: list[int]) -> tuple[int, ...]:
        return tuple(spatial_sizes[int(c)] if c.isdigit() else named[c] for c in lab)

    lhs = dims_for(lhs_l, {"b": out_batch * bgc, "f": in_group * fgc}, in_sizes)
    rhs = dims_for(rhs_l, {"i": in_group, "o": features_out}, k_sizes)
    out = dims_for(out_l, {"b": out_batch, "f": features_out}, out_sizes)
    x = "x".join
    window = ""
    if spatial:
        window = (
            f", window={{size={x(str(w[0]) for w in wins)} stride={x(str(w[1]) for w in wins)} "
            f"pad={x(w[2] for w in wins)} lhs_dilate={x(str(w[3]) for w in wins)} "
            f"rhs_dilate={x(str(w[4]) for w in wins)} rhs_reversal={x(str(w[5]) for w in wins)}}}"
        )
    op = (
        f"convolution(p0, p1){window}, dim_labels={lhs_l}_{rhs_l}->{out_l}, "
        f"feature_group_count={fgc}, batch_group_count={bgc}"
    )
    # XLA's map lets the batch-group variable range over every group: a superset.
    return Case([_shape(lhs), _shape(rhs)], op, _shape(out), {}, exact=bgc == 1)


@settings(max_examples=60, deadline=None)
@given(case=convolutions())
def test_convolution(case: Case) -> None:
    _run(case)


@st.composite
def dynamic_slices(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    sizes = tuple(draw(st.integers(1, n)) for n in dims)
    offsets = [draw(st.integers(-2, n + 1)) for n in dims]
    args = ", ".join(f"p{k + 1}" for k in range(len(dims)))
    values = {k + 1: np.array(v) for k, v in enumerate(offsets)}
    op = f"dynamic-slice(p0, {args}), dynamic_slice_sizes={_braces(sizes)}"
    return Case([_shape(dims)] + ["s32[]"] * len(dims), op, _shape(sizes), values)


@SETTINGS
@given(case=dynamic_slices())
def test_dynamic_slice(case: Case) -> None:
    _run(case)


@st.composite
def dynamic_update_slices(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    upd = tuple(draw(st.integers(1, n)) for n in dims)
    offsets = [draw(st.integers(-2, n + 1)) for n in dims]
    args = ", ".join(f"p{k + 2}" for k in range(len(dims)))
    values = {k + 2: np.array(v) for k, v in enumerate(offsets)}
    op = f"dynamic-update-slice(p0, p1, {args})"
    shapes = [_shape(dims), _shape(upd)] + ["s32[]"] * len(dims)
    # Operand 0 is mapped with the identity, updated elements included: a superset.
    return Case(shapes, op, _shape(dims), values, exact=False)


@SETTINGS
@given(case=dynamic_update_slices())
def test_dynamic_update_slice(case: Case) -> None:
    _run(case)


@SETTINGS
@given(case=dynamic_update_slices())
def test_dynamic_update_slice_update_is_exact_where_in_bounds(case: Case) -> None:
    """The update map (with the real offsets) reads exactly the update element, when its result
    is inside the update; outside it, XLA's map has no constraint and points past the update."""
    ctx = case.ctx()
    actual = interpret(ctx, case.values)
    upd = ctx.operand_shape(1).dims
    predicted = map_reads(case, ctx, output_to_input(ctx).maps[1])
    for idx in itertools.product(*(range(n) for n in actual.shape)):
        want = {i for (j, i) in actual[idx] if j == 1}
        got = {i for i in predicted.get(idx, set()) if all(0 <= x < n for x, n in zip(i, upd))}
        assert got == want


@st.composite
def gathers(draw: st.DrawFn) -> Case:
    dims = draw(nonempty_dims)
    start_map = draw(st.permutations(range(len(dims))))
    start_map = start_map[: draw(st.integers(1, len(dims)))]
    sizes = tuple(draw(st.integers(1, n)) for n in dims)
    batch = draw(st.integers(1, 3))
    indices = np.array(
        [[draw(st.integers(-1, dims[d] + 1)) for d in start_map] for _ in range(batch)]
    )
    op = (
        f"gather(p0, p1), offset_dims={_braces(list(range(1, len(dims) + 1)))}, "
        f"collapsed_slice_dims={{}}, start_index_map={_braces(list(start_map))}, "
        f"index_vector_dim=1, slice_sizes={_braces(sizes)}"
    )
    out = (batch, *sizes)
    return Case([_shape(dims), f"s32[{batch},{len(start_map)}]"], op, _shape(out), {1: indices})


@SETTINGS
@given(case=gathers())
def test_gather(case: Case) -> None:
    _run(case)


# -- a few fixed cases the strategies may not reach --------------------------------------------


def test_unit_dims_and_zero_sized_maps_are_consistent() -> None:
    _run(Case(["f32[1,4,1]{0,2,1}"], "bitcast(p0)", "f32[4]", {}), both=True)
    _run(Case(["f32[2,1,3]"], "transpose(p0), dimensions={2,0,1}", "f32[3,2,1]", {}), both=True)


def test_every_registered_data_movement_rule_is_exercised() -> None:
    """The strategies above cover every opcode whose maps they check (guards against a rule
    being added without a semantic test)."""
    covered = {
        "add", "multiply", "maximum", "subtract", "select", "clamp", "broadcast", "transpose",
        "reverse", "slice", "concatenate", "pad", "reshape", "bitcast", "reduce",
        "reduce-window", "dot", "convolution", "dynamic-slice", "dynamic-update-slice", "gather",
    }  # fmt: skip
    from hlo_layout.indexing.rules import RULES

    structural = {"constant", "iota", "parameter", "fusion", "call", "tuple", "get-tuple-element"}
    collectives = {"all-gather", "all-gather-start", "all-reduce", "all-reduce-start",
                   "all-reduce-done", "scan", "scaled-dot"}  # fmt: skip
    from hlo_layout.syntax.opcodes import ELEMENTWISE

    unchecked = set(RULES) - covered - structural - collectives - set(ELEMENTWISE)
    assert not unchecked, unchecked
