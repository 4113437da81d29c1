"""Which old module a new one is compared with, for baselines and `diff`.

Real dump folders repeat module names (`jit_step`, `jit_f`), so pairing by name alone compares
unrelated programs. Modules are paired by (path relative to the argument's root, position in the
file) first, then by module name when that name occurs exactly once among the unpaired modules
on each side. Everything else is reported, never paired silently: modules left on one side, and
names that were ambiguous. A lone module on each side is paired whatever its name, with a
warning when the names differ (two compiles of a renamed function).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Pairing(Generic[T]):
    pairs: tuple[tuple[T, T], ...]
    only_old: tuple[T, ...]
    only_new: tuple[T, ...]
    #: Module names left unpaired because they occur more than once on a side.
    ambiguous: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())


def pair(
    old: Sequence[T],
    new: Sequence[T],
    key: Callable[[T], tuple[str, int]],
    name: Callable[[T], str],
) -> Pairing[T]:
    """Pair `old` with `new` by `key` (relative path, index in file), then by unique `name`."""
    if len(old) == 1 and len(new) == 1:
        warnings: tuple[str, ...] = ()
        if name(old[0]) != name(new[0]):
            warnings = (
                f"comparing modules with different names: {name(old[0])} → {name(new[0])} "
                "(one module on each side)",
            )
        return Pairing(((old[0], new[0]),), (), (), (), warnings)
    new_by_key: dict[tuple[str, int], T] = {}
    for y in new:
        new_by_key.setdefault(key(y), y)
    pairs: list[tuple[T, T]] = []
    left_old: list[T] = []
    used: set[int] = set()
    for x in old:
        match = new_by_key.get(key(x))
        if match is not None and id(match) not in used:
            pairs.append((x, match))
            used.add(id(match))
        else:
            left_old.append(x)
    left_new = [y for y in new if id(y) not in used]
    old_names = Counter(name(x) for x in left_old)
    new_names = Counter(name(y) for y in left_new)
    new_unique = {name(y): y for y in left_new if new_names[name(y)] == 1}
    still_old: list[T] = []
    for x in left_old:
        n = name(x)
        if old_names[n] == 1 and n in new_unique:
            y = new_unique.pop(n)
            pairs.append((x, y))
            used.add(id(y))
        else:
            still_old.append(x)
    still_new = [y for y in new if id(y) not in used]
    ambiguous = sorted(
        {name(x) for x in still_old if old_names[name(x)] > 1 or new_names[name(x)] > 1}
        | {name(y) for y in still_new if old_names[name(y)] > 1 or new_names[name(y)] > 1}
    )
    return Pairing(tuple(pairs), tuple(still_old), tuple(still_new), tuple(ambiguous))
