"""Every command's JSON, in its common and edge forms, conforms to the schema the README
documents; and the README documents a schema for every command."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from hlo_layout.cli import app
from tests.cli.json_schema import validate
from tests.support import CORPUS, REPO, Cli

STEP = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"
STEP_52 = CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt"
SPMD = CORPUS / "jax-cpu-spmd" / "module_0018.jit_step.before_optimizations.txt"
TRANSFORMER = CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"
V4 = CORPUS / "libtpu-v4" / "transformer" / "transformer.after_optimizations.txt"


def readme_schemas() -> dict[str, object]:
    text = (REPO / "README.md").read_text()
    found = re.findall(r"<!-- schema: (\w+) -->\n```json\n(.*?)\n```", text, re.S)
    return {name: json.loads(body) for name, body in found}


def _bad_dump(tmp: Path) -> str:
    bad = tmp / "bad.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n")
    return str(bad)


CASES: dict[str, list[list[str]]] = {
    "memory": [
        ["memory", str(STEP)],
        ["memory", str(TRANSFORMER), "--top", "3"],
        ["memory", str(STEP_52), "--at", "10"],
    ],
    "check": [
        ["check", str(STEP), "--no-rules-ok"],
        ["check", str(STEP), "--max-peak-bytes", "1", "--max-peak-bytes", "0=1"],
        ["check", str(TRANSFORMER), "--max-argument-bytes", "1", "--max-fusions", "0",
         "--max-padding-percent", "0", "--forbid-space", "0", "--max-expansion", "1",
         "--min-fusions", "100000", "--forbid-opcode", "fusion"],
        ["check", str(CORPUS / "jax-cpu"), "--baseline", str(CORPUS / "jax-cpu"),
         "--max-growth-percent", "0", "--max-padding-growth", "0"],
        ["check", str(STEP), "--baseline", str(STEP_52), "--max-growth-percent", "0"],
        ["check", str(STEP_52), "--baseline", str(STEP), "--max-peak-growth-percent", "0",
         "--max-peak-growth-bytes", "0=0"],
        ["check", "{bad}", "no/such/*.txt", "--no-rules-ok"],
    ],
    "diff": [
        ["diff", str(STEP), str(STEP)],
        ["diff", str(V4), str(TRANSFORMER)],
        ["diff", str(STEP), str(STEP_52)],
        ["diff", str(CORPUS / "jax-cpu"), str(CORPUS / "jax-cpu-spmd")],
    ],
    "layout": [
        ["layout", "f32[3,5]{1,0:T(2,2)}", "--at", "2,3", "--grid", "--cute", "--axe"],
        ["layout", "(f32[2]{0}, s32[])", "f32[", "bf16[9,130]{1,0:T(8,128)(2,1)S(1)}"],
    ],
    "inspect": [["inspect", str(STEP)], ["inspect", str(TRANSFORMER)]],
    "cost": [
        ["cost", str(STEP)],
        ["cost", str(TRANSFORMER), "--top", "3"],
        ["cost", str(CORPUS / "jax-cpu"), "--chip", "a100"],
        ["cost", str(REPO / "tests" / "data" / "cost" / "loops" / "nested.looped.txt"),
         "--peak-flops", "1e12", "--bandwidth", "1e11"],
    ],
    "sharding": [["sharding", str(SPMD)]],
    "indexing": [["indexing", str(STEP), "--fusion", "multiply_add_fusion"]],
}  # fmt: skip


def test_readme_documents_every_command() -> None:
    group: Any = typer.main.get_command(app)
    commands = set(group.list_commands(typer.Context(group)))
    assert {"check", "diff", "layout", "inspect", "sharding", "indexing"} <= commands
    assert set(CASES) <= set(readme_schemas())
    # Every command with --format json has a documented schema and a case here.
    for name in commands:
        command = group.get_command(typer.Context(group), name)
        if any(p.name == "output_format" for p in command.params):
            assert name in readme_schemas() and name in CASES, name


@pytest.mark.parametrize(
    "args", [a for cases in CASES.values() for a in cases], ids=lambda a: " ".join(a)[:60]
)
def test_output_matches_the_documented_schema(cli: Cli, args: list[str], tmp_path: Path) -> None:
    args = [a.replace("{bad}", _bad_dump(tmp_path)) for a in args]
    result = cli(*args, "-f", "json")
    assert result.exit_code in (0, 1, 3), result.output
    doc = json.loads(result.stdout)
    errors = validate(doc, readme_schemas()[args[0]])
    assert not errors, "\n".join(errors[:20])


def test_the_checker_can_fail() -> None:
    schema = {"a": "int", "b?": ["string"], "c": {"*": "number"}}
    assert validate({"a": 1, "c": {"x": 1.5}}, schema) == []
    assert validate({"a": "1", "c": {}}, schema)
    assert validate({"a": 1, "c": {}, "extra": 0}, schema)
    assert validate({"c": {}}, schema)
    assert validate({"a": 1, "b": [1], "c": {}}, schema)
