"""No token is ever split: every shape, instruction name and op_name of a dump that a command
prints is found whole on one line (`grep -F`), piped and at 60, 80 and 200 columns.

"What the command prints" is read from its piped output (unwrapped, one line per row); the
piped output itself is checked against the `--format json` figures the text shows.
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest

from hlo_layout.report.console import DETAIL_INDENT
from tests.support import REPO, Cli

V5E = "tests/data/corpus/libtpu-v5e/transformer/transformer.after_optimizations.txt"
GPU = "tests/data/corpus/jax-gpu-h100/module_370468.jit_f.sm_9.0a_gpu_after_optimizations.txt"
CPU = "tests/data/corpus/jax-cpu/module_0052.jit_step.cpu_after_optimizations.txt"
CPU_OLD = "tests/data/corpus/jax-cpu/module_0018.jit_step.cpu_after_optimizations.txt"
SPMD = "tests/data/corpus/jax-cpu-spmd/module_0018.jit_step.before_optimizations.txt"

COMMANDS: dict[str, list[str]] = {
    "inspect-tpu": ["inspect", V5E],
    "inspect-gpu": ["inspect", GPU],
    "inspect-cpu": ["inspect", CPU],
    "memory-tpu": ["memory", V5E],
    "memory-gpu": ["memory", GPU],
    "memory-cpu": ["memory", CPU],
    "check-tpu": ["check", V5E, "--max-argument-bytes", "1MiB", "--max-fusions", "1"],
    "diff-cpu": ["diff", CPU_OLD, CPU],
    "layout-tpu": ["layout", "bf16[4,8,128,128]{2,3,1,0:T(8,128)(2,1)S(1)}"],
    "sharding-spmd": ["sharding", SPMD],
}
DUMPS = {"tpu": V5E, "gpu": GPU, "cpu": CPU, "spmd": SPMD}

#: An array shape with its layout, a `%name = ` or `name = ` definition, an op_name.
_SHAPE = re.compile(r"\b[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}\s]*\})?")
_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([A-Za-z_][\w.\-]*) = ", re.M)
_OP_NAME = re.compile(r'op_name="([^"]+)"')


@cache
def _run(cli: Cli, args: tuple[str, ...], columns: str | None) -> str:
    result = cli(*list(args), env={"COLUMNS": columns, "NO_COLOR": "1", "GITHUB_ACTIONS": ""})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@cache
def _tokens(dump: str) -> frozenset[str]:
    text = (REPO / dump).read_text()
    return frozenset(
        [
            *_SHAPE.findall(text),
            *_NAME.findall(text),
            *_OP_NAME.findall(text),
            dump,
            *_SHAPE.findall(COMMANDS["layout-tpu"][1]),
        ]
    )


def _printed(output: str, tokens: frozenset[str]) -> set[str]:
    lines = output.splitlines()
    return {t for t in tokens if any(t in line for line in lines)}


@pytest.mark.parametrize("columns", ["60", "80", "200"])
@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_every_token_printed_is_on_one_line(cli: Cli, case: str, columns: str, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    args = tuple(COMMANDS[case])
    tokens = _tokens(DUMPS[case.rsplit("-", 1)[1]])
    piped = _printed(_run(cli, args, None), tokens)
    assert piped, "the view prints no shape, name or op_name of its dump?"
    # A token too long for the width less a label ("op_name ") may wrap at its `/` or `,`.
    room = int(columns) - DETAIL_INDENT - len("op_name ")
    wanted = {t for t in piped if len(t) <= room}
    lines = _run(cli, args, columns).splitlines()
    split = sorted(t for t in wanted if not any(t in line for line in lines))
    assert not split, f"split or cut at {columns} columns: {split[:10]}"
    # Rich's ellipsis cuts a cell as `gemm_fusion_dot.60…`; our own `… 3 more` follows a space
    assert not [line for line in lines if re.search(r"\S…", line)]


@pytest.mark.parametrize("dump", [V5E, GPU, CPU])
def test_piped_inspect_shows_the_json_figures_whole(cli: Cli, dump: str, monkeypatch) -> None:
    """Piped, each largest buffer and entry parameter of the JSON is one line with its name,
    shape and physical bytes (what a grep for a shape must find)."""
    monkeypatch.chdir(REPO)
    text = _run(cli, ("inspect", dump, "--top", "20"), None).splitlines()
    doc = json.loads(_run(cli, ("inspect", dump, "--format", "json"), "200"))
    for module in doc["modules"]:
        rows = module["largest_buffers"] + module["entry_parameters"][:20]
        assert rows
        for row in rows:
            hits = [line for line in text if row["shape"] in line and row["name"] in line]
            assert hits, (row["name"], row["shape"])
        for group in module["padding_groups"]:
            for shape in group["rows"][:3]:
                assert any(shape["shape"] in line for line in text), shape["shape"]
