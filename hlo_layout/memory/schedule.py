"""The sequence XLA scheduled for each computation, with the get-tuple-elements the printer folded.

NOTE: [folded get-tuple-elements] Newer XLA prints `%x#1` for a use of element 1 of the tuple %x
and no line for the get-tuple-element itself (HloPrintOptions::compact_gte, on in dumps by
default: `--xla_dump_compact_gte`; NOTE: [tuple-element operands] in syntax/tree.py). The
compiler's schedule still holds that get-tuple-element as a step of its own: HloLiveRange counts
it in every later time, and it is the use that keeps the tuple %x alive. This module puts one
back per distinct `x#N` of a computation, named `x#N`, where the backend's scheduler put it:

- XLA:CPU schedules with BFSMemoryScheduler (hlo_memory_scheduler.cc; cpu_compiler.cc with
  `xla_cpu_enable_concurrency_optimized_scheduler`, jax's default): a first-in first-out queue
  of ready instructions, where popping an instruction appends the users it made ready, in its
  users' order. A get-tuple-element is ready when its tuple is popped, so it sits in that tuple's
  batch; `bfs_sequence` replays the queue over the printed order and keeps the replay only when it
  reproduces that order (every CPU dump in tests/data does; else `after_operand`). Within a batch
  the get-tuple-elements come before the printed instructions, and among themselves in the order
  that makes the replay reproduce the text (the order of those that make nothing ready cannot be
  told and changes no time).
- The TPU and GPU compilers schedule with the latency-hiding scheduler, bottom up, with rules
  (and libtpu's own) that the text does not determine: `before_first_user` puts each right
  before its first user, which is where it is in most of libtpu's schedules
  (tests/data/memory/jax012-tpu/README.md has the counts); times there are estimates.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from hlo_layout.syntax.opcodes import GET_TUPLE_ELEMENT
from hlo_layout.syntax.shape import BufferShape, Shape, TupleShape
from hlo_layout.syntax.tree import Attribute, Computation, Instruction, Operand


def folded_operands(c: Computation) -> bool:
    """Whether any instruction of `c` reads a tuple element through `%x#N`."""
    for i in c.instructions:
        for o in i.operands:
            if o[1] is not None:  # Operand.index
                return True
    return False


def _element(shape: Shape, k: int) -> Shape | None:
    if isinstance(shape, BufferShape):
        shape = shape.element
    if isinstance(shape, TupleShape) and 0 <= k < len(shape.elements):
        return shape.elements[k]
    return None


def restored_gtes(c: Computation) -> dict[tuple[str, int], Instruction]:
    """One get-tuple-element per distinct `x#N` read in `c` (x an instruction of `c` with a tuple
    shape), in the order first read: named `x#N`, shaped as element N of x."""
    out: dict[tuple[str, int], Instruction] = {}
    for i in c.instructions:
        for o in i.operands:
            k = o[1]
            if k is None or (o[0], k) in out:
                continue
            x = c.get(o[0])
            element = _element(x.shape, k) if x is not None else None
            if element is None:
                continue
            out[(o[0], k)] = Instruction(
                f"{o[0]}#{k}",
                GET_TUPLE_ELEMENT,
                element,
                (Operand(o[0]),),
                (Attribute("index", str(k)),),
            )
    return out


def scheduled_sequence(c: Computation, model: str) -> Sequence[Instruction]:
    """`c`'s instructions in schedule order with its folded get-tuple-elements put back (the
    module docstring); `c.instructions` itself when nothing is folded. `model`: `bfs` (XLA:CPU)
    or `before_first_user` (TPU, GPU)."""
    if not folded_operands(c):
        return c.instructions
    gtes = restored_gtes(c)
    if not gtes:
        return c.instructions
    if model == "bfs":
        got = bfs_sequence(c, gtes)
        if got is not None:
            return got
        return after_operand(c, gtes)
    if model == "after_operand":
        return after_operand(c, gtes)
    return before_first_user(c, gtes)


def _reads(i: Instruction, gtes: dict[tuple[str, int], Instruction]) -> list[str]:
    """The names of the nodes `i` depends on, once each, in operand order (a folded operand is its
    get-tuple-element), then its control predecessors."""
    out: list[str] = []
    for o in i.operands:
        k = o[1]
        name = o[0] if k is None or (o[0], k) not in gtes else f"{o[0]}#{k}"
        if name not in out:
            out.append(name)
    a = i.attr("control-predecessors")
    if a is not None:
        for t in a.raw.strip().strip("{}").split(","):
            name = t.strip().removeprefix("%")
            if name and name not in out:
                out.append(name)
    return out


def bfs_sequence(
    c: Computation, gtes: dict[tuple[str, int], Instruction]
) -> list[Instruction] | None:
    """BFSMemoryScheduler's sequence over the printed instructions and the restored
    get-tuple-elements, or None when no replay gives the printed order.

    The batch a popped instruction appends is its users in their users() order, which the text
    shows for printed instructions; restored get-tuple-elements of one tuple go after the printed
    ones of its batch (else, when that replay fails, before them), as a group whose order is
    decided as it is popped: next the one that makes ready the next printed instruction, else one
    that makes none ready."""
    for gtes_first in (False, True):
        got = _replay(c, gtes, gtes_first)
        if got is not None:
            return got
    return None


def _replay(
    c: Computation, gtes: dict[tuple[str, int], Instruction], gtes_first: bool
) -> list[Instruction] | None:
    printed = c.instructions
    position = {i.name: k for k, i in enumerate(printed)}
    nodes: dict[str, Instruction] = {i.name: i for i in printed}
    for g in gtes.values():
        nodes[g.name] = g
    deps: dict[str, int] = {}
    users: dict[str, list[str]] = {name: [] for name in nodes}
    for name, i in nodes.items():
        known = [d for d in _reads(i, gtes) if d in nodes]
        deps[name] = len(known)
        for d in known:
            users[d].append(name)
    queue: deque[str | list[str]] = deque(i.name for i in printed if deps[i.name] == 0)
    pushed = len(queue)  # printed instructions are pushed (and popped) in printed order
    if [i.name for i in printed[:pushed]] != list(queue):
        return None
    out: list[Instruction] = []
    while queue:
        head = queue[0]
        if isinstance(head, str):
            name = head
            queue.popleft()
        else:
            picked = _pick(head, users, deps, position, pushed)
            if picked is None:
                return None
            name = picked
            head.remove(name)
            if not head:
                queue.popleft()
        out.append(nodes[name])
        group: list[str] = []
        ready: list[str] = []
        for u in users[name]:
            deps[u] -= 1
            if deps[u] == 0:
                (ready if u in position else group).append(u)
        ready.sort(key=position.__getitem__)
        for u in ready:
            if position[u] != pushed:
                return None
            pushed += 1
        if group and gtes_first:
            queue.append(group)
        queue.extend(ready)
        if group and not gtes_first:
            queue.append(group)
    return out if len(out) == len(nodes) else None


def _pick(
    group: list[str],
    users: dict[str, list[str]],
    deps: dict[str, int],
    position: dict[str, int],
    pushed: int,
) -> str | None:
    """The get-tuple-element of `group` to pop next (`_replay`): one that makes ready exactly the
    next printed instructions, else one that makes none ready, the one read soonest first (it
    may complete another's set), else None (no replay fits the text)."""
    idle: tuple[int, str] | None = None
    for g in group:
        made = sorted(position[u] for u in users[g] if deps[u] == 1 and u in position)
        if not made:
            soonest = min((position[u] for u in users[g] if u in position), default=1 << 62)
            if idle is None or soonest < idle[0]:
                idle = (soonest, g)
        elif made == list(range(pushed, pushed + len(made))):
            return g
    return idle[1] if idle is not None else None


def after_operand(c: Computation, gtes: dict[tuple[str, int], Instruction]) -> list[Instruction]:
    """Each restored get-tuple-element right after its tuple (in `gtes` order)."""
    by_tuple: dict[str, list[Instruction]] = {}
    for (x, _), g in gtes.items():
        by_tuple.setdefault(x, []).append(g)
    out: list[Instruction] = []
    for i in c.instructions:
        out.append(i)
        out.extend(by_tuple.get(i.name, ()))
    return out


def before_first_user(
    c: Computation, gtes: dict[tuple[str, int], Instruction]
) -> list[Instruction]:
    """Each restored get-tuple-element right before the first instruction reading it."""
    out: list[Instruction] = []
    placed: set[tuple[str, int]] = set()
    for i in c.instructions:
        for o in i.operands:
            k = o[1]
            if k is not None and (o[0], k) in gtes and (o[0], k) not in placed:
                placed.add((o[0], k))
                out.append(gtes[(o[0], k)])
        out.append(i)
    return out
