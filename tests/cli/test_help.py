"""Help like ruff's and uv's: metavars, never Python types; every flag described; one --top
default; every check rule in help and in the README."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import typer
import typer.main

from hlo_layout.check.rules import RULES
from hlo_layout.cli import app
from hlo_layout.cli.app import COMMANDS as COMMANDS_TABLE
from hlo_layout.cli.common import TOP_DEFAULT
from tests.support import REPO, Cli

COMMANDS = ["check", "diff", "layout", "sharding", "indexing", "inspect", "report"]
OURS = ["check", "diff", "layout", "sharding", "indexing"]


def _command(name: str) -> Any:
    """The click command (works when the group loads command modules lazily)."""
    group: Any = typer.main.get_command(app)
    command = group.get_command(typer.Context(group), name)
    assert command is not None, name
    return command


@pytest.mark.parametrize("name", OURS)
def test_no_python_types_in_help(cli: Cli, name: str) -> None:
    result = cli(name, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert not re.search(r"<(list|bool|int|float|str|path|text)\b", result.stdout), result.stdout
    assert "int range" not in result.stdout


@pytest.mark.parametrize("name", OURS)
def test_every_flag_is_described(name: str) -> None:
    for param in _command(name).params:
        assert getattr(param, "help", None), f"{name} {param.name} has no help"


def test_check_help_shows_the_config_table_name(cli: Cli) -> None:
    result = cli("check", "--help", env={"COLUMNS": "200"})
    assert "[tool.hlo-layout]" in result.stdout


@pytest.mark.parametrize(
    "name",
    list(COMMANDS),
)
def test_one_top_default(name: str) -> None:
    tops = [p for p in _command(name).params if p.name == "top"]
    for p in tops:
        assert p.default == TOP_DEFAULT == 20
    if name in ("diff", "sharding", "inspect"):
        assert tops


def test_every_rule_has_a_flag_with_metavar_and_a_readme_row() -> None:
    params = {p.name: p for p in _command("check").params}
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("<!-- rules-table -->") :]
    table = table[: table.index("\n\n")]
    for rule in RULES:
        assert f"`{rule.flag}" in table or f"`{rule.key}`" in table, rule.key
        if rule.on_command_line:
            param = params[rule.param]
            assert param.opts == [rule.flag, *(f"--{a}" for a in rule.aliases)]
            assert param.metavar == rule.metavar
            assert param.help == rule.help


def test_every_metavar_is_upper_case_or_a_choice() -> None:
    for name in OURS:
        for param in _command(name).params:
            metavar = getattr(param, "metavar", None)
            if metavar:
                assert metavar.isupper() or "|" in metavar or "=" in metavar, (name, metavar)


def test_root_help_in_a_fresh_process_shows_no_python_types() -> None:
    """The root help loads no command module (lazy group), so the metavar rule must hold there
    too; completion is offered like uv's and ruff's."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "hlo_layout", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
        timeout=60,
    ).stdout
    assert "<bool>" not in out and "--install-completion" in out and "-V" in out


@pytest.mark.parametrize("name", [*COMMANDS, "memory"])
def test_help_paragraphs_wrap_at_the_terminal_not_the_source(cli: Cli, name: str) -> None:
    """Docstring line breaks never reach the help: at 200 columns every paragraph's opening
    words, however the source wrapped them, are on one line (`candidates (closest first)`)."""
    from hlo_layout.cli.help_format import unwrap_paragraph

    result = cli(name, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    flat = [" ".join(line.strip(" │").split()) for line in result.stdout.splitlines()]
    text = ""
    for paragraph in (_command(name).help or "").split("\n\n"):
        text = re.sub(r"\[/?bold\]", "", unwrap_paragraph(paragraph.strip()))
        start = text[:150].rsplit(" ", 1)[0] if len(text) > 150 else text
        assert any(start in line for line in flat), (start, result.stdout)


ALL = list(COMMANDS_TABLE)


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_help_reflows_at_any_width(cli: Cli, columns: str) -> None:
    """No line break comes from the source: every line of a wrapped description is as full as
    the next word allows (issue 28: the root help's command list broke where the docstrings'
    lines ended)."""
    width = int(columns)
    for args in [["--help"], *([name, "--help"] for name in ALL)]:
        out = cli(*args, env={"COLUMNS": columns}).stdout
        lines = out.splitlines()
        for line, following in itertools.pairwise(lines):
            text, after = line.rstrip(" │"), following.rstrip(" │")
            if not text.strip() or "─" in text or "─" in after:
                continue
            start = len(after) - len(after.lstrip(" │"))
            indent_ok = start > 4 and len(text) > start and text[start - 1] == " "
            continuing = after[start : start + 1].islower() and indent_ok and text[start] != " "
            if continuing:  # the next line goes on with this one's column
                word = after[start:].split(" ", 1)[0]
                assert len(text) + 1 + len(word) > width - 4, (args, line, following)


def test_the_root_help_lists_each_command_on_one_line_when_wide(cli: Cli) -> None:
    out = cli("--help", env={"COLUMNS": "1000"}).stdout
    panel = out[out.index("Commands") :].splitlines()[1:]
    rows = [line for line in panel if line.startswith("│")]
    assert [row.split()[1] for row in rows] == ALL  # one line each: nothing continues a row
