"""`check` end to end without I/O to the terminal: files → metrics (in a process pool) → rules.

The CLI only parses flags, calls `run_check`, and renders the CheckResult.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hlo_layout.check.metrics import ModuleMetrics, module_metrics
from hlo_layout.check.policy import PolicySet
from hlo_layout.check.rules import Violation, evaluate
from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.buffer_assignment import buffer_assignment_beside
from hlo_layout.syntax.parse import parse_file_modules


@dataclass(frozen=True)
class FileResult:
    """The modules of one file, or why it could not be read."""

    file: str
    metrics: tuple[ModuleMetrics, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class CheckResult:
    files: tuple[FileResult, ...]
    violations: tuple[Violation, ...]
    #: (module, file) pairs that were checked, in order.
    checked: tuple[tuple[str, str], ...] = ()
    baseline_missing: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.error is not None)


def measure_file(path: Path) -> FileResult:
    """Parse one dump and compute its modules' metrics (top-level: runs in worker processes)."""
    try:
        modules = parse_file_modules(path)
        if not modules:
            return FileResult(str(path), error=f"{path}: no HLO module found")
        buffers = buffer_assignment_beside(path) if len(modules) == 1 else None
        return FileResult(str(path), tuple(module_metrics(m, str(path), buffers) for m in modules))
    except HloLayoutError as e:
        return FileResult(str(path), error=str(e))
    except RecursionError:
        return FileResult(str(path), error=f"{path}: input is nested too deeply")


def measure_all(paths: list[Path], jobs: int = 0) -> list[FileResult]:
    """Metrics of every file, in order; `jobs` worker processes (0 = one per core)."""
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(paths) <= 1:
        return [measure_file(p) for p in paths]
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        return list(pool.map(measure_file, paths, chunksize=1))


def run_check(
    paths: list[Path],
    policies: PolicySet,
    *,
    baseline: list[Path] | None = None,
    jobs: int = 0,
) -> CheckResult:
    """Evaluate every module of every file against its policy (and its baseline, by name)."""
    results = measure_all(paths + list(baseline or ()), jobs)
    current, before = results[: len(paths)], results[len(paths) :]
    base_by_name = {m.module: m for r in before for m in r.metrics}
    violations: list[Violation] = []
    checked: list[tuple[str, str]] = []
    missing: list[str] = []
    for result in current:
        for m in result.metrics:
            checked.append((m.module, m.file))
            base = base_by_name.get(m.module)
            if baseline is not None and base is None:
                missing.append(m.module)
            violations.extend(evaluate(m, policies.for_module(m.module), base))
    errors_in_baseline = [r for r in before if r.error is not None]
    return CheckResult(
        tuple(current) + tuple(errors_in_baseline),
        tuple(violations),
        tuple(checked),
        tuple(missing),
    )
