"""`hlo-layout check PATH...`: a CI gate on compiler dumps (budgets, padding, placement,
structure, growth over a baseline).

The rule options are generated from the rule table (`hlo_layout.check.rules.RULES`): one
option per entry, named, described and parsed by that entry.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from hlo_layout.check.policy import CONFIG_NAME, PolicyError, load_config
from hlo_layout.check.rule_spec import RuleSpec, RuleValueError
from hlo_layout.check.rules import RULES
from hlo_layout.check.run import run_check
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_CHECK_FAILED,
    EXIT_INPUT,
    BackendOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    guard,
    say_assumed,
    stderr_console,
    stdout_console,
    usage_error,
    write_output_file,
)
from hlo_layout.reader.discover import expand_dumps, no_match_message, shard_dumps
from hlo_layout.reader.loader import backend_choice

_RULE_PANEL = "Rules"
_BASELINE_PANEL = "Baseline"


def _rule_option(spec: RuleSpec) -> inspect.Parameter:
    panel = _BASELINE_PANEL if spec.needs_baseline else _RULE_PANEL
    option = typer.Option(
        spec.flag,
        *(f"--{alias}" for alias in spec.aliases),
        help=spec.help,
        metavar=spec.metavar,
        show_default=False,
        rich_help_panel=panel,
    )
    if spec.kind.repeatable:
        annotation: Any = Annotated[list[str] | None, option]
    else:
        annotation = Annotated[str | None, option]
    return inspect.Parameter(
        spec.param, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


CLI_RULES = tuple(r for r in RULES if r.on_command_line)


def _overrides(values: dict[str, Any]) -> dict[str, Any]:
    """Flag values → rule values (usage error, exit 2, naming the flag)."""
    out: dict[str, Any] = {}
    for spec in CLI_RULES:
        raw = values.get(spec.param)
        if raw is None or raw == []:
            continue
        try:
            out[spec.key] = spec.parse(raw)
        except RuleValueError as e:
            raise typer.BadParameter(str(e), param_hint=f"'{spec.flag}'") from None
    return out


def check(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Dump files, globs or dump folders; - reads one dump from stdin.",
            metavar="PATH",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            help="Old dumps (file, glob or folder) to compare with, paired by path relative "
            "to the folder, then by module name when unambiguous (repeatable).",
            metavar="PATH",
            show_default=False,
            rich_help_panel=_BASELINE_PANEL,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="hlo-layout.toml, or pyproject.toml with a \\[tool.hlo-layout] table; found "
            "from the current folder upwards when not given.",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    backend: BackendOpt = None,
    jobs: Annotated[
        int,
        typer.Option("--jobs", "-j", help="Worker processes (0 = one per core).", metavar="N"),
    ] = 0,
    shard_spec: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="I/N: check only the I-th of N slices of the files (CI matrices).",
            metavar="I/N",
            show_default=False,
        ),
    ] = None,
    junit_xml: Annotated[
        Path | None,
        typer.Option(
            help="Also write a JUnit XML report (missing folders are created).",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    no_rules_ok: Annotated[
        bool,
        typer.Option(
            "--no-rules-ok",
            help="Pass when no rule is set (by default that is a usage error, exit 2: a CI job "
            "whose config was not found would gate nothing).",
        ),
    ] = False,
    output_format: FormatOpt = OutputFormat.text,
    **rules: Any,
) -> None:
    """Gate dumps on budgets: exit 1 on a violation, 3 on bad input, 2 on bad usage.

    Exit 3 when a file is unreadable or a PATH matches no dump (the rest are still checked);
    exit 2 on a usage or config error, or a growth rule without --baseline. Rules come from the
    flags below and from a config file (see the README's CI section).
    """
    with guard("check"):
        try:
            policies = load_config(config).with_overrides(_overrides(rules))
            dumps, unmatched = expand_dumps(paths)
            all_dumps = len(dumps)
            dumps = shard_dumps(dumps, shard_spec)
            baseline_dumps = None
            baseline_unmatched: list[str] = []
            if baseline:
                baseline_dumps, baseline_unmatched = expand_dumps(baseline)
        except (PolicyError, ValueError) as e:
            usage_error(str(e))
        if not no_rules_ok and not policies.keys_in_use():
            usage_error(
                f"no rule to check: {_where_rules_were_looked_for(config, policies)}; give a "
                "rule flag (e.g. --max-peak-bytes SIZE), --config PATH, or --no-rules-ok"
            )
        needing = policies.needing_baseline()
        if needing and baseline_dumps is None:
            flags = ", ".join(r.flag for r in needing)
            usage_error(f"{flags} compares with a baseline: give --baseline PATH")
        if shard_spec and all_dumps and not dumps:
            stderr_console().print(
                f"note: shard {shard_spec} holds none of the {all_dumps} dump(s)", markup=False
            )
        if junit_xml is not None:
            write_output_file(junit_xml, None)  # fail early (exit 2) on an unwritable path
        missing = tuple((arg, no_match_message(arg)) for arg in [*unmatched, *baseline_unmatched])
        result = run_check(
            dumps,
            policies,
            baseline=baseline_dumps,
            unmatched=missing,
            jobs=jobs,
            backend=backend_choice(backend),
        )

        from hlo_layout.report.check_formats import check_json, check_junit, github_annotations

        err = stderr_console()
        for f in result.errors:
            err.print(f.error, markup=False, highlight=False)
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False, highlight=False)
        say_assumed(
            (m.file, m.backend_note) for f in result.files for m in f.metrics if m.backend_note
        )
        if junit_xml is not None:
            write_output_file(junit_xml, check_junit(result))
        if os.environ.get("GITHUB_ACTIONS") == "true":
            # The runner reads workflow commands from both streams; stdout stays pure JSON.
            stream = sys.stderr if output_format is OutputFormat.json else sys.stdout
            for line in github_annotations(result):
                stream.write(line + "\n")
        if output_format is OutputFormat.json:
            emit_json(check_json(result))
        else:
            from hlo_layout.report.check_view import render_check

            stdout_console().print(render_check(result))
        if result.errors:
            raise typer.Exit(EXIT_INPUT)
        if result.violations:
            raise typer.Exit(EXIT_CHECK_FAILED)


def _where_rules_were_looked_for(config: Path | None, policies: Any) -> str:
    if policies.source is not None:
        return f"no rule flag given and {policies.source} sets none"
    return (
        f"no rule flag given and no config found (looked for {CONFIG_NAME}, or pyproject.toml "
        f"with [tool.hlo-layout], in {Path.cwd()} and every folder above it)"
    )


def _with_rule_options(command: Any) -> Any:
    """`command` with one keyword option per command-line rule, in table order."""
    signature = inspect.signature(command, eval_str=True)
    fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    fixed = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in fixed]
    generated = [_rule_option(spec) for spec in CLI_RULES]
    generated = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in generated]
    params = fixed[:1] + generated + fixed[1:]
    command.__signature__ = signature.replace(parameters=params)
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return command


app.command()(_with_rule_options(check))
