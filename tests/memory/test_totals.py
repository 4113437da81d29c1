"""The buffer assignment's total per memory space, from the dump alone, against the compiler's.

On CPU and GPU the headline peak is what the compiler allocates: the sum of the sizes of all our
BufferAssigner's allocations of a space, the temp allocations combined (CombineTempAllocations).
It must equal the sum of the allocation sizes of XLA's `*buffer-assignment.txt` and the `Total
bytes` of its `*memory-usage-report.txt`, on every CPU and GPU dump we have: the corpus, every
generated folder, jax 0.12's, and TensorFlow's and torch-xla's (tests/data/frontends).

jax 0.12's `memory_analysis().total_allocation_bytes` is that total with the thread-local
allocations (reducers', comparators' scalars) left out on CPU, and the default space's total,
thread-local ones included, on TPU.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.assigner import BufferAssigner
from hlo_layout.memory.dataflow import DataflowAnalysis
from hlo_layout.memory.live_range import LiveRange
from hlo_layout.memory.peak import allocation_bytes_by_space
from hlo_layout.reader import load
from hlo_layout.reader.sidefiles import read_buffer_assignment
from tests.memory.helpers import CORPUS, DATA, analyze

ASSIGNMENTS = sorted(
    [
        *(CORPUS / "jax-cpu").glob("*-buffer-assignment.txt"),
        *(CORPUS / "jax-cpu-spmd").glob("*-buffer-assignment.txt"),
        *(CORPUS / "jax-gpu-h100").glob("*-buffer-assignment.txt"),
        *DATA.glob("memory/*/*-buffer-assignment.txt"),
        *DATA.glob("frontends/*/*/*-buffer-assignment.txt"),
    ]
)
_TOTAL = re.compile(r"color=(\d+)\)\s*\nTotal bytes: (\d+)")
_TOTAL_OLD = re.compile(r"^Total bytes used: (\d+)", re.M)


def assigner_of(path: Path) -> BufferAssigner:
    """Our buffer assignment of a dump, the backend as the reader finds it."""
    (dump,) = load(path).dumps
    module, backend = dump.module, dump.backend.backend
    df = DataflowAnalysis(module, backend)
    alias = AliasAnalysis(df)
    return BufferAssigner(df, alias, LiveRange(df, alias), backend)


def allocation_totals(assigner: BufferAssigner) -> dict[int, int]:
    """Every allocation's size per color, the temps as CombineTempAllocations lays them (the
    headline's, memory/peak.py), empty spaces left out."""
    return {c: n for c, n in allocation_bytes_by_space(assigner).items() if n}


def thread_local_bytes(assigner: BufferAssigner) -> int:
    return sum(a.size for a in assigner.allocations if a.kind == "thread_local")


def _dump(assignment: Path) -> Path:
    return assignment.with_name(assignment.name.replace("-buffer-assignment.txt", ".txt"))


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name[:48]}"


def test_every_cpu_and_gpu_dump_is_here() -> None:
    assert len(ASSIGNMENTS) >= 100


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=_id)
def test_allocation_total_per_space_equals_the_compilers(assignment: Path) -> None:
    ours = allocation_totals(assigner_of(_dump(assignment)))
    theirs: dict[int, int] = {}
    for a in read_buffer_assignment(assignment).allocations:
        theirs[a.color] = theirs.get(a.color, 0) + a.size
    assert ours == {c: n for c, n in theirs.items() if n}
    report = assignment.with_name(
        assignment.name.replace("-buffer-assignment", "-memory-usage-report")
    )
    if report.is_file():
        text = report.read_text()
        per_color = {int(c): int(n) for c, n in _TOTAL.findall(text)}
        if per_color:  # `Memory Space: ... (color=N)` / `Total bytes: N` per space
            assert ours == {c: n for c, n in per_color.items() if n}
        else:  # the older report: one total of every space (TensorFlow, torch-xla)
            (total,) = _TOTAL_OLD.findall(text)
            assert sum(ours.values()) == int(total)


JAX012_CPU = DATA / "memory" / "jax012-cpu"
JAX012_TPU = DATA / "memory" / "jax012-tpu"


@pytest.mark.parametrize(
    "program,figures",
    sorted(json.loads((JAX012_CPU / "memory_analysis.json").read_text()).items()),
)
def test_jax_total_allocation_bytes_cpu(program: str, figures: dict) -> None:
    """jax 0.12 on CPU: our total less the thread-local allocations."""
    (dump,) = JAX012_CPU.glob(f"module_*.jit_{program}.cpu_after_optimizations.txt")
    assigner = assigner_of(dump)
    total = sum(allocation_totals(assigner).values())
    assert total - thread_local_bytes(assigner) == figures["total_allocation_bytes"]


TPU_PROGRAMS = [
    (JAX012_TPU / generation, name, figures)
    for generation in ("v5e", "v6e")
    for name, figures in sorted(
        json.loads((JAX012_TPU / generation / "memory_analysis.json").read_text())[
            "memory_analysis"
        ].items()
    )
]


@pytest.mark.parametrize(
    "folder,name,figures", TPU_PROGRAMS, ids=[f"{f.name}-{n}" for f, n, _ in TPU_PROGRAMS]
)
def test_jax_total_allocation_bytes_tpu(folder: Path, name: str, figures: dict) -> None:
    """jax 0.12 on TPU: the default memory space's total (HBM), thread-local included; the
    compiler's own file says the same."""
    ours = allocation_totals(assigner_of(folder / name / f"{name}.after_optimizations.txt"))
    assert ours[0] == figures["total_allocation_bytes"]
    hbm = sum(
        a.size
        for a in read_buffer_assignment(folder / name / f"{name}.buffer-assignment.txt").allocations
        if a.color == 0
    )
    assert hbm == figures["total_allocation_bytes"]


def test_no_step_holds_more_than_the_space_allocates() -> None:
    """CPU and GPU: the bytes live at any step of a space never exceed what the compiler
    allocates in it."""
    over = []
    for assignment in ASSIGNMENTS:
        dump = _dump(assignment)
        totals = allocation_totals(assigner_of(dump))
        ma = analyze(dump)
        for color, series in ma.timelines.items():
            if series and max(series) > totals.get(color, 0):
                over.append((_id(assignment), color, max(series), totals.get(color, 0)))
    assert not over


TPU_ASSIGNMENTS = sorted(
    [
        *DATA.glob("memory/tpu-*/*/*/*.buffer-assignment.txt"),
        *DATA.glob("memory/tpu-*/*/*.buffer-assignment.txt"),
        *DATA.glob("memory/jax012-tpu/*/*/*.buffer-assignment.txt"),
        *CORPUS.glob("libtpu-*/*/*.buffer-assignment.txt"),
    ]
)


@pytest.mark.parametrize("assignment", TPU_ASSIGNMENTS, ids=_id)
def test_tpu_value_sizes_equal_the_compilers(assignment: Path) -> None:
    """Every value libtpu's buffer assignment lists, thread-local ones (reducers' and
    comparators' scalars: `f32[]` with no layout takes 4096 B, bf16 2048, pred 1024) and
    SparseCore ones (S(2) and S(8)-S(15) untiled, the offload thread's tuples color 7, size 0)
    included, has the compiler's size and memory space."""
    from hlo_layout.memory.assigner import value_color, value_size
    from hlo_layout.memory.dataflow import subshape

    dump = assignment.with_name(
        assignment.name.replace(".buffer-assignment.txt", ".after_optimizations.txt")
    )
    assigner = assigner_of(dump)
    ours = {
        (v.instruction.name, v.index): (assigner.size[v.id], assigner.color[v.id])
        for v in assigner.df.values
    }
    shapes = {i.name: i.shape for c in assigner.df.module.computations for i in c.instructions}
    checked = 0
    for a in read_buffer_assignment(assignment).allocations:
        for v in a.values:
            got = ours.get((v.instruction, v.index))
            if got is None and v.instruction in shapes:  # a thread-local value
                shape = subshape(shapes[v.instruction], v.index)
                if shape is not None:
                    got = (value_size(shape, assigner.backend), value_color(shape))
            if got is None:
                continue
            assert got == (v.size, v.color), (v.instruction, v.index)
            checked += 1
    assert checked
