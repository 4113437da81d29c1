"""BufferAssigner (xla/service/buffer_assignment.cc): allocations for parameters, constants,
tuples and live-out buffers, reuse of allocations whose live ranges do not interfere, one heap
simulation per memory space for the temps (AssignBuffersWithSequentialOrdering), and
CombineTempAllocations (after XLA's unstable std::partition of the allocation list).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import cast

from hlo_layout.layout.size import array_bytes
from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.backend import Backend
from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue, Index, subshape
from hlo_layout.memory.gpu_alias import CUBLAS_LT_TARGETS, custom_call_target, gpu_may_alias
from hlo_layout.memory.heap_simulator import (
    Events,
    choose_best_fit,
    msa_trace_peak,
    peak_of_trace,
    run_heap_simulation,
)
from hlo_layout.memory.live_range import LiveRange
from hlo_layout.syntax.opcodes import (
    ADD,
    ALL_REDUCE,
    ASYNC_START,
    ASYNC_UPDATE,
    CALL,
    CONSTANT,
    CONVOLUTION,
    COPY,
    COPY_DONE,
    CUSTOM_CALL,
    DOT,
    ELEMENTWISE,
    FUSION,
    PARAMETER,
    SHARES_ANY_OPERAND,
    SHARES_OPERAND,
    SORT,
    TUPLE,
    elementwise_on_operand,
)
from hlo_layout.syntax.shape import ArrayShape, OpaqueShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Operand

_VMEM_ALIGN = 1


def _offload_context(v: HloValue) -> bool:
    """A context value ({2,...}) of an async-start/-update run on another execution thread."""
    i = v.instruction
    if i.opcode not in (ASYNC_START, ASYNC_UPDATE) or v.index[:1] < (2,):
        return False
    a = i.attr("async_execution_thread")
    return a is not None and a.raw.strip('"') != "main"


def _offload_computations(df: DataflowAnalysis) -> frozenset[str]:
    """The computations holding buffers that run on another execution thread than the main
    one (`execution_thread="sparsecore"` after the closing brace)."""
    out = set()
    for c in df.global_computations:
        a = next((x for x in c.attributes if x.key == "execution_thread"), None)
        if a is not None and a.raw.strip('"') != "main":
            out.add(c.name)
    return frozenset(out)


def value_size(shape: Shape, backend: Backend) -> int:
    """BufferValue size: an array's physical bytes, a tuple's pointer table."""
    if isinstance(shape, ArrayShape):
        lay = shape.layout
        if lay is not None and lay.memory_space in backend.logical_size_spaces:
            return array_bytes(shape).logical_bytes or 0
        if not shape.dims and backend.untiled_scalar_elements and (lay is None or not lay.tiles):
            for space, elements in backend.untiled_scalar_elements:
                if (lay.memory_space if lay is not None else 0) == space:
                    return elements * (array_bytes(shape).logical_bytes or 0)
        return array_bytes(shape).physical_bytes or 0
    if isinstance(shape, TupleShape):
        return backend.tuple_table_bytes(shape)
    if isinstance(shape, OpaqueShape):
        return backend.pointer_bytes
    return 0


def value_color(shape: Shape) -> int:
    if isinstance(shape, ArrayShape) and shape.layout is not None:
        return shape.layout.memory_space
    return 0


@dataclass(slots=True)
class Allocation:
    """BufferAllocation: its size, color, kind and the values placed in it (value id -> offset)."""

    index: int
    size: int
    color: int
    kind: str  # parameter | constant | output | temp | thread_local | tuple
    parameter_aliased: bool = False
    live_out: bool = False
    #: A dict, or a `_OneValue` while the allocation holds one value.
    values: Mapping[int, int] = field(default_factory=dict)
    #: Live ranges of the values placed, sorted by (start, end): pairwise they only touch, so
    #: ends are sorted too and an interference check reads only the neighbours (see _maybe_assign).
    ranges: list[tuple[int, int, int]] = field(default_factory=list)
    unranged: bool = False

    @property
    def reusable(self) -> bool:
        """Not readonly (a constant or an undonated parameter), not a tuple, not thread-local."""
        if self.kind == "parameter":
            return self.parameter_aliased
        return self.kind not in ("constant", "tuple", "thread_local")

    @property
    def readonly(self) -> bool:
        return (self.kind == "parameter" and not self.parameter_aliased) or self.kind == "constant"

    @property
    def preallocated_temp(self) -> bool:
        return self.kind not in ("parameter", "constant", "thread_local") and not self.live_out


class _OneValue(Mapping[int, int]):
    """`Allocation.values` of an allocation holding one value at offset 0 (a parameter leaf, a
    constant, an output), until another joins: a dict of one entry costs four times this
    (NOTE: [value memory] in memory/dataflow.py)."""

    __slots__ = ("id",)

    def __init__(self, vid: int) -> None:
        self.id = vid

    def __getitem__(self, vid: int) -> int:
        if vid == self.id:
            return 0
        raise KeyError(vid)

    def __contains__(self, vid: object) -> bool:
        return vid == self.id

    def __iter__(self) -> Iterator[int]:
        return iter((self.id,))

    def __len__(self) -> int:
        return 1


#: The values and ranges of every thread-local allocation (a GPU dump has tens of thousands):
#: shared, as nothing is ever placed in one (they are not `reusable`). `_NO_RANGES` is also the
#: ranges of every other allocation until `_add` gives it a list of its own (never changed).
_NOTHING_PLACED: dict[int, int] = {}
_NO_RANGES: list[tuple[int, int, int]] = []


@dataclass(slots=True)
class SpaceHeap:
    """One memory space's heap simulation: the chosen packing's size and the trace's peak (the
    trace and the offsets themselves are dropped once placed: a CPU dump's run to tens of
    thousands of entries, and nothing reads them after)."""

    color: int
    heap_size: int
    trace_peak: int
    temp_allocation_bytes: int = 0


class BufferAssigner:
    """Runs XLA's buffer assignment rules over our dataflow, alias and live-range analyses."""

    def __init__(
        self, df: DataflowAnalysis, alias: AliasAnalysis, lr: LiveRange, backend: Backend
    ) -> None:
        self.df, self.alias, self.lr, self.backend = df, alias, lr, backend
        #: computation name -> (the computation, its users by operand name), the last few
        self._users_cache: dict[str, tuple[Computation, dict[str, list[Instruction]]]] = {}
        self._by_shape: dict[int, tuple[int, int]] = {}  # `_sized`
        #: Value id (dense: the values' list order) -> bytes and color (thread-local values:
        #: none). Lists, not dicts: a GPU dump has tens of thousands of values.
        self.size: list[int] = []
        self.color: list[int] = []
        size, color, sized = self.size, self.color, self._sized
        offload = backend.offload_tuple
        offloaded = _offload_computations(df) if offload is not None else frozenset()
        for v in df.values:
            hit = sized(v.shape)
            if offloaded and v.computation.name in offloaded and isinstance(v.shape, TupleShape):
                assert offload is not None
                hit = (offload[1], offload[0])
            size.append(hit[0])
            color.append(hit[1])
        self.buffer_size = [
            size[b[0].id] if len(b) == 1 else max(size[v.id] for v in b) for b in alias.buffers
        ]
        self.buffer_color = [color[b[0].id] for b in alias.buffers]
        self.buffer_live_out = [
            b[0].live_out if len(b) == 1 else any(v.live_out for v in b) for b in alias.buffers
        ]
        self.allocations: list[Allocation] = []
        #: value id -> its allocation, None before it has one (a list: the ids are dense)
        self.allocation_of_value: list[Allocation | None] = [None] * len(df.values)
        self.heaps: dict[int, SpaceHeap] = {}
        self.temp_allocation_bytes: dict[int, int] = {}
        self._reuse = _ReuseIndex()
        #: Allocations of their own for async contexts on another thread (_offload_context).
        self._context_allocations: list[int] = []
        self._at: dict[str, list[int]] | None = None
        self._run()

    def _sized(self, shape: Shape) -> tuple[int, int]:
        """(value_size, value_color) of a shape, once per distinct shape object (the parser
        shares one per distinct shape text; the values keep each alive, so an id is not reused
        meanwhile)."""
        hit = self._by_shape.get(id(shape))
        if hit is None:
            hit = self._by_shape[id(shape)] = (
                value_size(shape, self.backend),
                value_color(shape),
            )
        return hit

    # -- allocations -----------------------------------------------------------------------------
    def _new(
        self, buffer: list[HloValue], kind: str, size: int, *, parameter_aliased: bool = False
    ) -> Allocation:
        # One value: a _OneValue, until another joins (`_add`); the ranges: none until the
        # first is placed, and none ever where nothing is placed later (not `reusable`: its
        # ranges are never read). NOTE: [value memory] in memory/dataflow.py.
        a = Allocation(
            len(self.allocations),
            size,
            self.color[buffer[0].id],
            kind,
            parameter_aliased,
            values=_OneValue(buffer[0].id) if len(buffer) == 1 else {},
            ranges=_NO_RANGES,
        )
        self.allocations.append(a)
        for v in buffer:
            self._add(a, v, 0)
        return a

    def _add(self, a: Allocation, v: HloValue, offset: int) -> None:
        values = a.values
        if isinstance(values, _OneValue):
            first = values.id
            if v.id != first or offset:  # (else `_new` placed it)
                a.values = {first: 0, v.id: offset}
        else:
            cast(dict[int, int], values)[v.id] = offset
        r = self.lr.ranges.get(v.id)
        if r is None:
            a.unranged = True
        elif a.reusable:
            placed = (r.start, r.end, v.id)
            if a.ranges is _NO_RANGES:
                a.ranges = [placed]
            else:
                bisect.insort(a.ranges, placed)
            self._reuse.add_range(a, r.start, r.end)
        self.allocation_of_value[v.id] = a
        if v.live_out:
            a.live_out = True

    def _post_order(self) -> dict[int, int]:
        """Positions in MakeInstructionPostOrder of the global computations, entry first."""
        pos: dict[int, int] = {}
        n = 0
        df = self.df
        comps = df.global_computations[::-1]
        comps.sort(key=lambda c: c is not df.entry)
        for c in comps:
            # Operands by name, as Computation.resolve reads them (the first of a name).
            by_name: dict[str, Instruction] = {}
            for i in reversed(c.instructions):
                by_name[i.name] = i
            used = {o.name for i in c.instructions for o in i.operands}
            visited: set[str] = set()
            for start in c.instructions:
                name = start.name
                if name in used or name in visited:
                    continue
                # Depth first over operands in order; an instruction is marked when found (it is
                # entered right after, as the next one on the stack).
                visited.add(name)
                stack: list[tuple[Instruction, Iterator[Operand]]] = [(start, iter(start.operands))]
                while stack:
                    inst, rest = stack[-1]
                    for o in rest:
                        name = o[0]  # Operand.name
                        if name not in visited:
                            nxt = by_name.get(name)
                            if nxt is not None:
                                visited.add(name)
                                stack.append((nxt, iter(nxt.operands)))
                                break
                    else:
                        stack.pop()
                        pos[id(inst)] = n
                        n += 1
            for i in c.instructions:
                if id(i) not in pos:
                    pos[id(i)] = n
                    n += 1
        return pos

    def _run(self) -> None:
        df, alias = self.df, self.alias
        post = self._post_order()
        kinds, size, live_out = df.kinds, self.buffer_size, self.buffer_live_out
        tables_last = self.backend.tables_sort_last
        keyed: list[tuple[int, bool, int, int]] = []
        for n, b in enumerate(alias.buffers):
            if kinds.get(b[0].computation.name) != "global":
                continue
            if len(b) == 1:
                first = post.get(id(b[0].instruction), 1 << 40)
            else:
                first = min(post.get(id(v.instruction), 1 << 40) for v in b)
            z = size[n]
            if tables_last and any(
                isinstance(v.shape, TupleShape) or _offload_context(v) for v in b
            ):
                z = 0  # pointer tables and offload contexts after every other buffer
            keyed.append((-z, not live_out[n], first, n))
        keyed.sort()  # n last: the order of a stable sort on the first three
        global_buffers = [k[3] for k in keyed]
        del post, keyed  # not needed by the heap simulation, where memory peaks
        allocation_indices: list[int] = []
        sequential: list[int] = []
        for n in global_buffers:
            self._assign_one(n, allocation_indices, sequential)
        self._heap(sequential)
        # Thread-local computations: one allocation per value (each its own buffer, with no
        # live range). They come after the heap's allocations in the list (as the corpus's
        # assignments show), and their count shapes where std::partition moves the temp
        # allocations.
        allocations = self.allocations
        for opcode, shape in df.thread_local_values:
            hit = self._sized(shape)
            kind = "constant" if opcode == CONSTANT else "thread_local"
            allocations.append(
                Allocation(
                    len(allocations),
                    hit[0],
                    hit[1],
                    kind,
                    values=_NOTHING_PLACED,
                    ranges=_NO_RANGES,
                    unranged=True,
                )
            )
        self._combine()

    def _assign_one(self, n: int, allocation_indices: list[int], sequential: list[int]) -> None:
        buffer = self.alias.buffers[n]
        size = self.buffer_size[n]
        entry = self.df.entry
        for v in buffer:
            if v.instruction.opcode == CONSTANT:
                self._new(buffer, "constant", size)
                return
            if v.instruction.opcode == PARAMETER and v.computation is entry:
                aliased = self.alias.is_donated(v.instruction.parameter_number or 0, v.index)
                a = self._new(buffer, "parameter", size, parameter_aliased=aliased)
                if aliased:
                    allocation_indices.append(a.index)
                    self._reuse.register(a)
                return
        if (
            isinstance(buffer[0].shape, TupleShape)
            if len(buffer) == 1
            else any(isinstance(v.shape, TupleShape) for v in buffer)
        ):
            self._new(buffer, "tuple", size)
            return
        color = self.buffer_color[n]
        if (
            not self.backend.reuse_allocations
            and color == 0
            and size > 0  # empty contexts stay in the heap (offset 0 in the compiler's file)
            and any(_offload_context(v) for v in buffer)
        ):
            # libtpu gives the HBM context of an async op on another execution thread
            # (SparseCore's gather offload) an allocation of its own, not a heap chunk (its S(2)
            # context stays in the heap), and later buffers that fit and do not interfere reuse
            # it (tpu-gen3 v6e sort_cumsum_heavy: a loop counter in the 64 KiB context's
            # allocation, placed after the tuple tables).
            a = self._new(buffer, "temp", size)
            self._context_allocations.append(a.index)
            return
        if not self.backend.reuse_allocations and self._context_allocations:
            for k in self._context_allocations:
                if self._maybe_assign(self.allocations[k], n):
                    return
        if self.backend.reuse_allocations:
            value_set = self.df.value_set
            for v in buffer:
                if v.index != ():
                    continue
                c, i = v.computation, v.instruction
                for op in i.operands:
                    vs = value_set(c, op.name)
                    idx: Index = (op.index,) if op.index is not None else ()
                    for ov in vs.get(idx, ()):
                        held = self.allocation_of_value[ov.id]
                        if held is not None and self._maybe_assign(held, n):
                            return
            allocations = self.allocations
            screen = self.lr.ranges.get(buffer[0].id) if len(buffer) == 1 else None
            candidates: Iterable[int]
            if not allocation_indices:  # nothing registered (the index holds the same ones)
                candidates = ()
            elif screen is not None:
                # A cheap screen first (_passes_screen), over the allocations the index finds.
                candidates = self._reuse.candidates(screen.start, screen.end)
            else:
                candidates = reversed(allocation_indices)
            for k in candidates:
                a = allocations[k]
                if size > a.size or color != a.color:
                    continue
                if screen is not None and not _passes_screen(a, screen.start, screen.end):
                    continue
                if self._maybe_assign(a, n):
                    return
        if not self.buffer_live_out[n]:
            sequential.append(n)
            return
        a = self._new(buffer, "output", size)
        allocation_indices.append(a.index)
        self._reuse.register(a)

    def _maybe_assign(self, a: Allocation, n: int) -> bool:
        """MaybeAssignBuffer: same color, fits, writable, no live-range interference."""
        size = self.buffer_size[n]
        if size > a.size or self.buffer_color[n] != a.color or not a.reusable or a.unranged:
            return False
        buffer = self.alias.buffers[n]
        values = self.df.values
        ranges = a.ranges
        lr_ranges = self.lr.ranges
        for new in buffer:
            r = lr_ranges.get(new.id)
            if r is None:
                return False
            # Only values whose ranges reach [r.start, r.end] can interfere (module docstring of
            # Allocation.ranges); the copy rule below still reads every assigned value.
            k = bisect.bisect_right(ranges, (r.end, 1 << 62, 1 << 62))
            while k > 0 and ranges[k - 1][1] >= r.start:
                k -= 1
                if self._interferes(new, values[ranges[k][2]]):
                    return False
            if new.instruction.opcode == COPY:
                # XLA: no copy into the allocation of a value it copies (one at its operand).
                # Read from the operand's side: few values sit there, thousands in `a`.
                at = self._values_at()
                for o in new.instruction.operands:
                    for assigned_id in at.get(o.ref if o.index is not None else o.name, ()):
                        if (
                            assigned_id in a.values
                            and values[assigned_id].computation is new.computation
                        ):
                            return False
        if self.buffer_live_out[n] and a.size != size:
            return False
        for v in buffer:
            self._add(a, v, 0)
        return True

    def _values_at(self) -> dict[str, list[int]]:
        """Instruction name -> the values with a position at an instruction of that name (in
        any computation), made on first use."""
        if self._at is None:
            self._at = {}
            for _, pi, _, values in self.df.positions():
                self._at.setdefault(pi.name, []).extend(v.id for v in values)
        return self._at

    def _interferes(self, b1: HloValue, b2: HloValue) -> bool:
        """BufferAssigner::LiveRangeInterferes over HloLiveRange intervals."""
        r1, r2 = self.lr.ranges.get(b1.id), self.lr.ranges.get(b2.id)
        if r1 is None or r2 is None:
            return True
        if r1.start > r2.end or r2.start > r1.end:
            return False
        if r1.end == r2.start:
            return not self._share_as_operand(b2, r1.end_position or b1.defining_position)
        if r2.end == r1.start:
            return not self._share_as_operand(b1, r2.end_position or b2.defining_position)
        return True

    def _share_as_operand(self, user: HloValue, end_position: tuple) -> bool:
        pc, pi, pidx = end_position
        ui = user.instruction
        if ui.opcode == COPY or user.computation is not pc:
            return False
        if not any(_reads(o, pi.name) for o in ui.operands):
            return False
        return self.can_share(pc, pi, pidx, ui, user.index)

    # -- CanShareOperandBufferWithUser -----------------------------------------------------------
    def can_share(
        self,
        c: Computation,
        operand: Instruction,
        operand_index: Index,
        user: Instruction,
        user_index: Index,
    ) -> bool:
        """HloDataflowAnalysis::CanShareOperandBufferWithUser, in its order. Backend hints
        (AliasInfo::MayAlias): on TPU no sort shares, nor an output fusion merely elementwise
        on the operand (Backend.sort_shares_operand, fusion_elementwise_shares), nor, but on
        v5p, anything a copy's result (copy_result_shares); on GPU,
        NVPTXAliasInfo::MayAlias (`memory/gpu_alias.py`) decides fusions, in-place collectives
        and custom calls. Deviation: a call never shares (XLA allows it when the callee's
        root is elementwise on the operand and that is its only other use)."""
        op = user.opcode
        if (
            op == CUSTOM_CALL
            and user_index == (1,)
            and custom_call_target(user) in CUBLAS_LT_TARGETS
        ):
            return False  # cuBLASLt's workspace
        if operand.opcode == CONSTANT:
            return False
        if operand.opcode == COPY and not self.backend.copy_result_shares:
            return False
        # `x#1` (NOTE: [tuple-element operands]) reads element 1 of x only: XLA's operand is
        # then the get-tuple-element, of that element's shape, which `operand` may be itself
        # (restored, named `x#1`: memory/schedule.py).
        numbers = [
            k
            for k, o in enumerate(user.operands)
            if (o.name == operand.name and (o.index is None or operand_index[:1] == (o.index,)))
            or _reads(o, operand.name)
        ]
        if not numbers:
            return False
        first = user.operands[numbers[0]]
        element = first.index is not None and first.name == operand.name
        a = subshape(operand.shape, operand_index)
        b = subshape(user.shape, user_index)
        shapes_equal = a is not None and b is not None and (a is b or a == b)
        if shapes_equal:
            # Must-alias (in-place) pairs share whatever the backend; a pair for this output
            # that names another operand does not decide: the rules below do.
            for out_index, k, op_index in self.alias.pairs(user):
                if out_index == user_index and k in numbers and op_index == operand_index:
                    return True
        if op == SORT and not self.backend.sort_shares_operand:
            return False
        if self.backend.gpu_alias_hints:
            body = self._fused_body(user) if op == FUSION else None
            read = subshape(operand.shape, operand_index[:1]) if element else operand.shape
            hint = gpu_may_alias(
                numbers, read, user, user_index, body, self._users(body) if body else {}
            )
            if hint is not None:
                return hint
        if not shapes_equal:
            return False
        return self._share_by_opcode(c, operand, user, numbers, user_index)

    def _share_by_opcode(
        self,
        c: Computation,
        operand: Instruction,
        user: Instruction,
        numbers: list[int],
        user_index: Index,
    ) -> bool:
        """The opcode rules that end CanShareOperandBufferWithUser, once the shapes agree;
        `numbers` are the operand numbers where `user` reads `operand`."""
        op = user.opcode
        if op == FUSION:
            decided = self._fusion_can_share(user, numbers[0])
            if decided is not None:
                return decided
            if not self.backend.fusion_elementwise_shares:
                return False
            return self._fusion_elementwise_on(user, numbers[0])
        if op in SHARES_ANY_OPERAND:
            return True
        if op == ALL_REDUCE and self.backend.all_reduce_shares:
            return len(user.operands) == 1
        in_place = SHARES_OPERAND.get(op)
        if in_place is not None:
            return numbers == [in_place]
        if op == SORT:
            if len(self._users(c).get(operand.name, ())) != 1:
                return False
            if len(user.operands) == 1:
                return True
            return len(numbers) == 1 and bool(user_index) and user_index[0] == numbers[0]
        # Deviation: a call never shares (module docstring of can_share).
        return op != CALL and elementwise_on_operand(op, numbers[0])

    def _computation_of(self, value_id: int) -> str:
        return self.df.values[value_id].computation.name

    def _users(self, c: Computation) -> dict[str, list[Instruction]]:
        cache = self._users_cache
        hit = cache.get(c.name)
        if hit is not None and hit[0] is c:
            return hit[1]
        got: dict[str, list[Instruction]] = {}
        for i in c.instructions:
            for o in i.operands:
                got.setdefault(o.name, []).append(i)
        # Bounded: a streamed module's fusion bodies are read back on demand and dropped
        # (report/skeleton.SpooledModule); this must not keep them all alive.
        if len(cache) >= 32:
            cache.clear()
        cache[c.name] = (c, got)
        return got

    def _fusion_can_share(self, fusion: Instruction, k: int) -> bool | None:
        """The fusion rules of CanShareOperandBufferWithUser: loop and input fusions, and output
        fusions rooted in an add of a dot or convolution; None where XLA goes on to the
        general rules (other output fusions, custom fusions)."""
        found = self._fused_param(fusion, k)
        if found is None:
            return False
        body, param = found
        kind = fusion.fusion_kind
        users = self._users(body)
        if kind in ("kLoop", "kInput"):
            return _transitive_uses_elementwise(param, users)
        root = body.root
        if kind == "kOutput" and root is not None and root.opcode == ADD:
            ops = [body.resolve(o) for o in root.operands]
            matched = next(
                (j for j, o in enumerate(ops) if o is not None and o.opcode in (CONVOLUTION, DOT)),
                None,
            )
            if matched is None:
                return False
            other = 1 if matched == 0 else 0
            uses = users.get(param.name, [])
            return (
                len(uses) == 1
                and uses[0] is root
                and [j for j, o in enumerate(root.operands) if o.name == param.name] == [other]
            )
        return None

    def _fusion_elementwise_on(self, fusion: Instruction, k: int) -> bool:
        """HloFusionInstruction::IsElementwiseOnOperand: every instruction between fused
        parameter k and the root (breadth first) is elementwise on what it reads."""
        found = self._fused_param(fusion, k)
        if found is None:
            return False
        body, param = found
        users = self._users(body)
        seen = {param.name}
        queue = [param]
        while queue:
            cur = queue.pop()
            for user in users.get(cur.name, ()):
                if user.name in seen:
                    continue
                if user.opcode not in ELEMENTWISE and not any(
                    o.name == cur.name and elementwise_on_operand(user.opcode, j)
                    for j, o in enumerate(user.operands)
                ):
                    return False
                seen.add(user.name)
                queue.append(user)
        return True

    def _fused_param(self, fusion: Instruction, k: int) -> tuple[Computation, Instruction] | None:
        """The fused body and its parameter k (HloInstruction::fused_parameter)."""
        body = self._fused_body(fusion)
        if body is None:
            return None
        param = next((p for p in body.parameter_instructions if p.parameter_number == k), None)
        return None if param is None else (body, param)

    def _fused_body(self, fusion: Instruction) -> Computation | None:
        names = fusion.called_computations
        return self.df.module.computation(names[0]) if names else None

    # -- heap simulation -------------------------------------------------------------------------
    def _heap(self, sequential: list[int]) -> None:
        df, lr, alias = self.df, self.lr, self.alias
        by_color: dict[int, list[int]] = {}
        for n in sequential:
            for v in alias.buffers[n]:
                if v.id in lr.ranges:
                    by_color.setdefault(self.buffer_color[n], []).append(v.id)
        ranges = lr.ranges
        values = df.values

        def operands_of(vid: int) -> list[int]:
            v = values[vid]
            c, i = v.computation, v.instruction
            out: list[int] = []
            for op in i.operands:
                # `x#1`: the restored get-tuple-element's set, element 1 of x
                vs = df.value_set(c, op.ref if op.index is not None else op.name)
                for ov in vs.get((), ()):
                    out.append(ov.id)
            return out

        def can_share(operand_id: int, user_id: int) -> bool:
            o, u = values[operand_id], values[user_id]
            ui = u.instruction
            if ui.opcode == COPY or o.computation is not u.computation:
                return False
            if not any(op.name == o.instruction.name for op in ui.operands):
                return False
            return self.can_share(o.computation, o.instruction, o.index, ui, u.index)

        def can_share_msa(operand_id: int, user_id: int) -> bool:
            """can_share, and in a memory-space-assignment space also an operand that reaches
            its user through a copy-done (the prefetch libtpu inserted): MSA lets the user take
            the prefetched copy's memory where it dies (HeapSimulator's IsUserOf check, which
            sees the copy-done and not the copy-start defining the value, refuses it)."""
            if can_share(operand_id, user_id):
                return True
            o, u = values[operand_id], values[user_id]
            ui = u.instruction
            if ui.opcode == COPY or o.computation is not u.computation:
                return False
            for ref in ui.operands:
                op = o.computation.get(ref.name)
                if (
                    op is not None
                    and op.opcode == COPY_DONE
                    and [v.id for v in df.value_set(o.computation, op.name).get((), ())]
                    == [operand_id]
                ):
                    return self.can_share(o.computation, op, (), ui, u.index)
            return False

        views = frozenset(
            v.id
            for v in values
            if v.index == ()
            and v.instruction.opcode == CUSTOM_CALL
            and custom_call_target(v.instruction) in self.backend.concat_views
        )
        for color in sorted(by_color):
            ids = by_color[color]
            buffer_sizes = {n: self.buffer_size[n] for n in set(alias.buffer_of[i] for i in ids)}

            def simulate(
                share: Callable[[int, int], bool],
                ids: list[int] = ids,
                buffer_sizes: dict[int, int] = buffer_sizes,
            ) -> Events:
                return run_heap_simulation(
                    ids,
                    ranges,
                    lr.end_time,
                    self.size,
                    alias.buffer_of,
                    buffer_sizes,
                    operands_of,
                    share,
                    views,
                )

            events = simulate(can_share_msa if color in self.backend.msa_spaces else can_share)
            align = (
                self.backend.alignment if color == 0 or self.backend.name != "tpu" else _VMEM_ALIGN
            )
            result = choose_best_fit(events, align, self.backend.heap_order if color == 0 else None)
            peak, _ = peak_of_trace(events, self.backend.peak_holds_shared)
            if color in self.backend.msa_spaces:
                # libtpu's peak counts no value of this space in an operand's memory, though
                # its placement shares it (jax012-tpu adam_donate: the in-place weight updates
                # in VMEM, allocation 1.5 MiB, counted 2.5 MiB; tpu-gen3 embed_scatter_grad on
                # v6e and v5p, 0.76 and 0.68 of jax's peak with the sharing, exact without):
                # the trace for its peak is replayed without sharing.
                shares = any(e[0] == "share" for e in events.trace)
                unshared = simulate(_never) if shares else events
                peak = msa_trace_peak(
                    unshared,
                    alias.buffer_of,
                    self._computation_of,
                    ranges,
                    lr.unchained_end,
                )
            self.heaps[color] = SpaceHeap(color, result.heap_size, peak)
            del events
            placed: dict[int, int] = {}
            a = Allocation(len(self.allocations), result.heap_size, color, "temp", values=placed)
            self.allocations.append(a)
            for vid, off in result.offsets.items():
                placed[vid] = off
                self.allocation_of_value[vid] = a
            for vid in ids:
                if vid not in placed:
                    placed[vid] = 0
                    self.allocation_of_value[vid] = a

    def _combine(self) -> None:
        """CombineTempAllocations after libstdc++'s std::partition (bidirectional version)."""
        allocs = list(self.allocations)
        first, last = 0, len(allocs)
        while True:
            while first != last and not allocs[first].preallocated_temp:
                first += 1
            if first == last:
                break
            last -= 1
            while first != last and allocs[last].preallocated_temp:
                last -= 1
            if first == last:
                break
            allocs[first], allocs[last] = allocs[last], allocs[first]
            first += 1
        combined: dict[int, int] = {}
        for a in allocs[first:]:
            align = self.backend.alignment
            if a.color not in combined:
                combined[a.color] = a.size
            else:
                base = -(-combined[a.color] // align) * align
                combined[a.color] = base + a.size
        self.temp_allocation_bytes = combined


_NEVER = (1 << 63) - 1  # the end of an allocation's last gap (int64 max)
_BLOCK = 32  # allocations per block of _ReuseIndex
_SUPER = 32  # blocks per super-block of _ReuseIndex


class _ReuseIndex:
    """The reusable allocations (donated parameters, outputs) in the order BufferAssigner tries
    them, and the free gaps between their values' live ranges: `candidates` finds those that
    may take a buffer living over [start, end] without reading every allocation (XLA's loop
    over the allocation list is quadratic in the buffers).

    BufferAssigner's screen rejects an allocation whose last range starting before `end` ends
    after `start`. The gaps of an allocation are (-1, first start), (range end, next range's
    start) ... (last end, _NEVER); an allocation the screen passes has a gap holding
    [start, end], so the allocations with such a gap are a superset (equal when, as
    MaybeAssignBuffer ensures, the ranges only touch), and the screen itself still runs on each.

    The allocations are cut into blocks of _BLOCK in registration order. Each block keeps a
    cover of its gaps: a staircase of (start, end) pairs, starts ascending and ends strictly
    ascending, such that every gap lies in one of them; some gap of the block can hold
    [start, end] only if the last pair starting at or before `start` ends at or after `end`,
    one bisect. A query reads that per block, last block first, and the allocations of the
    blocks that pass. Splitting a gap leaves the cover valid (the pieces lie in the old gap),
    so it costs nothing; where the cover passes a block in which no gap holds the range,
    `_tighten` replaces the pairs at fault by the gaps they alone cover now. The blocks are
    grouped by _SUPER into super-blocks, each with a cover of its blocks' gaps read first (the
    same staircase, rebuilt from its blocks' covers where it passes a range none holds).
    """

    def __init__(self) -> None:
        self.order: list[int] = []  # allocation indices, in the order of registration
        self.position: dict[int, int] = {}  # allocation index -> order of registration
        self.starts: list[list[int]] = []  # per registered allocation: its gaps' starts
        self.ends: list[list[int]] = []  # per registered allocation: its gaps' ends
        #: Per registered allocation: starts and ends both ascend, so the gap with the last
        #: start <= s has the largest end among those (one bisect answers; else a scan).
        self.sorted: list[bool] = []
        self.cover_start: list[list[int]] = []  # per block: the cover's starts
        self.cover_end: list[list[int]] = []  # per block: the cover's ends
        #: Per super-block (_SUPER blocks): a cover of its blocks' gaps, read before them.
        self.super_start: list[list[int]] = []
        self.super_end: list[list[int]] = []

    def register(self, a: Allocation) -> None:
        pos = len(self.order)
        self.position[a.index] = pos
        self.order.append(a.index)
        self.starts.append([])
        self.ends.append([])
        self.sorted.append(True)
        if pos % _BLOCK == 0:
            self.cover_start.append([])
            self.cover_end.append([])
        if pos % (_BLOCK * _SUPER) == 0:
            self.super_start.append([])
            self.super_end.append([])
        self._gaps(a)

    def add_range(self, a: Allocation, start: int, end: int) -> None:
        """A value's range joined `a`: split the gap holding it (or, should no gap hold it,
        recompute the allocation's gaps)."""
        pos = self.position.get(a.index)
        if pos is None:
            return
        starts, ends = self.starts[pos], self.ends[pos]
        k = bisect.bisect_right(starts, start) - 1
        if k >= 0:
            gap_start, gap_end = starts[k], ends[k]
            if end <= gap_end:
                ends[k] = start
                starts.insert(k + 1, end)
                ends.insert(k + 1, gap_end)
                if self.sorted[pos] and not (
                    (k == 0 or ends[k - 1] <= start)
                    and start <= gap_end
                    and gap_start <= end
                    and (k + 2 == len(starts) or end <= starts[k + 2])
                ):
                    self.sorted[pos] = False
                # The pieces lie in the old gap, which the cover covers, unless the range
                # runs backwards (start > end): then a piece reaches further.
                if start > gap_end:
                    self._cover(pos, gap_start, start)
                if end < gap_start:
                    self._cover(pos, end, gap_end)
                return
        self._gaps(a)

    def _gaps(self, a: Allocation) -> None:
        """Replaces the gaps of `a` with those of its current ranges."""
        pos = self.position[a.index]
        bounds = [-1, *(x for r in a.ranges for x in (r[0], r[1])), _NEVER]
        starts, ends = bounds[0::2], bounds[1::2]
        self.starts[pos], self.ends[pos] = starts, ends
        self.sorted[pos] = all(x <= y for x, y in itertools.pairwise(starts)) and all(
            x <= y for x, y in itertools.pairwise(ends)
        )
        for s, e in zip(starts, ends):
            self._cover(pos, s, e)

    def _cover(self, pos: int, start: int, end: int) -> None:
        """Adds the gap [start, end] of allocation `pos` to its block's and super-block's
        covers."""
        b = pos // _BLOCK
        _add_to_cover(self.cover_start[b], self.cover_end[b], start, end)
        _add_to_cover(self.super_start[b // _SUPER], self.super_end[b // _SUPER], start, end)

    def candidates(self, start: int, end: int) -> Iterator[int]:
        """Allocation indices with a gap holding [start, end], last registered first, found
        as consumed (the caller stops at the first that takes the buffer, and thousands may
        qualify; it changes the index only then). A super-block whose cover does not hold
        [start, end] is passed over whole: a wide tuple's outputs, all live to the end, made
        this a bisect per block and per buffer (quadratic); one that passes with no candidate
        gets its cover rebuilt from its blocks' (which that pass tightened)."""
        bisect_right = bisect.bisect_right
        blocks = len(self.cover_start)
        for sb in range(len(self.super_start) - 1, -1, -1):
            cs = self.super_start[sb]
            i = bisect_right(cs, start) - 1
            if i < 0 or self.super_end[sb][i] < end:
                continue
            found = False
            for b in range(min(blocks, (sb + 1) * _SUPER) - 1, sb * _SUPER - 1, -1):
                for k in self._block_candidates(b, start, end):
                    found = True
                    yield k
            if not found:
                self._rebuild_super(sb)

    def _rebuild_super(self, sb: int) -> None:
        """Super-block sb's cover: the pairs of its blocks' covers that no other holds."""
        gaps: list[tuple[int, int]] = []
        for b in range(sb * _SUPER, min(len(self.cover_start), (sb + 1) * _SUPER)):
            gaps.extend(zip(self.cover_start[b], [-e for e in self.cover_end[b]]))
        self.super_start[sb], self.super_end[sb] = _staircase(gaps, -(1 << 64))

    def _block_candidates(self, b: int, start: int, end: int) -> Iterator[int]:
        """`candidates` of block b (its cover tightened if it passes with none)."""
        bisect_right = bisect.bisect_right
        order, starts_of, ends_of, is_sorted = self.order, self.starts, self.ends, self.sorted
        count = len(order)
        cs = self.cover_start[b]
        i = bisect_right(cs, start) - 1
        if i < 0 or self.cover_end[b][i] < end:
            return
        found = False
        first = b * _BLOCK
        for pos in range(min(count, first + _BLOCK) - 1, first - 1, -1):
            if is_sorted[pos]:
                k = bisect_right(starts_of[pos], start) - 1
                if k < 0 or ends_of[pos][k] < end:
                    continue
            elif not any(s <= start and e >= end for s, e in zip(starts_of[pos], ends_of[pos])):
                continue
            found = True
            yield order[pos]
        if not found:
            self._tighten(b, start, end)

    def _tighten(self, b: int, start: int, end: int) -> None:
        """Block b's cover passes [start, end] and none of its gaps holds it: replace each pair
        at fault by the current gaps it alone covers (those starting before the next pair and
        ending after the previous one), read with bisects."""
        cs, ce = self.cover_start[b], self.cover_end[b]
        owners = range(b * _BLOCK, min(len(self.order), (b + 1) * _BLOCK))
        below = len(cs)
        while True:
            i = bisect.bisect_right(cs, start) - 1
            if i < 0 or ce[i] < end or i >= below:
                return
            low = cs[i]
            high = cs[i + 1] if i + 1 < len(cs) else _NEVER + 1
            floor = ce[i - 1] if i else -(1 << 64)
            found: list[tuple[int, int]] = []  # (start, -end)
            for pos in owners:
                starts, ends = self.starts[pos], self.ends[pos]
                if self.sorted[pos]:
                    j0 = bisect.bisect_left(starts, low)
                    j1 = bisect.bisect_left(starts, high, j0)
                    j = bisect.bisect_right(ends, floor, j0, j1)
                    found.extend(zip(starts[j:j1], [-e for e in ends[j:j1]]))
                else:
                    found.extend(
                        (s, -e) for s, e in zip(starts, ends) if low <= s < high and e > floor
                    )
            keep_start, keep_end = _staircase(found, floor)
            cs[i : i + 1] = keep_start
            ce[i : i + 1] = keep_end
            below = i  # the pairs just placed are gaps: none holds [start, end]


def _add_to_cover(cs: list[int], ce: list[int], start: int, end: int) -> None:
    """Adds [start, end] to a staircase cover (starts `cs` ascending, ends `ce` strictly
    ascending), dropping the pairs it holds."""
    i = bisect.bisect_right(cs, start)
    if i and ce[i - 1] >= end:
        return  # already covered
    lo = i - 1 if i and cs[i - 1] == start else i
    hi = lo
    while hi < len(cs) and ce[hi] <= end:
        hi += 1
    cs[lo:hi] = [start]
    ce[lo:hi] = [end]


def _staircase(gaps: list[tuple[int, int]], floor: int) -> tuple[list[int], list[int]]:
    """The gaps, given as (start, -end), that no other contains and that end after `floor`
    (starts, ends): sorted so, a gap is kept when its end passes every end before it."""
    gaps.sort()
    ends = [-g[1] for g in gaps]
    before = [floor, *itertools.accumulate(ends, max)]
    kept = [(g[0], e) for g, e, b in zip(gaps, ends, before) if e > b and e > floor]
    return [g[0] for g in kept], [g[1] for g in kept]


def _never(operand_id: int, user_id: int) -> bool:
    return False


def _reads(o: Operand, name: str) -> bool:
    """Whether operand `o` is the instruction `name`: `x`, or `x#1` read through the
    get-tuple-element `x#1` that memory/schedule.py restores."""
    return o.name == name if o.index is None else o.ref == name


def _passes_screen(a: Allocation, start: int, end: int) -> bool:
    """BufferAssigner's cheap screen: the last range of `a` starting before `end` must not
    end after `start` (a strict overlap can never be shared)."""
    if not a.ranges:
        return True
    j = bisect.bisect_left(a.ranges, (end,))
    return not (j and a.ranges[j - 1][1] > start)


def _transitive_uses_elementwise(start: Instruction, users: dict[str, list[Instruction]]) -> bool:
    """AreTransitiveUsesElementwiseOrTuple: every transitive user reads elementwise (or tuples)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        cur = stack.pop()
        seen.add(cur.name)
        for user in users.get(cur.name, ()):
            for k, o in enumerate(user.operands):
                if (
                    o.name == cur.name
                    and not elementwise_on_operand(user.opcode, k)
                    and user.opcode != TUPLE
                ):
                    return False
            if user.name not in seen:
                stack.append(user)
    return True
