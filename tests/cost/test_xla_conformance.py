"""Our HloCostAnalysis equals XLA's (jaxlib's `hlo_module_cost_analysis`) on whole modules.

- every dump of the corpus XLA's parser accepts: every property, key by key (tests/data/cost/
  oracle-corpus.jsonl);
- the CPU dumps of tests/data/memory/cpu-gen2 (oracle-memory-cpu-gen2.jsonl): every property,
  key by key (their bit-manipulation module holds the only `count-leading-zeros`);
- the committed subset of XLA's unit-test texts (tests/data/cost/xla-tests: the smallest text of
  each opcode and fusion kind, and the cases that taught us a rule; tests/data/xla-tests);
- the whole `../shared/corpus/xla-tests` folder (5,908 texts), in 8 slow shards: the totals of
  at least 99.5 % of the texts XLA accepts, and exactly the differences listed in
  tests/data/cost/KNOWN_DIFFERENCES.tsv, each with its reason.

The oracle was computed offline (tests/data/cost/gen_oracle.py), never at test time.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from hlo_layout.cost import module_properties
from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import parse_file_modules
from tests.cost.oracle import (
    corpus_oracle,
    differences,
    known_differences,
    read_oracle,
    total_differences,
    xla_tests_oracle,
)
from tests.support import DATA, REPO, corpus_id, corpus_modules, hlo_files

SUBSETS = (DATA / "cost" / "xla-tests", DATA / "xla-tests")
SHARED = REPO.parent / "shared" / "corpus" / "xla-tests"
SHARDS = 8


@pytest.mark.parametrize("path", hlo_files(), ids=corpus_id)
def test_corpus_dump_equals_xla(path: Path) -> None:
    found = corpus_oracle()[corpus_id(path)]
    if "properties" not in found:
        pytest.skip(f"XLA's parser rejects it: {found.get('error', found.get('crash'))}")
    ours = module_properties(corpus_modules(path)[0])
    assert differences(found["properties"], ours) == []


def test_corpus_oracle_covers_every_dump() -> None:
    assert sorted(corpus_oracle()) == sorted(corpus_id(p) for p in hlo_files())
    accepted = [d for d in corpus_oracle().values() if "properties" in d]
    assert len(accepted) >= 60


CPU_GEN2 = DATA / "memory" / "cpu-gen2"


@functools.cache
def _cpu_gen2_oracle() -> dict[str, dict]:
    return read_oracle(DATA / "cost" / "oracle-memory-cpu-gen2.jsonl")


@pytest.mark.parametrize("name", sorted(p.name for p in CPU_GEN2.glob("*after_optimizations.txt")))
def test_memory_dump_equals_xla(name: str) -> None:
    found = _cpu_gen2_oracle()[name]
    ours = module_properties(parse_file_modules(CPU_GEN2 / name)[0])
    assert differences(found["properties"], ours) == []


def _check(paths: list[Path]) -> tuple[int, dict[str, str]]:
    """(texts XLA accepts, file → what differs in the totals) over `paths`."""
    accepted = 0
    found: dict[str, str] = {}
    for path in paths:
        entry = xla_tests_oracle().get(path.name)
        if entry is None or "properties" not in entry:
            continue
        accepted += 1
        try:
            ours = module_properties(parse_file_modules(path)[0])
        except HloLayoutError as e:
            found[path.name] = f"rejected: {e}"
            continue
        diff = total_differences(entry["properties"], ours)
        if diff:
            found[path.name] = "; ".join(diff)
    return accepted, found


def _subset() -> list[Path]:
    return sorted(p for folder in SUBSETS for p in folder.glob("*.hlo.txt"))


def test_subset_equals_xla_key_by_key() -> None:
    paths = _subset()
    assert len(paths) >= 190
    bad = {}
    for path in paths:
        entry = xla_tests_oracle()[path.name]
        if "properties" not in entry:
            continue
        diff = differences(entry["properties"], module_properties(parse_file_modules(path)[0]))
        if diff and path.name not in known_differences():
            bad[path.name] = diff[:4]
    assert bad == {}


def test_subset_covers_xla_verdicts() -> None:
    verdicts = {next(iter(set(xla_tests_oracle()[p.name]) - {"file", "sha1"})) for p in _subset()}
    assert verdicts == {"properties", "error"}


@functools.cache
def _shards() -> list[list[Path]]:
    paths = sorted(SHARED.glob("*.hlo.txt"))
    shards: list[list[Path]] = [[] for _ in range(SHARDS)]
    loads = [0] * SHARDS
    for path in sorted(paths, key=lambda p: -p.stat().st_size):
        i = loads.index(min(loads))
        shards[i].append(path)
        loads[i] += path.stat().st_size + 20_000
    return shards


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_whole_folder_totals(shard: int) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the team's shared corpus); the subset test still runs")
    paths = _shards()[shard]
    accepted, found = _check(paths)
    known = {n: why for n, why in known_differences().items() if n in {p.name for p in paths}}
    new = {n: why for n, why in found.items() if n not in known}
    gone = sorted(n for n in known if n not in found)
    assert not new, "texts whose totals differ from XLA's:\n" + "\n".join(
        f"{n}\t{why[:300]}" for n, why in sorted(new.items())[:30]
    )
    assert not gone, f"listed in KNOWN_DIFFERENCES.tsv but agree now: {gone}"
    assert accepted - len(found) >= 0.995 * accepted


@pytest.mark.slow
def test_whole_folder_oracle_is_complete() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    names = {p.name for p in SHARED.glob("*.hlo.txt")}
    assert names == set(xla_tests_oracle())
    assert set(known_differences()) <= names
