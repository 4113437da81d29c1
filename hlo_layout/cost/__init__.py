"""XLA's cost analysis from the text: flops, transcendentals and bytes per instruction, fusion,
computation and module (analysis.py), loop-aware totals (loops.py), physical bytes, and a
roofline per chip (roofline.py). Pure: no Rich, no file I/O."""

from hlo_layout.cost.analysis import HloCostAnalysis, callees_first, module_properties
from hlo_layout.cost.registry import CostError

__all__ = ["CostError", "HloCostAnalysis", "callees_first", "module_properties"]
