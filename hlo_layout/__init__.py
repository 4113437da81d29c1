"""hlo-layout: read XLA HLO dumps — where memory goes and how data moves.

>>> import hlo_layout
>>> hlo_layout.parse_shape("bf16[8,128]{1,0:T(8,128)(2,1)}").dims
(8, 128)

Names load on first use (`import hlo_layout` stays cheap): `inspect` from `hlo_layout.api`, the
parser entry points from `hlo_layout.syntax`, the errors from `hlo_layout.errors`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> module that defines it.
_LAZY = {
    "HloInputError": "hlo_layout.syntax.parse",
    "HloLayoutError": "hlo_layout.errors",
    "HloParseError": "hlo_layout.errors",
    "HloSemanticError": "hlo_layout.errors",
    "HloSyntaxError": "hlo_layout.errors",
    "InspectResult": "hlo_layout.api",
    "InspectedModule": "hlo_layout.api",
    "Source": "hlo_layout.errors",
    "Span": "hlo_layout.errors",
    "from_compiled": "hlo_layout.interop.jax_compiled",
    "inspect": "hlo_layout.api",
    "load": "hlo_layout.reader",
    "parse": "hlo_layout.syntax.parse",
    "parse_file": "hlo_layout.syntax.parse",
    "parse_file_modules": "hlo_layout.syntax.parse",
    "parse_modules": "hlo_layout.syntax.parse",
    "parse_shape": "hlo_layout.syntax.fragments",
    "write_inspect_json": "hlo_layout.api",
}

if TYPE_CHECKING:
    from hlo_layout.api import InspectedModule, InspectResult, inspect, write_inspect_json
    from hlo_layout.errors import (
        HloLayoutError,
        HloParseError,
        HloSemanticError,
        HloSyntaxError,
        Source,
        Span,
    )
    from hlo_layout.interop.jax_compiled import from_compiled
    from hlo_layout.reader import load
    from hlo_layout.syntax.fragments import parse_shape
    from hlo_layout.syntax.parse import (
        HloInputError,
        parse,
        parse_file,
        parse_file_modules,
        parse_modules,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hlo_layout' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "HloInputError",
    "HloLayoutError",
    "HloParseError",
    "HloSemanticError",
    "HloSyntaxError",
    "InspectResult",
    "InspectedModule",
    "Source",
    "Span",
    "__version__",
    "from_compiled",
    "inspect",
    "load",
    "parse",
    "parse_file",
    "parse_file_modules",
    "parse_modules",
    "parse_shape",
    "write_inspect_json",
]
