"""HloAliasAnalysis (xla/service/hlo_alias_analysis.cc): values that must share one buffer.

A buffer is an alias set of values: while loops (init, body/condition parameters, body root,
result), conditionals (branch roots and result), donated parameters (`input_output_alias`) and
in-place operations (alias_info.cc GetInPlaceInputOutputPairs: dynamic-update-slice, scatter,
all-reduce-start, in-place collective-permutes, `output_to_operand_aliasing`, and fusions whose
output comes, through tuples, nested fusions and a bitcast, from an in-place op on a parameter).
"""

from __future__ import annotations

from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue, Index
from hlo_layout.syntax.attrs import aliasing_pairs, int_value
from hlo_layout.syntax.opcodes import (
    ALL_REDUCE_START,
    BITCAST,
    COLLECTIVE_PERMUTE,
    COLLECTIVE_PERMUTE_START,
    CONDITIONAL,
    DEFAULT_IN_PLACE,
    DYNAMIC_UPDATE_SLICE,
    FUSION,
    GET_TUPLE_ELEMENT,
    PARAMETER,
    RAGGED_ALL_TO_ALL,
    SCATTER,
    SET_DIMENSION_SIZE,
    TUPLE,
)
from hlo_layout.syntax.shape import Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

#: (output index, operand number, operand index): an in-place pair.
Pair = tuple[Index, int, Index]

#: Opcodes output_operand_pairs may give pairs for without an `output_to_operand_aliasing`.
_MAY_PAIR = DEFAULT_IN_PLACE | {
    FUSION,
    COLLECTIVE_PERMUTE,
    COLLECTIVE_PERMUTE_START,
    SET_DIMENSION_SIZE,
    RAGGED_ALL_TO_ALL,
}
#: Fusions nest a few levels in real dumps; past this a (malformed) fusion calling itself stops.
_MAX_NESTING = 64


def output_operand_pairs(i: Instruction, module: Module, depth: int = 0) -> list[Pair]:
    """(output index, operand number, operand index) that must share one buffer: XLA's
    AliasInfo::GetInPlaceInputOutputPairs (alias_info.cc). Deviation: no backend hook
    (GetNonDefaultInPlaceInputOutputPairs); an `output_to_operand_aliasing` is honoured on any
    opcode that writes one (XLA reads it on custom-call, fusion and async-start)."""
    op = i.opcode
    if op in DEFAULT_IN_PLACE:
        if op == ALL_REDUCE_START and uses_nvshmem(i):
            return []  # nvshmem's one-shot all-reduce needs separate buffers
        n = len(i.operands)
        if op == SCATTER:
            n = (n - 1) // 2
        elif op == DYNAMIC_UPDATE_SLICE:
            n = 1
        if n == 1:
            return [((), 0, ())]
        return [((k,), k, ()) for k in range(n)]
    declared = _declared_pairs(i)
    if op == FUSION:
        return _fusion_pairs(i, module, depth) + declared
    if declared:
        return declared
    if op == COLLECTIVE_PERMUTE and len(i.operands) == 4:
        return _permute_pairs(i.shape, ())
    if op == COLLECTIVE_PERMUTE_START and len(i.operands) == 4:
        out = (
            i.shape.elements[1]
            if isinstance(i.shape, TupleShape) and len(i.shape.elements) > 1
            else None
        )
        return _permute_pairs(out, (1,))
    if op == SET_DIMENSION_SIZE:
        return [((), 0, ())]
    if op == RAGGED_ALL_TO_ALL:
        return [((), 1, ())]
    return []


def _declared_pairs(i: Instruction) -> list[Pair]:
    a = i.attr("output_to_operand_aliasing")
    if a is None:
        return []
    return aliasing_pairs(a)


def input_output_aliases(module: Module) -> list[Pair]:
    """The module's `input_output_alias` (donated parameters): (output index, parameter number,
    parameter index) per aliased output, as HloInputOutputAliasConfig lists them."""
    a = module.attr("input_output_alias")
    return aliasing_pairs(a) if a is not None else []


def uses_nvshmem(i: Instruction) -> bool:
    """An all-reduce run by NVSHMEM (its backend config says so), which needs an output buffer
    of its own (alias_info.cc, nvptx_alias_info.cc)."""
    a = i.attr("backend_config")
    return a is not None and "nvshmem" in a.raw.lower()


def _permute_pairs(out: Shape | None, prefix: Index) -> list[Pair]:
    """The in-place collective-permute (4 operands): operand 1 is the output buffer."""
    pairs: list[Pair] = [(prefix, 1, ())]
    if isinstance(out, TupleShape):
        pairs += [((*prefix, k), 1, (k,)) for k in range(len(out.elements))]
    return pairs


def _leaf_indices(shape: Shape | None, prefix: Index = ()) -> list[Index]:
    if isinstance(shape, TupleShape):
        return [x for k, e in enumerate(shape.elements) for x in _leaf_indices(e, (*prefix, k))]
    return [prefix]


def _follow_tuples(
    body: Computation, inst: Instruction | None, index: Index
) -> tuple[Instruction | None, Index]:
    """FollowTupleIndirection: through tuples (by index) and get-tuple-elements (onto it)."""
    while inst is not None and inst.opcode == TUPLE and index:
        if index[0] >= len(inst.operands):
            return None, index
        inst, index = body.resolve(inst.operands[index[0]]), index[1:]
    while inst is not None and inst.opcode == GET_TUPLE_ELEMENT and inst.operands:
        a = inst.attr("index")
        if a is None:
            return None, index
        index = (int_value(a), *index)
        inst = body.resolve(inst.operands[0])
    return inst, index


def _fusion_pairs(fusion: Instruction, module: Module, depth: int) -> list[Pair]:
    """GetFusionInstructionInPlaceInputOutputPairs."""
    names = fusion.called_computations
    if not names or depth >= _MAX_NESTING:
        return []
    signature = module.root_signature(names[0])  # the root alone, where known without the body
    if signature is not None:
        opcode, keys = signature
        if _no_pairs(fusion, opcode, "output_to_operand_aliasing" in keys):
            return []
    body = module.computation(names[0])
    if body is None:
        return []
    return _body_pairs(fusion, body, module, depth + 1)


def _no_pairs(fusion: Instruction, root_opcode: str, root_aliasing: bool) -> bool:
    """A fusion whose body's root has this opcode (and declares `output_to_operand_aliasing`
    or not) has no in-place pair: most fusions (the loop of `_body_pairs` would find no pair
    for the one output)."""
    return (
        root_opcode not in _MAY_PAIR
        and root_opcode not in (TUPLE, GET_TUPLE_ELEMENT)
        and not isinstance(fusion.shape, TupleShape)
        and not root_aliasing
    )


def _body_pairs(fusion: Instruction, body: Computation, module: Module, depth: int) -> list[Pair]:
    root = body.root
    if root is not None and _no_pairs(
        fusion, root.opcode, root.attr("output_to_operand_aliasing") is not None
    ):
        return []  # most fusions
    out: list[Pair] = []
    for index in _leaf_indices(fusion.shape):
        source, source_index = _follow_tuples(body, body.root, index)
        if source is None:
            continue
        found: Instruction | None = None
        found_index: Index = ()
        for out_index, k, op_index in output_operand_pairs(source, module, depth):
            if out_index != source_index or k >= len(source.operands):
                continue
            found, found_index = _follow_tuples(body, body.resolve(source.operands[k]), op_index)
            if found is not None and found.opcode == FUSION:
                # Nested fusions alias through to their producer (a peephole).
                for n_out, n_k, n_index in output_operand_pairs(found, module, depth):
                    if n_out == found_index and n_k < len(found.operands):
                        found, found_index = _follow_tuples(
                            body, body.resolve(found.operands[n_k]), n_index
                        )
                        if found is None:
                            break
            break
        if found is not None and found.opcode == BITCAST and found.operands:
            found = body.resolve(found.operands[0])
        if found is not None and found.opcode == PARAMETER:
            out.append((index, found.parameter_number or 0, found_index))
    return out


class AliasAnalysis:
    """Union-find over values; `buffers` are the alias sets ordered by their smallest value id."""

    def __init__(self, dataflow: DataflowAnalysis) -> None:
        self.dataflow = dataflow
        #: id(instruction) -> (instruction, its output_operand_pairs): the buffer assigner asks
        #: again for the instructions whose operands it may share (`pairs`).
        self._pairs: dict[int, tuple[Instruction, list[Pair]]] = {}
        parent = list(range(len(dataflow.values)))
        self._parent = parent
        df = dataflow
        module = df.module

        def union_sets(sets: list[tuple[HloValue, ...]]) -> None:
            flat = [v for vs in sets for v in vs]
            for v in flat[1:]:
                self._union(flat[0].id, v.id)

        for init, body_param, cond_param, root, result in df.while_sets:
            for index in set(init) | set(result) | set(body_param):
                union_sets([d.get(index, ()) for d in (init, body_param, cond_param, root, result)])
        no_values: dict[Index, tuple[HloValue, ...]] = {}
        for c in df.global_computations:
            for i in c.instructions:
                vs = df.value_set(c, i.name) or no_values
                for values in vs.values():
                    if len(values) > 1:
                        union_sets([values])
                if i.opcode == CONDITIONAL:
                    for name in i.called_computations:
                        b = module.computation(name)
                        if b is None or b.root is None:
                            continue
                        broot = df.value_set(b, b.root.name)
                        for index, values in vs.items():
                            union_sets([values, broot.get(index, ())])
                for out_index, k, op_index in self.pairs(i):
                    if k >= len(i.operands):
                        continue
                    ovs = df._operand_set(c, i, k)
                    union_sets([vs.get(out_index, ()), ovs.get(op_index, ())])
        self._donations(df)
        # Values come in id order, so the buffers are made in the order of their smallest id.
        self.buffers: list[list[HloValue]] = []
        self.buffer_of: list[int] = []  # value id -> its buffer's number (ids are dense)
        buffers, buffer_of, find = self.buffers, self.buffer_of, self._find
        numbered: dict[int, int] = {}  # alias set's root value -> buffer number
        for v in df.values:
            vid = v.id
            assert vid == len(buffer_of), "value ids are their places in df.values"
            top = vid if parent[vid] == vid else find(vid)
            n = numbered.get(top)
            if n is None:
                n = numbered[top] = len(buffers)
                buffers.append([v])
            else:
                buffers[n].append(v)
            buffer_of.append(n)

    def pairs(self, i: Instruction) -> list[Pair]:
        """`output_operand_pairs(i, module)`, computed once per fusion (which reads its body;
        any other instruction's are found in a few checks, and not kept)."""
        if i.opcode != FUSION:
            return output_operand_pairs(i, self.dataflow.module)
        hit = self._pairs.get(id(i))
        if hit is not None and hit[0] is i:
            return hit[1]
        found = output_operand_pairs(i, self.dataflow.module)
        if found:  # most fusions have none, found again in a few checks: not kept
            self._pairs[id(i)] = (i, found)
        return found

    def _donations(self, df: DataflowAnalysis) -> None:
        aliases = input_output_aliases(df.module)
        entry = df.entry
        if not aliases or entry.root is None:
            return
        root = df.value_set(entry, entry.root.name)
        params = {p.parameter_number: p for p in entry.parameter_instructions}
        self.donated: set[tuple[int, Index]] = set()
        for out_index, number, p_index in aliases:
            p = params.get(number)
            if p is None:
                continue
            self.donated.add((number, p_index))
            pv = df.value_set(entry, p.name).get(p_index, ())
            for v in root.get(out_index, ()) + pv:
                if pv:
                    self._union(pv[0].id, v.id)

    def _find(self, x: int) -> int:
        parent = self._parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def _union(self, a: int, b: int) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            if ra < rb:
                self._parent[rb] = ra
            else:
                self._parent[ra] = rb

    def is_donated(self, parameter_number: int, index: Index) -> bool:
        return (parameter_number, index) in getattr(self, "donated", set())
