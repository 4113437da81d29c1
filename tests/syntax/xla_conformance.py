"""Compare our tree of an HLO text with XLA's parser's view of it (an `*.xla.json` oracle written by
../shared/tools/xla_oracle.py), instruction by instruction.

Pairing (../shared/corpus/xla-tests/README.md explains the oracle's quirks):
- computations are paired by name, then (XLA renames computations too) a leftover one with the
  first leftover of ours whose name is the same but for a `.N` suffix; XLA's own
  `async_wrapped` computations (made for async sugar such as `call-start`) have no text and are
  skipped;
- within a computation, instructions are paired in text order: XLA keeps the order it read them
  in, and adds only the get-tuple-element `x_N` for an `x#N` operand, which is skipped;
- XLA renames duplicate names module-wide (and may give a renamed instruction a name another
  instruction had in the text, which then is renamed in turn), so a name may differ in its `.N`
  suffix, or wholly when ours is not unique in the module; operands are compared through the
  pairing, not by name;
- XLA prints `async-start` (and `-update`, `-done`) whose wrapped computation holds one
  instruction as `<opcode>-start`: that opcode is taken from our wrapped computation's root;
- for a shape written `b(...)` the oracle cuts the shape at the first `)` and records the
  opcode as `) opcode`; it is undone before comparing;
- XLA gives `send`, `recv`, `send-done`, `recv-done`, `outfeed` and `constant` the shape it works
  out from the operands or the literal, whatever the text says; so does our parser (the text's is
  `Computation.written_shape`), and the shapes are compared as they are.

Run as a script for a summary of a folder: `python -m tests.syntax.xla_conformance DIR`.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import parse_modules, read_text
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.tree import Computation, Instruction, Module

_SYNTHESIZED_COMPUTATION = re.compile(r"async_wrapped(\.\d+)?")


@dataclass
class FileResult:
    """What one file gave: XLA's verdict, ours, and every instruction that disagrees."""

    name: str
    xla_accepts: bool
    our_error: str | None = None
    instructions: int = 0
    agree: int = 0
    inferred: int = 0
    #: (computation, our instruction name or XLA's, what differs)
    mismatches: list[tuple[str, str, str]] = field(default_factory=list)


def _oracle_instruction(x: dict) -> dict:
    opcode, shape = x["opcode"], x["shape"]
    if opcode.startswith(")"):  # the oracle's cut of `b(...)` shapes
        opcode = opcode[1:].strip()
        shape += ")"
    return {**x, "opcode": opcode, "shape": shape}


def _is_synthesized_gte(x: dict, ours: set[str]) -> bool:
    """XLA's get-tuple-element for `x#N`: named `x_N`, no line in the text."""
    if x["opcode"] != "get-tuple-element" or x["name"] in ours or len(x["operands"]) != 1:
        return False
    return bool(re.fullmatch(re.escape(x["operands"][0]) + r"_\d+", x["name"]))


def _our_shape(instruction: Instruction) -> str:
    return print_shape(instruction.shape, default_layout=True)


def _base(name: str) -> str:
    return _SUFFIX.sub("", name)


_SUFFIX = re.compile(r"\.\d+$")


def _pair_computations(
    modules: tuple[Module, ...], oracle: dict
) -> list[tuple[dict, Computation | None]]:
    ours = {c.name: c for m in modules for c in m.computations}
    used = {xc["name"] for xc in oracle["computations"] if xc["name"] in ours}
    leftover = [c for c in ours.values() if c.name not in used]
    pairs: list[tuple[dict, Computation | None]] = []
    for xc in oracle["computations"]:
        computation = ours.get(xc["name"])
        if computation is None:
            computation = next((c for c in leftover if _base(c.name) == _base(xc["name"])), None)
            if computation is not None:
                leftover.remove(computation)
        pairs.append((xc, computation))
    return pairs


def _async_sugar(
    module_computations: dict[str, Computation], computation: Computation, instruction: Instruction
) -> str:
    """The opcode XLA prints for an async-start/-update/-done: `<wrapped root opcode>-start`.
    An -update or -done finds the wrapped computation through its async-start operand."""
    opcode = instruction.opcode
    if not opcode.startswith("async-"):
        return opcode
    start: Instruction | None = instruction
    seen = 0
    while start is not None and start.opcode != "async-start" and start.operands and seen < 64:
        start = computation.get(start.operands[0].name)
        seen += 1
    if start is None:
        return opcode
    for name in start.called_computations:
        wrapped = module_computations.get(name)
        if wrapped is not None and wrapped.root is not None:
            return wrapped.root.opcode + opcode.removeprefix("async")
    return opcode


def compare(modules: tuple[Module, ...], oracle: dict, result: FileResult) -> None:
    """Fill `result` with the instruction-by-instruction comparison."""
    ours = {c.name: c for m in modules for c in m.computations}
    name_counts = Counter(i.name for c in ours.values() for i in c.instructions)
    for xc, computation in _pair_computations(modules, oracle):
        xla_instructions = [_oracle_instruction(x) for x in xc["instructions"]]
        if computation is None:
            if _SYNTHESIZED_COMPUTATION.fullmatch(xc["name"]):
                continue
            result.instructions += len(xla_instructions)
            result.mismatches.append((xc["name"], "*", "computation missing in our tree"))
            continue
        our_names = {i.name for i in computation.instructions}
        xla_instructions = [x for x in xla_instructions if not _is_synthesized_gte(x, our_names)]
        result.instructions += max(len(xla_instructions), len(computation.instructions))
        if len(xla_instructions) != len(computation.instructions):
            result.mismatches.append(
                (
                    xc["name"],
                    "*",
                    f"{len(computation.instructions)} instructions, XLA has "
                    f"{len(xla_instructions)}",
                )
            )
            continue
        pairs = zip(xla_instructions, computation.instructions)
        xla_to_ours = {x["name"]: i.name for x, i in pairs}
        for x, mine in zip(xla_instructions, computation.instructions):
            problems = []
            if (
                mine.name != x["name"]
                and name_counts[mine.name] < 2
                and _base(mine.name) != _base(x["name"])
            ):
                problems.append(f"named {x['name']!r} by XLA")
            if mine.opcode != x["opcode"] and _async_sugar(ours, computation, mine) != x["opcode"]:
                problems.append(f"opcode {mine.opcode!r}, XLA {x['opcode']!r}")
            shape = _our_shape(mine)
            if shape != x["shape"]:
                problems.append(f"shape {shape}, XLA {x['shape']}")
            operands = [o.name if o.index is None else f"{o.name}_{o.index}" for o in mine.operands]
            theirs = [xla_to_ours.get(o, o) for o in x["operands"]]
            if operands != theirs:
                problems.append(f"operands {operands}, XLA {theirs}")
            if problems:
                result.mismatches.append((xc["name"], mine.name, "; ".join(problems)))
            else:
                result.agree += 1
                result.inferred += mine.shape_inferred


def check_file(hlo: Path) -> FileResult:
    """Parse `hlo` (with the engine a user gets) and compare it with `hlo`.xla.json."""
    oracle = json.loads(hlo.with_name(hlo.name + ".xla.json").read_text())
    result = FileResult(hlo.name, "error" not in oracle)
    try:
        modules = parse_modules(read_text(hlo), str(hlo))
    except HloLayoutError as e:
        result.our_error = str(e).splitlines()[0]
        if result.xla_accepts:
            result.instructions = sum(len(c["instructions"]) for c in oracle["computations"])
        return result
    if result.xla_accepts:
        compare(modules, oracle, result)
    return result


def hlo_texts(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.hlo.txt"))


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path("../shared/corpus/xla-tests")
    results = [check_file(p) for p in hlo_texts(folder)]
    accepted = [r for r in results if r.xla_accepts]
    rejected_by_us = [r for r in accepted if r.our_error is not None]
    total = sum(r.instructions for r in accepted)
    agree = sum(r.agree for r in accepted)
    print(
        f"{len(results)} files, XLA accepts {len(accepted)}; we reject {len(rejected_by_us)} "
        f"of those; instructions agree {agree}/{total} ({100 * agree / max(total, 1):.3f} %), "
        f"{sum(r.inferred for r in accepted)} with inferred shapes"
    )
    for r in rejected_by_us:
        print(f"REJECTED {r.name}: {r.our_error}")
    for r in accepted:
        for comp, name, why in r.mismatches:
            print(f"MISMATCH {r.name} {comp}/{name}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
