"""Conformance with XLA's own parser on the HLO texts of XLA's unit tests (the `xla-tests` corpus).

Every instruction of every file XLA accepts must agree with XLA's view of it (tests/syntax/
xla_conformance.py says how they are paired); the exceptions are listed, each with its reason,
in tests/data/xla-tests/KNOWN_DIFFERENCES.tsv, and the test fails when that list is not exact
(a new difference, or a listed one that is gone). Files XLA rejects may be read or rejected,
but only with an HloLayoutError (bad input), never another exception.

`test_subset_*` runs on the committed copy (tests/data/xla-tests: a few files per syntax family);
`test_whole_folder*` run on ../shared/corpus/xla-tests (5,908 files, in 8 shards of equal work so
that `pytest -n auto` runs them side by side; marked slow: `pytest -m slow` runs only them,
`pytest -m "not slow"` skips them). Both tiers of the parser must read the same language: the
fast scanner either builds the grammar's tree or declines.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import re
from pathlib import Path

import pytest

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import parse_modules, read_text
from hlo_layout.syntax.scan import ScanFallback
from tests.support import DATA, REPO, hlo_files
from tests.syntax.xla_conformance import FileResult, check_file, hlo_texts

SUBSET = DATA / "xla-tests"
SHARED = REPO.parent / "shared" / "corpus" / "xla-tests"
KNOWN = SUBSET / "KNOWN_DIFFERENCES.tsv"


def _known() -> dict[tuple[str, str], str]:
    """(file, `computation/instruction` or `*`) → reason, from the allowlist file."""
    with KNOWN.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    known = {(r["file"], r["instruction"]): r["reason"] for r in rows}
    assert len(known) == len(rows), "KNOWN_DIFFERENCES.tsv lists an entry twice"
    assert all(reason.strip() for reason in known.values()), "every entry needs a reason"
    return known


def _differences(results: list[FileResult]) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for r in results:
        if not r.xla_accepts:
            continue
        if r.our_error is not None:
            found[(r.name, "*")] = f"rejected: {r.our_error}"
        for computation, instruction, why in r.mismatches:
            found[(r.name, f"{computation}/{instruction}")] = why
    return found


def _check(folder: Path | list[Path]) -> list[FileResult]:
    paths = hlo_texts(folder) if isinstance(folder, Path) else folder
    results = [check_file(p) for p in paths]
    names = {r.name for r in results}
    known = {k: v for k, v in _known().items() if k[0] in names}
    found = _differences(results)
    new = {k: v for k, v in found.items() if k not in known}
    gone = sorted(k for k in known if k not in found)
    assert not new, "instructions that disagree with XLA:\n" + "\n".join(
        f"{f}\t{i}\t{why}" for (f, i), why in sorted(new.items())[:40]
    )
    assert not gone, f"listed in KNOWN_DIFFERENCES.tsv but agree now (remove them): {gone}"
    return results


def _summary(results: list[FileResult]) -> str:
    accepted = [r for r in results if r.xla_accepts]
    total = sum(r.instructions for r in accepted)
    agree = sum(r.agree for r in accepted)
    rejected = sum(r.our_error is not None for r in accepted)
    return (
        f"{len(results)} files, XLA accepts {len(accepted)}, we reject {rejected} of those; "
        f"{agree}/{total} instructions agree, {sum(r.inferred for r in accepted)} inferred"
    )


def test_subset_agrees_with_xla() -> None:
    results = _check(SUBSET)
    accepted = [r for r in results if r.xla_accepts]
    # The copy must keep covering what it is there for: both verdicts, inferred shapes.
    assert accepted and len(accepted) < len(results), _summary(results)
    assert sum(r.inferred for r in accepted) >= 20, _summary(results)
    assert all(r.instructions == r.agree for r in accepted if not r.mismatches)


def test_subset_reads_each_syntax_family() -> None:
    """Each family of issue 16 is in the committed copy and read (not merely rejected)."""
    texts = {p.name: p.read_text() for p in hlo_texts(SUBSET)}
    results = {r.name: r for r in (check_file(SUBSET / n) for n in texts)}
    families = {
        "instruction without a shape": r"=[ \t]*[a-z][a-z0-9-]*\(",
        "operand written as an instruction": r"\([a-z0-9]+\[[\d,]*\] [a-z][a-z-]*\(",
        "computation written inline": r"(to_apply|calls|body|condition)=\s*\{\s*\n",
        "explicit device list": r"sharding=\{devices=\[[\d,]+\]\d",
        "mesh sharding": r"sharding=\{mesh\['",
        "HloModule name:": r"HloModule [\w.-]+:",
        "parameter without a colon": r"ENTRY[^\n]*\([\w.%]+ [a-z][a-z0-9]*\[",
        "dense literal without a comma between rows": r"\}[ \t]*\n[ \t]*\{ ",
        "? in dim_labels": r"dim_labels=\S*\?",
        "s32 [..]": r"= s32 \[",
        "unquoted dict in frontend_attributes": r"frontend_attributes=\{[\w.]+=\{",
        "b(...) shape": r"= b\(",
        "send/recv": r"recv-done\(",
        "async sugar": r"async-done\(",
    }
    for family, pattern in families.items():
        readers = [
            n for n, t in texts.items() if re.search(pattern, t) and results[n].xla_accepts
            and results[n].our_error is None
        ]  # fmt: skip
        assert readers, f"no file of the family {family!r} ({pattern!r}) is read"


@functools.cache
def _checked_by_test_tiers() -> frozenset[bytes]:
    """Digests of the committed corpus dumps, whose two tiers tests/syntax/test_tiers.py
    compares already (trees and positions). Some are byte-for-byte copies of XLA's benchmark
    models in this folder (gemma, mobilenet, maxtext, llama): the grammar, a few seconds per MB,
    need not read them twice."""
    return frozenset(hashlib.sha256(p.read_bytes()).digest() for p in hlo_files())


def _tiers_disagree(folder: Path | list[Path]) -> list[str]:
    """Files the fast scanner reads differently from the grammar (it must read the same
    language or decline)."""
    bad = []
    for path in hlo_texts(folder) if isinstance(folder, Path) else folder:
        if hashlib.sha256(path.read_bytes()).digest() in _checked_by_test_tiers():
            continue
        text = read_text(path)
        try:
            fast = parse_modules(text, path.name, engine="scan", verify=False)
        except (ScanFallback, HloLayoutError):
            continue  # declined: the grammar decides
        try:
            full = parse_modules(text, path.name, engine="lark", verify=False)
        except HloLayoutError as e:
            bad.append(f"{path.name}: the scanner reads it, the grammar says {e.message}")
            continue
        if fast != full:
            bad.append(f"{path.name}: the two tiers build different trees")
    return bad


def test_subset_tiers_read_the_same_language() -> None:
    assert _tiers_disagree(SUBSET) == []


#: The whole folder in shards of about equal work (bytes plus a per-file cost), so that
#: `pytest -n auto` runs them side by side; together they cover every file once.
SHARDS = 8


def _shard(index: int) -> list[Path]:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the team's shared corpus); the subset test still runs")
    return _shards()[index]


@functools.cache
def _shards() -> list[list[Path]]:
    paths = hlo_texts(SHARED)
    loads = [0] * SHARDS
    shards: list[list[Path]] = [[] for _ in range(SHARDS)]
    for path in sorted(paths, key=lambda p: -p.stat().st_size):
        i = loads.index(min(loads))
        shards[i].append(path)
        loads[i] += path.stat().st_size + 20_000
    assert sorted(p for s in shards for p in s) == paths
    return [sorted(s) for s in shards]


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_whole_folder_tiers_read_the_same_language(shard: int) -> None:
    assert _tiers_disagree(_shard(shard)) == []


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_whole_folder(shard: int) -> None:
    results = _check(_shard(shard))
    print(_summary(results))


@pytest.mark.slow
def test_known_differences_name_existing_files() -> None:
    """Each shard checks the listed differences of its own files; a listed file that is in
    neither folder would be checked by no shard."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the team's shared corpus); the subset test still runs")
    names = {p.name for p in hlo_texts(SHARED)} | {p.name for p in hlo_texts(SUBSET)}
    assert not {f for f, _ in _known() if f not in names}
