"""Which files an argument means: a file, a glob, a dump directory, or `-`.

In a directory written by `XLA_FLAGS=--xla_dump_to=DIR`, the modules to gate are the optimized
ones (`*after_optimizations*.txt`); the compiler's reports beside them are not HLO. Each file
found keeps its path relative to the argument's root (the directory, or a glob's fixed prefix),
the key baselines and `diff` pair dumps by.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

_REPORTS = (
    "buffer-assignment",
    "memory-usage-report",
    "live-range",
    "-memory-report",
    "target_arguments",
)
_HLO_SUFFIXES = (".txt", ".hlo", ".gz", ".pb.txt")
_MAGIC = "*?["

#: The argument that means "read one dump from standard input".
STDIN = "-"


def is_pattern(argument: str) -> bool:
    """Whether an argument is a glob (`dumps/*.txt`), not a path."""
    return any(c in argument for c in _MAGIC)


def is_report(path: Path) -> bool:
    return any(marker in path.name for marker in _REPORTS)


@dataclass(frozen=True)
class DumpFile:
    """One dump file and its path relative to the root of the argument that named it."""

    path: Path
    key: str


def _hlo_files(folder: Path, pattern: str) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob(pattern)
        if p.is_file() and p.name.endswith(_HLO_SUFFIXES) and not is_report(p)
    )


def _in_folder(folder: Path) -> list[Path]:
    return _hlo_files(folder, "*after_optimizations*") or _hlo_files(folder, "*")


def skipped_in_folder(folder: Path) -> int:
    """How many HLO files of a folder `_in_folder` passes over (the unoptimized modules beside
    optimized ones)."""
    chosen = _in_folder(folder)
    return len(_hlo_files(folder, "*")) - len(chosen)


def _glob_root(argument: str) -> Path:
    """The fixed folder a glob starts from (`a/b/*.txt` → `a/b`)."""
    parts = Path(argument).parts
    fixed = []
    for part in parts:
        if any(c in part for c in _MAGIC):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def _key(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def dumps_of(argument: str) -> list[DumpFile]:
    """Dumps meant by one argument, sorted; empty when nothing matched (the caller says so).
    A path that exists as a file is taken whatever its name."""
    if argument == STDIN:
        return [DumpFile(Path(STDIN), STDIN)]
    path = Path(argument)
    if path.is_dir():
        return [DumpFile(p, _key(p, path)) for p in _in_folder(path)]
    if path.is_file():
        return [DumpFile(path, path.name)]
    if is_pattern(argument):
        root = _glob_root(argument)
        found = sorted(Path(p) for p in glob.glob(argument, recursive=True) if Path(p).is_file())
        return [DumpFile(p, _key(p, root)) for p in found]
    return []


def dump_files(argument: str) -> list[Path]:
    """Files meant by one argument, sorted (empty when nothing matched)."""
    return [d.path for d in dumps_of(argument)]


def expand_dumps(arguments: list[str]) -> tuple[list[DumpFile], list[str]]:
    """All dumps of all arguments, de-duplicated, in argument order; and the arguments that
    matched nothing."""
    seen: set[Path] = set()
    out: list[DumpFile] = []
    unmatched: list[str] = []
    for argument in arguments:
        found = dumps_of(argument)
        if not found:
            unmatched.append(argument)
        for dump in found:
            if dump.path not in seen:
                seen.add(dump.path)
                out.append(dump)
    return out, unmatched


def expand(arguments: list[str]) -> list[Path]:
    """All files of all arguments, de-duplicated, in argument order."""
    return [d.path for d in expand_dumps(arguments)[0]]


def no_match_message(argument: str) -> str:
    """Why an argument gave no dump, for `error: ...`."""
    path = Path(argument)
    if path.is_dir():
        return f"no dumps matched {argument} (a folder without *.txt, *.hlo or *.gz HLO dumps)"
    if is_pattern(argument):
        return f"no dumps matched {argument}"
    return f"no dumps matched {argument} (no such file or directory)"


def shard(paths: list[Path], spec: str | None) -> list[Path]:
    """`i/n`: the i-th of n interleaved slices (1-based), so a CI matrix splits the work."""
    if spec is None:
        return paths
    i, n = _shard_spec(spec)
    return [p for k, p in enumerate(sorted(paths)) if k % n == i - 1]


def shard_dumps(dumps: list[DumpFile], spec: str | None) -> list[DumpFile]:
    """`shard` over Dumps (the same slices as over their paths)."""
    if spec is None:
        return dumps
    i, n = _shard_spec(spec)
    ordered = sorted(dumps, key=lambda d: d.path)
    return [d for k, d in enumerate(ordered) if k % n == i - 1]


def _shard_spec(spec: str) -> tuple[int, int]:
    try:
        i_text, n_text = spec.split("/")
        if len(i_text) > 9 or len(n_text) > 9:
            raise ValueError
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard takes i/n, e.g. 1/4 (got {spec!r})") from None
    if not (n >= 1 and 1 <= i <= n):
        raise ValueError(f"--shard {spec}: need 1 <= i <= n")
    return i, n
