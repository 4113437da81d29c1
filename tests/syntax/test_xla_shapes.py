"""The shape XLA's parser gives an instruction whatever its text says: `send`/`recv` get
`(T, u32[], token[])`, `send-done` and `outfeed` `token[]`, a `constant` its literal's shape
(no `E(n)`); the text's shape stays available (`Computation.written_shape`). Both parser tiers
and the streamed reader agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hlo_layout.syntax import parse
from hlo_layout.syntax.printer import print_shape
from tests.support import Cli

TEXT = """HloModule m

ENTRY e {
  data = f32[16]{0} parameter(0)
  after_all = token[] after-all()
  send = (f32[8]{0}, s32[]) send(data, after_all), channel_id=1
  send_done = (f32[16]{0}, token[]) send-done(send), channel_id=1
  recv = (f32[4]{0}, f32[], token[]) recv(after_all), channel_id=2
  recv_done = (f32[4]{0}, token[]) recv-done(recv), channel_id=2
  outfeed = (f32[16]{0}) outfeed(data, after_all), outfeed_shape=f32[16]{0}
  c = s4[2]{0:E(4)} constant({1, 2})
  ROOT t = (f32[16]{0}, s4[2]{0:E(4)}) tuple(data, c)
}
"""

XLA = {  # what XLA's parser builds (its printer's spelling)
    "send": "(f32[16]{0}, u32[], token[])",
    "send_done": "token[]",
    "recv": "(f32[4]{0}, u32[], token[])",
    "recv_done": "(f32[4]{0}, token[])",
    "outfeed": "token[]",
    "c": "s4[2]{0}",
}


@pytest.mark.parametrize("engine", ["auto", "lark"])
def test_the_parser_gives_xla_shapes_and_keeps_the_written_ones(engine: str) -> None:
    module = parse(TEXT, engine=engine)
    entry = module.entry
    assert entry is not None
    for name, shape in XLA.items():
        instruction = entry[name]
        assert print_shape(instruction.shape, default_layout=True) == shape, name
    assert str(entry.written_shape(entry["send"])) == "(f32[8]{0}, s32[])"
    assert str(entry.written_shape(entry["c"])) == "s4[2]{0:E(4)}"
    assert entry.written_shape(entry["data"]) is entry["data"].shape  # not replaced


def test_a_compiler_dump_keeps_its_shapes() -> None:
    """XLA prints the shapes it built, so a dump's text already agrees (no copy is made)."""
    text = TEXT.replace("(f32[8]{0}, s32[]) send(", "(f32[16]{0}, u32[], token[]) send(")
    module = parse(text)
    assert module.entry is not None
    assert module.entry["send"].shape == module.entry.written_shape(module.entry["send"])


def test_streamed_json_equals_the_whole_file_json(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(TEXT)
    whole = cli("inspect", str(path), "-f", "json", "--no-stream")
    streamed = cli("inspect", str(path), "-f", "json", "--stream")
    assert whole.exit_code == streamed.exit_code == 0
    assert whole.stdout == streamed.stdout
    (module,) = json.loads(whole.stdout)["modules"]
    shapes = {i["name"]: i["shape"] for c in module["computations"] for i in c["instructions"]}
    assert shapes["send_done"] == "token[]"
