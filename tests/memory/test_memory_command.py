"""`hlo-layout memory`: JSON contract, options and exit codes."""

from __future__ import annotations

from hlo_layout.reader.sidefiles import read_buffer_assignment
from tests.memory.helpers import CORPUS, GENERATED
from tests.support import Cli

CPU = CORPUS / "jax-cpu" / "module_0060.jit_f.cpu_after_optimizations.txt"

MODULE_KEYS = {
    "module", "file", "backend", "tpu_generation", "backend_assumed", "frontend", "scheduled",
    "notes", "peak_bytes", "static_bytes", "temp_allocation_bytes", "peak_parts", "spaces",
    "values", "live_at_peak", "live_at_peak_total", "timeline", "by_source", "by_op_name",
    "compiler",
}  # fmt: skip
SPACE_KEYS = {
    "memory_space", "name", "peak_bytes", "static_bytes", "temp_allocation_bytes",
    "heap_peak_bytes", "fragmentation_bytes", "thread_local_bytes", "peak_step",
    "peak_instruction", "live_bytes", "estimate",
}  # fmt: skip
VALUE_KEYS = {"name", "index", "start", "end", "bytes", "memory_space", "allocation"}
LIVE_KEYS = {
    "name", "index", "shape", "bytes", "logical_bytes", "padding_bytes", "memory_space",
    "allocation", "start", "end", "op_name", "source", "via", "argument",
}  # fmt: skip


def test_json_contract_and_xla_peak_moment(cli: Cli) -> None:
    doc = cli.json("memory", str(CPU), "--format", "json")
    assert doc["schema_version"] == 2
    (m,) = doc["modules"]
    assert set(m) == MODULE_KEYS
    assert m["backend"] == "cpu" and m["scheduled"] is True
    (space,) = m["spaces"]
    assert set(space) == SPACE_KEYS
    assert all(set(v) == VALUE_KEYS for v in m["values"])
    assert all(set(b) == LIVE_KEYS for b in m["live_at_peak"])
    # The headline: the compiler's allocations (its buffer assignment beside the dump).
    ba = read_buffer_assignment(CPU.with_name(CPU.name.replace(".txt", "-buffer-assignment.txt")))
    assert m["peak_bytes"] == space["peak_bytes"] == ba.total_bytes
    assert sum(p["bytes"] for p in m["peak_parts"]) == m["peak_bytes"]
    # XLA's live-range file: "Live ranges at 6 (peak)", cumulative 293572 bytes.
    assert space["peak_step"] == 6 and space["live_bytes"] == 293572
    assert sum(b["bytes"] for b in m["live_at_peak"]) == 293572
    assert [b["name"] for b in m["live_at_peak"]][:2] == [
        "reverse_concatenate_fusion",
        "ynn_fusion.1",
    ]
    assert m["live_at_peak"][0]["op_name"] == "jit(f)/concatenate"
    assert m["live_at_peak"][0]["source"] == "gen_dumps.py:86"
    assert m["by_op_name"][0] == {"op_name": "jit(f)/concatenate", "bytes": 165888, "values": 1}
    (tl,) = m["timeline"]
    assert tl["length"] == len(tl["live_bytes"]) and max(tl["live_bytes"]) == 293572
    assert m["compiler"] is not None  # the buffer assignment is beside the dump
    assert m["compiler"]["temp_allocation_bytes"] == {"0": space["temp_allocation_bytes"]}


def test_top_at_and_space(cli: Cli) -> None:
    (m,) = cli.json(
        "memory",
        str(CPU),
        "--top",
        "2",
        "--at",
        "ynn_fusion.1",
        "--space",
        "device",
        "--format",
        "json",
    )["modules"]
    assert len(m["live_at_peak"]) == 2
    assert m["at"]["step"] == 5 and m["at"]["instruction"] == "ynn_fusion.1"
    assert {b["name"] for b in m["at"]["live"]} == {"ynn_fusion.1", "conv_general_dilated.2"}


def test_text_view_shows_peak_chart_and_notes(cli: Cli) -> None:
    result = cli("memory", str(CPU), env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "peak 287.2KiB" in out and "▲" in out and "reverse_concatenate_fusion" in out
    assert "static part only" in out


def test_chart_lines_fit_the_terminal(cli: Cli) -> None:
    """Every chart line fits the width, and the peak label is whole: beside the marker when it
    fits there, else on a line of its own (a wrapped label stranded its last word)."""
    for columns in (60, 80, 100):
        result = cli("memory", str(CPU), env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        chart = [n for n, line in enumerate(lines) if "└" in line]
        assert chart, result.stdout
        for n in chart:
            label = lines[n] if "peak at step" in lines[n] else lines[n + 1]
            assert len(lines[n]) <= columns and len(label) <= columns, (columns, label)
            assert label.rsplit("of ", 1)[-1].strip().isdigit(), (columns, label)


def test_timeline_is_pooled_with_the_peak_kept(cli: Cli) -> None:
    from hlo_layout.memory import analysis

    (dump,) = GENERATED.glob("module_*.jit_scan.cpu_after_optimizations.txt")
    old = analysis.TIMELINE_POINTS
    analysis.TIMELINE_POINTS = 3
    try:
        (m,) = cli.json("memory", str(dump), "--format", "json")["modules"]
    finally:
        analysis.TIMELINE_POINTS = old
    (tl,) = m["timeline"]
    assert len(tl["live_bytes"]) <= 3 and tl["bucket"] > 1
    assert max(tl["live_bytes"]) == m["spaces"][0]["live_bytes"]


def test_errors_have_exit_codes(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", str(tmp_path / "missing.txt")).exit_code == 3
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT %x = f32[2] bogus-op-(\n}\n")
    assert cli("memory", str(bad)).exit_code == 3
    assert cli("memory", str(CPU), "--at", "nope").exit_code == 2
    assert cli("memory", str(CPU), "--space", "nowhere").exit_code == 2
    assert cli("memory", str(CPU), "--backend", "npu").exit_code == 2


def test_unscheduled_dump_says_estimate(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = CPU.read_text().replace("is_scheduled=true, ", "")
    dump = tmp_path / "unscheduled.txt"
    dump.write_text(text)
    (m,) = cli.json("memory", str(dump), "--backend", "cpu", "--format", "json")["modules"]
    assert m["scheduled"] is False
    assert any("not scheduled" in n for n in m["notes"])


def test_inspect_leads_with_the_peak_and_check_budgets_allocations(cli: Cli) -> None:
    from hlo_layout.check.figures import memory_figures
    from hlo_layout.syntax import parse_file

    result = cli("inspect", str(CPU), env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "peak 287.2KiB" in out
    assert out.index("peak 287.2KiB") < out.index("values by memory space")
    # check's per-space figure is what XLA allocates: static + the temp allocation +
    # thread-local, on CPU the space's peak (the buffer assignment's total).
    figures = memory_figures(parse_file(CPU))
    assert figures["space_bytes"] == {0: 45252 + 248832 + 24} == figures["peak_bytes"]


def test_op_names_and_files_are_read_as_xla_reads_strings() -> None:
    """`op_name="p[\\'w\\']"` in the text is the op name `p['w']` (absl::CUnescape), as XLA's
    own live-range breakdown prints it."""
    from hlo_layout.memory.metadata import SourceInfo
    from hlo_layout.syntax import parse_modules

    (module,) = parse_modules(
        "HloModule m\nENTRY e {\n"
        "  ROOT p = f32[4]{0} parameter(0), "
        'metadata={op_name="p[\\\'w\\\']" source_file="a\\\\b.py" source_line=3}\n}\n',
        "m.hlo",
    )
    root = module.entry.root
    assert root is not None
    assert SourceInfo(module).of(root) == ("p['w']", "a\\b.py:3")


def test_a_buffer_assignment_from_another_compile_is_said_and_not_used(cli: Cli) -> None:
    """`--buffers` naming another module's file: a note, and none of its figures (which would
    otherwise stand as the compiler's beside ours, and as TPU VMEM's source)."""
    other = (
        CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations-buffer-assignment.txt"
    )
    (m,) = cli.json("memory", str(CPU), "--buffers", str(other), "--format", "json")["modules"]
    assert m["compiler"] is None
    assert any("another compile's buffer assignment" in n for n in m["notes"])
    (own,) = cli.json("memory", str(CPU), "--format", "json")["modules"]
    assert own["compiler"] is not None
    assert not any("another compile" in n for n in own["notes"])
