"""Which compiler wrote a dump, and that backend's buffer-assignment settings.

Settings from ../shared/docs/memory_liveness.md §6 (verified on the corpus): the heap alignment of
the temp allocation (XLA's `color_alignment`), and the bytes of a tuple's pointer table
(ShapeUtil::ByteSizeOf with the backend's pointer size; libtpu rounds tables up).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.syntax.shape import ArrayShape, BufferShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, LazyAttributes, Module

#: What `--backend` accepts. `tpu` assumes v4/v5e; the TPU generations differ in tuple tables
#: and in whether sorts share buffers (see TPU_GENERATIONS).
BACKENDS = ("cpu", "gpu", "tpu", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e")


@dataclass(frozen=True, slots=True)
class Backend:
    """A backend's name and the buffer-assignment settings we mirror."""

    name: str
    alignment: int
    #: Tuple pointer table: `pointer_bytes` per element, rounded up to `table_alignment`.
    pointer_bytes: int = 8
    table_alignment: int = 1
    #: Whether temps may be packed into output allocations (XLA's allocation reuse).
    reuse_allocations: bool = True
    #: Whether a sort's output may take its dying operand's buffer (the kSort case of
    #: HloDataflowAnalysis::CanShareOperandBufferWithUser). libtpu's buffer assignment never
    #: does it: 7 sorts in 7 TPU programs (keys only and keys with values, in HBM and in VMEM;
    #: tests/data/memory/tpu-sort) each got a buffer of their own, and jax's peak is ours
    #: exactly only without the sharing.
    sort_shares_operand: bool = True
    #: Whether an output or custom fusion shares an operand's buffer when it is elementwise on
    #: it (the generic IsElementwiseOnOperand rule CanShareOperandBufferWithUser ends with).
    #: libtpu's buffer-sharing hook says no: with it, the v4 and v6e transformers' peaks exceed
    #: jax's by 4 % (kOutput fusions rooted in a convert of an add).
    fusion_elementwise_shares: bool = True
    #: The one packing order (heap_simulator.ORDERS) of the default memory space's temps, where
    #: the compiler passes BufferAssigner a heap_buffer_interval_compare (kCustom) instead of
    #: ChooseBestHeapAlgorithm's smaller of spatial and temporal (None). libtpu packs HBM temps
    #: by start time (GetColocationStartTimeBufferIntervalCompare) on every generation: the
    #: compiler's HBM temp of every TPU program in tests/data/memory and the corpus (v4, v5e,
    #: v5p, v6e), where the smaller of spatial and temporal misses v5p sort_in_scan (0.77),
    #: big_transformer_layer (0.94), hbm_scan_ys, hbm_scan_ys_big and v5e train_step_big (0.81).
    heap_order: str | None = None
    #: Whether a heap trace's peak holds a shared chunk until the last value sharing it is freed
    #: (heap_simulator.peak_of_trace), as libtpu's peak_memory_in_bytes does; else
    #: ComputePeakMemoryLogicalBuffers' replay, which drops it with the value that took it
    #: (CPU and GPU: no jax figure to tell them apart).
    peak_holds_shared: bool = False
    #: Custom-call targets whose result is a view of its operands laid end to end (libtpu's
    #: ConcatBitcast: the compiler places the operands contiguously and the result over them),
    #: so operands dying there are freed before the result is allocated.
    concat_views: frozenset[str] = frozenset()
    #: Whether the GPU backend's buffer-sharing hints decide (NVPTXAliasInfo::MayAlias: every
    #: fusion, collectives in place, cuBLASLt's bias; `memory/gpu_alias.py`).
    gpu_alias_hints: bool = False
    #: Memory spaces placed by the compiler's own memory-space assignment, not the heap
    #: simulator: TPU's VMEM, `S(1)` (`S(3)` in the corpus' v4 dumps). Their figures are
    #: estimates (labelled so), and their peak is counted as msa_trace_peak does.
    msa_spaces: frozenset[int] = frozenset()
    #: Whether a synchronous all-reduce of one operand takes that operand's buffer where it
    #: dies (libtpu: tpu-gen3 v5p pjit_sharded_mlp's all-reduce at its operand's offset in the
    #: compiler's file; our HBM temp was 512 KiB over).
    all_reduce_shares: bool = False
    #: Memory spaces where a scalar printed with no tile (`s32[]`, `u32[]{:S(6)}`) takes as
    #: many elements as this (libtpu's buffer assignment: 4096 B for an s32 constant in HBM or
    #: a u32 in S(6), 1024 B for a pred, where tiled scalars take their tile's 512 B; untiled
    #: scalars in S(2) and S(8) keep their 4 B).
    untiled_scalar_elements: tuple[tuple[int, int], ...] = ()
    #: Whether BufferAssigner takes tuple buffers (pointer tables) and the own-allocation
    #: contexts of `assigner._offload_context` after every other buffer, in post order, as if of
    #: size 0 (libtpu: the order of the tables in the compiler's combined temp allocation,
    #: which decides its size where tables differ in size: tpu-gen3 v6e lstm_scan_grad 64 B,
    #: SparseCore gathers 16 KiB).
    tables_sort_last: bool = False
    #: The TPU generation these settings are for (`v4/v5e`, `v5p`, `v6e`); "" elsewhere.
    generation: str = ""

    @property
    def label(self) -> str:
        """The name people read: `cpu`, `gpu`, `tpu v6e`."""
        return f"{self.name} {self.generation}" if self.generation else self.name

    def tuple_table_bytes(self, shape: TupleShape) -> int:
        raw = self.pointer_bytes * len(shape.elements)
        a = self.table_alignment
        return -(-raw // a) * a if raw else 0


CPU = Backend("cpu", 64)
GPU = Backend("gpu", 256, gpu_alias_hints=True)
#: TPU v4 and v5e (libtpu 0.0.52; the corpus' TPU dumps and tests/data/memory/tpu-sort): tuple
#: tables of 8 B per element rounded up to 512 B, and a sort's output never takes its operand's
#: buffer.
TPU = Backend(
    "tpu",
    16 * 1024,
    pointer_bytes=8,
    table_alignment=512,
    reuse_allocations=False,
    sort_shares_operand=False,
    fusion_elementwise_shares=False,
    heap_order="start",
    peak_holds_shared=True,
    concat_views=frozenset({"ConcatBitcast"}),
    msa_spaces=frozenset({1, 3}),
    untiled_scalar_elements=((0, 1024), (6, 1024)),
    tables_sort_last=True,
    all_reduce_shares=True,
    generation="v4/v5e",
)
#: v5p and v6e (tests/data/memory/tpu-gen): 4 B per element rounded up to 32 B; on v5p a sort
#: shares its operand's buffer as XLA's generic rule allows, on v6e it does not.
TPU_V5P = replace(
    TPU,
    pointer_bytes=4,
    table_alignment=32,
    sort_shares_operand=True,
    # v5p shares an operand an output fusion is elementwise on (tpu-gen3 vmap_ensemble: its
    # weight-update kOutput fusion takes the dying copy's 1 MiB, as in the compiler's file;
    # without it 1.046 of jax's peak).
    fusion_elementwise_shares=True,
    generation="v5p",
)
TPU_V6E = replace(TPU, pointer_bytes=4, table_alignment=32, generation="v6e")
_BY_NAME = {
    "cpu": CPU,
    "gpu": GPU,
    "tpu": TPU,
    "tpu-v4": TPU,
    "tpu-v5e": TPU,
    "tpu-v5p": TPU_V5P,
    "tpu-v6e": TPU_V6E,
}
#: libtpu's `tpu_topology_args.version` (and `variant`) in a dump's `*.target_arguments.txt`.
TPU_GENERATIONS = {
    ("TPU_VERSION_PUFFERFISH", ""): TPU,
    ("TPU_VERSION_VIPERFISH", "lite"): TPU,
    ("TPU_VERSION_VIPERFISH", ""): TPU_V5P,
    ("TPU_VERSION_GHOSTLITE", ""): TPU_V6E,
}

_GPU_MARKERS = re.compile(
    r"__cudnn\$|__cublas|__triton|sm_\d|\"device_type\"|kCustom.*triton|__gpu\$|cu_threshold"
)


def backend_named(name: str) -> Backend:
    """The settings of a name in BACKENDS; raises KeyError for another name."""
    return _BY_NAME[name.lower()]


def _tiled(shape: Shape) -> bool:
    if isinstance(shape, ArrayShape):
        return shape.layout is not None and bool(shape.layout.tiles)
    if isinstance(shape, TupleShape):
        return any(_tiled(e) for e in shape.elements)
    if isinstance(shape, BufferShape):
        return _tiled(shape.element)
    return False


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """The backend a dump was analysed with, and why: `assumed` when nothing decided it (no
    compiler marks at all, or a TPU whose generation nothing beside or in the dump names), so
    every command can say so once."""

    backend: Backend
    reason: str
    assumed: bool = False

    @property
    def note(self) -> str:
        """One sentence for the notes: which backend, how it was found, how to override it."""
        if self.reason == "--backend":
            return f"backend {self.backend.label} (given with --backend)"
        how = "assumed" if self.assumed else "from"
        return f"backend {self.backend.label} {how} {self.reason}; --backend overrides"


@dataclass(slots=True)
class TextSigns:
    """What a module's text says of the compiler that wrote it. Each sign is "any instruction of
    any computation", so a module read a computation at a time (layout/skeleton.BackendVote)
    gets the whole module's answer by adding its computations' signs."""

    tiled: bool = False
    gpu: bool = False
    #: Memory spaces of TPU values (read once the text is known to be TPU's).
    spaces: set[int] = field(default_factory=set)

    def add(self, computations: Iterable[Computation]) -> None:
        computations = list(computations)
        if not self.tiled:
            self.tiled = any(_tiled(i.shape) for c in computations for i in c.instructions)
        if self.tiled:
            for c in computations:
                for i in c.instructions:
                    _spaces(i.shape, self.spaces)
            return
        if not self.gpu:
            # One search over the tails joined by newlines (no marker spans a line): a search
            # per instruction cost more than the matching.
            tails = [
                attrs._text if type(attrs) is LazyAttributes else " ".join(map(str, attrs))
                for c in computations
                for i in c.instructions
                if (attrs := i.attributes)
            ]
            self.gpu = _GPU_MARKERS.search("\n".join(tails)) is not None


def text_signs(module: Module) -> TextSigns:
    signs = TextSigns()
    signs.add(module.computations)
    return signs


def detect_backend(
    module: Module,
    file_name: str | None = None,
    *,
    target_arguments: tuple[str, str] | None = None,
    assignment: BufferAssignment | None = None,
) -> BackendChoice:
    """The backend that wrote `module`, and why we think so (pure: the reader hands in what it
    found beside the dump, `hlo_layout.reader`).

    The dump's file name first (XLA's dump names carry it), then the text (tiled layouts: only
    the TPU compiler prints them; GPU-only custom calls and backend configs), else unknown and
    CPU assumed. A TPU's generation: see `choose_backend`.
    """
    return choose_backend(
        lambda: text_signs(module),
        file_name,
        target_arguments=target_arguments,
        assignment=assignment,
    )


def as_choice(
    backend: str | Backend | BackendChoice | None, module: Module, file_name: str | None = None
) -> BackendChoice:
    """`backend` as a BackendChoice: a choice as it is, settings or a name as given
    (`--backend`), None detected from the module's text and file name."""
    if isinstance(backend, BackendChoice):
        return backend
    if isinstance(backend, Backend):
        return BackendChoice(backend, "--backend")
    if backend is not None:
        return BackendChoice(backend_named(backend), "--backend")
    return detect_backend(module, file_name)


def choose_backend(
    signs: Callable[[], TextSigns],
    file_name: str | None = None,
    *,
    target_arguments: tuple[str, str] | None = None,
    assignment: BufferAssignment | None = None,
) -> BackendChoice:
    """detect_backend given the text's signs (`signs`, asked only when the file name does not
    decide; the one rule for a whole module and for a streamed one).

    A TPU's generation, strongest first: the `*.target_arguments.txt` libtpu dumps beside the
    module (`target_arguments` = (file name, text)); the buffer assignment beside it (tuple
    pointer tables: 512 B on v4/v5e, 32 B granules on v5p/v6e); VMEM in `S(3)` (v4, whose
    rules are v5e's) or SparseCore spaces `S(8)`-`S(15)` (v5p/v6e) in the text. Otherwise
    v4/v5e is assumed, and said.
    """
    by_name = backend_by_name(file_name)
    found: TextSigns | None = None
    if by_name is not None:
        be, why = by_name
    else:
        found = signs()
        if found.tiled:
            be, why = TPU, "tiled layouts"
        elif found.gpu:
            be, why = GPU, "GPU custom calls / backend configs"
        else:
            return BackendChoice(CPU, "(no GPU or TPU marks in the dump or its name)", True)
    if be is not TPU:
        return BackendChoice(be, why)
    if target_arguments is not None:
        named = tpu_generation_of(target_arguments[1])
        if named is not None:
            return BackendChoice(named, f"{why}; TPU {named.generation} from {target_arguments[0]}")
    tables = _tables_in(assignment) if assignment is not None else None
    ba_name = Path(assignment.name).name if assignment is not None else ""
    if tables == "small":
        return BackendChoice(
            TPU_V6E,
            f"({why}; v5p or v6e by the tuple tables under 512 B in {ba_name})",
            True,
        )
    if tables == "512":
        return BackendChoice(TPU, f"{why}; TPU v4/v5e (512 B tuple tables in {ba_name})")
    if found is None:
        found = signs()
    if 3 in found.spaces and 1 not in found.spaces:
        return BackendChoice(TPU, f"{why}; TPU v4 (VMEM in S(3))")
    if found.spaces & _SPARSECORE_SPACES:
        return BackendChoice(TPU_V6E, f"({why}; v5p or v6e by the SparseCore memory spaces)", True)
    return BackendChoice(
        TPU,
        f"({why}; no *.target_arguments.txt or buffer assignment beside the dump names the "
        "generation: --backend tpu-v5p or tpu-v6e for those)",
        True,
    )


#: Memory spaces only SparseCore-bearing TPUs (v5p, v6e) use (libtpu 0.0.52's dumps).
_SPARSECORE_SPACES = frozenset(range(8, 16))


def _spaces(shape: Shape, out: set[int]) -> None:
    if isinstance(shape, ArrayShape):
        if shape.layout is not None and shape.layout.memory_space:
            out.add(shape.layout.memory_space)
    elif isinstance(shape, TupleShape):
        for e in shape.elements:
            _spaces(e, out)
    elif isinstance(shape, BufferShape):
        _spaces(shape.element, out)


def _tables_in(assignment: BufferAssignment) -> str | None:
    """What the tuple tables of a TPU buffer assignment say of the generation: "512" (v4/v5e:
    8 B per element rounded up to 512 B), "small" (v5p/v6e: 4 B per element rounded up to 32 B),
    None when it holds no table of at most 64 elements (both rules give 512 B above that)."""
    for a in assignment.allocations:
        for v in a.values:
            text = v.shape_text
            if not text.startswith("(") or v.index:
                continue
            shape = v.shape
            if isinstance(shape, TupleShape) and 0 < len(shape.elements) <= 64:
                return "512" if a.size == 512 else "small"
    return None


def backend_by_name(file_name: str | None) -> tuple[Backend, str] | None:
    """The backend a dump's file name gives (XLA's dump names carry it), or None."""
    name = Path(file_name).name if file_name is not None else ""
    if "gpu_after_optimizations" in name or re.search(r"\.sm_\d", name):
        return GPU, "file name"
    if "cpu_after_optimizations" in name:
        return CPU, "file name"
    if "tpu" in name.lower():
        return TPU, "file name"
    return None


_VERSION = re.compile(r"^\s*version:\s*(\w+)", re.M)
_VARIANT = re.compile(r'^\s*variant:\s*"([^"]*)"', re.M)


def tpu_generation_of(target_arguments: str) -> Backend | None:
    """The TPU settings named by the text of a `*.target_arguments.txt` (libtpu's
    `tpu_topology_args.version` and `variant`); None for a generation not in TPU_GENERATIONS."""
    version = _VERSION.search(target_arguments)
    if version is None:
        return None
    variant = _VARIANT.search(target_arguments)
    return TPU_GENERATIONS.get((version.group(1), variant.group(1) if variant else ""))
