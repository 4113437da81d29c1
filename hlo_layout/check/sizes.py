"""Byte sizes as people write them in budgets: `64MiB`, `1.5G`, `512KB`, `1048576`.

Binary units (KiB, MiB, GiB, TiB, and the bare K/M/G/T that XLA's reports print, as in
"Used 17.60G of 16.00G hbm") are powers of 1024; KB/MB/GB/TB are powers of 1000.
"""

from __future__ import annotations

import re

_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
}  # fmt: skip
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_size(text: str | int) -> int:
    """Bytes in `text`; raises ValueError naming the accepted units."""
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"size {text} is negative")
        return text
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS:
        raise ValueError(
            f"not a size: {text!r} (write bytes, or a number with KiB, MiB, GiB, TiB, K, M, G, "
            "KB, MB, GB)"
        )
    return round(float(m.group(1)) * _UNITS[unit])


def format_size(n: int) -> str:
    """Bytes as XLA's memory reports print them: `512B`, `1.50KiB`, `17.60GiB`."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{n}B" if unit == "B" else f"{size:.2f}{unit}"
        size /= 1024
    raise AssertionError("unreachable")
