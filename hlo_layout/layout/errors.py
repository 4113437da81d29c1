"""The layout engine's one error class: a shape whose bytes or offsets cannot be computed."""

from __future__ import annotations

from hlo_layout.errors import HloLayoutError


class LayoutError(HloLayoutError):
    """A well-formed shape the layout rules cannot size or index: an unknown element type, a `?`
    dimension, a `*` tile entry with nothing more minor to merge into, an index out of bounds.

    The CLI maps it, like every input error, to exit code 3.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
