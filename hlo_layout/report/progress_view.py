"""A transient progress bar on stderr for big dumps; silent when stderr is not a terminal, so pipes,
CI logs and JSON consumers never see it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn

#: Inputs smaller than this finish before a bar would be worth drawing.
BIG_INPUT_BYTES = 4 * 2**20


class Stages:
    """Named stages of one bar: `start(text, total)` begins one (total None pulses), `update(done,
    total)` is the callback the library calls. Does nothing when disabled."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._task: TaskID | None = None

    def start(self, description: str, total: int | None = None) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(description, total=total)

    def update(self, done: int, total: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total)

    @property
    def callback(self) -> Callable[[int, int], None] | None:
        return self.update if self._progress is not None else None


@contextlib.contextmanager
def progress_stages(console: Console, input_bytes: int) -> Iterator[Stages]:
    """A bar on `console` when it is a terminal and the input is big; otherwise a no-op."""
    if not console.is_terminal or input_bytes < BIG_INPUT_BYTES:
        yield Stages(None)
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        console=console,
        transient=True,
    )
    with progress:
        yield Stages(progress)
