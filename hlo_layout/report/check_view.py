"""The human view of `check`: a table of violations, or one line saying all passed."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import RenderableType, group
from rich.table import Table
from rich.text import Text

from hlo_layout.check.run import CheckResult


@group()
def render_check(result: CheckResult) -> Iterator[RenderableType]:
    modules = len(result.checked)
    if result.violations:
        table = Table(title="budget violations", title_justify="left")
        table.add_column("rule", style="hlo.opcode")
        table.add_column("file::module", style="hlo.name")
        table.add_column("value", justify="right", style="hlo.padding")
        table.add_column("limit", justify="right")
        table.add_column("where", style="hlo.muted")
        for v in result.violations:
            table.add_row(v.rule, v.label, v.value_text, v.limit_text, v.where)
        yield table
        yield Text(
            f"{len(result.violations)} violation(s) in {modules} module(s)", style="hlo.error"
        )
    elif result.errors:
        yield Text(
            f"{modules} module(s) checked, no violation; {len(result.errors)} input error(s): "
            "the gate did not pass",
            style="hlo.error",
        )
    else:
        yield Text(f"{modules} module(s) checked, all within budget", style="hlo.ok")
    if result.config:
        yield Text(f"config: {result.config}", style="hlo.muted")
    for module in result.baseline_missing:
        yield Text(f"note: no baseline paired with {module}", style="hlo.muted")
    for module in result.baseline_unpaired:
        yield Text(f"note: baseline module {module} paired with nothing", style="hlo.muted")
    for name in result.baseline_ambiguous:
        yield Text(
            f"note: module name {name} repeats; such modules pair only by relative path",
            style="hlo.muted",
        )
