"""A dump cut short (a file still being written, `head -c`) is reported as such: the error of a
prefix of a valid dump says the input ends inside an instruction (or a computation) and points
at the end, whatever token the cut left half-written."""

from __future__ import annotations

import random

import pytest

from hlo_layout.errors import HloSyntaxError
from hlo_layout.syntax import parse
from tests.support import SAMPLES

SAMPLE = (SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt").read_text()


def _cuts() -> list[int]:
    rng = random.Random(28)
    return sorted(rng.sample(range(20, len(SAMPLE) - 2), 60))


@pytest.mark.parametrize("cut", _cuts())
def test_a_prefix_that_does_not_parse_says_it_was_cut(cut: int) -> None:
    text = SAMPLE[:cut]
    try:
        parse(text, "cut.hlo")
    except HloSyntaxError as e:
        assert e.message.startswith("the input ends inside "), e.message
        assert "(truncated?)" in e.message
        assert e.span is not None and e.span.end == len(text)
        where = "a computation" if text.endswith("\n") else "an instruction"
        assert e.message.startswith(f"the input ends inside {where}")


def test_an_error_on_a_complete_last_line_is_not_called_a_cut() -> None:
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0) x\n}"
    with pytest.raises(HloSyntaxError) as caught:
        parse(text)
    assert "truncated" not in caught.value.message
