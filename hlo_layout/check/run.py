"""`check` end to end without I/O to the terminal: files → metrics (in a process pool) → rules.

The CLI only parses flags, calls `run_check`, and renders the CheckResult.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hlo_layout.check.metrics import ModuleMetrics, module_metrics
from hlo_layout.check.pairing import pair
from hlo_layout.check.policy import PolicySet
from hlo_layout.check.rules import Violation, evaluate
from hlo_layout.errors import HloLayoutError, HloSemanticError, HloSyntaxError
from hlo_layout.memory.backend import BackendChoice
from hlo_layout.reader.discover import STDIN, DumpFile
from hlo_layout.reader.loader import load_file


@dataclass(frozen=True)
class FileError:
    """Why a file could not be checked, as plain data (it crosses process boundaries):
    `location` is `FILE:LINE:COL` when the error has a position, else empty."""

    message: str
    location: str = ""
    context: str = ""
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        """`FILE:LINE:COL: error: MESSAGE` (or `error: MESSAGE`), then the line and a caret."""
        head = (
            f"{self.location}: error: {self.message}" if self.location else f"error: {self.message}"
        )
        return head + (f"\n{self.context}" if self.context else "")


def file_error(error: HloLayoutError) -> FileError:
    span = getattr(error, "span", None)
    message = getattr(error, "message", None) or str(error)
    if isinstance(error, HloSyntaxError) and error.expected:
        message += " (expected " + ", ".join(error.expected) + ")"
    if span is not None and isinstance(error, HloSyntaxError | HloSemanticError):
        where = HloSyntaxError(message, span)
        context = "\n".join("  " + line for line in where.context().split("\n"))
        return FileError(
            message,
            f"{where.filename}:{where.line}:{where.column}",
            context,
            where.line,
            where.column,
        )
    return FileError(message)


@dataclass(frozen=True)
class FileResult:
    """The modules of one file, or why it could not be read."""

    file: str
    metrics: tuple[ModuleMetrics, ...] = ()
    failure: FileError | None = None
    #: The file's path relative to its argument's root (the pairing key).
    key: str = ""

    @property
    def error(self) -> str | None:
        """The error as one compiler-style message (None when the file was read)."""
        return None if self.failure is None else str(self.failure)


@dataclass(frozen=True)
class CheckResult:
    files: tuple[FileResult, ...]
    violations: tuple[Violation, ...]
    #: (module, file) pairs that were checked, in order.
    checked: tuple[tuple[str, str], ...] = ()
    #: Checked modules with no baseline module paired (when a baseline was given).
    baseline_missing: tuple[str, ...] = field(default=())
    #: Baseline modules no checked module was paired with.
    baseline_unpaired: tuple[str, ...] = ()
    #: Module names that could not be paired because they repeat.
    baseline_ambiguous: tuple[str, ...] = ()
    #: (checked module, baseline module) descriptions, `file::module` each.
    baseline_pairs: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    config: str | None = None

    @property
    def errors(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.failure is not None)

    @property
    def passed(self) -> bool:
        """No violation and every input read (a PATH that matched nothing is an error)."""
        return not self.violations and not self.errors


def measure_file(path: Path, key: str = "", backend: BackendChoice | None = None) -> FileResult:
    """Read one dump and compute its modules' metrics (top-level: runs in worker processes)."""
    name = "<stdin>" if str(path) == STDIN else str(path)
    key = key or path.name
    try:
        dumps = load_file(path, key, backend=backend)
        metrics = tuple(module_metrics(d) for d in dumps)
        return FileResult(name, metrics, key=key)
    except HloLayoutError as e:
        return FileResult(name, failure=file_error(e), key=key)
    except RecursionError:
        return FileResult(name, failure=FileError(f"{name}: input is nested too deeply"), key=key)


def _measure(job: tuple[DumpFile, BackendChoice | None]) -> FileResult:
    dump, backend = job
    return measure_file(dump.path, dump.key, backend)


def measure_all(
    dumps: list[DumpFile], jobs: int = 0, backend: BackendChoice | None = None
) -> list[FileResult]:
    """Metrics of every file, in order; `jobs` worker processes (0 = one per core). Standard
    input is read here, never in a worker. `backend` (`--backend`) for every dump, else each
    is detected."""
    jobs = jobs or os.cpu_count() or 1
    work = [(d, backend) for d in dumps]
    if jobs == 1 or len(dumps) <= 1 or any(str(d.path) == STDIN for d in dumps):
        return [_measure(w) for w in work]
    with ProcessPoolExecutor(max_workers=min(jobs, len(dumps))) as pool:
        return list(pool.map(_measure, work, chunksize=1))


@dataclass(frozen=True)
class _Entry:
    metrics: ModuleMetrics
    key: tuple[str, int]

    @property
    def label(self) -> str:
        return f"{self.metrics.file}::{self.metrics.module}"


def _entries(results: list[FileResult]) -> list[_Entry]:
    return [_Entry(m, (r.key, i)) for r in results for i, m in enumerate(r.metrics)]


def run_check(
    dumps: list[DumpFile],
    policies: PolicySet,
    *,
    baseline: list[DumpFile] | None = None,
    unmatched: tuple[tuple[str, str], ...] = (),
    jobs: int = 0,
    backend: BackendChoice | None = None,
) -> CheckResult:
    """Evaluate every module of every file against its policy, and against its baseline module
    (paired by relative path, then by unique name: see `check.pairing`)."""
    results = measure_all(list(dumps) + list(baseline or ()), jobs, backend)
    current, before = results[: len(dumps)], results[len(dumps) :]
    now = _entries(current)
    base_for: dict[int, ModuleMetrics] = {}
    pairing = None
    if baseline is not None:
        pairing = pair(_entries(before), now, key=lambda e: e.key, name=lambda e: e.metrics.module)
        base_for = {id(new): old.metrics for old, new in pairing.pairs}
    violations: list[Violation] = []
    for entry in now:
        m = entry.metrics
        violations.extend(evaluate(m, policies.for_module(m.module), base_for.get(id(entry))))
    errors_in_baseline = [r for r in before if r.failure is not None]
    missing_inputs = tuple(FileResult(arg, failure=FileError(msg)) for arg, msg in unmatched)
    return CheckResult(
        tuple(current) + tuple(errors_in_baseline) + missing_inputs,
        tuple(violations),
        tuple((e.metrics.module, e.metrics.file) for e in now),
        tuple(e.label for e in pairing.only_new) if pairing else (),
        tuple(e.label for e in pairing.only_old) if pairing else (),
        pairing.ambiguous if pairing else (),
        tuple((new.label, old.label) for old, new in pairing.pairs) if pairing else (),
        pairing.warnings if pairing else (),
        policies.source,
    )
