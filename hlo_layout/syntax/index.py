"""The syntax index: who calls a computation, who uses a value, in which order, of which kind.

One implementation of the graph facts the tree does not store, used by tree nodes
(`Module.callers`, `Module.kind`), `verify`, fusion composition (`indexing/fusion.py`), the
memory model (`computation_kinds`: which computations hold buffers), the cost analysis and the
streamed reader. The call graph is walked by one function, `walk_calls`, which refuses a
cycle. Results are cached on the node they describe (outside its compared fields), so each is
computed once per tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hlo_layout.errors import HloSemanticError, Span
from hlo_layout.syntax.lexicon import pattern
from hlo_layout.syntax.opcodes import CALLED_COMPUTATION_KEYS, FUSION, SEQUENTIAL_CALLERS

if TYPE_CHECKING:
    from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Module

#: Finds, in an unsplit attribute tail, every word that may be a key naming called
#: computations (a whole word: not `_xla_calls` nor `%calls`; also inside strings or nested
#: groups, which `tail_callees` then tells apart).
CALLS_RE = re.compile(
    pattern(r"(?<![%#]|{WORD_CHAR})(" + "|".join(CALLED_COMPUTATION_KEYS) + r")(?!{NAME_CHAR})")
)
#: A called-computation key's value in the forms XLA prints: `%name` or `{%a, %b}`.
_CALLEE_VALUE = re.compile(
    pattern(
        r"%?({NAME_RUN})"
        r'|\{({B}*(?:%?[^\s,{}()\[\]"=:/<>]+(?:{B}*,{B}*%?[^\s,{}()\[\]"=:/<>]+)*)?{B}*)\}'
    )
)
_FLAT_NAME = re.compile(pattern(r"%?({NAME_RUN})"))  # a value: a name or an integer
_CALLED_KEYS = frozenset(CALLED_COMPUTATION_KEYS)


#: tail_callees' answers by tail text: a dump repeats its tails (and the scanner has already
#: hashed each tail string, so a lookup costs no pass over a long backend_config).
_TAIL_CALLEES: dict[str, tuple[str, ...] | None] = {}
#: tail_callee_keys' answers, the same way.
_TAIL_KEYS: dict[str, tuple[str, ...] | None] = {}
_MISSING: Any = object()


def tail_callees(attributes: LazyAttributes) -> tuple[str, ...] | None:
    """The computations an unsplit attribute tail calls, in attribute order, read from the
    scanner's spans (`LazyAttributes.spans`: no attribute is made); None when a called key's
    value is in another form (then `called_computations` splits). Memoized by text (bounded).
    A tail that names no called-computation key outside its strings (most: `metadata` alone)
    is not split to learn that."""
    found = _TAIL_CALLEES.get(attributes._text, _MISSING)
    if found is _MISSING:
        found = _read_tail(attributes)[0]
    return found


def tail_callee_keys(attributes: LazyAttributes) -> tuple[str, ...] | None:
    """The keys naming called computations in an unsplit attribute tail (`calls`,
    `to_apply`, ...), in attribute order, from the same spans; None as `tail_callees`."""
    found = _TAIL_KEYS.get(attributes._text, _MISSING)
    if found is _MISSING:
        found = _read_tail(attributes)[1]
    return found


def _read_tail(
    attributes: LazyAttributes,
) -> tuple[tuple[str, ...], tuple[str, ...]] | tuple[None, None]:
    """(callees, keys) of a tail, read once and kept in both memos."""
    if len(_TAIL_CALLEES) > 65_536:
        forget_tails()
    tail = attributes._text
    found = ((), ()) if CALLS_RE.search(tail) is None else _tail_calls(tail, attributes.spans())
    _TAIL_CALLEES[tail], _TAIL_KEYS[tail] = found
    return found


def forget_tails() -> None:
    """Empty the tail memos: a streamed reader drops each computation's tree once written,
    and the memos would keep its tails alive (megabytes of backend configs)."""
    _TAIL_CALLEES.clear()
    _TAIL_KEYS.clear()


def _tail_calls(
    tail: str, spans: tuple[int, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | tuple[None, None]:
    """The callees and the keys naming them of a tail split into `spans` ((None, None) where
    the grammar split it, or a called key's value is not in a form `attrs.computation_names`
    reads alike)."""
    if not spans:
        return None, None
    names: list[str] = []
    keys: list[str] = []
    for k in range(0, len(spans), 4):
        key = tail[spans[k] : spans[k + 1]]
        if key not in _CALLED_KEYS:
            continue
        value = _CALLEE_VALUE.fullmatch(tail, spans[k + 2], spans[k + 3])
        if value is None:
            return None, None
        keys.append(key)
        name, group = value.groups()
        if name is not None:
            names.append(name)
        elif group is not None and group.strip(" \t"):
            for item in group.split(","):
                word = _FLAT_NAME.fullmatch(item.strip(" \t"))
                if word is None:
                    return None, None
                names.append(word.group(1))
    return tuple(names), tuple(keys)


#: The computation kinds of `inspect` (JSON `kind`).
ENTRY, FUSION_KIND, CALLED, UNUSED = "entry", "fusion", "called", "unused"

Callers = dict[str, tuple[tuple["Computation", "Instruction"], ...]]


def instructions_calling(computation: Computation) -> Iterator[Instruction]:
    """The instructions of `computation` that may call computations, without splitting the
    attribute tails of the many that call none."""
    from hlo_layout.syntax.tree import LazyAttributes

    for i in computation.instructions:
        attributes = i.attributes
        if not attributes or (
            type(attributes) is LazyAttributes and tail_callees(attributes) == ()
        ):
            continue
        yield i


def callees(computation: Computation) -> Iterator[tuple[str, Instruction]]:
    """(called computation name, calling instruction) for every call in `computation`."""
    for i in instructions_calling(computation):
        for callee in i.called_computations:
            yield callee, i


Calls = dict[str, tuple[tuple["Instruction", tuple[str, ...]], ...]]


def calls(module: Module) -> Calls:
    """For each computation name, its calling instructions in text order, each with the names it
    calls in attribute order (cached): the call graph's edges, read once per tree, for the
    passes that walk it (`callers`, the memory analysis' computation kinds)."""
    cache = module._cache
    cached = cache.get("calls")
    if cached is not None:
        return cached  # type: ignore[return-value]
    from hlo_layout.syntax.tree import LazyAttributes

    result: Calls = {}
    for c in module.computations:
        found = []
        for i in c.instructions:
            attributes = i.attributes
            if not attributes:
                continue
            # An unsplit tail is asked once (`called_computations` would ask again).
            names = tail_callees(attributes) if type(attributes) is LazyAttributes else None
            if names is None:
                names = i.called_computations
            if names:
                found.append((i, names))
        if found:
            result[c.name] = tuple(found)
    cache["calls"] = result
    return result


def callers(module: Module) -> Callers:
    """For each computation name, the (computation, instruction) pairs that call it (cached)."""
    cache = module._cache
    cached = cache.get("callers")
    if cached is not None:
        return cached  # type: ignore[return-value]
    out: dict[str, list[tuple[Computation, Instruction]]] = {}
    edges = calls(module)
    for c in module.computations:
        for i, names in edges.get(c.name, ()):
            for callee in names:
                out.setdefault(callee, []).append((c, i))
    result = {k: tuple(v) for k, v in out.items()}
    cache["callers"] = result
    return result


def computation_kind(is_entry: bool, caller_opcodes: Iterable[str]) -> str:
    """`entry`, `fusion` (called only by fusion instructions), `called`, or `unused`."""
    if is_entry:
        return ENTRY
    opcodes = list(caller_opcodes)
    if not opcodes:
        return UNUSED
    if all(op == FUSION for op in opcodes):
        return FUSION_KIND
    return CALLED


def kind(module: Module, computation: Computation) -> str:
    """`computation`'s kind within `module`."""
    sites = callers(module).get(computation.name, ())
    return computation_kind(computation is module.entry, [i.opcode for _, i in sites])


def users(computation: Computation) -> dict[str, list[Instruction]]:
    """For each instruction name, the instructions using it as an operand, in text order, each
    once (XLA's HloInstruction::users). Cached on the computation."""
    cache = computation._cache
    cached = cache.get("users")
    if cached is None:
        out: dict[str, list[Instruction]] = {}
        for instruction in computation.instructions:
            for operand in instruction.operands:
                found = out.setdefault(operand.name, [])
                if not found or found[-1] is not instruction:
                    found.append(instruction)
        cached = cache["users"] = out
    return cached  # type: ignore[return-value]


def post_order(computation: Computation) -> list[Instruction]:
    """Every instruction after all of its operands (XLA's
    HloComputation::MakeInstructionPostOrder, without control predecessors). Cached."""
    cache = computation._cache
    cached = cache.get("post_order")
    if cached is not None:
        return cached  # type: ignore[return-value]
    resolve = computation.resolve
    order: list[Instruction] = []
    state: dict[str, int] = {}

    def producers(instruction: Instruction) -> Iterator[Instruction]:
        for operand in instruction.operands:
            producer = resolve(operand)
            if producer is not None:
                yield producer

    for start in computation.instructions:
        if start.name in state:
            continue
        state[start.name] = 1
        stack: list[tuple[Instruction, Iterator[Instruction]]] = [(start, producers(start))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[node.name] = 2
                order.append(node)
            elif nxt.name not in state:
                state[nxt.name] = 1
                stack.append((nxt, producers(nxt)))
    cache["post_order"] = order
    return order


class CallCycleError(HloSemanticError):
    """A computation that calls itself, directly or through others. XLA's call graph is acyclic
    (its parser only names computations already defined, and CallGraph assumes a DAG); every
    walk below would otherwise loop. Located at the call that closes the cycle."""

    def __init__(self, message: str, span: Span | None, cycle: tuple[str, ...]) -> None:
        super().__init__(message, span)
        #: The computations of the cycle, from the callee to the caller that closes it.
        self.cycle = cycle


Site = TypeVar("Site")


def walk_calls(
    starts: Iterable[str],
    edges: Mapping[str, Sequence[tuple[Site, Sequence[str]]]],
    known: Container[str],
    unknown: Callable[[Site, str], None] | None = None,
) -> list[str] | tuple[Site, str, tuple[str, ...]]:
    """The call-graph walk every analysis shares: the computations reachable from `starts` (in
    that order), each after the computations it calls and each once (XLA's
    HloModule::MakeComputationPostOrder). `edges` gives each computation's calls as (site,
    callee names); callees not `known` are skipped, each call of one passed to `unknown` as
    the walk meets it (which may raise). Linear in the edges, without recursion.

    A cycle is returned instead, as (site, callee, cycle): the call closing it (the first found
    depth first) and the computations from the callee back to its caller."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1 on the path being walked, 2 done
    for start in starts:
        if start in state or start not in known:
            continue
        state[start] = 1
        path = [start]
        stack = [_calls_of(edges, start)]
        while stack:
            found = next(stack[-1], None)
            if found is None:
                stack.pop()
                done = path.pop()
                state[done] = 2
                order.append(done)
                continue
            site, callee = found
            seen = state.get(callee)
            if seen == 1:
                return site, callee, tuple(path[path.index(callee) :])
            if seen is None:
                if callee in known:
                    state[callee] = 1
                    path.append(callee)
                    stack.append(_calls_of(edges, callee))
                elif unknown is not None:
                    unknown(site, callee)
    return order


def _calls_of(
    edges: Mapping[str, Sequence[tuple[Site, Sequence[str]]]], name: str
) -> Iterator[tuple[Site, str]]:
    return ((site, callee) for site, names in edges.get(name, ()) for callee in names)


def call_cycle(module: Module) -> CallCycleError | None:
    """The error for `module`'s call graph when it has a cycle (None when it has none); the walk
    starts at the entry, then takes the other computations in text order."""
    found = _walk(module)
    return found if isinstance(found, CallCycleError) else None


def computation_post_order(module: Module) -> list[Computation]:
    """Every computation after the computations it calls, each once (XLA's
    HloModule::MakeComputationPostOrder; `walk_calls`), the entry's callees first; unknown
    callees are skipped. Raises CallCycleError on a call cycle. Cached.

    The one walk over the call graph: an analysis that needs each callee before its callers (or
    the reverse, walking the list backwards) takes this order and `calls(module)` for the call
    sites, rather than expanding callees at every call site (exponential in a call tree)."""
    found = _walk(module)
    if isinstance(found, CallCycleError):
        raise found
    return found


def _walk(module: Module) -> list[Computation] | CallCycleError:
    cache = module._cache
    cached = cache.get("computation_post_order")
    if cached is None:
        by_name = {c.name: c for c in module.computations}
        entry = module.entry
        starts = [entry.name] if entry is not None else []
        starts += by_name
        found = walk_calls(starts, calls(module), by_name)
        cached = (
            [by_name[name] for name in found] if isinstance(found, list) else cycle_error(*found)
        )
        cache["computation_post_order"] = cached
    return cached  # type: ignore[return-value]


def computation_kinds(module: Module) -> dict[str, str]:
    """`global` (the entry and callees of while/conditional/call/async-start from global code),
    `thread_local` (reducers, comparators and other callees: XLA gives each of their buffers an
    allocation of its own) or `fusion` (fusion bodies: no buffers). Unreached computations are
    absent. Mirrors GatherComputationsByAllocationType (buffer_assignment.cc). Cached on the
    module (a streamed skeleton module comes with its kinds: `report/skeleton.py`).
    """
    cache = module._cache
    kinds = cache.get("kinds")
    if kinds is None:
        entry = module.entry
        edges = {
            caller: [(i.opcode, names) for i, names in found]
            for caller, found in calls(module).items()
        }
        known = {c.name for c in module.computations}
        kinds = cache["kinds"] = kinds_of_calls(
            entry.name if entry is not None else None, edges, known
        )
    return kinds  # type: ignore[return-value]


def kinds_of_calls(
    entry: str | None,
    edges: Mapping[str, Sequence[tuple[str, Sequence[str]]]],
    known: Container[str],
) -> dict[str, str]:
    """`computation_kinds` over the call graph alone: `edges` gives each computation's calls as
    (calling opcode, callee names); callees not `known` are skipped. The kinds are the fixpoint
    of "the best rank any caller gives", so the order of the edges does not matter."""
    if entry is None:
        return {}
    rank = {"global": 0, "thread_local": 1, "fusion": 2}
    kinds: dict[str, str] = {entry: "global"}
    stack = [entry]
    while stack:
        c = stack.pop()
        kind = kinds[c]
        for opcode, names in edges.get(c, ()):
            if opcode == FUSION:
                new = "fusion"
            elif opcode in SEQUENTIAL_CALLERS and kind == "global":
                new = "global"
            else:
                new = "thread_local"
            for callee in names:
                if callee not in known:
                    continue
                old = kinds.get(callee)
                if old is None or rank[new] < rank[old]:
                    kinds[callee] = new
                    stack.append(callee)
    return kinds


def cycle_error(site: Instruction, callee: str, cycle: tuple[str, ...]) -> CallCycleError:
    """The error for a cycle `walk_calls` found (its sites being instructions)."""
    ring = " -> ".join([*cycle, callee])
    caller = cycle[-1]
    how = "itself" if caller == callee else f"'{callee}', which calls back into it"
    return CallCycleError(
        f"'{site.name}' in computation '{caller}' calls {how} (call cycle {ring}); "
        "XLA's call graph has no cycles",
        site.span,
        cycle,
    )


__all__ = [
    "CALLS_RE",
    "CallCycleError",
    "call_cycle",
    "callees",
    "callers",
    "computation_kind",
    "computation_kinds",
    "computation_post_order",
    "cycle_error",
    "instructions_calling",
    "kind",
    "kinds_of_calls",
    "post_order",
    "tail_callee_keys",
    "tail_callees",
    "users",
    "walk_calls",
]
