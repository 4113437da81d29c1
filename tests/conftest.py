"""Shared test data: the committed copy of the team's real-dump corpus (tests/data/corpus)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis import settings

if TYPE_CHECKING:
    from hlo_layout.syntax.tree import Module

#: Hypothesis examples have no deadline: the suite asserts behaviour, not time (speed targets
#: live in benchmarks/), and a loaded CI machine must not fail a law for being slow.
settings.register_profile("hlo-layout", deadline=None)
settings.load_profile("hlo-layout")

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
CORPUS = DATA / "corpus"
SAMPLES = REPO / "samples"

#: Files in the corpus that are compiler reports, not HLO text.
_NOT_HLO = ("buffer-assignment", "memory-usage-report", "live-range", "/oom-reports/")


def hlo_files() -> list[Path]:
    """Every HLO text dump of the corpus, in a stable order."""
    return sorted(
        p for p in CORPUS.rglob("*.txt") if not any(marker in p.as_posix() for marker in _NOT_HLO)
    )


def oracle_files() -> list[Path]:
    """Every `*.xla.json` (XLA's own parse of the dump beside it)."""
    return sorted(CORPUS.rglob("*.xla.json"))


def corpus_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


@functools.cache
def corpus_modules(path: Path) -> tuple[Module, ...]:
    """`parse_file_modules(path)`, parsed once per test session (per xdist worker) and shared:
    trees are immutable, and several tests walk every corpus dump (the 1.7 MB gemma one too)."""
    from hlo_layout.syntax import parse_file_modules

    return parse_file_modules(path)
