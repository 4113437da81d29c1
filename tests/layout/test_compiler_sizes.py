"""Our byte sizes against the compiler's own: every array value of every buffer assignment in the
corpus, libtpu's memory_analysis() per program, and the TPU out-of-memory report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_layout.layout import (
    TPU_TABLE_ALIGNMENT,
    footprint,
    logical_bytes,
    physical_bytes,
    pointer_table_bytes,
)
from hlo_layout.reader.sidefiles import read_buffer_assignment
from hlo_layout.report.units import human_bytes
from hlo_layout.syntax import ArrayShape, parse_file, parse_shape
from tests.support import CORPUS, SAMPLES, corpus_id

BUFFER_FILES = sorted(CORPUS.rglob("*buffer-assignment.txt")) + sorted(
    SAMPLES.rglob("*buffer-assignment.txt")
)
LIBTPU = sorted(CORPUS.glob("libtpu-*/memory_analysis.json"))


def _id(path: Path) -> str:
    return corpus_id(path) if CORPUS in path.parents else path.relative_to(SAMPLES).as_posix()


def test_the_corpus_covers_every_backend() -> None:
    kinds = {p.relative_to(CORPUS).parts[0] for p in BUFFER_FILES if CORPUS in p.parents}
    assert {"jax-cpu", "jax-gpu-h100", "libtpu-v4", "libtpu-v5e"} <= kinds


@pytest.mark.parametrize("path", BUFFER_FILES, ids=_id)
def test_physical_bytes_equal_the_buffer_assignment(path: Path) -> None:
    values = [v for v in read_buffer_assignment(path).values if isinstance(v.shape, ArrayShape)]
    assert values, "every buffer assignment has array values"
    wrong = [
        (v.instruction, v.shape_text, v.size, physical_bytes(v.shape))
        for v in values
        if physical_bytes(v.shape) != v.size
    ]
    assert not wrong, f"{len(wrong)}/{len(values)} sizes differ: {wrong[:5]}"


def test_buffer_assignment_value_count_matches_the_text() -> None:
    # The reader keeps every value line (100 % means all of them, not the ones it understood).
    for path in BUFFER_FILES:
        text = path.read_text()
        assert len(read_buffer_assignment(path).values) == text.count("\n value: ")


def _programs() -> list[tuple[Path, str, dict]]:
    out = []
    for path in LIBTPU:
        for program, figures in sorted(json.loads(path.read_text())["memory_analysis"].items()):
            out.append((path.parent, program, figures))
    return out


PROGRAMS = _programs()


def test_memory_analysis_covers_both_tpus() -> None:
    assert {d.name for d, _, _ in PROGRAMS} == {"libtpu-v4", "libtpu-v5e"}
    assert len(PROGRAMS) >= 18


@pytest.mark.parametrize(
    ("folder", "program", "figures"), PROGRAMS, ids=[f"{d.name}/{p}" for d, p, _ in PROGRAMS]
)
def test_entry_parameters_sum_to_argument_size(folder: Path, program: str, figures: dict) -> None:
    module = parse_file(folder / program / f"{program}.after_optimizations.txt")
    entry = module.entry
    assert entry is not None
    arguments = sum(footprint(p.shape).physical_bytes for p in entry.parameter_instructions)
    assert arguments == figures["argument_size_in_bytes"] + figures["host_argument_size_in_bytes"]


@pytest.mark.parametrize(
    ("folder", "program", "figures"), PROGRAMS, ids=[f"{d.name}/{p}" for d, p, _ in PROGRAMS]
)
def test_entry_outputs_and_tuple_table(folder: Path, program: str, figures: dict) -> None:
    # Device outputs plus the tuple's pointer table (512 B on TPU) make output_size_in_bytes;
    # outputs offloaded to host (S(5)) make host_output_size_in_bytes.
    module = parse_file(folder / program / f"{program}.after_optimizations.txt")
    root = module.entry.root
    arrays = footprint(root.shape).arrays
    host = sum(a.physical_bytes for a in arrays if a.memory_space == 5)
    device = sum(a.physical_bytes for a in arrays if a.memory_space != 5)
    table = pointer_table_bytes(root.shape, alignment=TPU_TABLE_ALIGNMENT)
    assert device + table == figures["output_size_in_bytes"]
    assert host == figures["host_output_size_in_bytes"]


def _oom_entries() -> list[dict[str, str]]:
    text = (CORPUS / "public" / "oom-reports").glob("*resnet152*")
    entries = []
    for path in text:
        for block in re.split(r"\n\s*\d+\. ", path.read_text())[1:]:
            fields = dict(re.findall(r"^\s*(Size|Shape|Unpadded size): (\S+)", block, re.M))
            expansion = re.search(r"\((\d+\.\dx) expansion\)", block)
            if "Shape" in fields:
                fields["expansion"] = expansion.group(1) if expansion else "1.0x"
                entries.append(fields)
    return entries


OOM = _oom_entries()


def test_oom_report_was_read() -> None:
    assert len(OOM) >= 20


@pytest.mark.parametrize("entry", OOM, ids=[e["Shape"] for e in OOM])
def test_tpu_oom_report_size_and_unpadded_size(entry: dict[str, str]) -> None:
    # The TPU OOM report prints sizes as HumanReadableNumBytes without the "iB".
    shape = parse_shape(entry["Shape"])
    assert isinstance(shape, ArrayShape)
    assert human_bytes(physical_bytes(shape)).removesuffix("iB") == entry["Size"]
    assert human_bytes(logical_bytes(shape)).removesuffix("iB") == entry["Unpadded size"]
    ratio = physical_bytes(shape) / logical_bytes(shape)
    assert f"{ratio:.1f}x" == entry["expansion"]
