"""The library API: `hlo_layout.inspect` gives the records the CLI renders, and its JSON is the
CLI's JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import hlo_layout
from hlo_layout.errors import HloSemanticError
from tests.support import CORPUS, Cli, hlo_files

FILES = hlo_files()
TPU = CORPUS / "libtpu-v5e" / "conv" / "conv.after_optimizations.txt"


@pytest.mark.parametrize("path", FILES[:: max(1, len(FILES) // 6)], ids=lambda p: p.name)
def test_to_dict_is_the_cli_json(cli: Cli, path: Path) -> None:
    result = hlo_layout.inspect(path)
    cli = cli("inspect", str(path), "-f", "json", "--no-stream")
    assert cli.exit_code == 0, cli.output
    assert result.to_dict() == json.loads(cli.stdout)
    out = io.StringIO()
    result.write_json(out)
    assert out.getvalue() == cli.stdout
    assert out.getvalue() == json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


def test_records_are_typed_frozen_and_repr_on_one_line() -> None:
    result = hlo_layout.inspect(TPU)
    (record,) = result.modules
    assert record.file == str(TPU)
    assert record.module.entry is not None
    assert record.summary.instructions == record.module.instruction_count
    assert record.memory.entry_parameters
    with pytest.raises(AttributeError):
        record.file = "x"  # type: ignore[misc]
    for thing in (result, record, record.module, record.module.entry):
        text = repr(thing)
        assert "\n" not in text and len(text) < 200, text


def test_text_source_and_strictness() -> None:
    good = "HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n"
    result = hlo_layout.inspect(good)
    assert result.modules[0].file == "<string>"
    assert result.modules[0].memory.entry_parameters[0].physical_bytes == 16
    bad = good.replace("ENTRY e", "ENTRY e {\n  ROOT q = f32[] parameter(0)\n}\nENTRY f")
    with pytest.raises(HloSemanticError, match="only one ENTRY"):
        hlo_layout.inspect(bad)
    lenient = hlo_layout.inspect(bad, strict=False)
    assert lenient.modules == () and len(lenient.errors) == 1


def test_repr_html_is_the_report_fragment_with_the_cli_numbers() -> None:
    """In a notebook the result draws the HTML report inline: a fragment (not a page) whose
    embedded data carries the same inspect figures as `to_dict()` and the memory analysis."""
    import re

    from hlo_layout.memory import analyze_memory

    path = CORPUS / "jax-cpu" / "module_0018.jit_step.cpu_after_optimizations.txt"
    result = hlo_layout.inspect(path)
    html = result._repr_html_()
    assert not html.lstrip().lower().startswith("<!doctype")
    m = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)
    assert m is not None
    data = json.loads(m.group(1))
    (ours,) = data["memory"]["modules"]
    module = result.modules[0].module
    assert ours["peak_bytes"] == analyze_memory(module, file=str(path)).peak_bytes
    (summary,) = data["inspect"]["modules"]
    assert summary["entry_parameters"] == result.to_dict()["modules"][0]["entry_parameters"]


def test_readme_notebook_example_on_a_jax_compile() -> None:
    """The README's notebook example, on XLA's own text of a freshly compiled function."""
    jax = pytest.importorskip("jax", reason="jax is not installed: the notebook example needs it")
    import jax.numpy as jnp

    def f(x: object) -> object:
        return jnp.tanh(x @ x.T).sum(axis=0)

    compiled = jax.jit(f).lower(jnp.ones((128, 64), jnp.float32)).compile()
    result = hlo_layout.inspect(compiled.as_text())
    assert "\n" not in repr(result) and len(result.modules) == 1
    doc = result.to_dict()
    assert doc["modules"][0]["entry_parameters"][0]["shape"].startswith("f32[128,64]")
    assert "hlo-layout-data" in result._repr_html_()


def test_big_dumps_stream_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over STREAM_THRESHOLD of text, `write_inspect_json` streams (no tree kept) with the same
    bytes; a gzip dump is judged by its text's size (the gzip trailer), not the file's."""
    import gzip

    from hlo_layout.report import stream_json
    from hlo_layout.syntax.parse import text_size

    text = TPU.read_bytes()
    packed = tmp_path / "conv.after_optimizations.txt.gz"
    packed.write_bytes(gzip.compress(text))
    assert text_size(packed) == len(text) > packed.stat().st_size
    assert text_size(TPU) == len(text)
    monkeypatch.setattr(stream_json, "STREAM_THRESHOLD", (len(text) + packed.stat().st_size) // 2)
    for path in (TPU, packed):
        expected = io.StringIO()
        assert hlo_layout.write_inspect_json(path, expected, stream=False).modules
        out = io.StringIO()
        assert hlo_layout.write_inspect_json(path, out).modules == ()
        assert out.getvalue() == expected.getvalue()
