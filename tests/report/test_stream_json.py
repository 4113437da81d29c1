"""Streamed `inspect --format json` is byte-identical to the in-memory document."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hlo_layout.syntax.tree import Computation
from tests.robustness.mutations import mutated_dumps
from tests.support import DATA, Cli, corpus_id, hlo_files

FILES = hlo_files()


def _assert_same_document(whole: str, streamed: str) -> None:
    """Byte-identical: every key, `largest_buffers`, `padding_groups` and `peak` included."""
    assert streamed == whole


#: The default rows per list, and a few (the bounded heap is cut there).
TOPS = ([], ["--top", "3"])


@pytest.mark.parametrize("top", TOPS, ids=["top-default", "top-3"])
@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_streamed_equals_in_memory(cli: Cli, path: Path, top: list[str]) -> None:
    whole = cli("inspect", str(path), "-f", "json", "--no-stream", *top)
    streamed = cli("inspect", str(path), "-f", "json", "--stream", *top)
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    _assert_same_document(whole.stdout, streamed.stdout)


def test_corpus_dumps_really_stream() -> None:
    """The streamer itself (no fallback to the whole-file path) wrote the bytes above for
    nearly every corpus dump: equality there is not the in-memory path compared with itself."""
    from hlo_layout.report.stream_json import StreamFallback, stream_inspect_json

    fell_back = []
    for path in FILES:
        try:
            stream_inspect_json(path, io.StringIO(), top=3)
        except StreamFallback:
            fell_back.append(path.name)
    assert len(fell_back) <= len(FILES) // 10, fell_back


def test_stream_falls_back_on_bad_input(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[4]{0 parameter(0)\n}\n")
    result = cli("inspect", str(bad), "-f", "json", "--stream")
    assert result.exit_code == 3
    assert '"modules": []' in result.stdout  # the same document the in-memory path prints
    assert f"{bad}:4:" in result.stderr


def test_truncated_gzip_is_an_input_error_in_both_paths(cli: Cli, tmp_path: Path) -> None:
    import gzip

    from tests.support import SAMPLES

    data = gzip.compress(
        (SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt").read_bytes()
    )
    broken = tmp_path / "dump.txt.gz"
    broken.write_bytes(data[: len(data) // 2])
    for mode in ("--stream", "--no-stream"):
        result = cli("inspect", str(broken), "-f", "json", mode)
        assert result.exit_code == 3, (mode, result.output)
        assert "broken gzip data" in result.stderr


_MODULE = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b), metadata={op_name="jit(f)/αβγ 名前 ✓"}
}

%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0), metadata={op_name="ünïcödé"}
  ROOT %n = f32[4]{0} negate(f32[4]{0} %p)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %c = f32[4]{0} call(f32[4]{0} %x), to_apply=%body
  ROOT %r = f32[4]{0} add(f32[4]{0} %c, f32[4]{0} %x)
}
"""

_INLINE = """HloModule m

%a (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[] %x, f32[] %z), dimensions={}, to_apply={ %p = f32[] parameter(0) \
%q = f32[] parameter(1) ROOT %s = f32[] add(f32[] %p, f32[] %q) }
}

ENTRY %main (y: f32[]) -> f32[] {
  %y = f32[] parameter(0)
  %c = f32[] call(f32[] %y), to_apply=%a
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[] %c, f32[] %z), dimensions={}, to_apply={ %p = f32[] parameter(0) \
%q = f32[] parameter(1) ROOT %s = f32[] add(f32[] %p, f32[] %q) }
}
"""

#: Each case: (what it breaks, text). The in-memory path's verdict is the reference.
CASES = {
    "valid, non-ASCII metadata in every computation but the last": _MODULE,
    "duplicate instruction name": _MODULE.replace("%b = f32[] parameter", "%a = f32[] parameter"),
    "duplicate computation name": _MODULE.replace("%body (p", "%add (p").replace("=%body", "=%add"),
    "undefined operand": _MODULE.replace("negate(f32[4]{0} %p)", "negate(f32[4]{0} %q)"),
    "unknown callee": _MODULE.replace("to_apply=%body", "to_apply=%nowhere"),
    "two ENTRY computations": _MODULE.replace("%body (p", "ENTRY %body (p"),
    "no ENTRY": _MODULE.replace("ENTRY %main", "%main"),
    "second module": _MODULE + "\n" + _MODULE.replace("HloModule m", "HloModule m2"),
    "inline computations on one line, one per chunk": _INLINE,
    "inline computations, a later one declared `_`": _INLINE
    + _INLINE.replace("HloModule m", "HloModule m2")
    .replace("%a (x", "%_ (x")
    .replace("to_apply=%a", "to_apply=%_"),
}


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_streamed_equals_in_memory_on_every_verdict(cli: Cli, tmp_path: Path, text: str) -> None:
    path = tmp_path / "dump.txt"
    path.write_text(text, encoding="utf-8")
    whole = cli("inspect", str(path), "-f", "json", "--no-stream")
    streamed = cli("inspect", str(path), "-f", "json", "--stream")
    assert streamed.exit_code == whole.exit_code, streamed.output
    _assert_same_document(whole.stdout, streamed.stdout)
    assert streamed.stderr == whole.stderr
    json.loads(streamed.stdout)  # valid JSON whatever the verdict


@pytest.mark.parametrize(
    "name", [n for n in CASES if not n.startswith(("valid", "no ", "sec", "inline"))]
)
def test_semantic_errors_exit_3_in_both_paths(cli: Cli, tmp_path: Path, name: str) -> None:
    path = tmp_path / "dump.txt"
    path.write_text(CASES[name], encoding="utf-8")
    for mode in ("--stream", "--no-stream"):
        result = cli("inspect", str(path), "-f", "json", mode)
        assert result.exit_code == 3, (name, mode)
        assert result.stderr.startswith(f"{path}:"), result.stderr


def test_non_ascii_spool_round_trip(cli: Cli, tmp_path: Path) -> None:
    """The spool is read back by byte offsets: every fragment decodes and parses."""
    path = tmp_path / "dump.txt"
    path.write_text(CASES["valid, non-ASCII metadata in every computation but the last"])
    streamed = cli("inspect", str(path), "-f", "json", "--stream")
    assert streamed.exit_code == 0
    document = json.loads(streamed.stdout)
    names = [c["name"] for c in document["modules"][0]["computations"]]
    assert names == ["add", "body", "main"]
    kinds = [c["kind"] for c in document["modules"][0]["computations"]]
    assert kinds == ["unused", "called", "entry"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_dumps())
def test_streamed_equals_in_memory_on_fuzz_cases(cli: Cli, tmp_path_factory, text: str) -> None:
    path: Path = tmp_path_factory.mktemp("stream") / "dump.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    whole = cli("inspect", str(path), "-f", "json", "--no-stream")
    streamed = cli("inspect", str(path), "-f", "json", "--stream")
    assert streamed.exit_code == whole.exit_code
    _assert_same_document(whole.stdout, streamed.stdout)


def test_inline_computations_stream_without_falling_back(tmp_path: Path) -> None:
    """The streamed items name inline computations as the whole file does (no fallback)."""
    from hlo_layout.syntax import parse_file
    from hlo_layout.syntax.stream import stream_items

    path = tmp_path / "dump.txt"
    path.write_text(_INLINE, encoding="utf-8")
    streamed = [c for c in stream_items(path) if isinstance(c, Computation)]
    assert [c.name for c in streamed] == [c.name for c in parse_file(path).computations]
    assert [c.name for c in streamed] == ["_", "a", "_.1", "main"]


def _cpu_dump_with_assignment() -> tuple[Path, Path]:
    from tests.support import CORPUS

    folder = CORPUS / "jax-cpu"
    dump = folder / "module_0018.jit_step.cpu_after_optimizations.txt"
    return dump, folder / "module_0018.jit_step.cpu_after_optimizations-buffer-assignment.txt"


@pytest.mark.parametrize("explicit", [False, True], ids=["beside", "--buffers"])
@pytest.mark.parametrize("modules", [1, 2])
def test_buffer_assignment_streams_as_in_memory(
    cli: Cli, tmp_path: Path, explicit: bool, modules: int
) -> None:
    """A buffer assignment beside a one-module dump goes with it; beside a two-module dump with
    neither; `--buffers` with every module (it reaches `peak` and `buffer_assignment`)."""
    dump, assignment = _cpu_dump_with_assignment()
    text = dump.read_text(encoding="utf-8")
    path = tmp_path / dump.name
    path.write_text(text + ("\n" + text.replace("HloModule ", "HloModule b_", 1)) * (modules - 1))
    if not explicit:
        (tmp_path / assignment.name).write_bytes(assignment.read_bytes())
    extra = ["--buffers", str(assignment)] if explicit else []
    whole = cli("inspect", str(path), "-f", "json", "--no-stream", *extra)
    streamed = cli("inspect", str(path), "-f", "json", "--stream", *extra)
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    _assert_same_document(whole.stdout, streamed.stdout)
    with_assignment = ["buffer_assignment" in m for m in json.loads(streamed.stdout)["modules"]]
    assert with_assignment == [explicit or modules == 1] * modules


def test_the_tpu_generation_beside_the_dump_streams_alike(cli: Cli, tmp_path: Path) -> None:
    """Both paths read the TPU generation from the target_arguments.txt beside the dump (a v6e
    dump read as v4/v5e would get other tuple-table sizes, so another peak)."""
    import shutil

    src = (
        Path(__file__).resolve().parents[1] / "data" / "memory" / "tpu-gen" / "v6e" / "transformer"
    )
    for name in ("transformer.after_optimizations.txt", "transformer.target_arguments.txt"):
        shutil.copy(src / name, tmp_path / name)
    dump = tmp_path / "transformer.after_optimizations.txt"
    whole = cli("inspect", str(dump), "-f", "json", "--no-stream")
    streamed = cli("inspect", str(dump), "-f", "json", "--stream")
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole.stdout
    (target := tmp_path / "transformer.target_arguments.txt").unlink()
    assumed = cli("inspect", str(dump), "-f", "json", "--no-stream")
    peak = [json.loads(d)["modules"][0]["peak"] for d in (whole.stdout, assumed.stdout)]
    assert peak[0] != peak[1] and not target.exists()


@pytest.mark.parametrize("how", ["--stream", "--no-stream"])
def test_an_assumed_backend_is_said_by_both_paths(cli: Cli, tmp_path: Path, how: str) -> None:
    """A TPU dump with nothing beside it naming its generation: the JSON on stdout, and on
    stderr the one note every command gives, streamed or not."""
    import shutil

    src = DATA / "corpus" / "libtpu-v5e" / "conv" / "conv.after_optimizations.txt"
    dump = tmp_path / src.name
    shutil.copy(src, dump)
    result = cli("inspect", str(dump), "-f", "json", how)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["modules"][0]["peak"]["backend"] == "tpu"
    assert f"note: {dump}: backend tpu v4/v5e assumed" in result.stderr
    given = cli("inspect", str(dump), "-f", "json", how, "--backend", "tpu-v5e")
    assert "assumed" not in given.stderr


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_nul_byte_past_the_first_buffer_is_refused_by_both_paths(
    cli: Cli, tmp_path: Path, gz: bool
) -> None:
    """Both readers check the same first HEAD_BYTES for binary data; the streamed one used to
    peek at what its buffered reader held (8 KiB), so a NUL byte further on was refused by the
    whole-file path only (a fuzz case)."""
    import gzip

    from hlo_layout.syntax.parse import HEAD_BYTES

    source = DATA / "corpus" / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"
    text = source.read_text()
    at = text.index('op_name="', 40_000) + len('op_name="')  # past any file system's block
    assert len(text[:at].encode()) < HEAD_BYTES
    data = (text[:at] + "\x00" + text[at + 1 :]).encode()
    dump = tmp_path / ("transformer.txt.gz" if gz else "transformer.txt")
    dump.write_bytes(gzip.compress(data) if gz else data)
    whole = cli("inspect", str(dump), "-f", "json", "--no-stream", "--backend", "tpu")
    streamed = cli("inspect", str(dump), "-f", "json", "--stream", "--backend", "tpu")
    assert whole.exit_code == streamed.exit_code == 3
    assert "a NUL byte" in streamed.stderr and streamed.stderr == whole.stderr
