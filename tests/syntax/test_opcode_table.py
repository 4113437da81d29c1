"""The opcode table (`syntax/opcodes.py`) is the one place that knows opcodes: its families
partition the vocabulary, its registries refuse what is not an opcode, and no other module
spells an opcode in a comparison, a family of its own or a registry key."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hlo_layout.syntax import opcodes
from hlo_layout.syntax.opcodes import FAMILIES, OPCODES, Registry, family
from tests.support import REPO

PACKAGE = REPO / "hlo_layout"
TABLE = PACKAGE / "syntax" / "opcodes.py"

#: Files not read by the check, each with the reason.
SKIPPED_FILES = {
    # The line scanner reads a constant's literal and a parameter's number while it frames a
    # line; it is being rewritten on the lexicon branch (issue 27 item 1), which takes
    # CONSTANT and PARAMETER from the table.
    "hlo_layout/syntax/scan.py",
}
#: Compared expressions that hold a word XLA spells like an opcode but that names something
#: else: an allocation's or a computation's kind (`parameter`, `constant`, `tuple`, `fusion`),
#: a window field (`pad`), a parser tier (`scan`).
NOT_OPCODES = re.compile(r"(^|\.)(kind|allocation)$|^kinds\.get\(|^fields$|^engine$")
#: Module-level names bound to such words, with the same reasons.
NOT_OPCODE_NAMES = {
    ("hlo_layout/syntax/sharding.py", "TUPLE"),  # a tuple sharding
    ("hlo_layout/check/peak_diff.py", "_STATIC"),  # allocation kinds
    ("hlo_layout/memory/buffer_assignment.py", "_PROPERTY_RES"),  # words of XLA's report
}
_REGISTERING = {"register", "add"}


def _spelled(node: ast.AST) -> list[str]:
    """The opcodes a literal spells: a string, or the strings of a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in OPCODES else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _spelled(e)]
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set"):
        return [s for a in node.args for s in _spelled(a)]
    return []


def opcode_spellings(source: str, path: str) -> list[str]:
    """`path:line: what` for every place `source` spells an opcode outside the table: in a
    comparison (`op == "add"`, `op in ("add", "or")`), a `case`, a registry key, or a
    module-level name or family (`_GTE = "get-tuple-element"`, `{"dot", "convolution"}`)."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            others = [ast.unparse(s) for s in sides if not _spelled(s)]
            if not any(NOT_OPCODES.search(o) for o in others):
                words = [w for s in sides for w in _spelled(s)]
        elif isinstance(node, ast.MatchValue):
            words = _spelled(node.value)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _REGISTERING:
                words = [w for a in node.args for w in _spelled(a)]
        elif isinstance(node, ast.Dict):
            keys = [w for k in node.keys if k is not None for w in _spelled(k)]
            words = keys if len(keys) > 1 else []
        if words:
            found.append(f"{path}:{node.lineno}: {', '.join(sorted(set(words)))}")
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if any((path, n) in NOT_OPCODE_NAMES for n in names):
                continue
            words = _spelled(node.value)
            single = isinstance(node.value, ast.Constant)
            if words and (single or len(words) > 1):
                found.append(f"{path}:{node.lineno}: {', '.join(sorted(set(words)))}")
    return found


def test_no_opcode_is_spelled_outside_the_table() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if path == TABLE or rel in SKIPPED_FILES:
            continue
        found += opcode_spellings(path.read_text(encoding="utf-8"), rel)
    assert not found, "use the constants and families of hlo_layout/syntax/opcodes.py:\n" + (
        "\n".join(found)
    )


@pytest.mark.parametrize(
    "source",
    [
        'if i.opcode == "add":\n    pass',
        'ok = op in ("add", "or")',
        'ok = op not in frozenset({"dot"})',
        'match op:\n    case "while":\n        pass',
        'register("transpose", output_to_input=f)',
        'RULES.add(("copy", "copy-start"), rule)',
        '_GTE = "get-tuple-element"',
        '_MATMULS = frozenset({"dot", "convolution"})',
        'TABLE = {"add": 1, "or": 2}',
    ],
)
def test_the_check_finds_spellings(source: str) -> None:
    assert opcode_spellings(source, "x.py")


@pytest.mark.parametrize(
    "source",
    [
        "if i.opcode == ADD:\n    pass",
        'if a.kind == "parameter":\n    pass',
        'ok = alloc.kind in ("constant", "tuple")',
        'names = ("body", "condition")',
        'x = "parameter" if params else "value"',  # a column title, not a comparison
        'TABLE = {"add": 1, "body": 2}',
    ],
)
def test_the_check_lets_other_words_be(source: str) -> None:
    assert not opcode_spellings(source, "x.py")


def test_families_partition_the_vocabulary() -> None:
    seen: dict[str, str] = {}
    for name, members in FAMILIES.items():
        for opcode in members:
            assert opcode not in seen, f"{opcode} is in {seen[opcode]} and {name}"
            seen[opcode] = name
    assert set(seen) == OPCODES
    assert all(family(opcode) == name for opcode, name in seen.items())
    assert family("reduce-scatter-start") is None  # async sugar is not in the vocabulary


def test_every_opcode_is_a_constant_named_after_its_spelling() -> None:
    constants = {
        name: value
        for name, value in vars(opcodes).items()
        if isinstance(value, str) and name.isupper() and value in OPCODES
    }
    assert set(constants.values()) == OPCODES
    for name, value in constants.items():
        assert name == value.upper().replace("-", "_"), name


def test_facts_speak_of_opcodes_of_the_vocabulary() -> None:
    facts = [
        opcodes.TRANSCENDENTAL,
        opcodes.FORWARDING,
        opcodes.SIDE_EFFECTS,
        opcodes.MAY_HAVE_SIDE_EFFECTS,
        opcodes.ASYNC_STARTS,
        opcodes.ASYNC_UPDATES,
        opcodes.ASYNC_DONES,
        opcodes.SEQUENTIAL_CALLERS,
        opcodes.COPIES,
        opcodes.ALL_REDUCES,
        opcodes.DEFAULT_IN_PLACE,
        frozenset(opcodes.SHARES_OPERAND),
        opcodes.SHARES_ANY_OPERAND,
    ]
    for fact in facts:
        assert fact <= OPCODES, fact - OPCODES
    assert opcodes.TRANSCENDENTAL <= opcodes.ELEMENTWISE
    assert not opcodes.SIDE_EFFECTS & opcodes.MAY_HAVE_SIDE_EFFECTS
    for start, done in opcodes.ASYNC_DONE_OF.items():
        assert family(start) == family(done)


def test_a_registry_refuses_unknown_and_repeated_opcodes() -> None:
    registry: Registry[int] = Registry("test rules")
    registry.register("add", "subtract")(1)
    assert registry.get("add") == 1 and registry.get("multiply") is None
    with pytest.raises(ValueError, match="'clz' is not an HLO opcode"):
        registry.add("clz", 2)
    with pytest.raises(ValueError, match="'add' registered twice"):
        registry.add("add", 3)


def test_every_registry_holds_opcodes_only() -> None:
    from hlo_layout.cost.registry import RULES as COST
    from hlo_layout.indexing.rules import RULES as INDEXING
    from hlo_layout.memory.dataflow import DEFINES, VALUE_SETS
    from hlo_layout.syntax.shape_inference import RULES as SHAPES
    from hlo_layout.syntax.shape_inference import XLA_SHAPES

    for registry in (COST, INDEXING, DEFINES, VALUE_SETS, SHAPES, XLA_SHAPES):
        assert isinstance(registry, Registry)
        assert registry and set(registry) <= OPCODES


def test_the_skipped_files_exist() -> None:
    for rel in SKIPPED_FILES:
        assert Path(REPO / rel).is_file(), rel
