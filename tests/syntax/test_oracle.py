"""Our tree agrees with XLA's own parser (the `*.xla.json` oracle files) on every instruction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hlo_layout.syntax import parse_file
from hlo_layout.syntax.printer import print_shape
from tests.support import corpus_id, oracle_files

ORACLES = oracle_files()


def _xla_view(oracle: dict) -> dict[str, list[dict]]:
    return {c["name"]: c["instructions"] for c in oracle["computations"]}


def _ours(path: Path) -> dict[str, list[dict]]:
    module = parse_file(path)
    out = {}
    for c in module.computations:
        out[c.name] = [
            {
                "name": i.name,
                "opcode": i.opcode,
                "shape": print_shape(i.shape, default_layout=True),
                # XLA reads `x#1` as a synthesized get-tuple-element named `x_1`.
                "operands": [
                    o.name if o.index is None else f"{o.name}_{o.index}" for o in i.operands
                ],
            }
            for i in c.instructions
        ]
    return out


def _is_synthesized(instruction: dict, ours: set[str]) -> bool:
    """XLA's get-tuple-element for `x#N`: named `x_N`, no line in the text."""
    if instruction["opcode"] != "get-tuple-element" or instruction["name"] in ours:
        return False
    (operand,) = instruction["operands"]
    return instruction["name"].startswith(operand + "_")


@pytest.mark.parametrize("oracle_path", ORACLES, ids=[corpus_id(p) for p in ORACLES])
def test_every_instruction_agrees_with_xla(oracle_path: Path) -> None:
    hlo = oracle_path.with_name(oracle_path.name.removesuffix(".xla.json"))
    oracle = json.loads(oracle_path.read_text())
    ours = _ours(hlo)  # files XLA rejects ("error" in the oracle) must parse too
    if "error" in oracle:
        assert ours, f"XLA rejected {hlo.name} ({oracle['error'][:80]}); we read nothing"
        return
    xla = _xla_view(oracle)
    assert set(xla) == set(ours), "computation names differ"
    # XLA renames a name seen earlier in the module (module-wide uniquification).
    seen: set[str] = set()
    compared = 0
    for name, xla_instructions in xla.items():
        our_names = {i["name"] for i in ours[name]}
        xla_instructions = [i for i in xla_instructions if not _is_synthesized(i, our_names)]
        assert len(xla_instructions) == len(ours[name]), f"instruction count differs in {name}"
        by_name = {i["name"]: i for i in xla_instructions}
        renamed = {}
        for mine in ours[name]:
            theirs = by_name.get(mine["name"])
            if theirs is None or mine["name"] in seen:
                # a module-wide duplicate: XLA gave it a fresh name; match by position instead
                theirs = xla_instructions[ours[name].index(mine)]
                assert mine["name"] in seen, f"{name}/{mine['name']} missing in XLA's view"
                renamed[theirs["name"]] = mine["name"]
            assert mine["opcode"] == theirs["opcode"], (name, mine["name"])
            assert mine["shape"] == theirs["shape"], (name, mine["name"])
            assert mine["operands"] == [renamed.get(o, o) for o in theirs["operands"]], (
                name,
                mine["name"],
            )
            compared += 1
        seen |= our_names
    assert compared == sum(len(v) for v in ours.values())
