"""`hlo-layout inspect DUMP...`: what a dump holds."""

from __future__ import annotations

from hlo_layout.cli.app import app
from hlo_layout.cli.common import (
    EXIT_INPUT,
    DumpArgs,
    FormatOpt,
    OutputFormat,
    TopOpt,
    emit_json,
    guard,
    report_error,
    stdout_console,
)
from hlo_layout.errors import HloLayoutError
from hlo_layout.report.model import inspect_json, module_summary
from hlo_layout.syntax.parse import HloInputError, parse_file_modules
from hlo_layout.syntax.tree import Module


@app.command()
def inspect(
    dumps: DumpArgs,
    output_format: FormatOpt = OutputFormat.text,
    top: TopOpt = 10,
) -> None:
    """Summarize HLO dumps: modules, computations, instructions, entry signature.

    With [bold]--format json[/bold], print every instruction (name, opcode, shape, operands,
    attributes) as JSON on stdout; see the README for the keys.
    """
    with guard("inspect"):
        modules: list[tuple[str, Module]] = []
        failed = False
        for path in dumps:
            try:
                found = parse_file_modules(path)
                if not found:
                    raise HloInputError(f"{path}: no HLO module, computation or instruction found")
                modules.extend((str(path), m) for m in found)
            except HloLayoutError as e:
                report_error(e)
                failed = True
        if output_format is OutputFormat.json:
            emit_json(inspect_json(modules))
        else:
            from hlo_layout.report.inspect_view import render_inspect

            summaries = [(file, module_summary(m)) for file, m in modules]
            stdout_console().print(render_inspect(summaries, top))
        if failed:
            raise SystemExit(EXIT_INPUT)
