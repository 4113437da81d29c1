"""XLA's HloCostAnalysis figures (jaxlib 0.10.2, tests/data/cost/gen_oracle.py) and how ours are
compared with them.

XLA sums every property in float32: a count above 2**24 is rounded, and a long sum loses the
small terms added to a large total. Ours are exact, so a property agrees when it is within a
relative 1e-5 of XLA's (a NaN utilization, from a slice of an empty array, equals a NaN).
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import math
from collections.abc import Mapping
from pathlib import Path

from tests.support import DATA

ORACLE_DIR = DATA / "cost"
XLA_TESTS_ORACLE = ORACLE_DIR / "oracle-xla-tests.jsonl.gz"
CORPUS_ORACLE = ORACLE_DIR / "oracle-corpus.jsonl"
KNOWN = ORACLE_DIR / "KNOWN_DIFFERENCES.tsv"
#: The properties of the issue's `xla` figures.
TOTALS = ("flops", "transcendentals", "bytes accessed")
RELATIVE = 1e-5


def read_oracle(path: Path) -> dict[str, dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        return {d["file"]: d for d in map(json.loads, f)}


@functools.cache
def xla_tests_oracle() -> dict[str, dict]:
    """File name → {"properties": ...} or {"error": ...} or {"crash": ...}."""
    return read_oracle(XLA_TESTS_ORACLE)


@functools.cache
def corpus_oracle() -> dict[str, dict]:
    """Corpus-relative path → the same."""
    return read_oracle(CORPUS_ORACLE)


@functools.cache
def known_differences() -> dict[str, str]:
    """File name → why its totals differ from XLA's (tests/data/cost/KNOWN_DIFFERENCES.tsv)."""
    with KNOWN.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert all(r["reason"].strip() for r in rows), "every entry needs a reason"
    return {r["file"]: r["reason"] for r in rows}


def agrees(xla: float, ours: float) -> bool:
    if math.isnan(xla) or math.isnan(ours):
        return math.isnan(xla) and math.isnan(ours)
    return xla == ours or abs(xla - ours) <= RELATIVE * max(abs(xla), abs(ours))


def differences(xla: Mapping[str, float], ours: Mapping[str, float]) -> list[str]:
    """Every key whose value differs (a missing key is 0, as in XLA's Properties)."""
    return [
        f"{k}: xla {xla.get(k, 0)!r}, ours {ours.get(k, 0)!r}"
        for k in sorted(set(xla) | set(ours))
        if not agrees(xla.get(k, 0), ours.get(k, 0))
    ]


def total_differences(xla: Mapping[str, float], ours: Mapping[str, float]) -> list[str]:
    return [d for d in differences(xla, ours) if d.split(":")[0] in TOTALS]
