"""HloAliasAnalysis (xla/service/hlo_alias_analysis.cc): values that must share one buffer.

A buffer is an alias set of values: while loops (init, body/condition parameters, body root,
result), conditionals (branch roots and result), donated parameters (`input_output_alias`) and
in-place operations (alias_info.cc GetInPlaceInputOutputPairs: dynamic-update-slice, scatter,
`output_to_operand_aliasing`, fusions rooted in an in-place op on a parameter).
"""

from __future__ import annotations

import re

from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue, Index
from hlo_layout.syntax.tree import Computation, Instruction, Module

_PAIR_RE = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}")


def _idx(text: str) -> Index:
    return tuple(int(t) for t in text.replace(" ", "").split(",") if t)


def output_operand_pairs(i: Instruction, module: Module) -> list[tuple[Index, int, Index]]:
    """(output index, operand number, operand index) that must alias for an in-place op."""
    op = i.opcode
    pairs: list[tuple[Index, int, Index]] = []
    a = i.attr("output_to_operand_aliasing")
    if a is not None:
        for m in _PAIR_RE.finditer(a.raw):
            pairs.append((_idx(m.group(1)), int(m.group(2)), _idx(m.group(3))))
        return pairs
    if op == "dynamic-update-slice":
        return [((), 0, ())]
    if op == "scatter":
        n = (len(i.operands) - 1) // 2
        return [(() if n == 1 else (k,), k, ()) for k in range(n)]
    if op == "all-reduce-start" and len(i.operands) == 1:
        return [((), 0, ())]
    if op == "fusion":
        names = i.called_computations
        body = module.computation(names[0]) if names else None
        if body is not None:
            return _fusion_in_place(body)
    return pairs


def _fusion_in_place(body: Computation) -> list[tuple[Index, int, Index]]:
    """A fusion whose root (or a root tuple element) is an in-place op on a fusion parameter."""
    root = body.root
    if root is None:
        return []
    outs: list[tuple[Index, Instruction]] = []
    if root.opcode == "tuple":
        for k, o in enumerate(root.operands):
            inst = body.resolve(o)
            if inst is not None:
                outs.append(((k,), inst))
    else:
        outs.append(((), root))
    pairs: list[tuple[Index, int, Index]] = []
    for out_index, inst in outs:
        while inst.opcode == "bitcast" and inst.operands:
            nxt = body.resolve(inst.operands[0])
            if nxt is None:
                break
            inst = nxt
        if inst.opcode not in ("dynamic-update-slice", "scatter") or not inst.operands:
            continue
        src = body.resolve(inst.operands[0])
        while src is not None and src.opcode in ("bitcast", "get-tuple-element") and src.operands:
            src = body.resolve(src.operands[0])
        if src is not None and src.opcode == "parameter":
            pairs.append((out_index, src.parameter_number or 0, ()))
    return pairs


class AliasAnalysis:
    """Union-find over values; `buffers` are the alias sets ordered by their smallest value id."""

    def __init__(self, dataflow: DataflowAnalysis) -> None:
        self.dataflow = dataflow
        parent = list(range(len(dataflow.values)))
        self._parent = parent
        df = dataflow
        module = df.module

        def union_sets(sets: list[tuple[HloValue, ...]]) -> None:
            flat = [v for vs in sets for v in vs]
            for v in flat[1:]:
                self._union(flat[0].id, v.id)

        for init, body_param, cond_param, root, result in getattr(df, "while_sets", []):
            for index in set(init) | set(result) | set(body_param):
                union_sets([d.get(index, ()) for d in (init, body_param, cond_param, root, result)])
        for c in module.computations:
            if df.kinds.get(c.name) != "global":
                continue
            for i in c.instructions:
                vs = df.sets.get((c.name, i.name), {})
                for values in vs.values():
                    if len(values) > 1:
                        union_sets([values])
                if i.opcode == "conditional":
                    for name in i.called_computations:
                        b = module.computation(name)
                        if b is None or b.root is None:
                            continue
                        broot = df.sets.get((b.name, b.root.name), {})
                        for index, values in vs.items():
                            union_sets([values, broot.get(index, ())])
                for out_index, k, op_index in output_operand_pairs(i, module):
                    if k >= len(i.operands):
                        continue
                    ovs = df._operand_set(c, i, k)
                    union_sets([vs.get(out_index, ()), ovs.get(op_index, ())])
        self._donations(df)
        groups: dict[int, list[HloValue]] = {}
        for v in df.values:
            groups.setdefault(self._find(v.id), []).append(v)
        self.buffers: list[list[HloValue]] = sorted(groups.values(), key=lambda b: b[0].id)
        self.buffer_of: dict[int, int] = {}
        for n, members in enumerate(self.buffers):
            for v in members:
                self.buffer_of[v.id] = n

    def _donations(self, df: DataflowAnalysis) -> None:
        a = df.module.attr("input_output_alias")
        entry = df.entry
        if a is None or entry.root is None:
            return
        root = df.sets.get((entry.name, entry.root.name), {})
        params = {p.parameter_number: p for p in entry.parameter_instructions}
        self.donated: set[tuple[int, Index]] = set()
        for m in _PAIR_RE.finditer(a.raw):
            out_index, number, p_index = _idx(m.group(1)), int(m.group(2)), _idx(m.group(3))
            p = params.get(number)
            if p is None:
                continue
            self.donated.add((number, p_index))
            pv = df.sets.get((entry.name, p.name), {}).get(p_index, ())
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
