"""What an input may declare: every size and count is checked here before anything is allocated.

A dump is small text that can *declare* huge things (a rank, a tile list, a device count, an
integer of thousands of digits). The cost of reading it must follow the file, not the declaration,
so each declared quantity we would materialize is compared with a limit below first; exceeding one
is bad input (exit 3) with the location and the limit, never an exhausted machine or exit 4.

The limits follow XLA where XLA has one (dimension sizes and element counts are int64,
ShapeUtil::ValidateShape); the others are far above anything a compiler writes and far below
what would hurt us.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from hlo_layout.errors import HloSemanticError, HloUsageError, Source, Span

#: Digits of one integer written in the input: Python's own int ↔ string limit (4,300 by default),
#: which would otherwise surface as an internal error. XLA's integers are int64 (≤ 20 digits).
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
#: Largest dimension size and element count: XLA stores both as int64.
MAX_DIM = 2**63 - 1
MAX_ELEMENTS = 2**63 - 1
#: Dimensions of one array (XLA has no fixed limit; compilers write at most a few dozen).
MAX_RANK = 1024
#: Tile levels in one layout (`T(8,128)(2,1)` is two; TPU layouts use at most three).
MAX_TILE_LEVELS = 16
#: Entries of one tile.
MAX_TILE_ENTRIES = MAX_RANK
#: Devices a module may declare (`num_partitions`, `maximal device=`, a tile assignment): XLA's
#: device ids are int64. Nothing is allocated per declared device: the sharding report gives
#: device ranges and iota forms, so its cost follows the file (issue 16).
MAX_DEVICES = 2**63 - 1
#: Devices one list may spell out in full (an iota's device array, a per-device table): past it
#: reports give ranges (`0..4194303`) and the iota text (`<=[4194304]`) instead.
MAX_LISTED_DEVICES = 1 << 16
#: Device ids a `sharding --format json` document lists one by one; past it every list in the
#: document is given as ranges only (`device_ranges`, `device_groups`), never refused.
MAX_JSON_DEVICE_IDS = 1 << 20
#: Elements that `layout --grid` draws and CuTe/Axe views enumerate.
MAX_GRID_ELEMENTS = 1 << 16
#: Times one computation may run in the cost model (the product of the trip counts of the
#: loops around it): XLA's trip counts are int64, and a nest of them past it is no program.
MAX_EXECUTIONS = 2**63 - 1
#: Instructions the memory analysis may evaluate beyond twice the module's: it evaluates a
#: callee at each of its call sites, as XLA analyses a call graph flattened by FlattenCallGraph
#: (one copy of a computation per call site), and a dump XLA compiled is flattened already. A
#: call tree whose computations are called from several sites flattens to exponentially many
#: (a 2.6 KB binary tree of depth 22: 12 million), so it is refused past this.
MAX_FLATTENED_INSTRUCTIONS = 2_000_000


class LimitExceeded(HloSemanticError):
    """The input declares more than we can afford; the message names the limit.

    `needle` is the offending text when the raiser had no span (a memoized shape parse): the
    caller holding the source locates it with `located`.
    """

    def __init__(self, message: str, span: Span | None = None, needle: str | None = None):
        super().__init__(message, span)
        self.needle = needle

    def located(self, source: Source, start: int = 0) -> LimitExceeded:
        """This error with a span at the first occurrence of `needle` in `source` (if found)."""
        if self.span is not None or not self.needle:
            return self
        at = source.text.find(self.needle, start)
        if at < 0:
            return self
        return LimitExceeded(self.message, Span(at, at + len(self.needle), source), self.needle)


def exceeded(
    what: str, value: int, limit: int, name: str, span: Span | None = None
) -> LimitExceeded:
    """The error for `what` = `value` over `limit` (the constant `name` in this module)."""
    shown = str(value) if value.bit_length() < 4000 else f"a {value.bit_length()}-bit number"
    return LimitExceeded(f"{what} {shown} is over the limit of {limit} ({name})", span)


def _shown(n: int) -> str:
    """A number for a message: in full up to 24 digits, else its first digits and length."""
    text = str(n)
    return text if len(text) <= 24 else f"{text[:12]}… ({len(text)} digits)"


def array_problem(dims: Sequence[int], tiles: Sequence[Sequence[int]] = ()) -> str | None:
    """Why an array shape with these dims and tile entries exceeds a limit, or None.

    Cheap: one pass over what the text already holds; called by the shape constructors.
    """
    if len(dims) > MAX_RANK:
        return f"rank {len(dims)} is over the limit of {MAX_RANK} (MAX_RANK)"
    elements = 1
    for d in dims:
        if d > MAX_DIM:
            return f"dimension size {_shown(d)} does not fit in int64 (MAX_DIM)"
        if d > 0:
            elements *= d
    if elements > MAX_ELEMENTS:
        return f"element count {_shown(elements)} does not fit in int64 (MAX_ELEMENTS)"
    if len(tiles) > MAX_TILE_LEVELS:
        return f"{len(tiles)} tile levels are over the limit of {MAX_TILE_LEVELS} (MAX_TILE_LEVELS)"
    for tile in tiles:
        if len(tile) > MAX_TILE_ENTRIES:
            return (
                f"a tile of {len(tile)} entries is over the limit of {MAX_TILE_ENTRIES} "
                "(MAX_TILE_ENTRIES)"
            )
        for t in tile:
            if t > MAX_DIM:
                return f"tile entry {_shown(t)} does not fit in int64 (MAX_DIM)"
    return None


def is_int_digits_error(error: BaseException) -> bool:
    """Whether `error` is Python's int ↔ string digit limit (a ValueError)."""
    return isinstance(error, ValueError) and "integer string conversion" in str(error)


_LONG_DIGITS = re.compile(rf"(?<![0-9])[0-9]{{{MAX_INT_DIGITS + 1},}}")


def long_integer_error(source: Source, start: int = 0, end: int | None = None) -> LimitExceeded:
    """The error for the first integer of more than MAX_INT_DIGITS digits in `source.text`
    between `start` and `end` (only called once such an integer broke a conversion)."""
    text = source.text
    m = _LONG_DIGITS.search(text, start, len(text) if end is None else end)
    if m is None:  # the conversion was not of input text: still an input-sized number
        return LimitExceeded(
            f"a number in the input has more than {MAX_INT_DIGITS} digits (MAX_INT_DIGITS)"
        )
    return LimitExceeded(
        f"integer of {m.end() - m.start()} digits is over the limit of {MAX_INT_DIGITS} "
        "digits (MAX_INT_DIGITS)",
        Span(m.start(), m.start() + 1, source),
    )


def read_int(
    text: str, what: str = "integer", span: Span | None = None, *, option: bool = False
) -> int:
    """The one reader of an integer written in the input (an attribute, a side file) or given
    as an option value (`option`): `int(text)`, with the digit limit checked first, so a number
    of thousands of digits is bad input (LimitExceeded at `span`, exit 3) or a bad option value
    (HloUsageError, exit 2) rather than Python's ValueError (exit 4). Text that is not an
    integer still raises ValueError, for the caller to word."""
    digits = len(text.strip().lstrip("+-"))
    if digits > MAX_INT_DIGITS:
        message = (
            f"{what} of {digits} digits is over the limit of {MAX_INT_DIGITS} digits "
            "(MAX_INT_DIGITS)"
        )
        raise HloUsageError(message) if option else LimitExceeded(message, span)
    return int(text)


#: Bracket nesting the grammar is given (a literal of rank r nests r + 1 deep; shapes and
#: attribute values a few levels): deeper text is refused before the parser stacks it.
MAX_NESTING = 1000
#: Text shorter than this is parsed without the nesting pre-check (its stack is small anyway).
NESTING_CHECK_MIN_CHARS = 100_000
#: Tuple shapes nested deeper are refused where they are read: the layout and memory code walk
#: a shape recursively, which fails past ~350 levels; real dumps nest a handful (5 at most in
#: the corpus and XLA's tests).
MAX_SHAPE_DEPTH = 256


#: The next string or bracket run after plain text, the plain text taken whole (a lookahead
#: and back-reference: an atomic group on Python 3.10), so a megabyte of blanks, as the scanner's
#: fallback pieces hold, costs one tight loop rather than a search try at every character.
_BRACKET = re.compile(r'(?=([^"{}()\[\]]*))\1(?:"[^"\\]*(?:\\.[^"\\]*)*"|([{(\[]+)|([})\]]+))')
_PLAIN = re.compile(r'[^"{}()\[\]]*')


def check_nesting(source: Source, start: int = 0, end: int | None = None) -> None:
    """Raise LimitExceeded at the first bracket nested more than MAX_NESTING deep in
    `source.text[start:end]` (strings skipped; a quote that opens no string is plain text).
    Linear, one regex match per string or bracket run."""
    text = source.text
    stop = len(text) if end is None else end
    match = _BRACKET.match
    depth = 0
    pos = start
    while True:
        m = match(text, pos, stop)
        if m is None:
            quote = _PLAIN.match(text, pos, stop).end()  # type: ignore[union-attr]
            if quote >= stop:
                return
            pos = quote + 1  # a `"` that opens no string
            continue
        pos = m.end()
        kind = m.lastindex
        if kind == 2:
            depth += pos - m.start(2)
            if depth > MAX_NESTING:
                at = pos - (depth - MAX_NESTING)
                raise LimitExceeded(
                    f"brackets nested more than {MAX_NESTING} deep (MAX_NESTING)",
                    Span(at, at + 1, source),
                )
        elif kind == 3:
            depth = max(0, depth - (pos - m.start(3)))
