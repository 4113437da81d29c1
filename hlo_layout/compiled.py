"""`from_compiled`: the report of a program jax has compiled, cross-checked with jax's figures.

A `jax.stages.Compiled` carries the optimized module (`as_text()`), the platform it was compiled
for, and `memory_analysis()`: jax's own figures and, serialized, the compiler's buffer
assignment. We analyse the text as we would a dump (the compiler's allocations read from the
proto stand beside ours as its `*buffer-assignment.txt` would) and compare each figure jax
reports with ours, saying why they differ where they do. jax is not imported here: any object
with those methods will do (tests use recorded ones).

>>> class Fake:  # what a Compiled offers
...     def as_text(self):
...         return "HloModule m, is_scheduled=true\\nENTRY e { ROOT p = f32[4]{0} parameter(0) }"
...     def memory_analysis(self):
...         return None
>>> report = from_compiled(Fake(), backend="cpu")
>>> report.memory.peak_bytes, report.checks
(16, ())
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hlo_layout.units import TOP_DEFAULT

if TYPE_CHECKING:
    from hlo_layout.api import InspectResult
    from hlo_layout.memory import MemoryAnalysis

#: jax's `device_kind` (lower case, prefix) -> our backend name.
_TPU_KINDS = (
    ("tpu v6", "tpu-v6e"),
    ("tpu v5p", "tpu-v5p"),
    ("tpu v5", "tpu-v5e"),
    ("tpu v4", "tpu-v4"),
)


@dataclass(frozen=True, slots=True)
class CrossCheck:
    """One figure jax reports beside ours: equal, or why not."""

    figure: str
    jax: int
    ours: int
    note: str = ""

    @property
    def equal(self) -> bool:
        return self.jax == self.ours

    def to_dict(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "jax": self.jax,
            "ours": self.ours,
            "equal": self.equal,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class CompiledReport:
    """What `from_compiled` found: the inspected module, its memory analysis and the checks."""

    result: InspectResult
    checks: tuple[CrossCheck, ...]

    @property
    def memory(self) -> MemoryAnalysis:
        peak = self.result.modules[0].memory.peak
        assert peak is not None  # a compiled program has an entry
        return peak

    def to_dict(self) -> dict[str, Any]:
        """`inspect --format json`'s module, `memory --format json`'s, and the checks."""
        return {
            "inspect": self.result.modules[0].to_dict(),
            "memory": self.memory.to_dict(),
            "jax": [c.to_dict() for c in self.checks],
        }

    def _repr_html_(self) -> str:
        return self.result._repr_html_()

    def __repr__(self) -> str:
        differ = sum(not c.equal for c in self.checks)
        return (
            f"<CompiledReport {self.memory.module!r}: peak {self.memory.peak_bytes:,} B, "
            f"{len(self.checks)} figure(s) checked against jax, {differ} differ>"
        )


def _device(compiled: Any) -> Any:
    """A device the program was compiled for: of its first input's sharding (also for a
    deviceless TPU compile, whose executable has no client), else its client's."""
    shardings = getattr(compiled, "input_shardings", None)
    stack = [shardings]
    while stack:  # the first leaf of the (args, kwargs) tree of shardings
        x = stack.pop(0)
        if isinstance(x, list | tuple):
            stack[:0] = list(x)
        elif isinstance(x, dict):
            stack[:0] = list(x.values())
        elif x is not None and hasattr(x, "device_set"):
            return next(iter(x.device_set))
    return compiled.runtime_executable().client.devices()[0]


def _platform_backend(compiled: Any) -> str | None:
    """cpu, gpu or a TPU generation from the device the program was compiled for."""
    try:
        device = _device(compiled)
        platform = str(device.platform).lower()
        kinds = [str(device.device_kind).lower()]
    except Exception:  # not a jax Compiled, or jax changed: detect from the text instead
        return None
    if platform in ("cpu",):
        return "cpu"
    if platform in ("gpu", "cuda", "rocm"):
        return "gpu"
    if platform == "tpu":
        for prefix, name in _TPU_KINDS:
            if kinds and kinds[0].startswith(prefix):
                return name
        return "tpu"
    return None


def from_compiled(
    compiled: Any, *, backend: str | None = None, top: int | None = TOP_DEFAULT
) -> CompiledReport:
    """The report of a compiled program (`jax.jit(f).lower(...).compile()`), with jax's own
    figures (`memory_analysis()`) checked against ours. `backend` overrides the platform the
    executable names."""
    from hlo_layout.api import inspect_dumps
    from hlo_layout.reader import load

    text = compiled.as_text()
    (dump,) = load(text, backend=backend or _platform_backend(compiled)).dumps
    stats = compiled.memory_analysis()
    proto = getattr(stats, "serialized_buffer_assignment_proto", None)
    if proto:
        from hlo_layout.interop.xla_proto import parse_buffer_assignment_proto

        assignment = parse_buffer_assignment_proto(
            bytes(proto), "memory_analysis().serialized_buffer_assignment_proto"
        )
        dump = replace(dump, assignment=assignment)
    result = inspect_dumps([dump], top=top)
    ma = result.modules[0].memory.peak
    checks = tuple(cross_check(ma, result.modules[0].memory, stats)) if ma and stats else ()
    return CompiledReport(result, checks)


def cross_check(ma: MemoryAnalysis, report: Any, stats: Any) -> list[CrossCheck]:
    """jax's `memory_analysis()` figures beside ours (README "From jax", what each means)."""
    tpu = ma.backend == "tpu"
    host = {5}  # S(5): pinned host memory, reported apart by jax
    params = [r for r in report.entry_parameters if r.memory_space not in host]
    outputs = [r for r in report.entry_outputs if r.memory_space not in host]
    out: list[CrossCheck] = []

    def add(figure: str, ours: int, note: str = "") -> None:
        value = getattr(stats, figure, None)
        if isinstance(value, int):
            out.append(CrossCheck(figure, value, ours, "" if value == ours else note))

    add(
        "argument_size_in_bytes",
        sum(r.physical_bytes or 0 for r in params),
        "entry parameters on the device, each at its layout's size",
    )
    add(
        "output_size_in_bytes",
        sum(r.physical_bytes or 0 for r in outputs) + report.output_pointer_table_bytes,
        "entry outputs on the device and the result's tuple table",
    )
    device = next((s for s in ma.spaces if s.memory_space == 0), None)
    if device is not None:
        add(
            "temp_size_in_bytes",
            device.temp_allocation_bytes,
            "jax rounds the TPU HBM temp up to 16 KiB (or reports 0)" if tpu else "",
        )
    if tpu:
        add("peak_memory_in_bytes", ma.peak_bytes, "VMEM is placed by libtpu: an estimate")
    else:
        add(
            "peak_memory_in_bytes",
            ma.static_bytes,
            "on CPU and GPU jax reports the static part (no heap trace is serialized)",
        )
        local = sum(s.thread_local_bytes for s in ma.spaces)
        value = getattr(stats, "total_allocation_bytes", None)
        explained = isinstance(value, int) and ma.peak_bytes - value == local
        add(
            "total_allocation_bytes",
            ma.peak_bytes,
            f"jax's total leaves out the thread-local allocations ({local:,} B), which our "
            "headline counts as the buffer assignment does"
            if explained
            else "differs from the buffer assignment's total",
        )
    compiler = ma.compiler
    if compiler is not None:
        theirs = sum(a["size"] for a in compiler["allocations"])
        ours = sum(
            s.static_bytes + s.temp_allocation_bytes + s.thread_local_bytes for s in ma.spaces
        )
        out.append(
            CrossCheck(
                "buffer assignment total (serialized_buffer_assignment_proto)",
                theirs,
                ours,
                "" if ours == theirs else "our allocations differ from the compiler's",
            )
        )
    return out
