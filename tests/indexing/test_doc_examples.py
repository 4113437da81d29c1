"""Every example of XLA's indexing-analysis document (docs/indexing.md), reproduced.

The maps below are copied from the document. It still prints floor division as `floordiv` and
sums in MLIR's order (`d2 + (d1 mod 2) * 4`); where that is the only difference, the example is
compared by meaning (same results at every point of the same domain) and the current spelling is
checked too (`/`, kind-ordered sums), so every example holds exactly in XLA's current format.
"""

from __future__ import annotations

import pytest

from hlo_layout.indexing import parse_indexing_map, same_text
from hlo_layout.indexing.fusion import computation_output_to_input
from hlo_layout.indexing.map import point_results
from hlo_layout.indexing.operand import InstructionIndexing, OperandIndexing
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.indexing.text import format_indexing_map
from hlo_layout.syntax import parse


def _ctx(hlo: str, target: str) -> OpContext:
    module = parse(hlo)
    for comp in module.computations:
        if target in comp:
            return OpContext(comp[target], comp, module)
    raise KeyError(target)


_REDUCERS = "".join(
    f"{name} {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    f"  ROOT r = f32[] {op}(a, b)\n}}\n"
    for name, op in (("add", "add"), ("max", "maximum"))
)


def _entry(body: str, target: str) -> OpContext:
    return _ctx("HloModule m\n" + _REDUCERS + "ENTRY e {\n" + body + "\n}\n", target)


def _only(slot: frozenset[OperandIndexing]) -> str:
    (oi,) = slot
    return format_indexing_map(oi.map)


def assert_doc_map(actual: str, doc: str, current: str | None = None) -> None:
    """`actual` is the document's map: equal as text once whitespace is dropped, or, when the
    document uses the legacy spelling, equal by meaning and equal to `current` as text."""
    if same_text(actual, doc):
        return
    assert current is not None, f"{actual!r} != {doc!r}"
    assert same_text(actual, current), f"{actual!r} != {current!r}"
    want = point_results(parse_indexing_map(doc))
    assert point_results(parse_indexing_map(actual)) == want


def o2i(ctx: OpContext, k: int = 0, output_id: int = 0) -> str:
    return _only(output_to_input(ctx, output_id).maps[k])


def i2o(ctx: OpContext, input_id: int = 0, output: int = 0) -> str:
    return _only(input_to_output(ctx, input_id).maps[output])


def test_reduce_in_the_introduction() -> None:
    ctx = _entry(
        "in = f32[2, 4, 8, 16] parameter(0)\nc = f32[] constant(0)\n"
        "out = f32[4, 8] reduce(in, c), dimensions={0,3}, to_apply=add",
        "out",
    )
    assert_doc_map(
        i2o(ctx),
        "(d0, d1, d2, d3) -> (d1, d2), domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 7], "
        "d3 in [0, 15]",
    )
    assert_doc_map(
        o2i(ctx),
        "(d0, d1)[s0, s1] -> (s0, d0, d1, s1), domain: d0 in [0, 3], d1 in [0, 7], "
        "s0 in [0,1], s1 in [0, 15]",
    )


def test_elementwise() -> None:
    ctx = _entry(
        "p0 = f32[10, 20] parameter(0)\np1 = f32[10, 20] parameter(1)\n"
        "output = f32[10, 20] add(p0, p1)",
        "output",
    )
    doc = "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 9],\nd1 in [0, 19]"
    assert_doc_map(o2i(ctx, 0), doc)
    assert_doc_map(i2o(ctx, 0), doc)


def test_broadcast() -> None:
    ctx = _entry(
        "p0 = f32[20] parameter(0)\nbc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}", "bc0"
    )
    assert_doc_map(
        o2i(ctx), "(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
    )
    assert_doc_map(
        i2o(ctx), "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]"
    )


def test_iota_has_no_operand() -> None:
    # The document shows `(d0, d1) -> ()` for iota, but an iota reads nothing: XLA's code (and
    # ours) gives no operand maps at all (indexing.md §(b), last note).
    ctx = _entry("ROOT iota = f32[2,4] iota(), iota_dimension=1", "iota")
    assert output_to_input(ctx).maps == ()


def test_dynamic_slice() -> None:
    ctx = _entry(
        "src = s32[2, 2, 258] parameter(0)\nof1 = s32[] parameter(1)\nof2 = s32[] parameter(2)\n"
        "of3 = s32[] parameter(3)\n"
        "ds = s32[1, 2, 32] dynamic-slice(src, of1, of2, of3), dynamic_slice_sizes={1, 2, 32}",
        "ds",
    )
    assert_doc_map(
        o2i(ctx, 0),
        "(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2), domain: d0 in [0, 0], "
        "d1 in [0, 1], d2 in [0, 31], rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226]",
    )
    for k in (1, 2, 3):
        assert_doc_map(
            o2i(ctx, k), "(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]"
        )


def test_dynamic_update_slice() -> None:
    ctx = _entry(
        "src = s32[20,30] parameter(0)\nupd = s32[5,10] parameter(1)\nof1 = s32[] parameter(2)\n"
        "of2 = s32[] parameter(3)\n"
        "dus = s32[20,30] dynamic-update-slice("
        "s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)",
        "dus",
    )
    assert_doc_map(o2i(ctx, 0), "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]")
    assert_doc_map(
        o2i(ctx, 1),
        "(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1), domain: d0 in [0, 19], d1 in [0, 29], "
        "rt0 in [0, 15], rt1 in [0, 20]",
    )
    assert_doc_map(o2i(ctx, 2), "(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]")


def test_gather() -> None:
    ctx = _entry(
        "operand = f32[33,76,70] parameter(0)\nindices = s32[1806,2] parameter(1)\n"
        "gather = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3}, "
        "collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={7,8,4}",
        "gather",
    )
    domain = "d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]"
    assert_doc_map(
        o2i(ctx, 0),
        f"(d0, d1, d2, d3){{rt0, rt1}} -> (d1 + rt0, d2 + rt1, d3), domain: {domain}, "
        "rt0 in [0, 26], rt1 in [0, 68]",
    )
    assert_doc_map(o2i(ctx, 1), f"(d0, d1, d2, d3)[s0] -> (d0, s0), domain: {domain}, s0 in [0, 1]")


def test_transpose() -> None:
    ctx = _entry(
        "p0 = f32[3, 12288, 6, 128] parameter(0)\n"
        "transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}",
        "transpose",
    )
    assert_doc_map(
        o2i(ctx),
        "(d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 5], "
        "d2 in [0, 127], d3 in [0, 12287]",
    )
    assert_doc_map(
        i2o(ctx),
        "(d0, d1, d2, d3) -> (d0, d2, d3, d1), domain: d0 in [0, 2], d1 in [0, 12287], "
        "d2 in [0, 5], d3 in [0, 127]",
    )


def test_reverse() -> None:
    ctx = _entry(
        "p0 = f32[1, 17, 9, 9] parameter(0)\n"
        "reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}",
        "reverse",
    )
    doc = (
        "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], "
        "d2 in [0, 8], d3 in [0, 8]"
    )
    assert_doc_map(o2i(ctx), doc)
    assert_doc_map(i2o(ctx), doc)


def test_variadic_reduce() -> None:
    ctx = _entry(
        "p0 = f32[256,10] parameter(0)\np0_init = f32[] constant(-inf)\n"
        "p1 = s32[256,10] parameter(1)\np1_init = s32[] constant(0)\n"
        "out = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init), dimensions={0}, to_apply=max",
        "out",
    )
    assert_doc_map(o2i(ctx, 0), "(d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]")
    assert_doc_map(o2i(ctx, 2), "(d0) -> (), domain: d0 in [0, 9]")
    assert_doc_map(i2o(ctx, 0), "(d0, d1) -> (d1), domain: d0 in [0, 255], d1 in [0, 9]")
    assert_doc_map(i2o(ctx, 2), "()[s0] -> (s0), domain: s0 in [0, 9]")


def test_slice() -> None:
    ctx = _entry(
        "p0 = f32[10, 20, 50] parameter(0)\n"
        "slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0), slice={[5:10:1], [3:20:7], [0:50:2]}",
        "slice",
    )
    assert_doc_map(
        o2i(ctx),
        "(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], "
        "d2 in [0, 24]",
    )
    assert_doc_map(
        i2o(ctx),
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), domain: d0 in [5, 9], "
        "d1 in [3, 17], d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]",
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) / 7, d2 / 2), domain: d0 in [5, 9], "
        "d1 in [3, 17], d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]",
    )


@pytest.mark.parametrize(
    ("src", "dst", "doc_o2i", "now_o2i", "doc_i2o", "now_i2o"),
    [
        pytest.param(
            "f32[4,8]", "f32[32]",
            "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]",
            "(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]",
            "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]", None,
            id="collapse",
        ),
        pytest.param(
            "f32[32]", "f32[4, 8]",
            "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]", None,
            "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]",
            "(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]",
            id="expand",
        ),
        pytest.param(
            "f32[4,8]", "f32[2, 4, 4]",
            "(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4), "
            "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]",
            "(d0, d1, d2) -> (d0 * 2 + d1 / 2, (d1 mod 2) * 4 + d2), "
            "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]",
            "(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7]",
            "(d0, d1) -> (d0 / 2, (d0 mod 2) * 2 + d1 / 4, d1 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7]",
            id="generic-linearize-delinearize",
        ),
        pytest.param(
            "f32[4, 8, 12]", "f32[32, 3, 4]",
            "(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), "
            "domain: d0 in [0, 31], d1 in [0, 2] d2 in [0, 3]",
            "(d0, d1, d2) -> (d0 / 8, d0 mod 8, d1 * 4 + d2), "
            "domain: d0 in [0, 31], d1 in [0, 2], d2 in [0, 3]",
            "(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]",
            "(d0, d1, d2) -> (d0 * 8 + d1, d2 / 4, d2 mod 4), "
            "domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]",
            id="expanded-and-collapsed-subshapes",
        ),
    ],
)  # fmt: skip
def test_reshape(
    src: str, dst: str, doc_o2i: str, now_o2i: str | None, doc_i2o: str, now_i2o: str | None
) -> None:
    ctx = _entry(f"p0 = {src} parameter(0)\nreshape = {dst} reshape(p0)", "reshape")
    # The document writes one domain without its comma ("d1 in [0, 2] d2 in [0, 3]").
    assert_doc_map(o2i(ctx), doc_o2i.replace("] d2", "], d2"), now_o2i)
    assert_doc_map(i2o(ctx), doc_i2o, now_i2o)


def test_concatenate() -> None:
    ctx = _entry(
        "p0 = f32[2, 5, 7] parameter(0)\np1 = f32[2, 11, 7] parameter(1)\n"
        "p2 = f32[2, 17, 7] parameter(2)\nROOT output = f32[2, 33, 7] concatenate("
        "f32[2, 5, 7] p0, f32[2, 11, 7] p1, f32[2, 17, 7] p2), dimensions={1}",
        "output",
    )
    o2i_doc = [
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]",
        "(d0, d1, d2) -> (d0, d1 - 5, d2), domain: d0 in [0, 1], d1 in [5, 15], d2 in [0, 6]",
        "(d0, d1, d2) -> (d0, d1 - 16, d2), domain: d0 in [0, 1], d1 in [16, 32], d2 in [0, 6]",
    ]
    i2o_doc = [
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]",
        "(d0, d1, d2) -> (d0, d1 + 5, d2), domain: d0 in [0, 1], d1 in [0, 10], d2 in [0, 6]",
        "(d0, d1, d2) -> (d0, d1 + 16, d2), domain: d0 in [0, 1], d1 in [0, 16], d2 in [0, 6]",
    ]
    for k in range(3):
        assert_doc_map(o2i(ctx, k), o2i_doc[k])
        assert_doc_map(i2o(ctx, k), i2o_doc[k])


def test_dot() -> None:
    ctx = _entry(
        "p0 = f32[4, 128, 256] parameter(0)\np1 = f32[4, 256, 64] parameter(1)\n"
        "output = f32[4, 128, 64] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
        "lhs_contracting_dims={2}, rhs_contracting_dims={1}",
        "output",
    )
    domain = "d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]"
    assert_doc_map(o2i(ctx, 0), f"(d0, d1, d2)[s0] -> (d0, d1, s0), domain: {domain}")
    assert_doc_map(o2i(ctx, 1), f"(d0, d1, d2)[s0] -> (d0, s0, d2), domain: {domain}")
    assert_doc_map(
        i2o(ctx, 0),
        "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], "
        "d2 in [0, 255], s0 in [0, 63]",
    )
    # The document's p1 map, `(d0, d1, d2)[s0] -> (d0, s0, d1)`, sends p1's contracting dim d1
    # to the output's rhs dim; p1's free dim is d2 (tests/indexing/test_semantics.py checks ours
    # against an interpreter). Everything else in it holds:
    rhs = parse_indexing_map(i2o(ctx, 1))
    doc = parse_indexing_map(
        "(d0, d1, d2)[s0] -> (d0, s0, d1), domain: d0 in [0, 3], d1 in [0, 255], "
        "d2 in [0, 63], s0 in [0, 127]"
    )
    assert (rhs.dims, rhs.range_vars, rhs.results[:2]) == (
        doc.dims,
        doc.range_vars,
        doc.results[:2],
    )


def test_pad() -> None:
    ctx = _entry(
        "p0 = f32[4, 4] parameter(0)\np1 = f32[] parameter(1)\n"
        "pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0",
        "pad",
    )
    assert_doc_map(
        o2i(ctx, 0),
        "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], "
        "(d0 - 1) mod 2 in [0, 0]",
        "(d0, d1) -> ((d0 - 1) / 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], "
        "(d0 - 1) mod 2 in [0, 0]",
    )
    assert_doc_map(o2i(ctx, 1), "(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]")


def test_reduce_window() -> None:
    ctx = _entry(
        "c_inf = f32[] constant(-inf)\np0 = f32[1024, 514] parameter(0)\n"
        "outpu = f32[1024, 3] reduce-window(p0, c_inf), window={size=1x512 pad=0_0x0_0}, "
        "to_apply=max",
        "outpu",
    )
    assert_doc_map(
        o2i(ctx, 0),
        "(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]",
    )
    assert_doc_map(o2i(ctx, 1), "(d0, d1) -> (), domain: d0 in [0, 1023], d1 in [0, 2]")


def _fusion(body: str) -> InstructionIndexing:
    module = parse("HloModule m\nf {\n" + body + "\n}\n")
    comp = module.computations[0]
    return computation_output_to_input(module, comp)


def test_fusion_one_input_several_maps() -> None:
    indexing = _fusion(
        "p0 = f32[1000, 1000] parameter(0)\n"
        "transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}\n"
        "ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)"
    )
    got = sorted(format_indexing_map(oi.map) for oi in indexing.maps[0])
    domain = "domain: d0 in [0, 999], d1 in [0, 999]"
    assert got == [f"(d0, d1) -> (d0, d1), {domain}", f"(d0, d1) -> (d1, d0), {domain}"]


def test_fusion_one_input_deduplicated_map() -> None:
    indexing = _fusion(
        "p0 = f32[20, 10, 50] parameter(0)\n"
        "lhs_transpose_1 = f32[10, 20, 50] transpose(p0), dimensions={1, 0, 2}\n"
        "lhs_e = f32[10, 20, 50] exponential(lhs_transpose_1)\n"
        "lhs_transpose_2 = f32[10, 50, 20] transpose(lhs_e), dimensions={0, 2, 1}\n"
        "rhs_transpose_1 = f32[50, 10, 20] transpose(p0), dimensions={2, 1, 0}\n"
        "rhs_log = f32[50, 10, 20] exponential(rhs_transpose_1)\n"
        "rhs_transpose_2 = f32[10, 50, 20] transpose(rhs_log), dimensions={1, 0, 2}\n"
        "ROOT output = f32[10, 50, 20] add(lhs_transpose_2, rhs_transpose_2)"
    )
    assert_doc_map(
        _only(indexing.maps[0]),
        "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]",
    )


def test_softmax() -> None:
    from tests.indexing.xla_data import analysis_cases

    # The document draws the softmax fusion; XLA's test spells out its HLO.
    hlo = next(c["hlo"] for c in analysis_cases() if c["name"] == "FusionOpWithSoftmax")
    ctx = _ctx(hlo, "fusion")
    got = sorted(format_indexing_map(oi.map) for oi in output_to_input(ctx).maps[0])
    doc = [
        "(d0, d1, d2) -> (d0, d1, d2),\ndomain:\nd0 in [0, 1],\nd1 in [0, 64],\nd2 in [0, 124]",
        "(d0, d1, d2)[s0] -> (d0, d1, s0),\ndomain:\nd0 in [0, 1],\nd1 in [0, 64],\n"
        "d2 in [0, 124],\ns0 in [0, 124]",
    ]
    assert len(got) == 2
    for actual, want in zip(got, doc):
        assert same_text(actual, want)


def test_chained_reshapes_cancel() -> None:
    indexing = _fusion(
        "p0 = f32[10, 10, 10] parameter(0)\nreshape1 = f32[50, 20] reshape(p0)\n"
        "ROOT reshape2 = f32[10, 10, 10] reshape(reshape1)"
    )
    assert _only(indexing.maps[0]) == (
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
