"""`hlo_layout.from_compiled`: recorded jax Compiled objects (tests/data/jax-compiled, made by
its record.py with jax 0.10.2 and 0.12.0.1 on CPU and libtpu for v5e and v6e) replayed; every
figure jax reports equals ours, or differs by what the check says."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import hlo_layout
from hlo_layout.interop.xla_proto import ProtoError, parse_buffer_assignment_proto

DATA = Path(__file__).resolve().parents[1] / "data" / "jax-compiled"
RECORDS = sorted(DATA.glob("*.json"))
CASES = [
    (record, name) for record in RECORDS for name in json.loads(record.read_text())["programs"]
]


class Recorded:
    """What from_compiled reads off a jax.stages.Compiled, played back."""

    def __init__(self, program: dict) -> None:
        self.program = program
        device = SimpleNamespace(platform=program["platform"], device_kind=program["device_kind"])
        self.input_shardings = ((SimpleNamespace(device_set=[device]),), {})

    def as_text(self) -> str:
        return self.program["text"]

    def memory_analysis(self) -> SimpleNamespace:
        fields = dict(self.program["memory_analysis"])
        proto = fields.get("serialized_buffer_assignment_proto")
        if proto is not None:
            fields["serialized_buffer_assignment_proto"] = base64.b64decode(proto)
        return SimpleNamespace(**fields)


@pytest.mark.parametrize("record,name", CASES, ids=[f"{r.stem}-{n}" for r, n in CASES])
def test_every_figure_equals_jax_or_is_explained(record: Path, name: str) -> None:
    program = json.loads(record.read_text())["programs"][name]
    report = hlo_layout.from_compiled(Recorded(program))
    ma = report.memory
    assert ma.backend == ("tpu" if program["platform"] == "tpu" else "cpu")
    assert not ma.backend_assumed
    checked = {c.figure: c for c in report.checks}
    for figure in ("argument_size_in_bytes", "output_size_in_bytes", "peak_memory_in_bytes"):
        assert checked[figure].equal, checked[figure]
    total = checked.get("buffer assignment total (serialized_buffer_assignment_proto)")
    if ma.backend == "tpu":  # libtpu's memory_analysis serializes no buffer assignment
        assert total is None
        assert ma.peak_bytes == program["memory_analysis"]["peak_memory_in_bytes"]
        assert ma.tpu_generation == ("v6e" if "v6" in program["device_kind"] else "v4/v5e")
    else:
        assert total is not None and total.equal, total  # the compiler's, from its proto
        assert ma.peak_bytes == total.jax  # the headline is the compiler's allocations
        assert checked["temp_size_in_bytes"].equal
        jax_total = checked.get("total_allocation_bytes")  # jax >= 0.12
        if jax_total is not None:
            local = sum(s.thread_local_bytes for s in ma.spaces)
            assert jax_total.ours - jax_total.jax == local
            assert jax_total.equal or "thread-local" in jax_total.note
    for c in report.checks:
        assert c.equal or c.note, c
    assert report.to_dict()["jax"] == [c.to_dict() for c in report.checks]


def test_a_broken_proto_is_a_clean_error() -> None:
    with pytest.raises(ProtoError):
        parse_buffer_assignment_proto(b"\x1a\xff\xff\xff\xff\x0f")  # a length past the end
    with pytest.raises(ProtoError):
        parse_buffer_assignment_proto(b"\x1b")  # wire type 3 (groups) is not used by XLA
