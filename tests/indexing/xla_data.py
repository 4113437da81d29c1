"""Loaders for the XLA conformance data copied into tests/data/xla-indexing (see its README)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "xla-indexing"


def _load(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@cache
def simplifier_cases() -> list[dict[str, Any]]:
    return _load("simplifier_cases.jsonl")


@cache
def analysis_cases() -> list[dict[str, Any]]:
    return _load("cases.jsonl")


def printed_maps() -> list[str]:
    """Every map text XLA printed in cases.jsonl: operand maps, rt-var maps and replica-id maps.

    `unknown indexing` is left out: it is instruction-level output, not an IndexingMap.
    """
    texts: list[str] = []
    for case in analysis_cases():
        for expected in case["expected"]:
            for structured in expected["maps_structured"]:
                texts.append(structured["map"])
                texts.extend(rv["map"] for rv in structured.get("runtime_variables", ()))
                if structured.get("replica_id"):
                    texts.append(structured["replica_id"])
    return sorted({t for t in texts if t != "unknown indexing"})
