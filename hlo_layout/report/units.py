"""Thin re-exports: byte formatting lives in `hlo_layout.units` (one formatter for every view).

Kept because `report/layout_view.py`, `report/footprint_view.py` and `report/sharding_view.py`
import `human_bytes` / `expansion` from here.
"""

from __future__ import annotations

from hlo_layout.units import format_bytes as human_bytes
from hlo_layout.units import format_expansion as expansion

__all__ = ["expansion", "human_bytes"]
