"""The peak grouped by what the user wrote: source line, or op_name (to a chosen depth).

`memory --by source|op|op:N`, the `by_source` and `by_op_name` lists of its JSON, and `diff`'s
attribution of a peak's change all group buffers here, by the attribution of
`memory/metadata.py` (NOTE: [attribution]).

>>> parse_grouping("op:2")
Grouping(by='op', depth=2)
>>> Grouping("op", 2).key_of(None, "jit(step)/jvp(mlp)/dot_general")
'jit(step)/jvp(mlp)'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

#: What `--by` accepts (`op:N` with N >= 1).
GROUPINGS = ("source", "op", "op:N")
#: The source-line group of buffers that come from the program's arguments (no line put them
#: there: memory/metadata.py, NOTE: [attribution]).
ARGUMENTS = "(arguments)"


class Grouping(NamedTuple):
    """Group by `source` (file:line) or `op` (op_name, its first `depth` `/`-parts; 0: all)."""

    by: str
    depth: int = 0

    def key_of(self, source: str | None, op_name: str | None, argument: bool = False) -> str | None:
        if self.by == "source":
            return source if source is not None or not argument else ARGUMENTS
        if op_name is None or not self.depth:
            return op_name
        return "/".join(op_name.split("/")[: self.depth])

    @property
    def label(self) -> str:
        return (
            "source line"
            if self.by == "source"
            else "op_name" + (f" (depth {self.depth})" if self.depth else "")
        )


def parse_grouping(text: str) -> Grouping:
    """`source`, `op` or `op:N`; raises ValueError with what is accepted."""
    t = text.strip().lower()
    if t in ("source", "op"):
        return Grouping(t)
    if t.startswith("op:"):
        digits = t[3:]
        if digits.isdigit() and len(digits) <= 4 and int(digits) >= 1:
            return Grouping("op", int(digits))
    raise ValueError(f"--by takes source, op or op:N with N >= 1 (got {text!r})")


@dataclass(frozen=True, slots=True)
class Group:
    """Buffers sharing a key (None: no source line / no op_name), their bytes and count."""

    key: str | None
    bytes: int
    buffers: int


class Attributed(Protocol):
    """What is grouped: a buffer's attribution and bytes (memory.analysis.LiveBuffer)."""

    @property
    def source(self) -> str | None: ...
    @property
    def op_name(self) -> str | None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def argument(self) -> bool: ...


def group_buffers(rows: Iterable[Attributed], grouping: Grouping) -> list[Group]:
    """Rows with `source`, `op_name` and `bytes` summed by key, largest first (then by key;
    the unattributed group sorts by its bytes like any other)."""
    acc: dict[str | None, list[int]] = {}
    for r in rows:
        key = grouping.key_of(r.source, r.op_name, r.argument)
        got = acc.get(key)
        if got is None:
            got = acc[key] = [0, 0]
        got[0] += r.bytes
        got[1] += 1
    out = [Group(k, v[0], v[1]) for k, v in acc.items()]
    out.sort(key=lambda g: (-g.bytes, g.key is None, g.key or ""))
    return out
