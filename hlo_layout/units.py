"""The one place numbers meet people: byte counts as XLA prints them, sizes as people write them,
percentages and deltas rounded for reading. Pure: no Rich, no I/O.

Every view and every command formats bytes with `format_bytes` and parses budgets with
`parse_size`, so `check`, `diff`, `inspect` and the reports print the same figure the same way.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction

#: Rows a list keeps by default (largest buffers, live at the peak, cost ranking, ...): one
#: default for the library and every command's `--top`, so `inspect(...).to_dict()` equals
#: `hlo-layout inspect --format json`.
TOP_DEFAULT = 20

#: Binary unit letters after bytes. XLA's table stops at E (int64); we go on to Z and Y so a
#: declared 2^70-byte array still prints (a deviation: XLA would CHECK-fail there).
_BINARY_UNITS = "KMGTPEZY"

#: Size units accepted in budgets (case-insensitive). Binary units (KiB ... YiB and the bare
#: K/M/G/... that XLA's reports print, as in "Used 17.60G of 16.00G hbm") are powers of 1024;
#: KB/MB/GB/... are powers of 1000.
SIZE_UNITS: dict[str, int] = {"": 1, "b": 1}
for _i, _letter in enumerate(_BINARY_UNITS.lower(), start=1):
    SIZE_UNITS[_letter] = SIZE_UNITS[_letter + "ib"] = 1 << (10 * _i)
    SIZE_UNITS[_letter + "b"] = 1000**_i

#: Longest number we read in a size: more digits than any real budget, few enough that a
#: 5,000-digit argument is refused before any arithmetic on it.
MAX_SIZE_DIGITS = 40

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*")


def format_bytes(n: int) -> str:
    """tsl::strings::HumanReadableNumBytes (xla/tsl/platform/numbers.cc), digit for digit:
    `512B`, `9.0KiB`, `1.02MiB`, `32.00GiB` — one decimal for KiB, two above, the count first
    truncated to whole units of the next smaller unit as XLA's integer division does.

    Deviation: XLA stops at EiB (int64); past it we use ZiB and YiB, then keep YiB, and
    format exactly (never through a float), so any Python int prints.

    >>> format_bytes(1064960), format_bytes(2**30), format_bytes(2**80)
    ('1.02MiB', '1.00GiB', '1.00YiB')
    """
    sign = "-" if n < 0 else ""
    n = abs(int(n))
    if n < 1024:
        return f"{sign}{n}B"
    unit = 0
    while n >= 1024 * 1024 and unit < len(_BINARY_UNITS) - 1:
        n //= 1024
        unit += 1
    decimals = 1 if unit == 0 else 2
    if n < 1 << 53:
        number = f"{n / 1024.0:.{decimals}f}"  # exact in binary; rounds as printf does
    else:
        context = Context(prec=len(str(n)) + decimals + 8, rounding=ROUND_HALF_EVEN)
        exact = context.divide(Decimal(n), Decimal(1024))
        number = str(exact.quantize(Decimal(1).scaleb(-decimals), context=context))
    return f"{sign}{number}{_BINARY_UNITS[unit]}iB"


def parse_size(text: str | int) -> int:
    """Bytes in `64MiB`, `1.5G`, `512KB`, `1048576`; exact (no float rounding), rounded to a
    whole byte. Raises ValueError naming the accepted units, or saying the number is too long.

    >>> parse_size("1.5GiB"), parse_size("1MB")
    (1610612736, 1000000)
    """
    if isinstance(text, bool):
        raise ValueError(f"not a size: {text!r}")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"size {text} is negative")
        return text
    if not isinstance(text, str):
        raise ValueError(f"not a size: {text!r} (write a number or a string such as '64MiB')")
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else None
    if m is None or unit not in SIZE_UNITS:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise ValueError(
            f"not a size: {shown!r} (write bytes, or a number with B, KiB, MiB, GiB, TiB, K, M, "
            "G, KB, MB, GB)"
        )
    digits = m.group(1)
    if len(digits) > MAX_SIZE_DIGITS:
        raise ValueError(f"size has {len(digits)} digits; at most {MAX_SIZE_DIGITS} are read")
    return round(Fraction(digits) * SIZE_UNITS[unit])


def ratio_percent(part: int | float, whole: int | float, digits: int = 3) -> float | None:
    """100 * part / whole rounded to `digits` decimals, computed exactly for ints of any size
    (a 320-digit dimension must not overflow a float); None when `whole` is 0."""
    if not whole:
        return None
    if isinstance(part, int) and isinstance(whole, int):
        exact = Fraction(100 * part, whole)
        return _finite(round(exact, digits))
    return _finite(round(100.0 * part / whole, digits))


def _finite(value: Fraction | float) -> float:
    """A float for JSON: huge ratios saturate to ±1.8e308 rather than raise or print `inf`."""
    try:
        out = float(value)
    except OverflowError:
        out = float("inf") if value > 0 else float("-inf")
    if out in (float("inf"), float("-inf")):
        return 1.7976931348623157e308 if out > 0 else -1.7976931348623157e308
    return out


def round_for_people(value: float, digits: int = 3) -> float:
    """`1.7010000000000005` → `1.701`: figures in JSON and text carry no float noise."""
    return round(value, digits) + 0.0  # + 0.0 turns -0.0 into 0.0


def format_percent(value: float, digits: int = 2, *, sign: bool = False) -> str:
    """`91.47%`; with `sign`, `+3.20%` / `-1.00%` (deltas)."""
    return f"{value:+.{digits}f}%" if sign else f"{value:.{digits}f}%"


def format_number(value: float) -> str:
    """A limit or ratio as people typed it: `2`, `1.5`, `0.125` (no trailing zeros, no noise)."""
    if isinstance(value, int):
        return str(value)
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    text = f"{round_for_people(value, 6):.6f}".rstrip("0").rstrip(".")
    return text or "0"


def format_expansion(physical: int, logical: int) -> str:
    """`12.6x` as TPU out-of-memory reports write "(12.6x expansion)"; `-` for an empty array."""
    if not logical:
        return "-" if not physical else "∞"
    ratio = _finite(Fraction(physical, logical))
    return f"{ratio:.1f}x" if ratio < 1e9 else f"{ratio:.3g}x"


def format_bytes_exact(n: int) -> str:
    """`1.02MiB (1,064,960 B)`: XLA's figure, then the exact count when it is rounded; under
    1 KiB, `format_bytes` alone (`512B`) is already exact."""
    human = format_bytes(n)
    return human if abs(n) < 1024 else f"{human} ({n:,} B)"


def format_figure(value: int | float) -> str:
    """A count or ratio in a table: `1,864` for ints, `36.98` (two decimals) for floats."""
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    return f"{round_for_people(value, 2):,.2f}"


def format_share(part: int | float, whole: int | float) -> str:
    """`16.7%` of a total (one decimal, as XProf's memory viewer); `-` when the total is 0."""
    p = ratio_percent(part, whole, 3)
    return "-" if p is None else format_percent(p, 1)


def format_delta(delta: int | float | None, percent: float | None, *, as_bytes: bool) -> str:
    """A change for people: `+81.71MiB (+12395.0%)`, `+208 (+1600.0%)`, `+1.70 (+4.6%)`; empty
    when nothing changed. Never float noise such as `+1.7010000000000005`."""
    if delta is None or delta == 0:
        return ""
    sign = "+" if delta > 0 else "-"
    magnitude = abs(delta)
    if as_bytes and isinstance(magnitude, int):
        text = format_bytes(magnitude)
    else:
        text = format_figure(magnitude)
    if percent is not None:
        shown = f"{percent:+.1f}%" if abs(percent) < 1e9 else f"{percent:+.3g}%"
        text += f" ({shown})"
    return sign + text


def format_rate(bytes_per_second: float) -> str:
    """`41.2 MB/s` (decimal megabytes, as disks and networks are rated)."""
    return f"{bytes_per_second / 1e6:.1f} MB/s"


def format_duration(seconds: float) -> str:
    """`0:07`, `12:30`, `1:02:03`: time left, to the second."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


#: Decimal prefixes for flops and rates (FLOP/s and bandwidths are quoted in powers of 1000).
_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_si(value: float, unit: str) -> str:
    """`5.13 GFLOP`, `197 TFLOP/s`, `819 GB/s`, `12 FLOP`: three significant digits, a decimal
    prefix (k, M, G, T, P, E)."""
    magnitude = abs(value)
    for scale, prefix in _SI:
        if magnitude >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value)} {unit}"
    return f"{value:.3g} {unit}"


def format_seconds(seconds: float) -> str:
    """A short time for people: `116 µs`, `1.52 ms`, `2.31 s`, `840 ns` (three digits)."""
    magnitude = abs(seconds)
    if magnitude == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if magnitude >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-12:.3g} ps"
