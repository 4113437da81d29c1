"""A bigger dump of the same kind, made from a real one: its computations repeated under fresh
names until the text reaches a target size.

    python benchmarks/grow.py DUMP MB OUT

Every copy renames each `%name` to `%cN_name` (computations and instructions alike) and drops
`ENTRY` so that only the original entry stays; the module header, stack-frame sections and the
original computations are kept as they are. The result keeps the source's line mix (long
`backend_config`s, tiled layouts, fusion bodies), which is what parse cost depends on; XLA's
parser reads it (benchmarks/run.py compares against it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_COMPUTATION_HEAD = re.compile(r"(?:ENTRY[ \t]+)?%?[A-Za-z0-9_.$-]+[ \t]*(?:\(.*)?\{[ \t]*$")


def grow(text: str, target_bytes: int) -> str:
    """`text` with its computations repeated (renamed) until it is at least `target_bytes`."""
    lines = text.split("\n")
    heads = [
        n
        for n, line in enumerate(lines)
        if line[:1] not in (" ", "\t") and not line.startswith("HloModule")
        and _COMPUTATION_HEAD.fullmatch(line)
    ]  # fmt: skip
    if not heads:
        raise ValueError("no computation found")
    first = heads[0]
    last = heads[-1]
    while last < len(lines) and lines[last].rstrip() != "}":
        last += 1
    body = "\n".join(lines[first : last + 1])
    copies: list[str] = []
    size = len(text.encode())
    copy = 0
    while size < target_bytes:
        renamed = re.sub(r"^ENTRY[ \t]+", "", body, flags=re.MULTILINE).replace("%", f"%c{copy}_")
        copies.append(renamed + "\n")
        size += len(renamed.encode()) + 1
        copy += 1
    return "\n".join(lines[:first] + copies + lines[first:])


def main() -> None:
    source, mb, out = Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
    out.write_text(grow(source.read_text(encoding="utf-8"), int(mb * 1e6)), encoding="utf-8")


if __name__ == "__main__":
    main()
