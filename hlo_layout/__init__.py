"""hlo-layout: read XLA HLO dumps — where memory goes and how data moves.

>>> import hlo_layout
>>> hlo_layout.parse_shape("bf16[8,128]{1,0:T(8,128)(2,1)}").dims
(8, 128)
"""

from hlo_layout.errors import (
    HloLayoutError,
    HloParseError,
    HloSemanticError,
    HloSyntaxError,
    Source,
    Span,
)
from hlo_layout.syntax import (
    HloInputError,
    parse,
    parse_file,
    parse_file_modules,
    parse_modules,
    parse_shape,
)

__version__ = "0.1.0"

__all__ = [
    "HloInputError",
    "HloLayoutError",
    "HloParseError",
    "HloSemanticError",
    "HloSyntaxError",
    "Source",
    "Span",
    "__version__",
    "parse",
    "parse_file",
    "parse_file_modules",
    "parse_modules",
    "parse_shape",
]
