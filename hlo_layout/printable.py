"""The one escape of text on its way to a terminal: names, `op_name`s, file names and source
lines are data from the input, and a raw ESC in them would retitle the window, clear the screen
or recolour what follows. Every text view escapes through `printable` (the console does it for
everything it prints, `report/console.py`; an error's context line before its caret is placed);
JSON keeps the data exact (its own escapes are enough).
"""

from __future__ import annotations

import re

#: What may not reach a terminal raw: C0 controls but tab and newline, DEL and C1 controls,
#: lone surrogates (the bytes of a file name that is not UTF-8, as Python decodes them) and the
#: bidirectional overrides that reorder what is shown.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # a byte Python's surrogateescape kept: show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every UNSAFE character written as its escape: ESC is `\\x1b`, the byte 0xFF
    of a file name `\\xff`, U+202E `\\u202e`. Text without any is returned as it is."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(_escape, text)


__all__ = ["UNSAFE", "printable"]
