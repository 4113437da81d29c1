"""The skeleton a streamed dump keeps gives the same memory report and peak as the full tree."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from hlo_layout.layout.module_memory import memory_report
from hlo_layout.layout.skeleton import (
    SKELETON_ATTRIBUTES,
    BackendVote,
    SkeletonSpool,
    skeleton_computation,
    skeleton_module,
)
from hlo_layout.memory import analyze_memory, detect_backend
from hlo_layout.memory.dataflow import computation_kinds
from hlo_layout.report.model import memory_json
from hlo_layout.syntax import parse_modules
from hlo_layout.syntax.index import callees
from hlo_layout.syntax.tree import Module
from tests.conftest import corpus_id, corpus_modules, hlo_files

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
        {k: v for k, v in b.items() if k not in ("op_name", "source")}
        for b in analysis["live_at_peak"]
    ]
    del analysis["by_op_name"]  # grouped by op_name
    return analysis


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_spooled_skeleton_reads_back_equal(path: Path) -> None:
    """The spool gives back `skeleton_computation` of every computation reachable from the
    entry, in file order, and none other."""
    for module in corpus_modules(path):
        entry = module.entry
        if entry is None:
            continue
        with tempfile.TemporaryFile("w+b") as f:
            spool = SkeletonSpool(f)
            for c in module.computations:
                spool.add(c, tuple(dict.fromkeys(name for name, _ in callees(c))))
            got = spool.module(module.name, tuple(module.attributes), entry.name)
        reached = computation_kinds(module)
        expected = [skeleton_computation(c) for c in module.computations if c.name in reached]
        assert list(got.computations) == expected
        assert [c.name for c in got.computations] == [c.name for c in expected]


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_skeleton_report_equals_full_report(path: Path) -> None:
    for module in corpus_modules(path):
        skeleton, vote = _skeleton(module)
        backend = vote.backend(path)
        assert backend == detect_backend(module, path)[0]
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
    assert vote.backend(None).name == "gpu"
    vote.add(module.computations[1])
    assert vote.backend(None).name == "tpu" == detect_backend(module)[0].name
