"""The one byte formatter equals XLA's HumanReadableNumBytes; sizes parse exactly; nothing
overflows on numbers no float can hold."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.units import (
    format_bytes,
    format_bytes_exact,
    format_delta,
    format_expansion,
    format_figure,
    format_number,
    format_share,
    parse_size,
    ratio_percent,
    round_for_people,
)
from tests.support import CORPUS


def _xla_human_readable_num_bytes(n: int) -> str:
    """tsl::strings::HumanReadableNumBytes transcribed statement by statement (int64 only)."""
    neg = "-" if n < 0 else ""
    n = -n if n < 0 else n
    if n < 1024:
        return f"{neg}{n}B"
    units = "KMGTPE"
    unit = 0
    while n >= 1024 * 1024:
        n //= 1024
        unit += 1
    fmt = "{}{:.1f}{}iB" if units[unit] == "K" else "{}{:.2f}{}iB"
    return fmt.format(neg, n / 1024.0, units[unit])


def test_the_compilers_own_figures() -> None:
    # Every `Total bytes: N (X)` line XLA wrote in the corpus: our text of N is X.
    seen = 0
    for path in CORPUS.rglob("*memory-usage-report.txt"):
        for n, text in re.findall(r"Total bytes: (\d+) \(([^)]+)\)", path.read_text()):
            assert format_bytes(int(n)) == text
            seen += 1
    assert seen >= 5


@given(st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1))
def test_equals_xla_over_int64(n: int) -> None:
    assert format_bytes(n) == _xla_human_readable_num_bytes(n)


@given(st.integers(min_value=2**63, max_value=10**400))
def test_never_fails_past_int64(n: int) -> None:
    text = format_bytes(n)
    assert re.fullmatch(r"[0-9]+\.[0-9]{2}(EiB|ZiB|YiB)", text), text


def test_past_exbibytes() -> None:
    assert format_bytes(2**70) == "1.00ZiB"
    assert format_bytes(2**80) == "1.00YiB"
    assert format_bytes(2**90) == "1024.00YiB"
    assert format_bytes(-(2**70)) == "-1.00ZiB"


def test_sizes() -> None:
    assert parse_size("64MiB") == 64 << 20
    assert parse_size("1.5G") == 3 << 29
    assert parse_size("512KB") == 512_000
    assert parse_size("1 TiB") == 1 << 40
    assert parse_size("2ZiB") == 2 << 70
    assert parse_size(".5KiB") == 512
    for bad in ("12 parsecs", "-1", "1e9", "", "KiB", "9" * 5000, True):
        with pytest.raises(ValueError):
            parse_size(bad)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=2**100), st.sampled_from(["", "B", "KiB", "MB", "G"]))
def test_parse_is_exact(n: int, unit: str) -> None:
    scale = {"": 1, "B": 1, "KiB": 1024, "MB": 10**6, "G": 2**30}[unit]
    assert parse_size(f"{n}{unit}") == n * scale


def test_percentages_and_ratios_for_people() -> None:
    assert round_for_people(2.8010000000000005 - 1.1) == 1.701
    assert format_number(1.7010000000000005) == "1.701"
    assert format_number(2.0) == "2"
    assert ratio_percent(1, 3) == 33.333
    assert ratio_percent(1, 0) is None
    huge = 10**320
    assert ratio_percent(huge + huge // 100, huge) == 101.0  # exact, no float overflow
    assert ratio_percent(huge, 1) == 1.7976931348623157e308  # saturates, never raises
    assert format_expansion(huge, 1).endswith("x")
    assert format_expansion(3, 2) == "1.5x"


def test_deltas_for_people() -> None:
    # the issue's own example: a float delta never prints its binary noise
    assert format_delta(2.8010000000000005 - 1.1, 4.6, as_bytes=False) == "+1.70 (+4.6%)"
    assert format_delta(85_679_104, 12395.03, as_bytes=True) == "+81.71MiB (+12395.0%)"
    assert format_delta(-208, None, as_bytes=False) == "-208"
    assert format_delta(0, 0.0, as_bytes=True) == ""
    assert format_figure(1864) == "1,864"
    assert format_figure(36.98000000000001) == "36.98"
    assert format_share(1, 6) == "16.7%"
    assert format_share(1, 0) == "-"
    assert format_bytes_exact(512) == "512B"
    assert format_bytes_exact(1064960) == "1.02MiB (1,064,960 B)"


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.booleans())
def test_a_delta_never_shows_float_noise(delta: float, as_bytes: bool) -> None:
    text = format_delta(delta, None, as_bytes=as_bytes)
    # at most two decimals, and the sign is the delta's
    assert not re.search(r"\.\d{3}", text)
    if text:
        assert text[0] == ("+" if delta > 0 else "-")


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_exact_bytes_start_with_xlas_figure(n: int) -> None:
    text = format_bytes_exact(n)
    assert text.startswith(format_bytes(n))
    if abs(n) >= 1024:
        assert text.endswith(f"({n:,} B)")
