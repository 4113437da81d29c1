"""HloDataflowAnalysis (xla/service/hlo_dataflow_analysis.cc) in SSA form over a parsed module:
which instruction defines each value, the value set at every (instruction, index), and uses.

Deviations: phi values are created per while/conditional and pruned by the simple rule of
PhiGraph::Optimize that matters in practice (a loop-carried element the body passes through is
the init value); value ids follow text order with phis numbered after every defined value.
The values of thread-local computations (reducers, comparators) are not HloValues: nothing flows
through them and they have no live range; XLA gives each its own allocation, so they are listed
(`thread_local_values`) for the buffer assigner to count and size. A computation's instructions are
read in schedule order with the get-tuple-elements the printer folded into `%x#N` operands put
back (`sequence`; NOTE: [folded get-tuple-elements] in memory/schedule.py): each uses the tuple's
top-level value and is a position of the element's values, as in XLA.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from hlo_layout import limits
from hlo_layout.memory.backend import CPU, Backend
from hlo_layout.memory.nesting import run_nested
from hlo_layout.memory.schedule import scheduled_sequence
from hlo_layout.syntax.attrs import int_value
from hlo_layout.syntax.index import (
    computation_kinds,
    cycle_error,
    instructions_calling,
    walk_calls,
)
from hlo_layout.syntax.opcodes import (
    ADD_DEPENDENCY,
    ALL_GATHER_DONE,
    ALL_GATHER_START,
    ALL_REDUCE_DONE,
    ASYNC_DONE,
    ASYNC_START,
    ASYNC_UPDATE,
    BITCAST,
    CALL,
    COLLECTIVE_PERMUTE_DONE,
    COLLECTIVE_PERMUTE_START,
    CONDITIONAL,
    COPY,
    COPY_DONE,
    COPY_START,
    DOMAIN,
    FORWARDING,
    GET_TUPLE_ELEMENT,
    OPT_BARRIER,
    PARAMETER,
    RECV_DONE,
    SEND,
    TUPLE,
    WHILE,
    WHILE_KEYS,
    Registry,
)  # fmt: skip
from hlo_layout.syntax.scan import attribute_pairs
from hlo_layout.syntax.shape import BufferShape, Shape, TupleShape
from hlo_layout.syntax.tree import Computation, Instruction, Module

Index = tuple[int, ...]

_SUBSHAPES: dict[int, tuple[Shape, list[tuple[Index, Shape]]]] = {}


def subshapes(shape: Shape) -> list[tuple[Index, Shape]]:
    """Every (index, subshape) in ShapeUtil::ForEachSubshape order (tuple node, then elements).

    Memoized by identity (the parser shares one object per distinct shape text; each entry keeps
    its shape alive, so an id is never reused while cached)."""
    hit = _SUBSHAPES.get(id(shape))
    if hit is not None and hit[0] is shape:
        return hit[1]
    if len(_SUBSHAPES) > 1 << 16:
        _SUBSHAPES.clear()
    out = _subshapes(shape)
    _SUBSHAPES[id(shape)] = (shape, out)
    return out


def _subshapes(shape: Shape) -> list[tuple[Index, Shape]]:
    """A stack, not a recursive closure: the closure's cycle would keep `out` (a pair per leaf)
    alive until the collector runs, and the memory analysis runs with it paused."""
    out: list[tuple[Index, Shape]] = []
    stack: list[tuple[Shape, Index]] = [(shape, ())]
    while stack:
        s, index = stack.pop()
        if isinstance(s, BufferShape):
            s = s.element
        out.append((index, s))
        if isinstance(s, TupleShape):
            stack.extend((e, (*index, k)) for k, e in reversed(list(enumerate(s.elements))))
    return out


def subshape(shape: Shape, index: Index) -> Shape | None:
    for k in index:
        if isinstance(shape, BufferShape):
            shape = shape.element
        if not isinstance(shape, TupleShape) or k >= len(shape.elements):
            return None
        shape = shape.elements[k]
    return shape


#: (computation, instruction, index): where a value is.
Position = tuple[Computation, Instruction, Index]
#: (computation, user, operand number, operand index): a value read.
Use = tuple[Computation, Instruction, int, Index]


@dataclass(eq=False, slots=True)
class HloValue:
    """One value: defined at (instruction, index) in a computation. Its positions (every
    (computation, instruction, index) holding it, the defining one first) and uses
    ((computation, user, operand number, operand index)) are read from the value sets
    (`DataflowAnalysis.positions`, `.uses`), not kept per value.

    NOTE: [value memory] A wide tuple makes a value per leaf (a 100,000-leaf parameter, 100,000
    values), and a pass-through (get-tuple-element, tuple, while, copy) a position of each: a
    list of position tuples and of use tuples per value cost more than the sets they repeat.
    The sets are read in the order `positions` and `uses` walk, the order XLA's lists have
    (HloValue::positions(), GetUses), and only `at_definition` is kept."""

    id: int
    computation: Computation
    instruction: Instruction
    index: Index
    shape: Shape
    is_phi: bool = False
    #: Whether the defining (computation, instruction, index) is one of its positions.
    at_definition: bool = False
    live_out: bool = False

    @property
    def defining_position(self) -> Position:
        return (self.computation, self.instruction, self.index)

    @property
    def label(self) -> str:
        """`name{0,1}` as XLA's live-range dump prints it."""
        return f"{self.instruction.name}{{{','.join(map(str, self.index))}}}"


#: An instruction's value set: for each index of its shape, the values that may be there.
#: Stored sets never change (so one may be shared; `_element` caches by identity).
ValueSet = Mapping[Index, tuple[HloValue, ...]]
#: A set being built.
_Building = dict[Index, tuple[HloValue, ...]]
_NO_SETS: dict[str, ValueSet] = {}  # the sets of a computation never evaluated


class _Single(Mapping[Index, tuple[HloValue, ...]]):
    """A value set with one index: a dict of one entry costs four times this (a GPU dump's
    analysis keeps thousands, a wide tuple's get-tuple-elements one each)."""

    __slots__ = ("_index", "_item")

    def __init__(self, index: Index, item: Any) -> None:
        self._index = index
        self._item = item

    def _values(self) -> tuple[HloValue, ...]:
        return cast(tuple[HloValue, ...], self._item)

    def __getitem__(self, index: Index) -> tuple[HloValue, ...]:
        if index == self._index:
            return self._values()
        raise KeyError(index)

    def get(self, index: Index, default: Any = None) -> Any:
        return self._values() if index == self._index else default

    def __contains__(self, index: object) -> bool:
        return index == self._index

    def __iter__(self) -> Iterator[Index]:
        return iter((self._index,))

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        return ((self._index, self._values()),)

    def values(self) -> Any:
        return (self._values(),)

    def keys(self) -> Any:
        return (self._index,)


class _One(_Single):
    """The value set of an instruction holding only its one own value, most instructions (the
    1-tuple is made when read, not kept)."""

    __slots__ = ()

    def __init__(self, value: HloValue) -> None:
        super().__init__(value.index, value)

    def _values(self) -> tuple[HloValue, ...]:
        return (self._item,)


class _Own(Mapping[Index, tuple[HloValue, ...]]):
    """The value set of an instruction holding only its own values, one per index (a tuple
    parameter's leaves): the index -> place dict is shared by the instructions of one opcode and
    shape, so a set costs a list slot per value, not a dict entry and a 1-tuple (NOTE: [value
    memory])."""

    __slots__ = ("_keys", "_own")

    def __init__(self, keys: dict[Index, int], own: list[HloValue]) -> None:
        self._keys = keys
        self._own = own

    def __getitem__(self, index: Index) -> tuple[HloValue, ...]:
        return (self._own[self._keys[index]],)

    def get(self, index: Index, default: Any = None) -> Any:
        k = self._keys.get(index)
        return default if k is None else (self._own[k],)

    def __contains__(self, index: object) -> bool:
        return index in self._keys

    def __iter__(self) -> Iterator[Index]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> Any:
        return zip(self._keys, self.values())

    def values(self) -> Any:
        return ((v,) for v in self._own)

    def keys(self) -> Any:
        return self._keys.keys()


#: One computation's evaluation: yields (callee, parameter sets), is sent the callee's root set.
_Steps = Generator[tuple[Computation, list[ValueSet]], ValueSet, ValueSet]
#: A while's or conditional's evaluation: as _Steps, returning the set it builds.
_Built = Generator[tuple[Computation, list[ValueSet]], ValueSet, _Building]


class DataflowAnalysis:
    """Values and value sets of every non-fusion computation reached from the entry."""

    def __init__(self, module: Module, backend: Backend = CPU) -> None:
        """`backend`: whose scheduler put the get-tuple-elements the printer folded
        (Backend.folded_gte_placement) and whose live-range rules LiveRange follows."""
        self.module = module
        self.backend = backend
        entry = module.entry
        if entry is None:
            raise ValueError("module has no computation")
        self.entry = entry
        self.values: list[HloValue] = []
        #: (opcode, shape) of every value a thread-local computation defines, in text order
        #: (module docstring): only counted and sized, so neither the instruction nor the
        #: index is kept.
        self.thread_local_values: list[tuple[str, Shape]] = []
        #: computation name -> instruction name -> value set (nested, not keyed by pairs: a
        #: pair per instruction cost more than its set).
        self.sets: dict[str, dict[str, ValueSet]] = {}
        #: (computation, instruction) -> the values it defines and, when they are exactly one
        #: per index of their opcode's and shape's memo, its shared index -> place dict (`_Own`).
        self._defined_at: dict[tuple[str, str], tuple[list[HloValue], dict[Index, int] | None]] = {}
        self.kinds = computation_kinds(module)
        #: The computations holding buffers (kind `global`), in module order.
        self.global_computations = [
            c for c in module.computations if self.kinds.get(c.name) == "global"
        ]
        #: Computation name -> its schedule with the folded get-tuple-elements put back, for
        #: those that fold any (`sequence`).
        self.sequences: dict[str, Sequence[Instruction]] = {}
        for c in self.global_computations:
            seq = scheduled_sequence(c, backend.folded_gte_placement)
            if seq is not c.instructions:
                self.sequences[c.name] = seq
        self.callee_of: dict[str, tuple[Computation, Instruction]] = {}
        self._split: dict[int, tuple[ValueSet, dict[int, _Building | tuple[Index, Any]]]] = {}
        #: Per while: (init, body parameter, condition parameter, body root, result) sets.
        self.while_sets: list[tuple[ValueSet, ValueSet, ValueSet, ValueSet, ValueSet]] = []
        #: `_through`'s answers by (body, shape), and how many loops' pass 1 are under way.
        self._through_memo: dict[tuple[str, int], tuple[Shape, frozenset[Index]]] = {}
        self._trials = 0
        self._check_flattened_size()
        self._define_values()
        self._evaluate(entry, None)
        self._mark_positions()
        self._split.clear()
        self._defined_at.clear()  # read while evaluating only
        _SUBSHAPES.clear()  # a wide shape's leaves: the values hold the indices they need

    def _check_flattened_size(self) -> None:
        """Refuse, at the call where it happens, a call graph that flattens to more than
        MAX_FLATTENED_INSTRUCTIONS beyond twice the module's global instructions: `_steps`
        evaluates a callee at every call site, so its work is the flattened size (and at most
        as much again for loops' pass 1, `_through`). Walks the global call graph once
        (`index.walk_calls`), which also refuses a cycle in a module that was not verified."""
        computations = {c.name: c for c in self.global_computations}
        edges = {
            name: [(i, names) for i in instructions_calling(c) if (names := evaluated_callees(i))]
            for name, c in computations.items()
        }
        found = walk_calls([self.entry.name], edges, computations)
        if not isinstance(found, list):
            raise cycle_error(*found)
        own = sum(len(c.instructions) for c in computations.values())
        limit = limits.MAX_FLATTENED_INSTRUCTIONS + 2 * own
        size: dict[str, int] = {}
        for name in found:
            total = len(computations[name].instructions)
            for _, names in edges[name]:
                total += sum(size[n] for n in names if n in size)
            size[name] = min(total, limit + 1)  # saturated: a deep tree's sizes stay small ints
            if total > limit:
                site, callee = max(
                    ((i, n) for i, names in edges[name] for n in names if n in size),
                    key=lambda pair: size[pair[1]],
                )
                sites = sum(n == callee for calls in edges.values() for _, ns in calls for n in ns)
                raise limits.LimitExceeded(
                    f"the call graph flattens to more than {limit:,} instructions "
                    f"(MAX_FLATTENED_INSTRUCTIONS): '{callee}', {size[callee]:,} instructions "
                    f"once flattened, is called here and from {sites - 1} other call site(s); "
                    "the memory analysis evaluates a callee at each call site, as XLA analyses "
                    "a call graph flattened by FlattenCallGraph",
                    site.span,
                )

    def _define_values(self) -> None:
        values, defined_at, entry = self.values, self._defined_at, self.entry
        # What an (opcode, shape, param_defines) defines, asked once per distinct triple: the
        # parser shares one shape object per distinct shape text (the entry keeps it alive).
        memo: dict[
            tuple[str, int, bool], tuple[Shape, list[tuple[Index, Shape]], dict[Index, int]]
        ] = {}
        thread_local = self.thread_local_values

        def defined(
            i: Instruction, param_defines: bool
        ) -> tuple[list[tuple[Index, Shape]], dict[Index, int]]:
            shape, op = i.shape, i.opcode
            if op == ASYNC_UPDATE and len(i.operands) > 1:
                op = ASYNC_START  # libtpu's SparseCore form (`_steps`): defines as one
            key = (op, id(shape), param_defines)
            hit = memo.get(key)
            if hit is None or hit[0] is not shape:
                own = [
                    (index, s)
                    for index, s in subshapes(shape)
                    if defines_value(op, index, s, param_defines=param_defines)
                ]
                keys = {index: k for k, (index, _) in enumerate(own)} if len(own) > 1 else {}
                hit = memo[key] = (shape, own, keys)
            return hit[1], hit[2]

        kinds = self.kinds
        for c in self.module.computations_in({n for n, k in kinds.items() if k == "thread_local"}):
            for i in c.instructions:
                thread_local.extend([(i.opcode, s) for _, s in defined(i, True)[0]])
        for c in self.global_computations:
            param_defines = c is entry
            for i in self.sequence(c):
                own, keys = defined(i, param_defines)
                if not own:
                    continue
                n = len(values)
                if len(own) == 1:  # most instructions: one array value
                    v = HloValue(n, c, i, own[0][0], own[0][1])
                    values.append(v)
                    mine = [v]
                else:
                    mine = [HloValue(n + k, c, i, index, s) for k, (index, s) in enumerate(own)]
                    values.extend(mine)
                where = (c.name, i.name)
                found = defined_at.get(where)
                if found is None:
                    defined_at[where] = (mine, keys if len(keys) == len(mine) else None)
                else:  # a name defined twice: its values are found by index (`_steps`)
                    defined_at[where] = (found[0] + mine, None)

    def sequence(self, c: Computation) -> Sequence[Instruction]:
        """`c`'s instructions in schedule order, folded get-tuple-elements put back."""
        return self.sequences.get(c.name, c.instructions)

    def _new_phi(self, c: Computation, i: Instruction, index: Index, shape: Shape) -> HloValue:
        v = HloValue(len(self.values), c, i, index, shape, is_phi=True)
        self.values.append(v)
        return v

    # -- value sets ----------------------------------------------------------------------------
    def value_set(self, c: Computation, name: str) -> ValueSet:
        return self.sets.get(c.name, _NO_SETS).get(name, {})

    def _operand_set(self, c: Computation, i: Instruction, k: int) -> ValueSet:
        op = i.operands[k]
        vs = self.value_set(c, op.name)
        if op.index is not None:  # `%x#1`: element 1 of the tuple x
            return self._element(vs, op.index)
        return vs

    def _element(self, vs: ValueSet, k: int) -> ValueSet:
        """The value set of element k of a tuple's value set (shared: not to be changed).

        A tuple's set is split by first index once (cached by identity; sets are not changed
        once stored): reading each element by filtering the whole set made a loop carrying a
        tuple of n elements cost n * n."""
        hit = self._split.get(id(vs))
        if hit is None or hit[0] is not vs:
            # An element of one index is kept as (index, values), made a dict if another comes.
            split: dict[int, _Building | tuple[Index, Any]] = {}
            for idx, v in vs.items():
                if idx:
                    got = split.get(idx[0])
                    if got is None:
                        split[idx[0]] = (idx[1:], v)
                    elif isinstance(got, tuple):
                        split[idx[0]] = {got[0]: got[1], idx[1:]: v}
                    else:
                        got[idx[1:]] = v
            hit = self._split[id(vs)] = (vs, split)
        got = hit[1].get(k)
        if got is None:
            return {}
        if isinstance(got, tuple):
            return _Single(*got)
        return got

    def _evaluate(self, c: Computation, params: list[ValueSet] | None) -> ValueSet:
        """Value sets of every instruction of `c`; `params` give a callee's parameter sets.

        Call chains are as deep as the user wrote them (thousands of nested `call`s are valid
        HLO), so a callee is not evaluated by recursion: `_steps` yields (callee, parameter
        sets) and is sent the callee's root set (`nesting.run_nested`)."""
        return run_nested(self._steps(c, params), lambda request: self._steps(*request))

    def _steps(self, c: Computation, params: list[ValueSet] | None) -> _Steps:
        """`_evaluate`'s body for one computation, yielding where it needs a callee's root."""
        sets = self.sets.setdefault(c.name, {})
        rules = VALUE_SETS
        for i in self.sequence(c):
            key = i.name
            op = i.opcode
            if op == PARAMETER and params is not None:
                n = i.parameter_number or 0
                # Shared, not copied: a set passed to a callee is not changed afterwards.
                sets[key] = params[n] if n < len(params) else {}
                continue
            found = self._defined_at.get((c.name, key))
            defined = found[0] if found is not None else None
            rule = rules.get(op)
            if rule is None:  # most instructions: their own values and no others
                if defined is None:
                    sets[key] = {}
                elif len(defined) == 1:
                    sets[key] = _One(defined[0])
                elif found is not None and found[1] is not None:
                    sets[key] = _Own(found[1], defined)
                else:
                    sets[key] = {v.index: (v,) for v in defined}
                continue
            own = {v.index: (v,) for v in defined} if defined else {}
            build, evaluates_callees = rule
            out: _Building
            # `shared`: `out` is another instruction's set (sets never change once stored)
            if evaluates_callees:
                out, shared = (yield from build(self, c, i)), False
            else:
                out, shared = build(self, c, i)
            if own:
                if shared:
                    out = dict(out)
                out.update(own)
            sets[key] = out
        root = c.root
        return sets.get(root.name, {}) if root is not None else {}

    def _operand_sets(self, c: Computation, i: Instruction) -> list[ValueSet]:
        return [self._operand_set(c, i, k) for k in range(len(i.operands))]

    def _callee(self, i: Instruction, k: int) -> Computation | None:
        names = i.called_computations
        return self.module.computation(names[k]) if k < len(names) else None

    def _call(self, c: Computation, i: Instruction) -> _Built:
        """A call's set is its callee's root set (UpdateCallValueSet)."""
        callee = self._callee(i, 0)
        if callee is None:
            return {}
        self.callee_of[callee.name] = (c, i)
        return dict((yield callee, self._operand_sets(c, i)))

    def _async_start(self, c: Computation, i: Instruction) -> _Built:
        """{0, k} is operand k, {1} the wrapped computation's root (UpdateAsyncStartValueSet);
        the context {2, ...} is the start's own."""
        out: _Building = {}
        callee = self._callee(i, 0)
        operands = self._operand_sets(c, i)
        for k, vs in enumerate(operands):
            for idx, v in vs.items():
                out[(0, k, *idx)] = v
        if callee is not None and not operands and callee.parameter_instructions:
            pass  # libtpu's operand-less start: evaluated where its async-update binds
        elif callee is not None:
            self.callee_of[callee.name] = (c, i)
            for idx, v in (yield callee, operands).items():
                out[(1, *idx)] = v
        return out

    def _async_update(self, c: Computation, i: Instruction) -> _Built:
        """An async-update forwards its start's set (operand 0); libtpu's SparseCore form
        (a gather offload) also binds the wrapped computation's operands.

        That form has its own shape, its data operands after the start's and
        `output_to_operand_aliasing` for the context. It defines its tuple nodes and context as
        an async-start does ({2,k} aliased to the start's), {0,k} is operand k+1, {1} the wrapped
        computation's root: the compiler's buffer assignment lists exactly those values. The
        wrapped computation runs on the operands given here (the first instruction of the chain
        with them bound, where HloLiveRange flattens it)."""
        if len(i.operands) <= 1:
            return dict(self._operand_set(c, i, 0)) if i.operands else {}
        out: _Building = {}
        data = self._operand_sets(c, i)[1:]
        for k, vs in enumerate(data):
            for idx, v in vs.items():
                out[(0, k, *idx)] = v
        start = c.get(i.operands[0].name)
        callee = self._callee(start, 0) if start is not None else None
        if callee is not None and callee.root is not None:
            self.callee_of[callee.name] = (c, i)
            for idx, v in (yield callee, data).items():
                out[(1, *idx)] = v
        return out

    def _conditional(self, c: Computation, i: Instruction) -> _Built:
        branches = [self.module.computation(n) for n in i.called_computations]
        roots: list[ValueSet] = []
        for k, b in enumerate(branches):
            if b is None:
                continue
            self.callee_of[b.name] = (c, i)
            param = [self._operand_set(c, i, k + 1)] if k + 1 < len(i.operands) else [{}]
            roots.append((yield b, param))
        out: _Building = {}
        for index, s in subshapes(i.shape):
            found: list[HloValue] = []
            for r in roots:
                for v in r.get(index, ()):
                    if v not in found:
                        found.append(v)
            if len(found) == 1:
                out[index] = (found[0],)
            elif found:
                out[index] = (self._new_phi(c, i, index, s),)
        return out

    def _while(self, c: Computation, i: Instruction) -> _Built:
        body_name, cond_name = _loop_callees(i)
        body = self.module.computation(body_name)
        cond = self.module.computation(cond_name)
        init = self._operand_set(c, i, 0) if i.operands else {}
        if body is None:
            return dict(init)
        self.callee_of[body.name] = (c, i)
        if cond is not None:
            self.callee_of[cond.name] = (c, i)
        param = body.parameter_instructions[0] if body.parameter_instructions else None
        through = yield from self._through(body, param or i, i.shape)
        if self._trials:
            # Inside another loop's pass 1 only this loop's result matters, and it follows from
            # `through` alone: the body is evaluated by that loop's pass 2 (NOTE: [one pass]).
            carried: _Building = {}
            for index, s in subshapes(i.shape):
                if index in through and len(init.get(index, ())) == 1:
                    carried[index] = init[index]
                else:
                    carried[index] = (self._new_phi(c, i, index, s),)
            return carried
        # Pass 2 (PhiGraph::Optimize): passed-through elements keep the init value.
        body_param: _Building = {}
        cond_param: _Building = {}
        result: _Building = {}
        phis = []
        for index, s in subshapes(i.shape):
            if index in through and len(init.get(index, ())) == 1:
                body_param[index] = cond_param[index] = result[index] = init[index]
            else:
                v = self._new_phi(body, param or i, index, s)
                body_param[index] = (v,)
                phis.append(index)
        root = yield body, [body_param]
        if cond is not None:
            cparam = cond.parameter_instructions[0] if cond.parameter_instructions else i
            for index in phis:
                s = subshape(i.shape, index) or i.shape
                cond_param[index] = (self._new_phi(cond, cparam, index, s),)
            yield cond, [cond_param]
        for index in phis:
            s = subshape(i.shape, index) or i.shape
            result[index] = (self._new_phi(c, i, index, s),)
        self.while_sets.append((init, body_param, cond_param, root, result))
        return result

    def _through(
        self, body: Computation, param: Instruction, shape: Shape
    ) -> Generator[tuple[Computation, list[ValueSet]], ValueSet, frozenset[Index]]:
        """The elements of a loop state of `shape` that `body` passes through unchanged: pass 1,
        with every element a phi of its own. Its phis are dropped afterwards, and so are the
        sets of the loops nested in the body that it recorded (pass 2 records them again).

        NOTE: [one pass] The answer depends only on the body and the shape (each element enters
        as a distinct phi), so it is computed once per (body, shape); and within pass 1 a nested
        loop's result needs only its own `through`, so its body is not evaluated there. Evaluating
        pass 1 in full at every loop cost two evaluations of a body per level of nesting, 2^n
        for n nested loops; this way each body is evaluated once by pass 1 and once per
        evaluation of its loop, with the same values, sets and ids (pass 1 leaves none)."""
        key = (body.name, id(shape))
        hit = self._through_memo.get(key)
        if hit is not None and hit[0] is shape:
            return hit[1]
        mark, while_mark = len(self.values), len(self.while_sets)
        trial: _Building = {}
        for index, s in subshapes(shape):
            trial[index] = (self._new_phi(body, param, index, s),)
        self._trials += 1
        try:
            root1 = yield body, [trial]
        finally:
            self._trials -= 1
        through = frozenset(idx for idx, vs in trial.items() if root1.get(idx) == vs)
        del self.values[mark:]
        del self.while_sets[while_mark:]
        self._through_memo[key] = (shape, through)
        return through

    # -- positions and uses --------------------------------------------------------------------
    def positions(self) -> Iterator[tuple[Computation, Instruction, Index, tuple[HloValue, ...]]]:
        """(computation, instruction, index, the values there) of every non-empty position of
        the global computations, in schedule order: a value's positions are those it is among,
        in this order but with its defining one first (NOTE: [value memory])."""
        for c in self.global_computations:
            sets = self.sets.get(c.name, _NO_SETS)
            for i in self.sequence(c):
                vs = sets.get(i.name)
                if vs:
                    for index, values in vs.items():
                        yield c, i, index, values

    def uses(self) -> Iterator[tuple[Computation, Instruction, int, Index, tuple[HloValue, ...]]]:
        """(computation, user, operand number, operand index, the values read) of every use
        (HloValue::GetUses, one per (user, operand, index): a value's uses are those it is
        among, in this order)."""
        try:
            for c in self.global_computations:
                sets = self.sets.get(c.name, _NO_SETS)
                for i in self.sequence(c):
                    op = i.opcode
                    if op in _USES_NOTHING:
                        continue
                    top_only = op in _USES_TOP_ONLY
                    for k, o in enumerate(i.operands):
                        ovs = sets.get(o.name)
                        if not ovs:
                            continue
                        if o.index is not None:  # `%x#1`: element 1 of the tuple x
                            ovs = self._element(ovs, o.index)
                        if top_only:  # reads only the operand's top-level value
                            top = ovs.get(())
                            if top is not None:
                                yield c, i, k, (), top
                            continue
                        for index, values in ovs.items():
                            yield c, i, k, index, values
        finally:
            self._split.clear()  # `_element`'s, made again for this walk

    def positions_and_uses(self) -> tuple[list[list[Position]], list[list[Use]]]:
        """Every value's positions (the defining one first) and uses, by value id: the lists
        XLA keeps per value, made on request (tests; the analyses walk `positions`/`uses`)."""
        positions: list[list[Position]] = [
            [v.defining_position] if v.at_definition else [] for v in self.values
        ]
        uses: list[list[Use]] = [[] for _ in self.values]
        for c, i, index, values in self.positions():
            for v in values:
                if not (v.instruction is i and v.index == index and v.computation is c):
                    positions[v.id].append((c, i, index))
        for c, i, k, index, values in self.uses():
            for v in values:
                uses[v.id].append((c, i, k, index))
        return positions, uses

    def _mark_positions(self) -> None:
        """`at_definition` and `live_out` of every value (the entry root's are live out)."""
        entry = self.entry
        for c, i, index, values in self.positions():
            live_out = c is entry and i is entry.root
            for v in values:
                if v.instruction is i and v.index == index and v.computation is c:
                    v.at_definition = True
                if live_out:
                    v.live_out = True


def defines_value(opcode: str, index: Index, shape: Shape, *, param_defines: bool) -> bool:
    """Whether an instruction defines the value at `index` of its result (InitializeInstruction-
    ValueSets in SSA form, bitcast_defines_value=false). `param_defines`: parameters of the entry
    and of thread-local computations define values; those of control-flow callees take their
    caller's."""
    if opcode == PARAMETER:
        return param_defines
    if opcode in FORWARDING:
        return False
    rule = DEFINES.get(opcode)
    return rule is None or rule(index, shape)


def evaluated_callees(i: Instruction) -> tuple[str, ...]:
    """The computations `_steps` evaluates for `i` at its call site (in the order it does):
    a call's or async-start's computation, every branch of a conditional, a while's body and
    condition; none for the others (fusion bodies and thread-local computations hold no
    values that flow)."""
    op = i.opcode
    if op in (CALL, ASYNC_START):
        return i.called_computations[:1]
    if op == CONDITIONAL:
        return i.called_computations
    if op == WHILE:
        return tuple(name for name in _loop_callees(i) if name)
    return ()


def _loop_callees(i: Instruction) -> tuple[str, str]:
    """A while's (body, condition) names, "" where the attribute is missing."""
    names = {a.key: a.raw.removeprefix("%") for a in i.attributes if a.key in WHILE_KEYS}
    body, condition = (names.get(key, "") for key in WHILE_KEYS)
    return body, condition


def _tuple_index(i: Instruction) -> int:
    """A get-tuple-element's `index`, read from the scanner's spans where it is plain digits:
    making the instruction's Attribute objects for it cost a wide tuple's get-tuple-elements
    a few hundred bytes each, kept (NOTE: [value memory])."""
    for key, raw in attribute_pairs(i.attributes):
        if key == "index":
            text = raw.strip()
            if text.isascii() and text.isdigit() and len(text) < 19:
                return int(text)
            break
    a = i.attr("index")  # anything else: as the attribute reader says (and where it errs)
    return int_value(a) if a is not None else 0


# -- the rules per opcode ------------------------------------------------------------------------

#: opcode -> which indices of its result it defines (InitializeInstructionValueSets, read by
#: `defines_value`); an opcode without an entry defines every index but those of FORWARDING
#: (none) and a parameter (`param_defines`).
DEFINES: Registry[Callable[[Index, Shape], bool]] = Registry("dataflow: defined values")


@DEFINES.register(TUPLE, COPY)
def _defines_top(index: Index, _: Shape) -> bool:
    """The top-level value only; the others flow from the operands."""
    return index == ()


@DEFINES.register(COPY_START)
def _defines_copy_start(index: Index, _: Shape) -> bool:
    """{destination buffer, aliased operand, u32 context}: all but the operand {1}."""
    return index in ((), (0,), (2,))


@DEFINES.register(ASYNC_START)
def _defines_async_start(index: Index, shape: Shape) -> bool:
    """{{aliased operands}, {destination}, contexts}: the tuples and the contexts."""
    if index == (1,) and isinstance(shape, TupleShape) and not shape.elements:
        return True  # libtpu's SparseCore start: an empty {1}, not the wrapped root's
    return index in ((), (0,)) or (bool(index) and index[0] >= 2)


@DEFINES.register(ASYNC_DONE)
def _defines_tuples(_: Index, shape: Shape) -> bool:
    """The tuple-shaped values; the arrays are the wrapped computation's."""
    return isinstance(shape, TupleShape)


@DEFINES.register(ALL_GATHER_START, COLLECTIVE_PERMUTE_START, SEND, RECV_DONE)
def _defines_but_element_0(index: Index, _: Shape) -> bool:
    """Everything but element {0}, an operand's value passed through."""
    return not (index and index[0] == 0)


class _SetRule(NamedTuple):
    """How `_steps` builds one opcode's value set beyond the instruction's own values
    (HloDataflowAnalysis::Update*ValueSet): `build(analysis, computation, instruction)` returns
    (the set, whether it is another instruction's set, not to be changed); a rule that
    `evaluates_callees` is a generator yielding (callee, parameter sets) as `_steps` does, and
    returns the set it built."""

    build: Callable[..., Any]
    evaluates_callees: bool = False


#: opcode -> its `_SetRule`; an opcode without one holds only its own values (`_steps`' fast
#: path, most instructions).
VALUE_SETS: Registry[_SetRule] = Registry("dataflow: value sets")


def _plain(*opcodes: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def add(build: Callable[..., Any]) -> Callable[..., Any]:
        VALUE_SETS.add(opcodes, _SetRule(build))
        return build

    return add


@_plain(BITCAST, DOMAIN, OPT_BARRIER, ADD_DEPENDENCY, ALL_REDUCE_DONE)
def _operand_0(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    """Operand 0's set, shared (`own`, if any, is merged into a copy)."""
    if not i.operands:
        return {}, False
    return cast(_Building, df._operand_set(c, i, 0)), True


@_plain(GET_TUPLE_ELEMENT)
def _get_tuple_element(
    df: DataflowAnalysis, c: Computation, i: Instruction
) -> tuple[_Building, bool]:
    if not i.operands:
        return {}, False
    return cast(_Building, df._element(df._operand_set(c, i, 0), _tuple_index(i))), True


@_plain(TUPLE)
def _tuple(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    out: _Building = {}
    for k in range(len(i.operands)):
        for idx, v in df._operand_set(c, i, k).items():
            out[(k, *idx)] = v
    return out, False


@_plain(COPY)
def _copy(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    """Operand 0's values below the top level (a copy defines only its top)."""
    if not i.operands:
        return {}, False
    return {idx: v for idx, v in df._operand_set(c, i, 0).items() if idx}, False


@_plain(COPY_START)
def _copy_start(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    """Operand 0 is element {1}."""
    if not i.operands:
        return {}, False
    return {(1, *idx): v for idx, v in df._operand_set(c, i, 0).items()}, False


@_plain(ALL_GATHER_START, COLLECTIVE_PERMUTE_START, SEND)
def _operand_at_0(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    """Operand 0 is element {0} (the aliased operand)."""
    if not i.operands:
        return {}, False
    return {(0, *idx): v for idx, v in df._operand_set(c, i, 0).items()}, False


def _element_of_0(element: int) -> Callable[..., tuple[_Building, bool]]:
    """The set of operand 0's element {`element`} (a done's result, aliasing its start's)."""

    def build(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
        if not i.operands:
            return {}, False
        src = df._operand_set(c, i, 0)
        return {idx[1:]: v for idx, v in src.items() if idx[:1] == (element,)}, False

    return build


VALUE_SETS.add(COPY_DONE, _SetRule(_element_of_0(0)))
VALUE_SETS.add((ALL_GATHER_DONE, COLLECTIVE_PERMUTE_DONE, ASYNC_DONE), _SetRule(_element_of_0(1)))


@_plain(RECV_DONE)
def _recv_done(df: DataflowAnalysis, c: Computation, i: Instruction) -> tuple[_Building, bool]:
    """The data is the recv's {0}."""
    if not i.operands:
        return {}, False
    return {idx: v for idx, v in df._operand_set(c, i, 0).items() if idx[:1] == (0,)}, False


VALUE_SETS.add(CALL, _SetRule(DataflowAnalysis._call, evaluates_callees=True))
VALUE_SETS.add(ASYNC_START, _SetRule(DataflowAnalysis._async_start, evaluates_callees=True))
VALUE_SETS.add(ASYNC_UPDATE, _SetRule(DataflowAnalysis._async_update, evaluates_callees=True))
VALUE_SETS.add(CONDITIONAL, _SetRule(DataflowAnalysis._conditional, evaluates_callees=True))
VALUE_SETS.add(WHILE, _SetRule(DataflowAnalysis._while, evaluates_callees=True))

#: HloValue's MayUseOperandValue: users that read no operand value (they pass them through)...
_USES_NOTHING = frozenset({TUPLE, DOMAIN})
#: ... and those that read only an operand's top-level value.
_USES_TOP_ONLY = frozenset({GET_TUPLE_ELEMENT, COPY})
