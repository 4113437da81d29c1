"""Which computation and instruction of one compile is which of another, never by HLO name.

Every compile renumbers (`fusion.12` → `fusion.13`; compiling another function first in the same
process shifts every id), so names say nothing about what survived recompilation. Instructions
are paired the way a tree diff pairs nodes (GumTree: Falleri et al., "Fine-grained and accurate
source code differencing", ASE 2014), adapted to HLO's DAGs:

1. **Identical subtrees, top-down.** Each instruction gets a structural id, bottom-up: its opcode,
   shape, name-free attributes (no `metadata`, no ids such as `channel_id`, callees as their own
   structural ids) and its operands' ids in order. Equal ids mean identical subtrees. Roots with
   equal ids, then ids that occur once on each side (users before operands), are paired with
   their whole operand DAGs, position by position.
2. **Bottom-up and down again.** What is left is paired through what is already paired: an
   operand at the same position of two paired users, when the opcode agrees; an instruction whose
   operands' counterparts it shares with a candidate of the same opcode (most operand positions
   agreeing, then the same shape, `op_name` and relative position); parameters by number.
3. **Recovery.** Leftovers with equal ids in text order, then by (opcode, `op_name`, source line)
   occurring once on each side: metadata survives recompilation, names do not.

Computations pair entry with entry, then callee by callee through paired call sites, then
leftovers (uncalled ones) by structural id. A pair whose ids differ is *changed* only when its own
label (opcode, shape, attributes, parameter number, literal) or its inputs differ: an operand
that is neither the counterpart nor structurally identical, a callee likewise. So two compiles of
one program that differ only in numbering show no structural change.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from operator import itemgetter
from typing import Any

from hlo_layout.memory.footprint import ShapeFacts
from hlo_layout.memory.metadata import SourceInfo
from hlo_layout.syntax.opcodes import CALL, CALLED_COMPUTATION_KEYS, FUSION, PARAMETER
from hlo_layout.syntax.printer import print_layout, print_shape
from hlo_layout.syntax.scan import attribute_pairs
from hlo_layout.syntax.shape import ArrayShape, Layout, Shape, TupleShape
from hlo_layout.syntax.tree import Attribute, Computation, Instruction, LazyAttributes, Module

#: Attributes that are not structure: where the op came from, and numbering.
_DROPPED = frozenset({"metadata", "channel_id", "control-predecessors", "unique_id"})
#: Attributes whose value names computations: kept as keys, their values replaced by the
#: callees' structural ids.
_CALLEE_KEYS = frozenset(CALLED_COMPUTATION_KEYS)


def _signature(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k, "" if k in _CALLEE_KEYS else _canonical(v) if k in _JSON_KEYS else v)
        for k, v in pairs
        if k not in _DROPPED
    )


#: Attributes holding JSON, whose key order differs between XLA versions.
_JSON_KEYS = frozenset({"backend_config"})


@lru_cache(maxsize=1 << 16)
def _canonical(raw: str) -> str:
    """A JSON object's text with its keys sorted (`{"b":1,"a":2}` and `{"a":2,"b":1}` are one
    backend config); anything else as written."""
    text = raw.strip()
    try:
        value = json.loads(text)
        if isinstance(value, str):  # an older printer quotes it: backend_config="{...}"
            value = json.loads(value)
    except ValueError:
        return raw
    if not isinstance(value, dict):
        return raw
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class _Signatures:
    """Name-free attribute signatures, memoized by the unsplit tail's text (a dump's tails repeat:
    splitting each one again would cost as much as the parse)."""

    def __init__(self) -> None:
        self.by_text: dict[str, tuple[tuple[str, str], ...]] = {}

    def __call__(self, attributes: Sequence[Attribute]) -> tuple[tuple[str, str], ...]:
        if not attributes:
            return ()
        if type(attributes) is LazyAttributes:
            text = attributes._text
            hit = self.by_text.get(text)
            if hit is None:
                hit = self.by_text[text] = _signature(attribute_pairs(attributes))
            return hit
        return _signature((a.key, a.raw) for a in attributes)


@dataclass(slots=True)
class _Side:
    """One computation as index arrays: operands, callees and structural ids per instruction."""

    computation: Computation
    instructions: tuple[Instruction, ...]
    #: Per instruction: operand positions in `instructions` (-1: not in this computation).
    operands: list[tuple[int, ...]]
    #: Per instruction: the names of the computations it calls.
    callees: list[tuple[str, ...]]
    #: Per instruction: its structural id (equal ids = identical subtrees).
    ids: list[int] = field(default_factory=list)
    #: The computation's structural id.
    id: int = -1
    _users: list[list[int]] | None = None

    @property
    def users(self) -> list[list[int]]:
        users = self._users
        if users is None:
            users = self._users = [[] for _ in self.instructions]
            for k, ops in enumerate(self.operands):
                for o in ops:
                    if o >= 0 and k not in users[o]:
                        users[o].append(k)
        return users

    def root(self) -> int:
        for k, i in enumerate(self.instructions):
            if i.is_root:
                return k
        return len(self.instructions) - 1


class _Ids:
    """Interns structural labels as small ints shared by both modules, so equal ids are equal
    labels exactly (no hash collisions)."""

    def __init__(self) -> None:
        self.table: dict[tuple[Any, ...], int] = {}
        self.shape = ShapeFacts()
        #: Shape text by shape object id (the objects are kept alive by the modules compared).
        self.shape_texts: dict[int, str] = {}
        self.signature = _Signatures()

    def intern(self, label: tuple[Any, ...]) -> int:
        table = self.table
        found = table.get(label)
        if found is None:
            found = table[label] = len(table)
        return found


def _index(module: Module, ids: _Ids) -> dict[str, _Side]:
    """Every computation of `module` as a _Side with structural ids, callees before callers
    (HLO's call graph has no cycles; a malformed one is cut, not looped)."""
    by_name = {c.name: c for c in module.computations}
    sides: dict[str, _Side] = {}
    for c in module.computations:
        if c.name in sides:
            continue
        # Depth-first over callees without recursion: a side is built once its callees are.
        stack = [c]
        open_: dict[str, _Side] = {c.name: _side(c)}
        while stack:
            top = stack[-1]
            side = open_[top.name]
            pending = [
                by_name[n]
                for called in side.callees
                for n in called
                if n in by_name and n not in sides and n not in open_
            ]
            if pending:
                for p in pending:
                    if p.name not in open_:
                        open_[p.name] = _side(p)
                        stack.append(p)
                continue
            stack.pop()
            _identify(side, sides, ids)
            sides[top.name] = side
    return sides


def _side(c: Computation) -> _Side:
    instructions = c.instructions
    position = {i.name: k for k, i in enumerate(instructions)}
    get = position.get
    return _Side(
        c,
        instructions,
        [tuple([get(o[0], -1) for o in i.operands]) for i in instructions],
        [i.called_computations for i in instructions],
    )


def _identify(side: _Side, sides: dict[str, _Side], ids: _Ids) -> None:
    """The structural ids of a side's instructions (its callees' already known), bottom-up: a
    label and its operands' ids. XLA prints operands first; any other order is walked
    depth-first."""
    instructions, operands, callees = side.instructions, side.operands, side.callees
    n = len(instructions)
    out = [-1] * (n + 1)  # out[-1] stays -1: an operand not in this computation
    shape_text, signature = ids.shape.text, ids.signature
    known_shapes, known_tails = ids.shape_texts, ids.signature.by_text
    table = ids.table
    intern = table.setdefault
    of = out.__getitem__
    lazy = LazyAttributes

    def label(k: int) -> tuple[Any, ...]:
        # The hot loop: one instruction's label with its operands' ids (lookups inlined).
        i = instructions[k]
        s = known_shapes.get(id(i.shape))
        if s is None:
            s = known_shapes[id(i.shape)] = shape_text(i.shape)
        a = i.attributes
        if not a:
            sig: Any = ()
        elif type(a) is lazy:
            sig = known_tails.get(a._text)  # type: ignore[attr-defined]
            if sig is None:
                sig = signature(a)
        else:
            sig = signature(a)
        called = callees[k]
        return (
            i.opcode,
            s,
            sig,
            i.parameter_number,
            i.literal,
            tuple([sides[c].id if c in sides else -1 for c in called]) if called else (),
            tuple(map(of, operands[k])),
            tuple(map(_TUPLE_INDEX, i.operands)),
        )

    for k in range(n):
        ops = operands[k]
        if not ops or max(ops) < k:
            out[k] = intern(label(k), len(table))
            continue
        stack = [k]  # an operand printed later: depth-first, operands before users
        on_path = {k}
        while stack:
            top = stack[-1]
            pending = [o for o in operands[top] if o >= 0 and out[o] < 0 and o not in on_path]
            if pending:
                stack.extend(pending)
                on_path.update(pending)
                continue
            stack.pop()
            if out[top] < 0:
                out[top] = intern(label(top), len(table))
    del out[n]
    side.ids = out
    root = side.root()
    side.id = ids.intern(("computation", out[root] if n else -1, tuple(sorted(out))))


#: An operand's tuple element number (`%x#1`), None for a whole value.
_TUPLE_INDEX = itemgetter(1)


@dataclass(slots=True)
class _Pairing:
    """Instruction pairs of one computation pair, as index arrays (-1: unpaired)."""

    old: _Side
    new: _Side
    of_old: list[int] = field(default_factory=list)
    of_new: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.of_old = [-1] * len(self.old.instructions)
        self.of_new = [-1] * len(self.new.instructions)

    def link(self, a: int, b: int) -> None:
        self.of_old[a] = b
        self.of_new[b] = a

    def free(self, a: int, b: int) -> bool:
        return self.of_old[a] < 0 and self.of_new[b] < 0

    def descend(self, a: int, b: int) -> list[tuple[int, int]]:
        """Pair a and b and, position by position, their operands (identical subtrees, or
        operands of the same opcode under a paired user); the pairs made."""
        made = []
        stack = [(a, b)]
        old, new = self.old, self.new
        while stack:
            a, b = stack.pop()
            if not self.free(a, b):
                continue
            self.link(a, b)
            made.append((a, b))
            for oa, ob in zip(old.operands[a], new.operands[b], strict=False):
                if oa >= 0 and ob >= 0 and self.free(oa, ob) and _same_kind(old, oa, new, ob):
                    stack.append((oa, ob))
        return made


def _same_kind(old: _Side, a: int, new: _Side, b: int) -> bool:
    return old.ids[a] == new.ids[b] or old.instructions[a].opcode == new.instructions[b].opcode


def _match_instructions(
    old: _Side,
    new: _Side,
    source: tuple[SourceInfo, SourceInfo],
    params: dict[int, int] | None = None,
) -> _Pairing:
    """Pair two computations' instructions (see the module docstring); `params` maps an old
    parameter number to the new one when the call sites say so (a fusion's operands reordered)."""
    p = _Pairing(old, new)
    if not old.instructions or not new.instructions:
        return p
    if old.ids == new.ids:  # identical, in the same order: the common case, paired at once
        p.of_old = list(range(len(old.ids)))
        p.of_new = list(range(len(new.ids)))
        return p
    # 1. Identical subtrees: the roots, then ids unique on each side, users before operands.
    ra, rb = old.root(), new.root()
    if old.ids[ra] == new.ids[rb]:
        p.descend(ra, rb)
    by_id_new: dict[int, list[int]] = defaultdict(list)
    for b, h in enumerate(new.ids):
        if p.of_new[b] < 0:
            by_id_new[h].append(b)
    count_old: dict[int, int] = defaultdict(int)
    for a, h in enumerate(old.ids):
        if p.of_old[a] < 0:
            count_old[h] += 1
    for a in range(len(old.instructions) - 1, -1, -1):
        if p.of_old[a] >= 0:
            continue
        h = old.ids[a]
        candidates = by_id_new.get(h)
        if candidates and len(candidates) == 1 and count_old[h] == 1:
            b = candidates[0]
            if p.of_new[b] < 0:
                p.descend(a, b)
    # 2. Through what is paired: operands under paired users, users over paired operands.
    if -1 in p.of_old and -1 in p.of_new:
        _propagate(p, params or {})
        _recover(p, source)
    return p


def _propagate(p: _Pairing, params: dict[int, int]) -> None:
    old, new = p.old, p.new
    # Roots and parameters are what they are whatever their subtrees became; a parameter is the
    # one its call sites' paired operands say, else the one of its number.
    ra, rb = old.root(), new.root()
    if p.free(ra, rb) and old.instructions[ra].opcode == new.instructions[rb].opcode:
        p.link(ra, rb)
    params_new = {
        i.parameter_number: b for b, i in enumerate(new.instructions) if i.opcode == PARAMETER
    }
    for a, i in enumerate(old.instructions):
        if i.opcode == PARAMETER and i.parameter_number is not None:
            b = params_new.get(params.get(i.parameter_number, i.parameter_number), -1)
            if b >= 0 and p.free(a, b):
                p.link(a, b)
    changed = True
    while changed:
        changed = False
        # Down: operands at the same position of paired users.
        for a in range(len(old.instructions) - 1, -1, -1):
            b = p.of_old[a]
            if b < 0:
                continue
            for oa, ob in zip(old.operands[a], new.operands[b], strict=False):
                if oa >= 0 and ob >= 0 and p.free(oa, ob) and _same_kind(old, oa, new, ob):
                    changed |= bool(p.descend(oa, ob))
        # Up: an unpaired instruction and an unpaired user of its operands' counterparts.
        users = new.users
        for a, ops in enumerate(old.operands):
            if p.of_old[a] >= 0:
                continue
            best = _best_user(p, a, ops, users)
            if best >= 0:
                p.descend(a, best)
                changed = True


def _best_user(p: _Pairing, a: int, ops: tuple[int, ...], users: list[list[int]]) -> int:
    """The unpaired new instruction of a's opcode that takes the most of a's operands'
    counterparts at the same positions (at least half of them), then the same shape, then the
    nearest relative position; -1 when none."""
    old, new = p.old, p.new
    opcode = old.instructions[a].opcode
    seen: set[int] = set()
    best, best_key = -1, None
    for o in ops:
        if o < 0 or p.of_old[o] < 0:
            continue
        for b in users[p.of_old[o]]:
            if b in seen or p.of_new[b] >= 0 or new.instructions[b].opcode != opcode:
                continue
            seen.add(b)
            theirs = new.operands[b]
            agree = sum(1 for x, y in zip(ops, theirs, strict=False) if x >= 0 and p.of_old[x] == y)
            if 2 * agree < max(len(ops), len(theirs)):
                continue
            key = (
                agree,
                old.instructions[a].shape == new.instructions[b].shape,
                -abs(a / len(old.instructions) - b / len(new.instructions)),
            )
            if best_key is None or key > best_key:
                best, best_key = b, key
    return best


def _recover(p: _Pairing, source: tuple[SourceInfo, SourceInfo]) -> None:
    """Leftovers: equal ids in text order, then (opcode, op_name, source) unique on each side."""
    old, new = p.old, p.new

    def leftovers(side: _Side, of: list[int], key: Callable[[int], Any]) -> dict[Any, list[int]]:
        out: dict[Any, list[int]] = defaultdict(list)
        for k in range(len(side.instructions)):
            if of[k] < 0:
                out[key(k)].append(k)
        return out

    same_new = leftovers(new, p.of_new, lambda b: new.ids[b])
    for h, olds in leftovers(old, p.of_old, lambda a: old.ids[a]).items():
        for a, b in zip(olds, same_new.get(h, ()), strict=False):
            if p.free(a, b):
                p.descend(a, b)

    def meta(side: _Side, info: SourceInfo) -> Callable[[int], Any]:
        def key(k: int) -> Any:
            i = side.instructions[k]
            op_name, where = info.of(i)
            return (i.opcode, op_name, where) if op_name or where else None

        return key

    by_meta_new = leftovers(new, p.of_new, meta(new, source[1]))
    for key, olds in leftovers(old, p.of_old, meta(old, source[0])).items():
        news = by_meta_new.get(key, [])
        if key is not None and len(olds) == 1 and len(news) == 1 and p.free(olds[0], news[0]):
            p.descend(olds[0], news[0])


#: Call sites whose operand k is their callee's parameter k.
_PASSES_OPERANDS = frozenset({FUSION, CALL})


def _operand_map(p: _Pairing, ka: int, kb: int) -> dict[int, int]:
    """Old operand number → new, through the paired operands of a call site that passes its
    operands as its callee's parameters (empty for any other call)."""
    if p.old.instructions[ka].opcode not in _PASSES_OPERANDS:
        return {}
    position = {o: j for j, o in reversed(list(enumerate(p.new.operands[kb])))}
    out = {}
    for i, oa in enumerate(p.old.operands[ka]):
        j = position.get(p.of_old[oa], -1) if oa >= 0 and p.of_old[oa] >= 0 else -1
        if j >= 0:
            out[i] = j
    return out


@dataclass(frozen=True)
class ModuleMatch:
    """Computation and instruction pairs of two modules (old → new), and what is left over."""

    computations: tuple[tuple[Computation, Computation], ...]
    removed_computations: tuple[Computation, ...]
    added_computations: tuple[Computation, ...]
    #: Per paired computation (old name): its instruction pairs.
    instructions: dict[str, _Pairing]
    #: Computation pairs by old name (to compare callees).
    counterpart: dict[str, str]
    sides: tuple[dict[str, _Side], dict[str, _Side]]
    ids: _Ids


def match_modules(old: Module, new: Module) -> ModuleMatch:
    """Pair the computations and instructions of two compiles (see the module docstring)."""
    ids = _Ids()
    sides_old, sides_new = _index(old, ids), _index(new, ids)
    source = (SourceInfo(old), SourceInfo(new))
    counterpart: dict[str, str] = {}
    taken: set[str] = set()
    pairings: dict[str, _Pairing] = {}
    order: list[tuple[str, str]] = []

    def walk(queue: list[tuple[str, str, dict[int, int]]]) -> None:
        while queue:
            a, b, params = queue.pop()
            p = pairings[a] = _match_instructions(sides_old[a], sides_new[b], source, params)
            callees_new = p.new.callees
            for ka, called_a in enumerate(p.old.callees):
                kb = p.of_old[ka]
                if not called_a or kb < 0:
                    continue
                called_b = callees_new[kb]
                if len(called_a) != len(called_b):
                    continue
                for ca, cb in zip(called_a, called_b, strict=True):
                    if ca in counterpart or cb in taken or ca not in sides_old:
                        continue
                    if cb not in sides_new:
                        continue
                    counterpart[ca] = cb
                    taken.add(cb)
                    order.append((ca, cb))
                    queue.append((ca, cb, _operand_map(p, ka, kb) if len(called_a) == 1 else {}))

    if old.entry is not None and new.entry is not None:
        counterpart[old.entry.name] = new.entry.name
        taken.add(new.entry.name)
        order.append((old.entry.name, new.entry.name))
        walk([(old.entry.name, new.entry.name, {})])
    # Computations no paired call site reached (uncalled ones, or under unpaired calls):
    # equal structural ids in module order.
    left_new: dict[int, list[str]] = defaultdict(list)
    for c in new.computations:
        if c.name not in taken:
            left_new[sides_new[c.name].id].append(c.name)
    for c in old.computations:
        if c.name in counterpart:
            continue
        pool = left_new.get(sides_old[c.name].id)
        while pool and pool[0] in taken:
            pool.pop(0)
        if pool:
            b = pool.pop(0)
            counterpart[c.name] = b
            taken.add(b)
            order.append((c.name, b))
            walk([(c.name, b, {})])
    by_old = {c.name: c for c in old.computations}
    by_new = {c.name: c for c in new.computations}
    return ModuleMatch(
        tuple((by_old[a], by_new[b]) for a, b in order),
        tuple(c for c in old.computations if c.name not in counterpart),
        tuple(c for c in new.computations if c.name not in taken),
        pairings,
        counterpart,
        (sides_old, sides_new),
        ids,
    )


def _what_changed(m: ModuleMatch, p: _Pairing, a: int, b: int) -> tuple[list[str], str]:
    """Which parts of a paired instruction differ (empty: only deeper down, or nothing), and
    the difference said briefly (`fusion → copy; S(3) → S(1); attributes backend_config`)."""
    old, new = p.old, p.new
    if old.ids[a] == new.ids[b]:
        return [], ""
    x, y = old.instructions[a], new.instructions[b]
    what: list[str] = []
    said: list[str] = []
    if x.opcode != y.opcode:
        what.append("opcode")
        said.append(f"{x.opcode} → {y.opcode}")
    if m.ids.shape(x.shape) != m.ids.shape(y.shape):
        what.append("shape")
        said.append(shape_change(x.shape, y.shape))
    if x.parameter_number != y.parameter_number:
        what.append("parameter")
        said.append(f"parameter({x.parameter_number}) → parameter({y.parameter_number})")
    if x.literal != y.literal:
        what.append("literal")
        said.append("constant value")
    sig_a, sig_b = m.ids.signature(x.attributes), m.ids.signature(y.attributes)
    if sig_a != sig_b:
        what.append("attributes")
        da, db = dict(sig_a), dict(sig_b)
        keys = sorted(k for k in da.keys() | db.keys() if da.get(k) != db.get(k))
        said.append("attributes " + ", ".join(keys))
    ops_a, ops_b = old.operands[a], new.operands[b]
    if len(ops_a) != len(ops_b) or any(
        not (
            (oa >= 0 and p.of_old[oa] == ob) or (oa >= 0 and ob >= 0 and old.ids[oa] == new.ids[ob])
        )
        or xa.index != xb.index
        for oa, ob, xa, xb in zip(ops_a, ops_b, x.operands, y.operands, strict=False)
    ):
        what.append("operands")
        said.append(
            "operands" if len(ops_a) == len(ops_b) else f"{len(ops_a)} → {len(ops_b)} operands"
        )
    ca, cb = old.callees[a], new.callees[b]
    sides_old, sides_new = m.sides
    if len(ca) != len(cb) or any(
        m.counterpart.get(p_) != q
        and not (p_ in sides_old and q in sides_new and sides_old[p_].id == sides_new[q].id)
        for p_, q in zip(ca, cb, strict=False)
    ):
        what.append("calls")
        said.append("calls another computation")
    return what, "; ".join(said)


def shape_change(old: Shape, new: Shape) -> str:
    """What differs between two shapes, briefly: `f32 → bf16`, `[8,128] → [16,128]`, `layout
    {1,0} → {0,1}`, `tiles (8,128) → (8,128)(2,1)`, `S(3) → S(1)`; a tuple's leaves' differences
    once each."""
    a, b = old.leaves(), new.leaves()
    if isinstance(old, TupleShape) and isinstance(new, TupleShape) and len(a) != len(b):
        return f"tuple of {len(a)} → {len(b)} arrays"
    if type(old) is not type(new) or len(a) != len(b):
        return f"{print_shape(old)} → {print_shape(new)}"
    parts: list[str] = []
    for (_, x), (_, y) in zip(a, b, strict=True):
        for part in _array_change(x, y):
            if part not in parts:
                parts.append(part)
    return "; ".join(parts) or "shape"


def _array_change(a: ArrayShape, b: ArrayShape) -> list[str]:
    out = []
    if a.element_type != b.element_type:
        out.append(f"{a.element_type} → {b.element_type}")
    if a.dims != b.dims:
        out.append(f"[{','.join(map(str, a.dims))}] → [{','.join(map(str, b.dims))}]")
    la, lb = a.layout or Layout(a.minor_to_major), b.layout or Layout(b.minor_to_major)
    if a.minor_to_major != b.minor_to_major:
        m2m = ",".join(map(str, a.minor_to_major)), ",".join(map(str, b.minor_to_major))
        out.append(f"layout {{{m2m[0]}}} → {{{m2m[1]}}}")
    if la.tiles != lb.tiles:
        tiles = "".join(map(str, la.tiles)) or "none", "".join(map(str, lb.tiles)) or "none"
        out.append(f"tiles {tiles[0]} → {tiles[1]}")
    if la.memory_space != lb.memory_space:
        out.append(f"S({la.memory_space}) → S({lb.memory_space})")
    rest_a = replace(la, minor_to_major=(), tiles=(), memory_space=0)
    rest_b = replace(lb, minor_to_major=(), tiles=(), memory_space=0)
    if rest_a != rest_b and not out:
        out.append(f"layout {print_layout(la)} → {print_layout(lb)}")
    return out


def callees_of(m: ModuleMatch) -> tuple[dict[str, list[tuple[str, ...]]], ...]:
    """Each side's computations' callees per instruction, as the match read them."""
    return tuple({name: side.callees for name, side in sides.items()} for sides in m.sides)


def counterparts(m: ModuleMatch) -> dict[str, str]:
    """Each paired old instruction's name → its new counterpart's (names are unique in a
    module)."""
    out = {}
    for c_old, c_new in m.computations:
        olds, news = c_old.instructions, c_new.instructions
        for a, b in enumerate(m.instructions[c_old.name].of_old):
            if b >= 0:
                out[olds[a].name] = news[b].name
    return out


def structure_diff(old: Module, new: Module, m: ModuleMatch | None = None) -> dict[str, Any]:
    """Computations and instructions added, removed, changed (and renamed: numbering only);
    `m` is their pairing when already made (`match_modules`)."""
    m = m or match_modules(old, new)
    shape = m.ids.shape
    info = (SourceInfo(old), SourceInfo(new))

    def brief(c: Computation, i: Instruction, source: SourceInfo) -> dict[str, Any]:
        op_name, where = source.of(i)
        return {
            "computation": c.name,
            "name": i.name,
            "opcode": i.opcode,
            "shape": shape(i.shape),
            "op_name": op_name,
            "source": where,
        }

    added: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    renamed: list[dict[str, str]] = []
    for c_old, c_new in m.computations:
        p = m.instructions[c_old.name]
        ids_old, ids_new = p.old.ids, p.new.ids
        olds, news = c_old.instructions, c_new.instructions
        for a, b in enumerate(p.of_old):
            x = olds[a]
            if b < 0:
                removed.append(brief(c_old, x, info[0]))
                continue
            y = news[b]
            if x.name != y.name:
                renamed.append({"computation": c_new.name, "old": x.name, "new": y.name})
            if ids_old[a] == ids_new[b]:
                continue
            what, said = _what_changed(m, p, a, b)
            if what:
                op_name, where = info[1].of(y)
                changed.append(
                    {
                        "computation": c_new.name,
                        "name": y.name,
                        "old_name": x.name,
                        "old_opcode": x.opcode,
                        "new_opcode": y.opcode,
                        "old_shape": shape(x.shape),
                        "new_shape": shape(y.shape),
                        "what": what,
                        "change": said,
                        "op_name": op_name,
                        "source": where,
                    }
                )
        added += [
            brief(c_new, y, info[1]) for b, y in enumerate(c_new.instructions) if p.of_new[b] < 0
        ]
    paired = sum(1 for p in m.instructions.values() for b in p.of_old if b >= 0)
    return {
        "computations": {
            "paired": len(m.computations),
            "added": [c.name for c in m.added_computations],
            "removed": [c.name for c in m.removed_computations],
            "renamed": [[a.name, b.name] for a, b in m.computations if a.name != b.name],
        },
        "instructions": {
            "paired": paired,
            "added": added,
            "removed": removed,
            "changed": changed,
            "renamed": renamed,
        },
    }
