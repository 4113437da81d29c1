"""The library API of `inspect`: one pipeline from dump to typed records (and to JSON).

>>> import hlo_layout
>>> result = hlo_layout.inspect("HloModule m\\nENTRY e { ROOT p = f32[4]{0} parameter(0) }")
>>> result
<InspectResult: 1 module(s), 0 error(s)>
>>> result.modules[0].memory.entry_parameters[0].physical_bytes
16

The CLI (`cli/inspect_cmd.py`) only parses arguments, calls `inspect` or `write_inspect_json`,
picks a renderer and maps errors to exit codes. Streaming (`report/stream_json.py`) is an
implementation detail of `write_inspect_json`: it writes the same bytes as the in-memory path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hlo_layout.errors import HloLayoutError
from hlo_layout.reader.loader import DumpSource, Progress, is_text, load
from hlo_layout.units import TOP_DEFAULT

if TYPE_CHECKING:
    from hlo_layout.cost.model import ModuleCost
    from hlo_layout.cost.summary import CostSummary
    from hlo_layout.memory.backend import Backend, BackendChoice
    from hlo_layout.memory.buffer_assignment import BufferAssignment
    from hlo_layout.memory.footprint import MemoryReport
    from hlo_layout.reader.loader import Dump
    from hlo_layout.report.model import ModuleSummary
    from hlo_layout.syntax.tree import Module

Source = DumpSource
"""A dump: a `Path`, or a `str` that is HLO text when it holds a newline or `{`, else a path
(a file, a dump folder, a glob, or `-`)."""


@dataclass(frozen=True, slots=True)
class InspectedModule:
    """One module of a dump with what `inspect` found in it: the tree, its memory report and
    the compiler's buffer assignment when one was read."""

    file: str
    module: Module
    memory: MemoryReport
    assignment: BufferAssignment | None = None
    computation: str | None = None

    @property
    def summary(self) -> ModuleSummary:
        """Counts for the human view (computed on each access)."""
        from hlo_layout.report.model import module_summary

        return module_summary(self.module)

    @property
    def cost(self) -> ModuleCost | None:
        """XLA's cost analysis of the module and the loop-aware totals (computed on each access,
        without the physical-bytes pass), or None when the module cannot be costed (a call-graph
        cycle, an undefined callee: `analyze_cost` reports why)."""
        from hlo_layout.cost.model import module_cost

        try:
            return module_cost(self.module, self.file, physical=False)
        except HloLayoutError:
            return None

    def to_dict(self) -> dict[str, Any]:
        """This module's object of the `inspect --format json` document."""
        from hlo_layout.report.model import module_json

        return module_json(
            self.module,
            self.file,
            computation=self.computation,
            assignment=self.assignment,
            report=self.memory,
        )

    def __repr__(self) -> str:
        return f"<InspectedModule {self.module.name!r} from {self.file!r}>"


@dataclass(frozen=True, slots=True)
class InspectResult:
    """Every module read, and the input errors met on the way (a dump that failed is skipped)."""

    modules: tuple[InspectedModule, ...]
    errors: tuple[HloLayoutError, ...] = ()
    computation: str | None = None
    #: The reader's notes, and (file, note) of each dump whose backend was assumed: what the
    #: CLI says once on stderr (a streamed document's modules are not kept, these are).
    notes: tuple[str, ...] = ()
    assumed: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `inspect --format json` document (the CLI prints exactly this)."""
        from hlo_layout.report.model import SCHEMA_VERSION

        return {"schema_version": SCHEMA_VERSION, "modules": [m.to_dict() for m in self.modules]}

    def write_json(self, out: TextIO) -> None:
        """`json.dumps(self.to_dict(), indent=2, ensure_ascii=False)` and a newline, written one
        instruction at a time."""
        from hlo_layout.report.model import write_inspect_json as write

        write(
            out, [(m.file, m.module, m.memory) for m in self.modules], computation=self.computation
        )

    def _repr_html_(self) -> str:
        """The HTML report of these modules, inline in a notebook (Jupyter calls this)."""
        from hlo_layout.report.html.data import report_of
        from hlo_layout.report.html.page import render_html

        data = report_of([(m.file, m.module, m.memory) for m in self.modules])
        return render_html(data, fragment=True)

    def __repr__(self) -> str:
        return f"<InspectResult: {len(self.modules)} module(s), {len(self.errors)} error(s)>"


def inspect(
    sources: Source | Sequence[Source],
    *,
    computation: str | None = None,
    buffers: Source | None = None,
    backend: str | Backend | None = None,
    top: int | None = TOP_DEFAULT,
    progress: Progress | None = None,
    strict: bool = True,
) -> InspectResult:
    """Read dumps (files, folders, globs, `-`, or HLO text) and measure where their memory goes.

    `computation` keeps only the modules holding a computation of that name and reports on it
    alone; `buffers` is XLA's *buffer-assignment.txt (with one dump; else it is looked for
    beside a single-module dump); `backend` (a name of `hlo_layout.memory.BACKENDS`) overrides
    detection; `top` is how many of the largest buffers each report keeps. With `strict` (the
    default) the first input error raises; without it, errors are collected in
    `InspectResult.errors` and the other dumps are still read (what the CLI does).
    """
    loaded = load(sources, backend=backend, buffers=buffers, strict=strict, progress=progress)
    result = inspect_dumps(
        loaded.dumps, computation=computation, top=top, progress=progress, errors=loaded.errors
    )
    return replace(
        result,
        notes=tuple(loaded.notes),
        assumed=loaded.assumed,
    )


def inspect_dumps(
    dumps: Sequence[Dump],
    *,
    computation: str | None = None,
    top: int | None = TOP_DEFAULT,
    progress: Progress | None = None,
    errors: Sequence[HloLayoutError] = (),
) -> InspectResult:
    """`inspect` of dumps already read (`hlo_layout.reader.loader`)."""
    from hlo_layout.memory.footprint import memory_report

    modules: list[InspectedModule] = []
    for d in dumps:
        if computation is not None and d.module.computation(computation) is None:
            continue
        if progress is not None:
            progress.start(f"measuring {d.module.name or d.file}")
        report = memory_report(
            d.module,
            computation=computation,
            assignment=d.assignment,
            top=top,
            progress=progress.callback if progress is not None else None,
            file=d.file,
            backend=d.backend,
        )
        modules.append(InspectedModule(d.file, d.module, report, d.assignment, computation))
    return InspectResult(tuple(modules), tuple(errors), computation)


def write_inspect_json(
    sources: Source | Sequence[Source],
    out: TextIO,
    *,
    computation: str | None = None,
    buffers: Source | None = None,
    backend: str | Backend | None = None,
    stream: bool | None = None,
    progress: Progress | None = None,
    top: int | None = TOP_DEFAULT,
) -> InspectResult:
    """Write the `inspect --format json` document of `sources` to `out`; the result holds the
    input errors met (their dumps are left out of the document, as `inspect(strict=False)`).
    `top`: how many of the largest buffers each module lists (as `inspect`).

    One dump file with no `computation` is streamed, one computation in memory at a time, when
    `stream` is True or (None) it is over STREAM_THRESHOLD; the bytes are the same either way.
    The returned result of a streamed dump holds no modules (they were never kept).
    """
    items = [sources] if isinstance(sources, str | Path) else list(sources)
    if len(items) == 1 and computation is None and not is_text(items[0]):
        from hlo_layout.reader.discover import STDIN
        from hlo_layout.report.stream_json import STREAM_THRESHOLD
        from hlo_layout.syntax.parse import text_size

        path = Path(items[0])
        if path.is_file() or str(path) == STDIN:
            big = text_size(path) > STREAM_THRESHOLD
            streamed = stream if stream is not None else big
            if streamed:
                chosen = _write_streamed(path, out, buffers, backend, top, progress)
                if chosen is not None:
                    assumed = tuple((str(path), c.note) for c in chosen if c.assumed)
                    return InspectResult((), (), None, assumed=assumed)
    result = inspect(
        items,
        computation=computation,
        buffers=buffers,
        backend=backend,
        top=top,
        progress=progress,
        strict=False,
    )
    result.write_json(out)
    return result


def _write_streamed(
    path: Path,
    out: TextIO,
    buffers: Source | None,
    backend: str | Backend | None,
    top: int | None,
    progress: Progress | None,
) -> tuple[BackendChoice, ...] | None:
    """Stream the JSON of one dump and give the backend each module used; None (nothing
    written) when the whole-file path must decide, which also reports every input error in its
    own words."""
    from hlo_layout.reader.loader import backend_choice, target_arguments
    from hlo_layout.reader.sidefiles import SideFiles, read_buffer_assignment
    from hlo_layout.report.stream_json import Beside, StreamFallback, stream_inspect_json

    sides = SideFiles.of(path)
    ba_path = Path(buffers) if buffers is not None else sides.buffer_assignment
    try:
        assignment = read_buffer_assignment(ba_path) if ba_path is not None else None
        return stream_inspect_json(
            path,
            out,
            assignment,
            assignment_for_all=buffers is not None,
            top=top,
            stage=progress.start if progress is not None else None,
            report=progress.callback if progress is not None else None,
            beside=Beside(backend_choice(backend), target_arguments(sides), assignment),
        )
    except (StreamFallback, HloLayoutError):
        return None


#: `cost --format json`'s schema version.
COST_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class CostResult:
    """Every module read with its cost (`hlo_layout.cost.summary.CostSummary`), the input
    errors met on the way (a dump that failed is skipped) and the reader's notes."""

    modules: tuple[CostSummary, ...]
    errors: tuple[HloLayoutError, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `cost --format json` document (the CLI prints exactly this)."""
        return {
            "schema_version": COST_SCHEMA_VERSION,
            "modules": [m.to_dict() for m in self.modules],
        }

    def __repr__(self) -> str:
        return f"<CostResult: {len(self.modules)} module(s), {len(self.errors)} error(s)>"


def analyze_cost(
    sources: Source | Sequence[Source],
    *,
    chip: str | None = None,
    peak_flops: float | None = None,
    bandwidth: float | None = None,
    backend: str | Backend | None = None,
    top: int | None = TOP_DEFAULT,
    progress: Progress | None = None,
    strict: bool = True,
) -> CostResult:
    """Read dumps (files, folders, globs, `-`, or HLO text) and cost them: XLA's
    HloCostAnalysis totals, the loop-aware ones with physical bytes, and the instructions ranked
    by their roofline time on `chip` (default: the chip the dump was compiled for, when its
    backend and generation say so; `peak_flops` / `bandwidth` override the chip's figures or,
    together, stand for a chip of their own).

    >>> import hlo_layout
    >>> text = "HloModule m\\nENTRY e { a = f32[64,64]{1,0} parameter(0)\\n"
    >>> text += "ROOT d = f32[64,64]{1,0} dot(a, a), lhs_contracting_dims={1}, "
    >>> text += "rhs_contracting_dims={0} }"
    >>> (module,) = hlo_layout.analyze_cost(text, chip="h100").modules
    >>> module.cost.total.flops, module.rows[0].bound
    (524288, 'memory')
    """
    loaded = load(sources, backend=backend, strict=strict, progress=progress)
    return cost_dumps(
        loaded.dumps,
        chip=chip,
        peak_flops=peak_flops,
        bandwidth=bandwidth,
        top=top,
        progress=progress,
        errors=loaded.errors,
        notes=loaded.notes,
    )


def cost_dumps(
    dumps: Sequence[Dump],
    *,
    chip: str | None = None,
    peak_flops: float | None = None,
    bandwidth: float | None = None,
    top: int | None = TOP_DEFAULT,
    progress: Progress | None = None,
    errors: Sequence[HloLayoutError] = (),
    notes: Sequence[str] = (),
) -> CostResult:
    """`analyze_cost` of dumps already read (`hlo_layout.reader.loader`)."""
    from hlo_layout.cost.model import module_cost
    from hlo_layout.cost.roofline import chip_for, roofline
    from hlo_layout.cost.summary import summarize
    from hlo_layout.reader.loader import target_arguments

    out = []
    for dump in dumps:
        if progress is not None:
            progress.start(f"costing {dump.module.name or dump.file}")
        cost = module_cost(dump.module, dump.file)
        name, reason = chip, ""
        if chip is None and (peak_flops is None or bandwidth is None):
            target = target_arguments(dump.sides)
            name, why = chip_for(
                dump.module, dump.file, dump.backend, target[1] if target else None
            )
            reason = f"chip {name}: {why}" if name is not None else why
        chosen = roofline(name, peak_flops=peak_flops, bandwidth=bandwidth)
        out.append(summarize(cost, chosen, top=top, chip_reason=reason))
    return CostResult(tuple(out), tuple(errors), tuple(notes))


__all__ = [
    "COST_SCHEMA_VERSION",
    "CostResult",
    "InspectResult",
    "InspectedModule",
    "Progress",
    "analyze_cost",
    "cost_dumps",
    "inspect",
    "inspect_dumps",
    "write_inspect_json",
]
