"""Which files a `check` or `diff` argument means: a file, a glob, or a dump directory.

In a directory written by `XLA_FLAGS=--xla_dump_to=DIR`, the modules to gate are the optimized
ones (`*after_optimizations*.txt`); the compiler's reports beside them are not HLO.
"""

from __future__ import annotations

import glob
from pathlib import Path

_REPORTS = ("buffer-assignment", "memory-usage-report", "live-range", "-memory-report")
_HLO_SUFFIXES = (".txt", ".hlo", ".gz", ".pb.txt")


def is_report(path: Path) -> bool:
    return any(marker in path.name for marker in _REPORTS)


def dump_files(argument: str) -> list[Path]:
    """Files meant by one argument, sorted; a missing path is returned as-is (reported later)."""
    path = Path(argument)
    if path.is_dir():
        optimized = sorted(
            p
            for p in path.rglob("*after_optimizations*")
            if p.is_file() and p.name.endswith(_HLO_SUFFIXES) and not is_report(p)
        )
        if optimized:
            return optimized
        return sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and p.name.endswith(_HLO_SUFFIXES) and not is_report(p)
        )
    if any(c in argument for c in "*?[") and not path.exists():
        return sorted(Path(p) for p in glob.glob(argument, recursive=True) if Path(p).is_file())
    return [path]


def expand(arguments: list[str]) -> list[Path]:
    """All files of all arguments, de-duplicated, in argument order."""
    seen: set[Path] = set()
    out: list[Path] = []
    for argument in arguments:
        for path in dump_files(argument):
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out


def shard(paths: list[Path], spec: str | None) -> list[Path]:
    """`i/n`: the i-th of n interleaved slices (1-based), so a CI matrix splits the work."""
    if spec is None:
        return paths
    try:
        i_text, n_text = spec.split("/")
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard takes i/n, e.g. 1/4 (got {spec!r})") from None
    if not (n >= 1 and 1 <= i <= n):
        raise ValueError(f"--shard {spec}: need 1 <= i <= n")
    return [p for k, p in enumerate(sorted(paths)) if k % n == i - 1]
