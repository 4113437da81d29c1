"""`load`: dump files, folders, globs, `-` or HLO text → modules with what lies beside them.

Every command and every library entry point reads dumps here, so each gets the same inputs
(`--backend`, `--buffers`, folders, globs, stdin, `.gz`) and no analysis opens a file: a
`Dump` carries the parsed module, the compiler's buffer assignment when one was found (or
given), the backend it was compiled for and how that was decided, and the other files the
compiler wrote beside it.

>>> from hlo_layout.reader import load
>>> loaded = load("HloModule m\\nENTRY e { ROOT p = f32[4]{0} parameter(0) }")
>>> [(d.file, d.module.name, d.backend.backend.name, d.backend.assumed) for d in loaded.dumps]
[('<string>', 'm', 'cpu', True)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hlo_layout.errors import HloLayoutError
from hlo_layout.reader.discover import (
    STDIN,
    DumpFile,
    expand_dumps,
    is_pattern,
    no_match_message,
)
from hlo_layout.reader.sidefiles import SideFiles, read_small_text

if TYPE_CHECKING:
    from hlo_layout.memory.backend import Backend, BackendChoice
    from hlo_layout.memory.buffer_assignment import BufferAssignment
    from hlo_layout.syntax.tree import Module

DumpSource = str | Path
"""A dump: a `Path`, or a `str` that is HLO text when it holds a newline or `{`, else a path
(a file, a dump folder, a glob, or `-` for standard input)."""


class Progress(Protocol):
    """What a long read reports while it works (the CLI's progress bar implements it)."""

    def start(self, description: str) -> None:
        """A new stage begins (reading a file, measuring a module)."""

    @property
    def callback(self) -> Callable[[int, int], None] | None:
        """Called with (done, total) while a stage runs; None when nobody is watching."""


@dataclass(frozen=True, slots=True)
class Dump:
    """One module of a dump, with what the compiler wrote beside it."""

    #: The path as found (`<stdin>` for `-`, `<string>` for text given to the library).
    file: str
    #: The path relative to the argument that named it: baselines and `diff` pair dumps by it.
    key: str
    #: The module's position in its file (most files hold one).
    position: int
    module: Module
    #: XLA's buffer assignment: `--buffers`, or the one beside a single-module dump.
    assignment: BufferAssignment | None
    #: The backend the analyses use, and how it was decided (`--backend`, name, text, files).
    backend: BackendChoice
    sides: SideFiles = field(default_factory=SideFiles)

    @property
    def scheduled(self) -> bool:
        """Whether the module carries a schedule (`is_scheduled=true`): without one, the text
        order stands in for it and every liveness figure is an estimate."""
        a = self.module.attr("is_scheduled")
        return a is not None and a.raw.strip().lower() == "true"

    @property
    def label(self) -> str:
        """`file::module`, how a module is named where files repeat module names."""
        return f"{self.file}::{self.module.name}"

    def __repr__(self) -> str:
        return f"<Dump {self.module.name!r} from {self.file!r} ({self.backend.backend.label})>"


@dataclass(frozen=True, slots=True)
class Loaded:
    """Every module read, the input errors met (a dump that failed is left out), and notes
    (what a folder held that was skipped)."""

    dumps: tuple[Dump, ...]
    errors: tuple[HloLayoutError, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def assumed(self) -> tuple[tuple[str, str], ...]:
        """(file, note) of each dump whose backend was assumed: what is said of it once."""
        return tuple((d.file, d.backend.note) for d in self.dumps if d.backend.assumed)


def is_text(source: DumpSource) -> bool:
    return isinstance(source, str) and ("\n" in source or "{" in source)


def _sources(sources: DumpSource | Sequence[DumpSource]) -> list[DumpSource]:
    if isinstance(sources, str | Path):
        return [sources]
    return list(sources)


def backend_choice(backend: str | Backend | None) -> BackendChoice | None:
    """`--backend` (a name of `memory.BACKENDS`, or settings) as a choice; None: detect it."""
    from hlo_layout.memory.backend import Backend, BackendChoice, backend_named

    if backend is None:
        return None
    if isinstance(backend, Backend):
        return BackendChoice(backend, "--backend")
    return BackendChoice(backend_named(backend), "--backend")


def load(
    sources: DumpSource | Sequence[DumpSource],
    *,
    backend: str | Backend | None = None,
    buffers: DumpSource | None = None,
    strict: bool = True,
    progress: Progress | None = None,
) -> Loaded:
    """Read every dump `sources` names.

    `backend` (a name of `memory.BACKENDS`) overrides detection for every dump; `buffers` is
    XLA's `*buffer-assignment.txt` for the one dump given (else it is looked for beside each
    single-module dump). With `strict` the first input error raises; without it, errors are
    collected and the other dumps are still read (what the commands do). Raises ValueError for
    `buffers` with more than one dump and KeyError for an unknown backend name.
    """
    given = backend_choice(backend)
    items = _sources(sources)
    files: list[tuple[DumpSource, str]] = []
    errors: list[HloLayoutError] = []
    notes: list[str] = []

    def failed(error: HloLayoutError) -> None:
        if strict:
            raise error
        errors.append(error)

    for item in items:
        if is_text(item):
            files.append((item, "<string>"))
            continue
        if not is_pattern(str(item)) and not Path(item).is_dir():
            files.append((item, Path(item).name))  # a file (or `-`): its reader says what fails
            continue
        found, unmatched = expand_dumps([str(item)])
        if unmatched:
            from hlo_layout.syntax.parse import HloInputError

            failed(HloInputError(no_match_message(str(item))))
        files.extend((f.path, f.key) for f in found)
        notes.extend(_skipped(str(item), found))
    if buffers is not None and len(files) != 1:
        raise ValueError("buffers= (--buffers) goes with exactly one dump")
    dumps: list[Dump] = []
    for source, key in files:
        try:
            dumps.extend(load_file(source, key, backend=given, buffers=buffers, progress=progress))
        except HloLayoutError as e:
            failed(e)
    return Loaded(tuple(dumps), tuple(errors), tuple(notes))


def _skipped(argument: str, found: list[DumpFile]) -> list[str]:
    """A note for a folder whose unoptimized dumps were passed over for its optimized ones."""
    from hlo_layout.reader.discover import skipped_in_folder

    path = Path(argument)
    if not found or not path.is_dir():
        return []
    skipped = skipped_in_folder(path)
    if not skipped:
        return []
    return [
        f"{argument}: {skipped} unoptimized dump(s) (*before_optimizations*) skipped: they are "
        "not scheduled, so their peaks would be estimates; name one to read it"
    ]


def load_file(
    source: DumpSource,
    key: str = "",
    *,
    backend: BackendChoice | None = None,
    buffers: DumpSource | None = None,
    progress: Progress | None = None,
) -> list[Dump]:
    """The modules of one dump file (or HLO text), with what lies beside it; raises the input
    error. `backend` None detects each module's."""
    from hlo_layout.memory.backend import detect_backend
    from hlo_layout.reader.sidefiles import read_buffer_assignment
    from hlo_layout.syntax.parse import HloInputError, parse_file_modules, parse_modules

    report = progress.callback if progress is not None else None
    if is_text(source):
        if progress is not None:
            progress.start("reading text")
        modules = parse_modules(str(source), report=report)
        file, path = "<string>", None
    else:
        path = Path(source)
        file = "<stdin>" if str(path) == STDIN else str(path)
        if progress is not None:
            progress.start(f"reading {path.name if file != '<stdin>' else file}")
        modules = parse_file_modules(path, report=report)
    if not modules:
        raise HloInputError(f"{file}: no HLO module, computation or instruction")
    sides = SideFiles.of(path) if path is not None and len(modules) == 1 else SideFiles()
    ba_path = Path(buffers) if buffers is not None else sides.buffer_assignment
    assignment = read_buffer_assignment(ba_path) if ba_path is not None else None
    target = target_arguments(sides)
    out = []
    for n, module in enumerate(modules):
        choice = backend or detect_backend(
            module,
            file if path is not None else None,
            target_arguments=target,
            assignment=assignment,
        )
        out.append(Dump(file, key or Path(file).name, n, module, assignment, choice, sides))
    return out


def target_arguments(sides: SideFiles) -> tuple[str, str] | None:
    """The (file name, text) of the `*.target_arguments.txt` found beside a dump, if readable."""
    if sides.target_arguments is None:
        return None
    text = read_small_text(sides.target_arguments)
    return (sides.target_arguments.name, text) if text is not None else None


def load_dump_file(
    dump: DumpFile, *, backend: BackendChoice | None = None, buffers: DumpSource | None = None
) -> list[Dump]:
    """`load_file` of a file found by `discover` (its pairing key kept)."""
    return load_file(dump.path, dump.key, backend=backend, buffers=buffers)


__all__ = ["Dump", "DumpSource", "Loaded", "Progress", "is_text", "load", "load_file"]
