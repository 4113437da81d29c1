"""Streamed `inspect --format json` is byte-identical to the in-memory document."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hlo_layout.cli import app
from tests.conftest import corpus_id, hlo_files

runner = CliRunner()
FILES = hlo_files()


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_streamed_equals_in_memory(path: Path) -> None:
    whole = runner.invoke(app, ["inspect", str(path), "-f", "json", "--no-stream"])
    streamed = runner.invoke(app, ["inspect", str(path), "-f", "json", "--stream"])
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole.stdout


def test_stream_falls_back_on_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[4]{0 parameter(0)\n}\n")
    result = runner.invoke(app, ["inspect", str(bad), "-f", "json", "--stream"])
    assert result.exit_code == 3
    assert '"modules": []' in result.stdout  # the same document the in-memory path prints
    assert f"{bad}:4:" in result.stderr


def test_truncated_gzip_is_an_input_error_in_both_paths(tmp_path: Path) -> None:
    import gzip

    from tests.conftest import SAMPLES

    data = gzip.compress(
        (SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt").read_bytes()
    )
    broken = tmp_path / "dump.txt.gz"
    broken.write_bytes(data[: len(data) // 2])
    for mode in ("--stream", "--no-stream"):
        result = runner.invoke(app, ["inspect", str(broken), "-f", "json", mode])
        assert result.exit_code == 3, (mode, result.output)
        assert "broken gzip data" in result.stderr
