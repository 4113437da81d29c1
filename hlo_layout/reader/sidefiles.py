"""The files a compiler writes beside a dump, found by XLA's and libtpu's dump names.

`--xla_dump_to=DIR` names a module's files `module_0052.jit_step.cpu_after_optimizations.txt`,
`…-buffer-assignment.txt`, `…-memory-usage-report.txt`, `…-live-range.txt`; libtpu's dumps
name them `conv.after_optimizations.txt`, `conv.buffer-assignment.txt`,
`conv.target_arguments.txt`. Only this module looks for them: analyses are handed what was found
(`hlo_layout.reader.loader`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The suffix of an optimized module's name; what comes before it names the module's files.
_DUMP_SUFFIXES = ("after_optimizations", "after-optimizations")
#: A side file larger than this is not read (no compiler writes one that large for them).
MAX_SIDE_FILE_BYTES = 1 << 20


def _stems(dump: Path) -> list[str]:
    """The name stems a side file of `dump` may start with, most specific first."""
    stem = dump.name
    for suffix in (".gz", ".txt", ".hlo"):
        stem = stem.removesuffix(suffix)
    stems = [stem]
    for marker in _DUMP_SUFFIXES:
        if stem.endswith(marker):
            base = stem[: -len(marker)].rstrip("._-")
            if base:
                stems.append(base)
    return stems


def beside(dump: str | Path, kind: str) -> Path | None:
    """The file of `kind` (`buffer-assignment`, `memory-usage-report`, `live-range`,
    `target_arguments`) written next to `dump`, or None.

    `m.jit_f.cpu_after_optimizations.txt` → `m.jit_f.cpu_after_optimizations-buffer-assignment.txt`
    (XLA); `conv.after_optimizations.txt` → `conv.buffer-assignment.txt` (libtpu).
    """
    dump = Path(dump)
    if str(dump) == "-":
        return None
    for stem in _stems(dump):
        for sep in ("-", "."):
            name = f"{stem}{sep}{kind}.txt"
            for candidate in (dump.with_name(name), dump.with_name(name + ".gz")):
                if candidate != dump and candidate.is_file():
                    return candidate
    return None


def buffer_assignment_beside(dump: str | Path) -> Path | None:
    """XLA's `*buffer-assignment.txt` next to a dump, if there is one."""
    return beside(dump, "buffer-assignment")


@dataclass(frozen=True, slots=True)
class SideFiles:
    """What was found beside one dump file (paths; None where there was none)."""

    buffer_assignment: Path | None = None
    memory_usage_report: Path | None = None
    live_range: Path | None = None
    target_arguments: Path | None = None

    @classmethod
    def of(cls, dump: str | Path) -> SideFiles:
        return cls(
            beside(dump, "buffer-assignment"),
            beside(dump, "memory-usage-report"),
            beside(dump, "live-range"),
            beside(dump, "target_arguments"),
        )


def read_small_text(path: Path) -> str | None:
    """The text of a small side file (None when it is missing, unreadable or too large to be
    one: a side file is a hint, never a reason to fail or to read gigabytes)."""
    try:
        if path.stat().st_size > MAX_SIDE_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
