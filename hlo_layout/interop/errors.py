"""The interop views' one error class: a layout or sharding with no form in the other language."""

from __future__ import annotations

from hlo_layout.errors import HloLayoutError


class InteropError(HloLayoutError):
    """An XLA layout with no CuTe `shape:stride` form (a tile that splits a dimension unevenly
    inside another tile), an Axe layout asked for something it cannot answer, or a sharding that
    does not fit its shape.

    The CLI maps it, like every input error, to exit code 3.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
