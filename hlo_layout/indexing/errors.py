"""Errors raised by the indexing-map core.

Both classes join the package-wide family (`hlo_layout.errors`), so the CLI maps them to exit codes
like any other input error. `IndexingError` is also a `ValueError`: a bad argument to a pure
function (an undeclared variable, a division by zero) is a value problem.
"""

from __future__ import annotations

from hlo_layout.errors import HloLayoutError, HloSyntaxError, Source, Span


class IndexingError(HloLayoutError, ValueError):
    """Base class of every error the indexing package raises on purpose."""


class IndexingParseError(HloSyntaxError, IndexingError):
    """Text that is not an indexing map or expression, with the offset where parsing stopped.

    Line, column and the caret line come from `HloSyntaxError` and are computed only when shown:
    `<indexing map>:1:12: unknown variable 'd3'`.
    """

    def __init__(
        self, message: str, text: str, position: int, *, source_name: str = "<indexing map>"
    ) -> None:
        position = max(0, min(position, len(text)))
        end = position + 1 if position < len(text) else position
        super().__init__(message, Span(position, end, Source(text, source_name)))
        self.text = text
        self.position = position
