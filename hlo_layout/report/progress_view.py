"""A transient progress bar on stderr for big dumps; silent when stderr is not a terminal, so pipes,
CI logs and JSON consumers never see it.

Two lines: the input (bytes read of the total, percent, rate in MB/s and time left, advanced as
the parser scans each dump file) and the current stage (`reading x.txt`, `measuring jit_step`
with its own count, percent and time left when the library reports one)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.table import Column
from rich.text import Text

from hlo_layout.units import format_bytes, format_duration, format_rate

#: Inputs smaller than this finish before a bar would be worth drawing.
BIG_INPUT_BYTES = 4 * 2**20


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


class Stages:
    """Named stages of one bar: `start(text, total)` begins one (total None pulses), `update(done,
    total)` is the callback the library calls. Does nothing when disabled.

    `files` (path, size) lets the input line advance while each file's `reading NAME` stage runs
    (the parser reports how far its scan is, in characters, which we scale to the file's bytes)
    and when it ends."""

    def __init__(self, progress: Progress | None, files: Sequence[tuple[str, int]] = ()) -> None:
        self._progress = progress
        self._task: TaskID | None = None
        self._sizes = {Path(p).name: size for p, size in files}
        self._reading = 0  # bytes of the file being read, while a `reading` stage runs
        self._read = 0  # bytes of the files read before it
        self._input: TaskID | None = None
        total = sum(size for _, size in files)
        if progress is not None and total:
            self._input = progress.add_task("input", total=total, unit="bytes")

    def _finish_reading(self) -> None:
        self._read += self._reading
        self._reading = 0
        if self._progress is not None and self._input is not None:
            self._progress.update(self._input, completed=self._read)

    def start(self, description: str, total: int | None = None) -> None:
        if self._progress is None:
            return
        self._finish_reading()
        if self._task is not None:
            self._progress.remove_task(self._task)
        if description.startswith("reading "):
            self._reading = self._sizes.get(description.removeprefix("reading "), 0)
            if self._reading:
                self._task = self._progress.add_task(description, total=self._reading, unit="bytes")
                return
        self._task = self._progress.add_task(description, total=total)

    def update(self, done: int, total: int) -> None:
        if self._progress is None or self._task is None:
            return
        if self._reading and total:  # the parser's scan, in characters of the file's text
            read = min(self._reading, self._reading * done // total)
            self._progress.update(self._task, completed=read)
            if self._input is not None:
                self._progress.update(self._input, completed=self._read + read)
            return
        self._progress.update(self._task, completed=done, total=total)

    @property
    def callback(self) -> Callable[[int, int], None] | None:
        return self.update if self._progress is not None else None


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
    )
    with progress:
        yield Stages(progress, files)
