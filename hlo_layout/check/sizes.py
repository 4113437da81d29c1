"""Thin re-exports: sizes are parsed and formatted by `hlo_layout.units` (one source of truth).

Kept for callers that still import `parse_size` / `format_size` from here (tests/check).
"""

from __future__ import annotations

from hlo_layout.units import format_bytes as format_size
from hlo_layout.units import parse_size

__all__ = ["format_size", "parse_size"]
