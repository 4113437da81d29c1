"""One module's costs in both conventions, ready to rank and render.

`module_cost(module)` runs HloCostAnalysis twice — with XLA's logical shape sizes (the `xla`
figures) and with the layouts' physical sizes (`physical_bytes_accessed`: tile padding, `L(n)`,
`E(n)`) — then counts each running computation's executions (loops.py) and keeps, per
instruction that runs, its cost per execution and how often it runs.

The loop-aware `total` differs from XLA's sum in three ways, each on purpose:
- while bodies count `trip_count` times (conditions once more), and a conditional its costliest
  branch whole (XLA takes each property's maximum over the branches);
- a custom-call is not -1: its bytes are its operands and output (what it must read and
  write), its flops 0 — except cuBLAS gemms and cuDNN convolutions, counted as the dot or
  convolution they compute (GpuHloCostAnalysis::HandleCustomCall) — and the unknown ones are
  listed;
- nothing else: every other instruction's figures are XLA's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from hlo_layout import limits
from hlo_layout.cost.analysis import ComputationView, HloCostAnalysis
from hlo_layout.cost.handlers import convolution_flops, dot_flops
from hlo_layout.cost.loops import CONTROL, Branch, Loop, branch_names, trip_count
from hlo_layout.cost.properties import (
    BYTES_ACCESSED,
    FLOPS,
    TRANSCENDENTALS,
    Properties,
    operand_bytes_key,
)
from hlo_layout.cost.registry import Node, Visit
from hlo_layout.cost.sizes import physical_shape_size
from hlo_layout.errors import Span
from hlo_layout.syntax.opcodes import (
    CALL,
    CONDITIONAL,
    CONTRACTION,
    CUSTOM_CALL,
    FUSION,
    WHILE,
)
from hlo_layout.syntax.shape import ArrayShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")


@dataclass(frozen=True, slots=True)
class Totals:
    """flops, transcendentals and bytes of a module run (or of one instruction's executions)."""

    flops: int = 0
    transcendentals: int = 0
    bytes_accessed: int | float = 0
    physical_bytes_accessed: int | float = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            self.flops + other.flops,
            self.transcendentals + other.transcendentals,
            self.bytes_accessed + other.bytes_accessed,
            self.physical_bytes_accessed + other.physical_bytes_accessed,
        )

    def __mul__(self, count: int) -> Totals:
        return Totals(
            self.flops * count,
            self.transcendentals * count,
            self.bytes_accessed * count,
            self.physical_bytes_accessed * count,
        )


@dataclass(frozen=True, slots=True)
class OperandTraffic:
    """One operand of an instruction: the bytes it uses (XLA's logical figure) and the bytes
    the hardware moves for it (at its layout's physical size), and its memory space."""

    operand: int
    name: str
    used_bytes: int | float
    moved_bytes: int | float
    memory_space: int | None


@dataclass(frozen=True, slots=True)
class InstructionCost:
    """An instruction that runs: its cost per execution and how many times it runs."""

    computation: str
    name: str
    opcode: str
    executions: int
    per_execution: Totals
    element_type: str | None
    span: Span | None = field(default=None, compare=False, repr=False)
    xla_properties: Properties = field(default_factory=dict, compare=False, repr=False)
    physical_properties: Properties = field(default_factory=dict, compare=False, repr=False)
    operand_names: tuple[str, ...] = field(default=(), compare=False, repr=False)
    operand_spaces: tuple[int | None, ...] = field(default=(), compare=False, repr=False)

    @property
    def totals(self) -> Totals:
        """Over all its executions."""
        return self.per_execution * self.executions

    def operand_traffic(self) -> list[OperandTraffic]:
        """Per operand: bytes used (XLA) against bytes moved (physical)."""
        return [
            OperandTraffic(
                k,
                name,
                self.xla_properties.get(operand_bytes_key(k), 0),
                self.physical_properties.get(operand_bytes_key(k), 0),
                self.operand_spaces[k] if k < len(self.operand_spaces) else None,
            )
            for k, name in enumerate(self.operand_names)
        ]


@dataclass(frozen=True, slots=True)
class ModuleCost:
    """A module's costs: XLA's figures, the loop-aware totals, and every running instruction."""

    module: Module = field(compare=False, repr=False)
    file: str
    xla_properties: Properties
    total: Totals
    loops: tuple[Loop, ...]
    branches: tuple[Branch, ...]
    instructions: tuple[InstructionCost, ...]
    unknown_custom_calls: tuple[str, ...] = ()
    #: Executions per module run of each computation that runs as code of its own.
    executions: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def xla(self) -> Totals:
        """XLA's convention (HloCostAnalysis of the module; loops counted once)."""
        p = self.xla_properties
        return Totals(
            int(p.get(FLOPS, 0)), int(p.get(TRANSCENDENTALS, 0)), p.get(BYTES_ACCESSED, 0), 0
        )


def module_cost(module: Module, file: str = "<string>", *, physical: bool = True) -> ModuleCost:
    """Cost `module` in XLA's convention and loop-aware; see the module docstring. Without
    `physical`, the physical pass is skipped (physical bytes then equal XLA's logical ones):
    half the time, for a one-line summary."""
    xla = HloCostAnalysis(module)
    physical_analysis = (
        HloCostAnalysis(module, physical_shape_size, share_views_with=xla)
        if physical and _padded(xla)
        else xla
    )
    running = xla.running_computations  # callees first
    builder = _Builder(module, xla, physical_analysis)
    per_computation: dict[str, Totals] = {}
    loops: list[Loop] = []
    branches: list[Branch] = []
    edges: dict[
        str, list[tuple[str, int, Instruction]]
    ] = {}  # computation → (callee, factor, call)
    for computation in running:
        total = builder.own_total(computation)
        out: list[tuple[str, int, Instruction]] = []
        for node in computation.instructions:
            if node.opcode not in CONTROL:
                continue
            for callee, factor in builder.calls(
                computation, node, per_computation, loops, branches
            ):
                out.append((callee, factor, node))
                total = total + per_computation.get(callee, Totals()) * factor
        edges[computation.name] = out
        per_computation[computation.name] = total
    executions: dict[str, int] = {xla.entry.name: 1}
    for computation in reversed(running):  # callers first
        count = executions.get(computation.name, 0)
        for callee, factor, node in edges[computation.name]:
            runs = executions[callee] = executions.get(callee, 0) + count * factor
            if runs > limits.MAX_EXECUTIONS:  # nested trip counts: past what a count can be
                raise limits.exceeded(
                    f"executions of '{callee}' (the loops around '{node.name}' multiplied)",
                    runs,
                    limits.MAX_EXECUTIONS,
                    "MAX_EXECUTIONS",
                    node.span,
                )
    instructions = tuple(builder.rows(running, executions))
    return ModuleCost(
        module,
        file,
        dict(xla.properties()),
        per_computation[xla.entry.name],
        tuple(loops),
        tuple(branches),
        instructions,
        tuple(builder.unknown),
        executions,
    )


def _padded(analysis: HloCostAnalysis) -> bool:
    """Whether any shape the analysis read has a layout whose physical size can differ from its
    logical one (tiles, `L(n)`, a split config): if none, the physical pass would repeat the
    logical one figure for figure (CPU and GPU dumps), so it is skipped."""
    seen: set[int] = set()
    for view in analysis.views():
        for shape, operands in view.signatures():
            for s in (shape, *operands):
                if id(s) in seen:
                    continue
                seen.add(id(s))
                for _, leaf in s.leaves():
                    layout = leaf.layout
                    if layout is not None and (
                        layout.tiles or layout.tail_padding_alignment > 1 or layout.split_configs
                    ):
                        return True
    return False


class _Builder:
    """Per-instruction own costs of the running computations (both analyses side by side)."""

    def __init__(self, module: Module, xla: HloCostAnalysis, physical: HloCostAnalysis) -> None:
        self.module = module
        self.xla = xla
        self.physical = physical
        self.unknown: list[str] = []
        self._own: dict[tuple[str, str], Totals] = {}
        self._types: dict[str, str | None] = {}

    def own(self, computation: Computation, node: Node) -> Totals:
        key = (computation.name, node.name)
        found = self._own.get(key)
        if found is not None:
            return found
        x = self.xla.instruction_properties(computation.name).get(node.name, {})
        p = self.physical.instruction_properties(computation.name).get(node.name, {})
        if node.opcode == CUSTOM_CALL:
            view = self.xla.view(computation.name)
            x = self.xla.preprocess(view, node)
            p = self.physical.preprocess(view, node)
            flops = _custom_call_flops(self.xla, view, node)
            if flops is None:
                target = node.attr("custom_call_target") if isinstance(node, Instruction) else None
                self.unknown.append(f"{node.name} ({target.raw if target else '?'})")
                flops = 0
            x = {**x, FLOPS: flops}
        found = Totals(
            int(x.get(FLOPS, 0)),
            int(x.get(TRANSCENDENTALS, 0)),
            x.get(BYTES_ACCESSED, 0),
            p.get(BYTES_ACCESSED, 0),
        )
        self._own[key] = found
        return found

    def own_total(self, computation: Computation) -> Totals:
        total = Totals()
        for node in self.xla.view(computation.name).nodes:
            if node.opcode not in CONTROL:
                total = total + self.own(computation, node)
        return total

    def calls(
        self,
        computation: Computation,
        node: Instruction,
        per_computation: dict[str, Totals],
        loops: list[Loop],
        branches: list[Branch],
    ) -> Iterator[tuple[str, int]]:
        """(callee, executions per execution of `node`) for a control-flow instruction."""
        if node.opcode == WHILE:
            n, how = trip_count(self.module, computation, node)
            loops.append(Loop(computation.name, node.name, n, how, node.span))
            body, condition = _attr_callee(node, "body"), _attr_callee(node, "condition")
            if body is not None:
                yield body, n if n is not None else 1
            if condition is not None:
                yield condition, n + 1 if n is not None else 1
        elif node.opcode == CONDITIONAL:
            names = branch_names(self.module, node)
            if not names:
                return
            chosen = max(names, key=lambda b: _weight(per_computation.get(b, Totals())))
            branches.append(Branch(computation.name, node.name, names, chosen))
            for name in dict.fromkeys(names):
                yield name, 1 if name == chosen else 0
        else:  # call, async-start
            key = "to_apply" if node.opcode == CALL else "calls"
            callee = _attr_callee(node, key)
            if callee is not None:
                yield callee, 1

    def rows(
        self, running: list[Computation], executions: dict[str, int]
    ) -> Iterator[InstructionCost]:
        for computation in running:
            count = executions.get(computation.name, 0)
            if count == 0:
                continue
            view = self.xla.view(computation.name)
            x_props = self.xla.instruction_properties(computation.name)
            p_props = self.physical.instruction_properties(computation.name)
            for node in view.nodes:
                if node.opcode in CONTROL:
                    continue
                own = self.own(computation, node)
                if not (own.flops or own.transcendentals or own.bytes_accessed):
                    continue
                yield InstructionCost(
                    computation.name,
                    node.name,
                    node.opcode,
                    count,
                    own,
                    self.element_type(view, node),
                    node.span,
                    x_props.get(node.name, {}),
                    p_props.get(node.name, {}),
                    tuple(o.ref for o in node.operands),
                    tuple(_space(view.operand_shape(node, k)) for k in range(len(node.operands))),
                )

    def element_type(self, view: ComputationView, node: Node) -> str | None:
        """The type the instruction computes in, for its roofline: a dot's or convolution's
        operand 0 (also inside a fusion, or a gemm custom-call), else its first output array."""
        matmul = node.opcode in CONTRACTION or (
            node.opcode == CUSTOM_CALL and _is_matmul_call(node)
        )
        if matmul and node.operands:
            return _element_type(view.operand_shape(node, 0))
        if node.opcode == FUSION and isinstance(node, Instruction) and node.called_computations:
            inner = self._fusion_type(node.called_computations[0])
            if inner is not None:
                return inner
        return _element_type(view.shape(node))

    def _fusion_type(self, name: str) -> str | None:
        if name in self._types:
            return self._types[name]
        self._types[name] = None  # a cycle guard; the call graph is acyclic once costed
        found: str | None = None
        try:
            view = self.xla.view(name)
        except Exception:
            return None
        for node in view.nodes:
            if node.opcode in CONTRACTION and node.operands:
                found = _element_type(view.operand_shape(node, 0))
                break
            if node.opcode == FUSION and isinstance(node, Instruction) and node.called_computations:
                found = self._fusion_type(node.called_computations[0])
                if found is not None:
                    break
        self._types[name] = found
        return found


def _weight(t: Totals) -> tuple[int, int | float]:
    return (t.flops, t.physical_bytes_accessed)


def _attr_callee(node: Instruction, key: str) -> str | None:
    from hlo_layout.syntax.attrs import computation_names

    attr = node.attr(key)
    names = computation_names(attr) if attr is not None else ()
    return names[0] if names else None


def _element_type(shape: Shape) -> str | None:
    for _, leaf in shape.leaves():
        return leaf.element_type
    return None


def _space(shape: Shape) -> int | None:
    if isinstance(shape, ArrayShape):
        return shape.layout.memory_space if shape.layout is not None else 0
    if isinstance(shape, TupleShape):
        spaces = {_space(e) for e in shape.elements}
        return spaces.pop() if len(spaces) == 1 else None
    return None


def _target(node: Node) -> str:
    attr = node.attr("custom_call_target") if isinstance(node, Instruction) else None
    return attr.raw.strip('"') if attr is not None else ""


def _is_matmul_call(node: Node) -> bool:
    target = _target(node)
    return target.startswith(_GEMM_TARGETS) or target.startswith("__cudnn$conv")


def _custom_call_flops(analysis: HloCostAnalysis, view: ComputationView, node: Node) -> int | None:
    """GpuHloCostAnalysis::HandleCustomCall: a cuBLAS gemm's dot flops (its backend config's
    dot dimension numbers), a cuDNN convolution's convolution flops; None for any other."""
    target = _target(node)
    if not isinstance(node, Instruction) or not node.operands:
        return None
    shape = view.shape(node)
    result = shape.elements[0] if isinstance(shape, TupleShape) and shape.elements else shape
    if target.startswith(_GEMM_TARGETS):
        config = node.attr("backend_config")
        try:
            parsed = json.loads(config.raw) if config is not None else {}
            dims = parsed.get("gemm_backend_config", parsed).get("dot_dimension_numbers", {})
            contracting = tuple(int(d) for d in dims.get("lhs_contracting_dimensions", ()))
        except (ValueError, AttributeError, TypeError):
            return None
        return dot_flops(view.operand_shape(node, 0), result, contracting)
    if target.startswith("__cudnn$conv") and node.attr("dim_labels") is not None:
        return convolution_flops(Visit(analysis, view, node._replace(shape=result), {}))
    return None


__all__ = ["InstructionCost", "ModuleCost", "OperandTraffic", "Totals", "module_cost"]
