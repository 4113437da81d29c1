"""A transient progress bar on stderr for big dumps; silent when stderr is not a terminal, so pipes,
CI logs and JSON consumers never see it.

Two lines: the input (bytes read of the total, percent, rate in MB/s and time left, advanced as
the parser scans each dump file) and the current stage (`reading x.txt`, `measuring jit_step`
with its own count, percent and time left when the library reports one)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
)
from rich.table import Column
from rich.text import Text

from hlo_layout.report.stages import BIG_INPUT_BYTES, Stages
from hlo_layout.units import format_bytes, format_duration, format_rate


class FiguresColumn(ProgressColumn):
    """`12.00MiB/19.00MiB  63%  41.2 MB/s  0:02 left` for bytes; `120/400  30%  0:05 left` for
    a counted stage; nothing while a stage has no total."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        total = int(task.total)
        done = int(task.completed)
        percent = f"{100 * done // total if total else 100:>3}%"
        left = task.time_remaining
        eta = f"  {format_duration(left)} left" if left is not None and done < total else ""
        if task.fields.get("unit") == "bytes":
            speed = task.speed
            rate = f"  {format_rate(speed)}" if speed else ""
            head = f"{format_bytes(done)}/{format_bytes(total)}"
            return Text(f"{head}  {percent}{rate}{eta}", style="hlo.muted")
        return Text(f"{done:,}/{total:,}  {percent}{eta}", style="hlo.muted")


@contextlib.contextmanager
def progress_stages(
    console: Console, input_bytes: int, files: Sequence[tuple[str, int]] = ()
) -> Iterator[Stages]:
    """A bar on `console` when it is a terminal and the input is big; otherwise a no-op."""
    if not console.is_terminal or input_bytes < BIG_INPUT_BYTES:
        yield Stages(None)
        return
    progress = Progress(
        SpinnerColumn(),
        BarColumn(bar_width=20),  # the figures, not the bar, should get the width
        FiguresColumn(table_column=Column(no_wrap=True)),
        TextColumn("{task.description}"),  # last: a long file name goes under the bar, whole
        console=console,
        transient=True,
        # stdout is data (JSON, an HTML report to `-`): never swapped for Rich's proxy, which
        # would print it on the bar's terminal instead of where stdout was redirected
        redirect_stdout=False,
    )
    with progress:
        yield Stages(progress, files)


__all__ = ["BIG_INPUT_BYTES", "FiguresColumn", "Stages", "progress_stages"]
