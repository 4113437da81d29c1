"""Oracle readers for the memory tests: XLA's live-range and buffer-assignment files."""

from __future__ import annotations

import re
from pathlib import Path

from hlo_layout.memory import MemoryAnalysis, analyze_memory
from hlo_layout.reader import load
from hlo_layout.reader.sidefiles import read_buffer_assignment

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
CORPUS = DATA / "corpus"
GENERATED = DATA / "memory" / "cpu-gen"
#: Every folder of generated CPU dumps with XLA's files and jax's figures (READMEs there).
CPU_GENERATED = (
    GENERATED,
    DATA / "memory" / "cpu-gen2",
    DATA / "memory" / "cpu-gen3",
    DATA / "memory" / "jax012-cpu",
)
_RANGE = re.compile(r"^\s+(\S+\{[\d,]*\}):(\d+)-(\d+)$")


def dump_of(oracle: Path, suffix: str) -> Path:
    return oracle.with_name(oracle.name.replace(suffix, ".txt"))


def live_ranges(path: Path) -> list[tuple[str, int, int]]:
    """`name{index}:start-end` rows of the BufferLiveRange section of `*-live-range.txt`."""
    rows = []
    section = False
    for line in path.read_text().splitlines():
        if line.strip() == "BufferLiveRange:":
            section = True
            continue
        if section:
            m = _RANGE.match(line)
            if m is None:
                break
            rows.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return rows


def compiler_temps(path: Path) -> dict[int, int]:
    """Preallocated-temp bytes per color of a compiler's buffer assignment."""
    out: dict[int, int] = {}
    for a in read_buffer_assignment(path).allocations:
        if a.is_preallocated_temp:
            out[a.color] = out.get(a.color, 0) + a.size
    return out


def analyze(path: Path, backend: str | None = None) -> MemoryAnalysis:
    """Our analysis of a dump as the reader finds it (backend, TPU generation from the files
    beside it), WITHOUT the compiler's buffer assignment."""
    (dump,) = load(path).dumps
    return analyze_memory(dump.module, backend or dump.backend, None, file=str(path))


def evaluations(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The computations DataflowAnalysis evaluates from now on, in order, a name per evaluation
    (each `_steps` generator it starts), recorded through `monkeypatch`."""
    from hlo_layout.memory.dataflow import DataflowAnalysis

    seen: list[str] = []
    steps = DataflowAnalysis._steps

    def counting(self, c, params):  # type: ignore[no-untyped-def]
        seen.append(c.name)
        return steps(self, c, params)

    monkeypatch.setattr(DataflowAnalysis, "_steps", counting)
    return seen
