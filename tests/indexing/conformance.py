"""Run one case of XLA's indexing suite (tests/data/xla-indexing/cases.jsonl) through our analysis.

`check_case` computes what XLA's test computes (per-instruction indexing in either direction,
grouped indexing over a cluster, epilogue indexing, physical-layout composition) and compares it
with the expected maps the way XLA's tests do: all whitespace dropped, maps of one operand as a
set. Runtime-variable lists are compared as sets too (see NOTE [runtime-variable order] in
hlo_layout/indexing/operand.py). When the text differs, the maps are also compared by meaning
(same results at every point of the same domain), and the outcome says which matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hlo_layout.indexing import parse_indexing_map
from hlo_layout.indexing.fusion import (
    Cluster,
    epilogue_input_to_output,
    grouped_output_to_input,
)
from hlo_layout.indexing.map import point_results
from hlo_layout.indexing.operand import InstructionIndexing, OperandIndexing
from hlo_layout.indexing.physical import physical_input_to_output, physical_output_to_input
from hlo_layout.indexing.rules import OpContext, input_to_output, output_to_input
from hlo_layout.indexing.text import format_indexing_map, strip_whitespace
from hlo_layout.syntax import Computation, Module, parse


@dataclass
class Outcome:
    """How one case went: `text` = equal as XLA compares; `meaning` = equal by evaluation."""

    name: str
    direction: str
    text: bool
    meaning: bool
    why: list[str] = field(default_factory=list)


def _find(module: Module, name: str) -> Computation:
    for comp in (module.entry, *module.computations):
        if comp is not None and name in comp:
            return comp
    raise KeyError(name)


def _oi_text(oi: OperandIndexing) -> str:
    return "UNDEFINED" if oi.is_undefined else strip_whitespace(format_indexing_map(oi.map))


def _rt_texts(oi: OperandIndexing) -> list[str]:
    return sorted(
        strip_whitespace(f"{rv.source};{format_indexing_map(rv.map)}") for rv in oi.rt_vars
    )


def _expected_text(structured: dict[str, Any]) -> str:
    text = structured["map"]
    return "UNDEFINED" if text == "unknown indexing" else strip_whitespace(text)


def _expected_rts(structured: dict[str, Any]) -> list[str]:
    return sorted(
        strip_whitespace(f"{rv['reads']};{rv['map']}")
        for rv in structured.get("runtime_variables", ())
    )


def _same_meaning(expected: str, actual: OperandIndexing) -> bool:
    if expected in ("UNDEFINED", "KNOWNEMPTY") or actual.is_undefined or actual.is_known_empty:
        return expected == _oi_text(actual)
    try:
        want = point_results(parse_indexing_map(expected), max_points=2_000_000)
        got = point_results(actual.map, max_points=2_000_000)
    except Exception:
        return False
    return want == got


def _compare_slot(
    label: str, expected: list[dict[str, Any]], actual: frozenset[OperandIndexing], out: Outcome
) -> None:
    want = sorted(_expected_text(s) for s in expected)
    got = sorted(_oi_text(oi) for oi in actual)
    if want != got:
        out.text = False
        out.why.append(f"{label}: expected {want}, got {got}")
        unmatched = list(actual)
        for s in expected:
            match = next((oi for oi in unmatched if _same_meaning(_expected_text(s), oi)), None)
            if match is None:
                out.meaning = False
            else:
                unmatched.remove(match)
        if unmatched:
            out.meaning = False
        return
    # Same maps: compare runtime variables and replica maps of equal-text maps.
    for s in expected:
        text = _expected_text(s)
        candidates = [oi for oi in actual if _oi_text(oi) == text]
        if not any(_rt_texts(oi) == _expected_rts(s) for oi in candidates):
            out.text = out.meaning = False
            out.why.append(
                f"{label}: runtime variables: expected {_expected_rts(s)}, "
                f"got {[_rt_texts(oi) for oi in candidates]}"
            )
        replica = s.get("replica_id")
        if replica and not any(
            oi.replica_id is not None
            and strip_whitespace(format_indexing_map(oi.replica_id)) == strip_whitespace(replica)
            for oi in candidates
        ):
            out.text = out.meaning = False
            out.why.append(f"{label}: replica id: expected {replica}")


def _compare_instruction(case: dict[str, Any], indexing: InstructionIndexing, out: Outcome) -> None:
    expected = {e["operand"]: e["maps_structured"] for e in case["expected"]}
    if not expected and indexing.maps:
        out.text = out.meaning = False
        out.why.append(f"expected no operands, got {len(indexing.maps)} slots")
    for k, slot in enumerate(indexing.maps):
        if k not in expected:
            if slot:
                out.text = out.meaning = False
                out.why.append(f"operand {k}: expected no maps, got {sorted(map(_oi_text, slot))}")
            continue
        _compare_slot(f"operand {k}", expected[k], slot, out)
    for k in expected:
        if k >= len(indexing.maps):
            out.text = out.meaning = False
            out.why.append(f"operand {k}: missing")


_CLUSTER = re.compile(r"fusion of (\S+) into (\S+)")
_FOR_INSTRUCTION = re.compile(r"ForInstruction\(([^)]+)\)")


def _grouped(case: dict[str, Any], module: Module, out: Outcome) -> None:
    scope = case["fusion_scope"]
    start = case["target"]
    comp = _find(module, start)
    cluster_match = _CLUSTER.search(scope)
    if cluster_match:
        host = _find(module, cluster_match.group(2))
        cluster = Cluster(host, frozenset(cluster_match.groups()))
    else:
        match = _FOR_INSTRUCTION.search(scope)
        if match is None:
            raise ValueError(f"cannot read fusion_scope {scope!r}")
        host = _find(module, match.group(1))
        instruction = host[match.group(1)]
        if instruction.opcode == "fusion":
            called = module.computation(instruction.called_computations[0])
            assert called is not None
            cluster = Cluster(called, None, (host, instruction))
            comp = called if start in called else comp
        else:
            cluster = Cluster(host, frozenset({instruction.name}))
    if comp is not cluster.computation and start not in cluster.computation:
        cluster = Cluster(comp, frozenset())  # the start lies outside the cluster
    grouped = grouped_output_to_input(module, cluster, start)
    by_name: dict[str, frozenset[OperandIndexing]] = {}
    for key, value in grouped.maps.items():
        by_name[key.name] = by_name.get(key.name, frozenset()) | value
    for e in case["expected"]:
        name = e["instruction"].split(" ")[0]
        _compare_slot(name, e["maps_structured"], by_name.get(name, frozenset()), out)


def check_case(case: dict[str, Any]) -> Outcome:
    """Run one case and compare (see the module docstring)."""
    out = Outcome(case["name"], case["direction"], True, True)
    module = parse(case["hlo"])
    kind = case.get("target_kind")
    if kind == "grouped":
        _grouped(case, module, out)
        return out
    if kind == "epilogue":
        hero, root = (s.strip() for s in case["target"].split("(")[0].split("->"))
        comp = _find(module, hero)
        result = epilogue_input_to_output(module, comp, hero, root)
        e = case["expected"][0]
        _compare_slot(e["instruction"], e["maps_structured"], frozenset({result}), out)
        return out
    comp = _find(module, case["target"])
    ctx = OpContext(comp[case["target"]], comp, module)
    physical = case.get("use_physical_layout", False)
    if case["direction"] == "output_to_input":
        output_id = case.get("output_id", 0)
        if physical:
            indexing = physical_output_to_input(ctx, output_id)
        else:
            indexing = output_to_input(ctx, output_id)
    else:
        input_id = case.get("input_id", 0)
        if physical:
            indexing = physical_input_to_output(ctx, input_id)
        else:
            indexing = input_to_output(ctx, input_id)
    if case.get("simplify_before_print"):
        indexing = indexing.simplified()
    _compare_instruction(case, indexing, out)
    return out
