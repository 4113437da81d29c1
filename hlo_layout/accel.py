"""Optional compiled accelerators, each with a pure-Python twin that passes the same tests.

A C extension (`accel/*.c`, built by `pip install .` when a compiler is there, skipped when not:
`setup.py` marks every extension optional) replaces one hot loop; the Python code it replaces
stays the reference and the fallback. Each extension is a top-level module (`_hlo_layout_*`), so
that it is found from the installed package and from a checkout alike (`python setup.py
build_ext --inplace` puts it at the repository root). It exports `ABI`, the interface version
its Python caller expects; a stale build (another ABI) is ignored, never called.

`HLO_LAYOUT_PURE_PYTHON=1` turns every accelerator off (tests compare both paths).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

#: Set (to anything but "" or "0") to run the pure-Python code everywhere.
PURE_PYTHON_ENV = "HLO_LAYOUT_PURE_PYTHON"

#: Every accelerator and the ABI its Python caller expects (one line per `setup.py` entry).
ABIS: dict[str, int] = {
    "_hlo_layout_scan": 7,  # syntax/scan.py: _scan_lines, attribute_spans, _tail_ok, ...
    "_hlo_layout_heap": 1,  # memory/heap_simulator.py: _Packer's best-fit loop
    "_hlo_layout_json": 3,  # report/model.py: computation_pieces (InstructionText.add)
}


def pure_python() -> bool:
    """Whether the environment asks for the pure-Python code."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def load(name: str, abi: int) -> ModuleType | None:
    """The compiled module `name` if it is built, current (`ABI == abi`) and not turned off."""
    if pure_python():
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module if getattr(module, "ABI", None) == abi else None


def active() -> list[str]:
    """The accelerators that are built, current and on (for `hlo-layout --version`)."""
    return [name for name, abi in ABIS.items() if load(name, abi) is not None]


__all__ = ["ABIS", "PURE_PYTHON_ENV", "active", "load", "pure_python"]
