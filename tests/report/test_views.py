"""Rich views rendered on a fixed-width, colourless console and compared with snapshots.

Regenerate after an intended change with `HLO_LAYOUT_UPDATE_SNAPSHOTS=1 pytest tests/report`,
then read the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from hlo_layout.memory.buffer_assignment import parse_buffer_assignment
from hlo_layout.memory.footprint import memory_report
from hlo_layout.report.console import make_console
from hlo_layout.report.inspect_view import render_inspect
from hlo_layout.report.layout_model import explain_shape
from hlo_layout.report.layout_view import render_layouts
from hlo_layout.report.model import module_summary
from hlo_layout.syntax import parse_file
from tests.support import SAMPLES

SNAPSHOTS = Path(__file__).parent / "snapshots"
SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"


def render(renderable: RenderableType, width: int) -> str:
    out = io.StringIO()
    console = make_console(out, width=width)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def check(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("HLO_LAYOUT_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    if not path.exists():
        pytest.fail(f"no snapshot {path}; run with HLO_LAYOUT_UPDATE_SNAPSHOTS=1 to write it")
    assert text == path.read_text()


def test_layout_figures_1_and_2() -> None:
    items = [
        explain_shape("f32[3,5]{1,0:T(2,2)}", at=(2, 3), grid=True),
        explain_shape("bf16[4,8]{1,0:T(2,4)(2,1)}", grid=True),
    ]
    text = render(render_layouts(items), 100)
    # The figures' numbers, row by row (Figure 1 with its padding column and row).
    assert "  0   1│  4   5│  8  ·9" in text
    assert " 12  13│ 16  17│ 20 ·21" in text
    assert "0   2   4   6│  8  10  12  14" in text
    assert "17  19  21  23│ 25  27  29  31" in text
    check("layout_figures.txt", text)


def test_inspect_sample_with_buffers() -> None:
    module = parse_file(SAMPLE)
    name = "transformer.buffer-assignment.txt"
    assignment = parse_buffer_assignment(SAMPLE.with_name(name).read_text(), name)
    report = memory_report(module, assignment=assignment)
    text = render(render_inspect([("sample", module_summary(module))], 5, [report]), 140)
    check("inspect_sample.txt", text)


def test_progress_bar_only_on_a_terminal_and_for_big_inputs() -> None:
    from hlo_layout.report.progress_view import BIG_INPUT_BYTES, progress_stages

    def console(terminal: bool) -> Console:
        return Console(file=io.StringIO(), force_terminal=terminal, width=80)

    with progress_stages(console(False), BIG_INPUT_BYTES) as stages:
        assert stages.callback is None
    with progress_stages(console(True), BIG_INPUT_BYTES - 1) as stages:
        assert stages.callback is None
    tty = console(True)
    with progress_stages(tty, BIG_INPUT_BYTES) as stages:
        assert stages.callback is not None
        stages.start("measuring", total=None)
        stages.callback(1, 2)
    assert "measuring" in tty.file.getvalue()


def test_progress_advances_while_a_file_is_scanned(tmp_path) -> None:
    """The parser reports its scan (characters) while reading; the bar shows it as the file's
    bytes, on the stage line and the input line, before the file is done."""
    from hlo_layout.report.progress_view import BIG_INPUT_BYTES, progress_stages
    from hlo_layout.syntax.parse import parse_file_modules

    body = "".join(
        f"f{i} {{\n  p = f32[8]{{0}} parameter(0)\n  ROOT n = f32[8]{{0}} negate(p)\n}}\n\n"
        for i in range(40_000)
    )
    text = f"HloModule m\n\n{body}ENTRY e {{\n  ROOT p = f32[8]{{0}} parameter(0)\n}}\n"
    path = tmp_path / "big.txt"
    path.write_text(text)
    size = path.stat().st_size
    assert size > 2**21
    seen: list[tuple[int, int]] = []
    parse_file_modules(path, report=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2 and all(total == len(text) for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] < len(text)

    tty = Console(file=io.StringIO(), force_terminal=True, width=100)
    with progress_stages(tty, max(size, BIG_INPUT_BYTES), [(str(path), size)]) as stages:
        stages.start("reading big.txt")
        callback = stages.callback
        assert callback is not None
        callback(len(text) // 2, len(text))
        progress = stages._progress
        assert progress is not None
        done = {task.description: task.completed for task in progress.tasks}
        assert done["input"] == size // 2 and done["reading big.txt"] == size // 2
