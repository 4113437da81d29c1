"""`hlo-layout check PATH...`: a CI gate on compiler dumps (budgets, padding, placement,
structure, growth over a baseline)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from hlo_layout.check.discover import expand, shard
from hlo_layout.check.policy import PolicyError, load_config, parse_space
from hlo_layout.check.run import run_check
from hlo_layout.check.sizes import parse_size
from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_CHECK_FAILED,
    EXIT_INPUT,
    EXIT_USAGE,
    FormatOpt,
    OutputFormat,
    emit_json,
    guard,
    stderr_console,
    stdout_console,
)


def _size(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


def _space_sizes(values: list[str]) -> dict[int, int]:
    out = {}
    for value in values:
        space, sep, size = value.partition("=")
        if not sep:
            raise typer.BadParameter(f"{value!r}: write SPACE=SIZE, e.g. 1=16MiB or vmem=16MiB")
        try:
            out[parse_space(space)] = parse_size(size)
        except (ValueError, PolicyError) as e:
            raise typer.BadParameter(str(e)) from None
    return out


def _spaces(values: list[str]) -> list[int]:
    try:
        return [parse_space(v) for v in values]
    except PolicyError as e:
        raise typer.BadParameter(str(e)) from None


@app.command()
def check(
    paths: Annotated[
        list[str], typer.Argument(help="Dump files, globs or dump directories.", show_default=False)
    ],
    max_argument_bytes: Annotated[
        str | None, typer.Option(help="Entry parameters' physical bytes, e.g. 64MiB.")
    ] = None,
    max_output_bytes: Annotated[str | None, typer.Option(help="Entry outputs' bytes.")] = None,
    max_space_bytes: Annotated[
        list[str], typer.Option(help="SPACE=SIZE: bytes defined in a memory space.")
    ] = [],  # noqa: B006 - Typer needs a list default
    max_buffer_bytes: Annotated[str | None, typer.Option(help="Largest single buffer.")] = None,
    max_allocation_bytes: Annotated[
        str | None, typer.Option(help="Total of the compiler's buffer allocations.")
    ] = None,
    max_padding_percent: Annotated[
        float | None, typer.Option(help="Padding share of physical bytes, percent.")
    ] = None,
    max_padding_bytes: Annotated[str | None, typer.Option(help="Padding bytes.")] = None,
    max_expansion: Annotated[
        float | None, typer.Option(help="Any buffer's physical/logical ratio.")
    ] = None,
    expansion_min_bytes: Annotated[
        str | None, typer.Option(help="Only buffers at least this big count for --max-expansion.")
    ] = None,
    forbid_space: Annotated[
        list[str], typer.Option(help="A memory space no buffer may use (5, S(5), host).")
    ] = [],  # noqa: B006
    max_instructions: Annotated[int | None, typer.Option()] = None,
    max_fusions: Annotated[int | None, typer.Option()] = None,
    min_fusions: Annotated[int | None, typer.Option()] = None,
    max_copies: Annotated[int | None, typer.Option()] = None,
    max_custom_calls: Annotated[int | None, typer.Option()] = None,
    forbid_opcode: Annotated[list[str], typer.Option(help="An opcode that must not appear.")] = [],  # noqa: B006
    forbid_custom_call: Annotated[
        list[str], typer.Option(help="A custom-call target that must not appear.")
    ] = [],  # noqa: B006
    baseline: Annotated[
        list[str] | None,
        typer.Option(help="Old dumps (file or directory), matched by module name."),
    ] = None,
    max_growth_percent: Annotated[
        float | None, typer.Option(help="Growth of argument/output/physical bytes over baseline.")
    ] = None,
    max_padding_growth: Annotated[
        float | None, typer.Option(help="Growth of padding percent over baseline, in points.")
    ] = None,
    max_fusion_growth: Annotated[
        int | None, typer.Option(help="More fusions than baseline.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="hlo-layout.toml or pyproject.toml ([tool.hlo-layout]).")
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=0, help="Worker processes (0 = cores).")
    ] = 0,
    shard_spec: Annotated[
        str | None, typer.Option("--shard", help="i/n: check only the i-th of n slices.")
    ] = None,
    junit_xml: Annotated[Path | None, typer.Option(help="Also write a JUnit XML report.")] = None,
    output_format: FormatOpt = OutputFormat.text,
) -> None:
    """Fail (exit 1) when a dump breaks a budget. Unreadable files exit 3; the rest are still
    checked. Rules come from flags and from a config file (see the README's CI section)."""
    with guard("check"):
        try:
            policies = load_config(config)
            files = shard(expand(paths), shard_spec)
        except (PolicyError, ValueError) as e:
            stderr_console().print(f"error: {e}")
            raise typer.Exit(EXIT_USAGE) from None
        overrides = dict(
            max_argument_bytes=_size(max_argument_bytes),
            max_output_bytes=_size(max_output_bytes),
            max_space_bytes=_space_sizes(max_space_bytes) or None,
            max_buffer_bytes=_size(max_buffer_bytes),
            max_allocation_bytes=_size(max_allocation_bytes),
            max_padding_percent=max_padding_percent,
            max_padding_bytes=_size(max_padding_bytes),
            max_expansion=max_expansion,
            expansion_min_bytes=_size(expansion_min_bytes),
            forbid_spaces=_spaces(forbid_space) or None,
            max_instructions=max_instructions,
            max_fusions=max_fusions,
            min_fusions=min_fusions,
            max_copies=max_copies,
            max_custom_calls=max_custom_calls,
            forbid_opcodes=forbid_opcode or None,
            forbid_targets=forbid_custom_call or None,
            max_growth_percent=max_growth_percent,
            max_padding_growth_points=max_padding_growth,
            max_fusion_growth=max_fusion_growth,
        )
        policies = type(policies)(policies.base, policies.sections, overrides)
        baseline_files = expand(baseline) if baseline else None
        result = run_check(files, policies, baseline=baseline_files, jobs=jobs)

        from hlo_layout.report.check_formats import check_json, check_junit, github_annotations

        err = stderr_console()
        for f in result.errors:
            err.print(f"error: {f.error}", markup=False, highlight=False)
        if junit_xml is not None:
            junit_xml.write_text(check_junit(result), encoding="utf-8")
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
