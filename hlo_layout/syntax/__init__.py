"""HLO text → typed, immutable tree (grammar in grammars/hlo.lark).

Names load on first use, so `from hlo_layout.syntax.shape import Shape` does not load the parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# `parse` is also the name of a submodule: bind the function now, or importing the submodule
# anywhere would leave `hlo_layout.syntax.parse` meaning the module. (parse.py loads no Lark.)
from hlo_layout.syntax.parse import (
    HloInputError,
    parse,
    parse_file,
    parse_file_modules,
    parse_modules,
    read_text,
)

#: Public name -> module that defines it.
_LAZY = {
    "ArrayShape": "hlo_layout.syntax.shape",
    "Attribute": "hlo_layout.syntax.tree",
    "BufferShape": "hlo_layout.syntax.shape",
    "COMBINE": "hlo_layout.syntax.shape",
    "Computation": "hlo_layout.syntax.tree",
    "Instruction": "hlo_layout.syntax.tree",
    "Layout": "hlo_layout.syntax.shape",
    "Module": "hlo_layout.syntax.tree",
    "OpaqueShape": "hlo_layout.syntax.shape",
    "Operand": "hlo_layout.syntax.tree",
    "ParameterDecl": "hlo_layout.syntax.tree",
    "Section": "hlo_layout.syntax.tree",
    "SectionEntry": "hlo_layout.syntax.tree",
    "Shape": "hlo_layout.syntax.shape",
    "Sharding": "hlo_layout.syntax.sharding",
    "SplitConfig": "hlo_layout.syntax.shape",
    "Tile": "hlo_layout.syntax.shape",
    "TileAssignment": "hlo_layout.syntax.sharding",
    "TokenShape": "hlo_layout.syntax.shape",
    "TupleShape": "hlo_layout.syntax.shape",
    "UNBOUNDED": "hlo_layout.syntax.shape",
    "instruction_sharding": "hlo_layout.syntax.sharding",
    "parse_shape": "hlo_layout.syntax.fragments",
    "parse_sharding": "hlo_layout.syntax.sharding",
    "parse_value": "hlo_layout.syntax.fragments",
}

if TYPE_CHECKING:
    from hlo_layout.syntax.parse import (
        HloInputError,
        parse,
        parse_file,
        parse_file_modules,
        parse_modules,
        parse_shape,
        parse_value,
        read_text,
    )
    from hlo_layout.syntax.shape import (
        COMBINE,
        UNBOUNDED,
        ArrayShape,
        BufferShape,
        Layout,
        OpaqueShape,
        Shape,
        SplitConfig,
        Tile,
        TokenShape,
        TupleShape,
    )
    from hlo_layout.syntax.sharding import (
        Sharding,
        TileAssignment,
        instruction_sharding,
        parse_sharding,
    )
    from hlo_layout.syntax.tree import (
        Attribute,
        Computation,
        Instruction,
        Module,
        Operand,
        ParameterDecl,
        Section,
        SectionEntry,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hlo_layout.syntax' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "COMBINE",
    "UNBOUNDED",
    "ArrayShape",
    "Attribute",
    "BufferShape",
    "Computation",
    "HloInputError",
    "Instruction",
    "Layout",
    "Module",
    "OpaqueShape",
    "Operand",
    "ParameterDecl",
    "Section",
    "SectionEntry",
    "Shape",
    "Sharding",
    "SplitConfig",
    "Tile",
    "TileAssignment",
    "TokenShape",
    "TupleShape",
    "instruction_sharding",
    "parse",
    "parse_file",
    "parse_file_modules",
    "parse_modules",
    "parse_shape",
    "parse_sharding",
    "parse_value",
    "read_text",
]
