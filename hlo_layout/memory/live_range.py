"""HloLiveRange (xla/hlo/utils/hlo_live_range.cc), module scoped: the flattened schedule and every
value's [start, end] in it, exactly as XLA's `*-live-range.txt` prints them.

The schedule of a computation is its text order (a scheduled dump prints instructions in schedule
order; for an unscheduled dump this is an estimate, and the analysis says so), with the
get-tuple-elements the printer folded into `%x#N` operands put back where the backend's scheduler
put them (DataflowAnalysis.sequence, memory/schedule.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Generator
from dataclasses import dataclass

from hlo_layout.memory.alias import AliasAnalysis
from hlo_layout.memory.dataflow import DataflowAnalysis, HloValue
from hlo_layout.memory.nesting import run_nested
from hlo_layout.syntax.opcodes import (
    ASYNC_DONE,
    ASYNC_START,
    ASYNC_UPDATE,
    CALL,
    CONDITIONAL,
    PARAMETER,
    WHILE,
)
from hlo_layout.syntax.tree import Computation, Instruction


@dataclass(slots=True)
class TimeBound:
    start: int
    end: int
    #: (computation, instruction, index) of the position that ends the range (GetLastPosition);
    #: None for the value's defining position (`HloValue.defining_position`, not kept twice).
    end_position: tuple | None


class LiveRange:
    """FlattenSchedule + CalculateBufferStartEndMap + NormalizeAliasedBuffers."""

    def __init__(self, dataflow: DataflowAnalysis, alias: AliasAnalysis) -> None:
        self.dataflow = dataflow
        self.alias = alias
        #: The flattened schedule: every instruction of a computation run in sequence, in order
        self.sequence: list[Instruction] = []
        self.time: dict[int, int] = {}  # id(instruction) -> time
        self.spans: dict[str, tuple[int, int]] = {}
        self.async_context: dict[str, Instruction] = {}
        #: Computations an async chain wraps (flattened right before the instruction binding
        #: its operands), as opposed to those called from one.
        self.async_wrapped: set[str] = set()
        self._flatten(dataflow.entry, None)
        self.end_time = len(self.sequence)
        self.ranges: dict[int, TimeBound] = {}
        self._start_end()
        #: Each value's end (by value id; -1 without a range) before NormalizeAliasedBuffers
        #: chained the values of one buffer.
        self.unchained_end = [-1] * len(dataflow.values)
        for v, r in self.ranges.items():
            self.unchained_end[v] = r.end
        self._normalize()

    def _flatten(self, c: Computation, async_start: Instruction | None) -> None:
        """HloLiveRange::FlattenSchedule: callees' instructions before their caller's; without
        recursion, as call chains are as deep as the user wrote them (`nesting.run_nested`)."""
        run_nested(self._flatten_steps(c, async_start), lambda r: self._flatten_steps(*r))

    def _flatten_steps(
        self, c: Computation, async_start: Instruction | None
    ) -> Generator[tuple[Computation, Instruction | None], None, None]:
        if c.name in self.spans:
            return
        if async_start is not None:
            self.async_context[c.name] = async_start
        module = self.dataflow.module
        start = len(self.sequence)
        self.spans[c.name] = (start, start)  # guards recursion
        #: async-start name -> (the start, its wrapped computations) not yet flattened
        unbound: dict[str, tuple[Instruction, list[Computation]]] = {}
        #: async-update / async-done name -> the async-start of its chain
        chain: dict[str, Instruction] = {}
        for i in self.dataflow.sequence(c):
            op = i.opcode
            if op in (CALL, CONDITIONAL):
                for name in i.called_computations:
                    callee = module.computation(name)
                    if callee is not None:
                        yield callee, async_start
            elif op == ASYNC_START:
                # The wrapped computation is flattened before the first instruction of the
                # async chain with its operands bound (IsFirstFullyBound): the start, or for
                # libtpu's operand-less start (SparseCore), the async-update that passes them.
                callees = [x for n in i.called_computations if (x := module.computation(n))]
                if not i.operands and any(x.parameter_instructions for x in callees):
                    unbound[i.name] = (i, callees)
                else:
                    for callee in callees:
                        self.async_wrapped.add(callee.name)
                        yield callee, i
            elif op in (ASYNC_UPDATE, ASYNC_DONE) and i.operands:
                first = chain.get(i.operands[0].name) or c.get(i.operands[0].name)
                if first is not None:
                    chain[i.name] = first
                    pending = unbound.get(first.name)
                    if pending is not None and (op == ASYNC_DONE or len(i.operands) > 1):
                        del unbound[first.name]
                        for callee in pending[1]:
                            self.async_wrapped.add(callee.name)
                            yield callee, pending[0]
            elif op == WHILE:
                names = {a.key: a.raw.removeprefix("%") for a in i.attributes}
                for key in ("condition", "body"):
                    callee = module.computation(names.get(key, ""))
                    if callee is not None:
                        yield callee, async_start
            self.time[id(i)] = len(self.sequence)
            self.sequence.append(i)
        self.spans[c.name] = (start, len(self.sequence))

    def _async_done_time(self, start: Instruction) -> int | None:
        """Time of the async-done ending the chain that `start` begins."""
        users = self._users()
        cur = start
        for _ in range(64):
            nxt = [u for u in users.get(cur.name, ()) if u.opcode in (ASYNC_UPDATE, ASYNC_DONE)]
            if not nxt:
                return None
            cur = nxt[0]
            if cur.opcode == ASYNC_DONE:
                return self.time.get(id(cur))
        return None

    def _users(self) -> dict[str, list[Instruction]]:
        cached = getattr(self, "_user_map", None)
        if cached is None:
            cached = {}
            for i in self.sequence:
                for o in i.operands:
                    cached.setdefault(o.name, []).append(i)
            self._user_map = cached
        return cached

    def _start_end(self) -> None:
        df = self.dataflow
        module = df.module
        time = self.time
        spans = self.spans
        entry = df.entry
        donated = self.alias.is_donated
        # Only the flattened computations' roots are read (a root elsewhere has no time).
        roots = {c.name: c.root for c in module.computations if c.name in spans}
        while_body_param: dict[int, Instruction] = {}
        for i in self.sequence:
            if i.opcode == WHILE:
                names = {a.key: a.raw.removeprefix("%") for a in i.attributes}
                body = module.computation(names.get("body", ""))
                if body is not None and body.parameter_instructions:
                    while_body_param[id(i)] = body.parameter_instructions[0]
        async_context, end_time, ranges = self.async_context, self.end_time, self.ranges
        n = len(df.values)
        # Per value id: its start (None: no range), its end so far and the position ending it
        # (None: the defining one), filled by a walk over the values, then over the positions
        # and the uses (`DataflowAnalysis.positions`/`uses`, NOTE: [value memory]).
        starts: list[int | None] = [None] * n
        ends = [0] * n
        end_positions: list[tuple | None] = [None] * n
        for v in df.values:
            i = v.instruction
            t = time.get(id(i))
            if t is None:
                continue
            c = v.computation
            span = spans.get(c.name)
            if span is None:
                continue
            is_root = roots.get(c.name) is i
            start = span[0] if i.opcode == PARAMETER else t
            if is_root and c.name in self.async_wrapped and df.backend.async_root_at_binding:
                # The wrapped computation's result is the async chain's: libtpu's live ranges
                # start it at the instruction binding the chain (Backend.async_root_at_binding).
                start = span[1]
            definition_end = span[1] if is_root else t
            ctx = async_context.get(c.name)
            if ctx is not None:
                done = self._async_done_time(ctx)
                if done is not None:
                    definition_end = max(definition_end, done)
            starts[v.id] = start
            ends[v.id] = definition_end
        # The first position (the defining one, when it is one) ends the range unless a later
        # one does: a value not at its definition takes its first position without a time.
        first_taken = [v.at_definition for v in df.values]
        for pc, pi, index, values in df.positions():
            pt: int | None = -1  # this position's time, looked up once (None: it has none)
            for v in values:
                vid = v.id
                if starts[vid] is None or (
                    v.instruction is pi and v.index == index and v.computation is pc
                ):
                    continue
                if not first_taken[vid]:
                    first_taken[vid] = True
                    end_positions[vid] = (pc, pi, index)
                    continue
                if pt == -1:
                    if roots.get(pc.name) is pi:
                        pt = spans[pc.name][1] if pc.name in spans else None
                    else:
                        pt = time.get(id(pi))
                if pt is not None and pt > ends[vid]:
                    ends[vid] = pt
                    end_positions[vid] = (pc, pi, index)
        del first_taken
        last_use = [-1] * n
        for _, user, _, _, values in df.uses():
            if user.opcode == CALL:
                continue
            if user.opcode == WHILE:
                param = while_body_param.get(id(user))
                if param is not None:
                    user = param
            ut = time.get(id(user))
            if ut is None:
                continue
            for v in values:
                if ut > last_use[v.id]:
                    last_use[v.id] = ut
        for v in df.values:
            vid = v.id
            begins = starts[vid]
            if begins is None:
                continue
            i = v.instruction
            end = ends[vid]
            if (
                i.opcode == PARAMETER
                and v.computation is entry
                and not donated(i.parameter_number or 0, v.index)
            ):
                end = end_time
            elif last_use[vid] > end:
                end = last_use[vid]
            ranges[vid] = TimeBound(begins, end, end_positions[vid])

    def _normalize(self) -> None:
        ranges = self.ranges
        for buffer in self.alias.buffers:
            if len(buffer) < 2:  # most buffers: nothing to chain
                continue
            members = [(ranges[v.id], v.id) for v in buffer if v.id in ranges]
            if len(members) < 2:
                continue
            members.sort(key=lambda m: (m[0].start, m[0].end, m[1]))
            for (r1, _), (r2, _) in itertools.pairwise(members):
                r2.end = max(r1.end, r2.end)
                r1.end = min(r1.end, r2.start)

    def range_of(self, v: HloValue) -> TimeBound | None:
        return self.ranges.get(v.id)
