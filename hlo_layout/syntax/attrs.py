"""Meaning of known attributes, decoded from their generic value on demand.

Each decoder reads one attribute kind (XLA's hlo_parser.cc `Parse*` for that attribute, in our
words). Unknown attributes need no decoder: their generic value and raw text are always there.
"""

from __future__ import annotations

from hlo_layout.syntax import values as V
from hlo_layout.syntax.tree import Attribute


def computation_names(attr: Attribute) -> tuple[str, ...]:
    """`calls=%c`, `branch_computations={%a, %b}` → names without `%`."""
    raw = attr.raw
    if raw.startswith("{"):
        value = attr.value
        if isinstance(value, V.Group):
            return tuple(
                item.text.removeprefix("%") for item in value.items if isinstance(item, V.Word)
            )
        return ()
    return (raw.removeprefix("%"),)
