"""GPU buffer-sharing hints: GpuAliasInfo::MayAlias / NVPTXAliasInfo::MayAlias
(xla/service/gpu/alias_info.cc, nvptx_alias_info.cc, formerly buffer_sharing.cc).

On GPU a fusion's output may reuse an operand's buffer exactly when this hint says so; the
generic rules of CanShareOperandBufferWithUser are not consulted for fusions. The hint walks the
fused body from the operand's parameter (breadth first) and allows only paths that keep the
iteration order: elementwise ops (no copy), bitcasts, a scatter or sort root read through its
operand, a dynamic-update-slice root whose dynamic-slices read the very slice it writes, and,
for the reduction emitter (which computes the reduction before any other output), a hero
reduction.

Deviations: HloFusionAnalysis is approximated. The emitter is the reduction emitter when some
root's hero (found through intermediate ops as FindNonTrivialHero does) is a reduce from or to
contiguous dimensions that the unnested emitter handles (IsReductionFromOrToContiguousDimensions,
IsUnnestedReductionFasterThanElemental with a warp of 32); a hero below intermediates is taken as
race free (optimized GPU dumps have had their reductions split to fit). The MPS graph kind
(Apple Metal) is not modelled.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import replace

from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.size import element_storage_bits
from hlo_layout.memory.alias import uses_nvshmem
from hlo_layout.memory.dataflow import Index, subshape
from hlo_layout.syntax.attrs import int_list
from hlo_layout.syntax.opcodes import (
    ALL_REDUCE,
    BITCAST,
    COLLECTIVE_BROADCAST,
    COPY,
    CUSTOM_CALL,
    DYNAMIC_SLICE,
    DYNAMIC_UPDATE_SLICE,
    ELEMENTWISE,
    FUSION,
    PARAMETER,
    REDUCE,
    SCATTER,
    SORT,
    TRANSPOSE,
    TUPLE,
    elementwise_on_operand,
)
from hlo_layout.syntax.shape import ArrayShape, Layout, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction

#: cuBLASLt's matmul, whose bias operand (2) may be overwritten in place (beta != 0).
CUBLAS_LT_MATMUL = "__cublas$lt$matmul"
#: Every cuBLASLt matmul: output 1 is its workspace, which never shares (CanShareBufferWithUser).
CUBLAS_LT_TARGETS = (CUBLAS_LT_MATMUL, "__cublas$lt$matmul$f8")
WARP_SIZE = 32

Users = dict[str, list[Instruction]]


def gpu_may_alias(
    numbers: Sequence[int],
    operand_shape: Shape | None,
    user: Instruction,
    user_index: Index,
    body: Computation | None,
    users: Users,
) -> bool | None:
    """NVPTXAliasInfo::MayAlias: True/False where the GPU backend decides, None where the
    generic rules do. `numbers` are the operand numbers at which `user` reads the operand (its
    occurrences), `operand_shape` the operand's whole shape (HloInstruction::shape()); `body`
    is the fused computation of a fusion `user` (None otherwise), `users` its name → users."""
    op = user.opcode
    if op == ALL_REDUCE and uses_nvshmem(user):
        return False
    if op in (ALL_REDUCE, COLLECTIVE_BROADCAST):
        return len(user.operands) == 1 or (len(user_index) == 1 and user_index[0] in numbers)
    if op == CUSTOM_CALL:
        if custom_call_target(user) == CUBLAS_LT_MATMUL:
            return _gemm_beta(user) != 0.0 and list(numbers) == [2] and tuple(user_index) == (0,)
        return False
    if op == FUSION:
        if body is None or operand_shape is None:
            return False
        return fusion_can_share_hint(operand_shape, user, numbers[0], user_index, body, users)
    return None


def fusion_can_share_hint(
    operand_shape: Shape,
    fusion: Instruction,
    k: int,
    user_index: Index,
    body: Computation,
    users: Users,
) -> bool:
    """FusionCanShareBufferHint for fusion operand `k` (its first occurrence) and output
    `user_index`."""
    out_shape = subshape(fusion.shape, user_index)
    if out_shape is None:
        return False
    if not _same_shape(operand_shape, out_shape):
        if not isinstance(operand_shape, ArrayShape) or not isinstance(out_shape, ArrayShape):
            return False
        if math.prod(operand_shape.dims) != math.prod(out_shape.dims):
            return False
        if element_storage_bits(operand_shape) != element_storage_bits(out_shape):
            return False
    param = next((p for p in body.parameter_instructions if p.parameter_number == k), None)
    root = body.root
    if param is None or root is None:
        return False
    output = root
    for i in user_index:
        if output.opcode != TUPLE:
            break
        nxt = body.resolve(output.operands[i]) if i < len(output.operands) else None
        if nxt is None:
            return False
        output = nxt
    non_bitcast_root = output
    if output.opcode == BITCAST and output.operands:
        non_bitcast_root = body.resolve(output.operands[0]) or output
    roots = _roots(body, root)
    reduction_hero = None if fusion.fusion_kind == "kCustom" else _hero_reduction(body, roots)

    queue: deque[Instruction] = deque([param])
    visited = {param.name}
    found = False
    while queue:
        cur = queue.popleft()
        if cur is output:
            found = True  # its other users are still checked
        if cur is reduction_hero:
            continue
        for hlo in users.get(cur.name, ()):
            if hlo.name not in visited:
                visited.add(hlo.name)
                queue.append(hlo)
            names = [o.name for o in hlo.operands]
            at = names.index(cur.name)
            if hlo is non_bitcast_root and hlo.opcode == SCATTER:
                inputs = len(hlo.shape.elements) if isinstance(hlo.shape, TupleShape) else 1
                if at < inputs and names.count(cur.name) == 1:
                    continue
            if hlo is non_bitcast_root and hlo.opcode == SORT and names.count(cur.name) == 1:
                if user_index != (at,):
                    return False
                continue
            if _same_slice_candidate(hlo, non_bitcast_root, body):
                if not _same_slice(hlo, non_bitcast_root):
                    return False
            elif (
                (not elementwise_on_operand(hlo.opcode, at) or hlo.opcode == COPY)
                and hlo.opcode not in (BITCAST, TUPLE)
                and hlo is not reduction_hero
            ) and not (hlo is non_bitcast_root and hlo.opcode == DYNAMIC_UPDATE_SLICE and at == 1):
                return False
    if root.opcode == TUPLE:
        other_reached = False
        transpose_hero = False
        for r in roots:
            if r.name in visited:
                if r is not output:
                    other_reached = True
                if _hero(body, r).opcode in (TRANSPOSE, COPY):
                    transpose_hero = True
        if other_reached and (non_bitcast_root.opcode not in ELEMENTWISE or transpose_hero):
            return False
    return found


def custom_call_target(i: Instruction) -> str | None:
    """A custom call's target, unquoted (None when it names none)."""
    a = i.attr("custom_call_target")
    return None if a is None else a.raw.strip('"')


def _gemm_beta(i: Instruction) -> float:
    """`beta` of a GEMM's backend config (`"beta":1` in its JSON); 0 when absent (proto default)."""
    a = i.attr("backend_config")
    if a is None:
        return 0.0
    raw = a.raw
    at = raw.find('"beta"')
    if at < 0:
        at = raw.find('\\"beta\\"')
        if at < 0:
            return 0.0
    colon = raw.find(":", at)
    j = colon + 1
    while j < len(raw) and raw[j] in ' "\\':
        j += 1
    end = j
    while end < len(raw) and (raw[end].isalnum() or raw[end] in ".-+"):
        end += 1
    try:
        return float(raw[j:end])
    except ValueError:
        return 0.0


def _same_slice_candidate(hlo: Instruction, dus: Instruction, body: Computation) -> bool:
    """A dynamic-slice of the buffer a dynamic-update-slice root writes, of the update's shape."""
    if dus.opcode != DYNAMIC_UPDATE_SLICE or hlo.opcode != DYNAMIC_SLICE:
        return False
    if len(dus.operands) < 2 or not hlo.operands or dus.operands[0].name != hlo.operands[0].name:
        return False
    update = body.resolve(dus.operands[1])
    return update is not None and _same_shape(hlo.shape, update.shape)


def _same_slice(ds: Instruction, dus: Instruction) -> bool:
    """The slice read equals the slice written, or both are single elements."""
    update_shape = ds.shape  # equal to the update's shape (checked by the caller)
    if _effective_scalar(ds.shape) and _effective_scalar(update_shape):
        return True
    starts = [o.name for o in ds.operands[1:]]
    return starts == [o.name for o in dus.operands[2 : 2 + len(starts)]]


def _same_shape(a: Shape, b: Shape) -> bool:
    """ShapeUtil::Equal, a layout the text left out being XLA's default one."""
    if isinstance(a, ArrayShape) and isinstance(b, ArrayShape):
        return _with_layout(a) == _with_layout(b)
    return a == b


def _with_layout(shape: ArrayShape) -> ArrayShape:
    if shape.layout is not None:
        return shape
    return replace(shape, layout=Layout(shape.minor_to_major))


def _effective_scalar(shape: Shape) -> bool:
    return isinstance(shape, ArrayShape) and all(d == 1 for d in shape.dims)


def _roots(body: Computation, root: Instruction) -> list[Instruction]:
    """HloFusionAnalysis's fusion roots: the root, or the elements of a root tuple."""
    if root.opcode != TUPLE:
        return [root]
    out = []
    for o in root.operands:
        r = body.resolve(o)
        if r is not None:
            out.append(r)
    return out


def _intermediate(i: Instruction, body: Computation) -> bool:
    """IsIntermediate (ir_emission_utils.cc) with up to 3 operands: elementwise ops (a copy only
    when it keeps the layout) and bitcasts, through which a root's hero is looked for."""
    if not i.operands or len(i.operands) > 3:
        return False
    if i.opcode == COPY:
        src = body.resolve(i.operands[0])
        return src is not None and src.shape == i.shape
    return i.opcode in ELEMENTWISE or i.opcode == BITCAST


def _hero(body: Computation, root: Instruction) -> Instruction:
    """FindNonTrivialHero, approximately: the first reduce or transpose (or layout-changing
    copy) above `root` through intermediate ops; `root` itself when there is none."""
    queue: deque[Instruction] = deque([root])
    seen = {root.name}
    while queue:
        cur = queue.popleft()
        if cur.opcode in (REDUCE, TRANSPOSE) or (
            cur.opcode == COPY and not _intermediate(cur, body)
        ):
            return cur
        if not _intermediate(cur, body):
            continue
        for o in cur.operands:
            nxt = body.resolve(o)
            if nxt is not None and nxt.name not in seen and nxt.opcode != PARAMETER:
                seen.add(nxt.name)
                queue.append(nxt)
    return root


def _hero_reduction(body: Computation, roots: Sequence[Instruction]) -> Instruction | None:
    """HloFusionAnalysis::FindHeroReduction: the first root's hero that the reduction emitter
    handles, or None when the fusion is not emitted as a reduction."""
    for r in roots:
        hero = _hero(body, r)
        if hero.opcode == REDUCE and _contiguous_reduction(hero, body):
            return hero
    return None


def _contiguous_reduction(reduce: Instruction, body: Computation) -> bool:
    """IsReductionFromOrToContiguousDimensions and IsUnnestedReductionFasterThanElemental."""
    src = body.resolve(reduce.operands[0]) if reduce.operands else None
    if src is None or not isinstance(src.shape, ArrayShape):
        return False
    shape = src.shape
    reduced = _dimensions(reduce)
    if reduced is None:
        return False
    kept = [d for d in range(shape.rank) if d not in reduced]
    m2m = shape.minor_to_major
    if not (_consecutive(m2m, kept) or _consecutive(m2m, sorted(reduced))):
        return False
    is_row, (_, major, minor) = _reduction_dimensions(shape, reduced, kept)
    if is_row:
        return minor >= WARP_SIZE or WARP_SIZE % minor == 0
    return not (
        major < WARP_SIZE
        or (major < 2 * WARP_SIZE and minor < WARP_SIZE)
        or (major < 4 * WARP_SIZE and minor < 8)
        or (major < 8 * WARP_SIZE and minor < 3)
    )


def _dimensions(i: Instruction) -> set[int] | None:
    a = i.attr("dimensions")
    if a is None:
        return None
    try:
        return set(int_list(a))
    except HloLayoutError:
        return None


def _consecutive(minor_to_major: Sequence[int], dims: Sequence[int]) -> bool:
    """LayoutUtil::AreDimensionsConsecutive."""
    positions = sorted(minor_to_major.index(d) for d in dims if d in minor_to_major)
    return all(b == a + 1 for a, b in itertools.pairwise(positions))


def _reduction_dimensions(
    shape: ArrayShape, reduced: set[int], kept: list[int]
) -> tuple[bool, tuple[int, int, int]]:
    """GetReductionKindAndContiguousComponents: (is_row_reduction, [batch, major, minor])."""
    if not kept:
        return True, (1, 1, math.prod(shape.dims))
    if _consecutive(shape.minor_to_major, kept):
        a, b, c = _partition(shape, set(kept))
        if b == 1:
            return True, (1, 1, a * c)
        if c == 1:
            return False, (1, a, b)
        return True, (a, b, c)
    a, b, c = _partition(shape, reduced)
    if c == 1:
        return True, (1, a, b)
    return False, (a, b, c)


def _partition(shape: ArrayShape, middle: set[int]) -> tuple[int, int, int]:
    """PartitionShapeByMiddleDimensions: element counts of the dimensions more major than the
    `middle` run, of the run, and more minor, in physical order."""
    sizes = [1, 1, 1]
    part = 2
    for d in shape.minor_to_major:  # minor first
        if d in middle:
            part = 1
        elif part == 1:
            part = 0
        sizes[part] *= shape.dims[d]
    return sizes[0], sizes[1], sizes[2]


__all__ = [
    "CUBLAS_LT_MATMUL",
    "CUBLAS_LT_TARGETS",
    "custom_call_target",
    "fusion_can_share_hint",
    "gpu_may_alias",
]
