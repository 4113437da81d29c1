"""Byte counts as XLA prints them, so our numbers can be compared with the compiler's by eye."""

from __future__ import annotations

_UNITS = "KMGTPE"


def human_bytes(n: int) -> str:
    """tsl::strings::HumanReadableNumBytes, digit for digit: `512B`, `9.0KiB`, `1.02MiB`,
    `32.00GiB` (one decimal for KiB, two above; the value is truncated to whole units of the
    next smaller unit first, as XLA's integer division does).

    >>> human_bytes(1064960), human_bytes(2**30)
    ('1.02MiB', '1.00GiB')
    """
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1024:
        return f"{sign}{n}B"
    unit = 0
    while n >= 1024 * 1024:
        n //= 1024
        unit += 1
    decimals = 1 if unit == 0 else 2
    return f"{sign}{n / 1024.0:.{decimals}f}{_UNITS[unit]}iB"


def expansion(physical: int, logical: int) -> str:
    """`12.6x` as TPU out-of-memory reports write "(12.6x expansion)"; `-` for an empty array."""
    if not logical:
        return "-" if not physical else "∞"
    return f"{physical / logical:.1f}x"
