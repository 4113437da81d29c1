"""The stages of a progress bar as the library hears of them, without Rich: a command that shows
no bar (stderr not a terminal, a small input) never imports it (`cli/common.progress`), and the
bar itself is drawn by `report/progress_view.py`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: Inputs smaller than this finish before a bar would be worth drawing.
BIG_INPUT_BYTES = 4 * 2**20


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
