"""The skeleton a streamed dump keeps gives the same memory report and peak as the full tree."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from hlo_layout.memory import analyze_memory, detect_backend
from hlo_layout.memory.footprint import memory_report
from hlo_layout.report.model import memory_json
from hlo_layout.report.skeleton import (
    SKELETON_ATTRIBUTES,
    BackendVote,
    SkeletonSpool,
    skeleton_computation,
    skeleton_module,
)
from hlo_layout.syntax import parse_modules
from hlo_layout.syntax.index import callees, computation_kinds
from hlo_layout.syntax.tree import Module
from tests.support import corpus_id, corpus_modules, hlo_files

FILES = hlo_files()


def _skeleton(module: Module) -> tuple[Module, BackendVote]:
    vote = BackendVote()
    for c in module.computations:
        vote.add(c)
    skeleton = skeleton_module(
        module.name,
        tuple(skeleton_computation(c) for c in module.computations),
        tuple(module.attributes),
    )
    return skeleton, vote


def _without_sources(analysis: dict) -> dict:
    """`memory --format json` minus what the skeleton drops on purpose (metadata)."""
    analysis = dict(analysis)
    analysis["live_at_peak"] = [
        {k: v for k, v in b.items() if k not in ("op_name", "source", "via", "argument")}
        for b in analysis["live_at_peak"]
    ]
    del analysis["by_op_name"]  # grouped by op_name
    del analysis["by_source"]  # grouped by source line
    del analysis["frontend"]  # told by metadata too
    analysis["notes"] = [n for n in analysis["notes"] if not n.startswith("jax on CPU")]
    return analysis


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_spooled_skeleton_reads_back_equal(path: Path) -> None:
    """The spool gives back `skeleton_computation` of every computation reachable from the
    entry, in file order, and none other: global and thread-local ones held, fusion bodies on
    demand; the kinds it computes from the calls alone equal `computation_kinds`."""
    for module in corpus_modules(path):
        entry = module.entry
        if entry is None:
            continue
        with tempfile.TemporaryFile("w+b") as f:
            spool = SkeletonSpool(f)
            for c in module.computations:
                spool.add(c, [(name, i.opcode) for name, i in callees(c)])
            got = spool.module(module.name, tuple(module.attributes), entry.name)
            kinds = computation_kinds(module)
            assert computation_kinds(got) == kinds
            held = [
                skeleton_computation(c)
                for c in module.computations
                if kinds.get(c.name) == "global"
            ]
            assert list(got.computations) == held
            for c in module.computations:  # the others: read back when asked for
                if c.name in kinds:
                    slim = skeleton_computation(c)
                    assert got.computation(c.name) == slim
                    assert got.computation("%" + c.name) == slim
                    if kinds[c.name] != "global":  # its root, known without reading it
                        root = slim.root
                        assert got.root_signature(c.name) == (
                            (root.opcode, tuple(a.key for a in root.attributes))
                            if root is not None
                            else None
                        )
                else:
                    assert got.computation(c.name) is None
            assert module.root_signature(entry.name) is None  # a tree in memory: read it
            for kind in ("global", "thread_local", "fusion"):
                named = {n for n, k in kinds.items() if k == kind}
                assert list(got.computations_in(named)) == [
                    skeleton_computation(c) for c in module.computations_in(named)
                ]


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_skeleton_report_equals_full_report(path: Path) -> None:
    for module in corpus_modules(path):
        skeleton, vote = _skeleton(module)
        backend = vote.choice(path)
        assert backend == detect_backend(module, str(path))
        full = memory_json(memory_report(module, top=5, file=path))
        slim = memory_json(memory_report(skeleton, top=5, backend=backend))
        assert slim == full
        if module.entry is not None:
            expected = analyze_memory(module, backend).to_dict()
            got = analyze_memory(skeleton, backend).to_dict()
            assert _without_sources(got) == _without_sources(expected)


def test_skeleton_keeps_only_what_the_analysis_reads() -> None:
    (module,) = parse_modules(
        "HloModule m, is_scheduled=true\n"
        "%f (p: f32[4]) -> f32[4] {\n"
        "  ROOT %p = f32[4]{0} parameter(0)\n"
        "}\n"
        "ENTRY %e (x: f32[4]) -> f32[4] {\n"
        '  %x = f32[4]{0} parameter(0), metadata={op_name="jit(f)/x"}\n'
        "  %c = f32[4]{0} constant({1, 2, 3, 4})\n"
        '  ROOT %y = f32[4]{0} fusion(%x, %c), kind=kLoop, calls=%f, backend_config="{}"\n'
        "}\n"
    )
    skeleton, _ = _skeleton(module)
    entry = skeleton.computation("e")
    assert entry is not None
    assert [tuple(i.attributes) for i in entry.instructions] == [
        (),
        (),
        tuple(
            a
            for a in module.computations[1].instructions[2].attributes
            if a.key != "backend_config"
        ),
    ]
    assert all(a.key in SKELETON_ATTRIBUTES for i in entry.instructions for a in i.attributes)
    assert entry.instructions[1].literal is None
    assert all(i.span is None for i in entry.instructions)
    assert entry.instructions[2].called_computations == ("f",)
    assert entry.instructions[2].fusion_kind == "kLoop"
    assert skeleton.attr("is_scheduled") is not None


def test_backend_vote_prefers_tiled_layouts_over_gpu_marks() -> None:
    (module,) = parse_modules(
        "HloModule m\n"
        "%g (p: f32[4]) -> f32[4] {\n"
        '  ROOT %p = f32[4]{0} custom-call(), custom_call_target="__cublas$gemm"\n'
        "}\n"
        "ENTRY %e (x: f32[128]) -> f32[128] {\n"
        "  ROOT %x = f32[128]{0:T(128)} parameter(0)\n"
        "}\n"
    )
    vote = BackendVote()
    vote.add(module.computations[0])
    assert vote.choice(None).backend.name == "gpu"
    vote.add(module.computations[1])
    assert vote.choice(None).backend.name == "tpu" == detect_backend(module).backend.name


def test_skeleton_keeps_what_the_gpu_sharing_hints_read() -> None:
    """The GPU hints read a reduce's `dimensions` (is it the reduction emitter's hero?), an
    all-reduce's and a cuBLASLt call's `backend_config` (NVSHMEM; beta): on the skeleton they
    give every verdict they give on the whole tree."""
    from hlo_layout.memory.dataflow import subshapes
    from hlo_layout.memory.gpu_alias import gpu_may_alias

    (module,) = parse_modules(
        "HloModule m, is_scheduled=true\n"
        "%mx (a: f32[], b: f32[]) -> f32[] {\n"
        "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
        "  ROOT %m = f32[] maximum(%a, %b)\n}\n"
        "%f (l: f32[3,40], r: f32[3,40]) -> (f32[], f32[3,40]) {\n"
        "  %l = f32[3,40]{1,0} parameter(0)\n  %r = f32[3,40]{1,0} parameter(1)\n"
        "  %add = f32[3,40]{1,0} add(%l, %r)\n  %bc = f32[120]{0} bitcast(%add)\n"
        "  %init = f32[] constant(-inf)\n"
        "  %max = f32[] reduce(%bc, %init), dimensions={0}, to_apply=%mx\n"
        "  ROOT %t = (f32[], f32[3,40]{1,0}) tuple(%max, %add)\n}\n"
        "ENTRY %e (x: f32[3,40], y: f32[3,40], z: f32[4,4]) -> f32[4,4] {\n"
        "  %x = f32[3,40]{1,0} parameter(0)\n  %y = f32[3,40]{1,0} parameter(1)\n"
        "  %z = f32[4,4]{1,0} parameter(2)\n"
        "  %fu = (f32[], f32[3,40]{1,0}) fusion(%x, %y), kind=kLoop, calls=%f\n"
        '  %ar = f32[4,4]{1,0} all-reduce(%z), to_apply=%mx, backend_config="nvshmem"\n'
        "  %g = (f32[4,4]{1,0}, s8[64]{0}) custom-call(%z, %z, %ar),"
        ' custom_call_target="__cublas$lt$matmul",'
        ' backend_config={"gemm_backend_config":{"beta":1}}\n'
        "  ROOT %o = f32[4,4]{1,0} get-tuple-element(%g), index=0\n}\n",
        "m.hlo",
    )
    skeleton, _ = _skeleton(module)

    def verdicts(m: Module) -> list[bool | None]:
        out = []
        entry = m.entry
        assert entry is not None
        for user in entry.instructions:
            body = m.computation(user.called_computations[0]) if user.opcode == "fusion" else None
            users: dict = {}
            for i in body.instructions if body is not None else ():
                for o in i.operands:
                    users.setdefault(o.name, []).append(i)
            for k, o in enumerate(user.operands):
                operand = entry.resolve(o)
                assert operand is not None
                for index, _ in subshapes(user.shape):
                    out.append(gpu_may_alias([k], operand.shape, user, index, body, users))
        return out

    full = verdicts(module)
    assert True in full and False in full  # the hints do decide here
    assert verdicts(skeleton) == full
