"""Why the peak changed between two compiles: the headline per memory space, then the buffers
live at each peak paired across the compiles, the change grouped by source line or op_name, and
the parts that explain the rest. The peak is `memory`'s (`MemoryAnalysis.peak_bytes`,
`SpacePeak.peak_bytes`: memory/peak.py); nothing here computes another.

NOTE: [peak attribution] A space's headline is its static allocations plus its heap: the
compiler's temp allocation on CPU and GPU (the heap's peak, its fragmentation, thread-local
buffers), the heap's peak on TPU. The buffers that hold it are the parameters (live at the start)
and outputs (live at the end), constants, and the temporaries live at the peak step; so, exactly,

    Δ headline = Σ rows Δ(parameters, outputs and temporaries at the peak, by key)
                 + Δ constants + Δ fragmentation + Δ thread-local + peak step moved
                 + unattributed,

where `unattributed` is what is left: a static allocation sized for a larger value than the one
listed, the heap's peak against the temporaries live at the peak step (they differ in time or in
how aliased buffers count), and on TPU the module's headline holding one space's heap, not every
space's. The two sides are compared where the larger peak is: at its own peak step, and at the
step of that instruction's counterpart on the other side; the smaller side's own peak step, when
elsewhere, adds the row `peak step moved` (what its temporaries hold there beyond). A buffer
paired across the compiles is keyed by its new side (a line that moved because code was added
above it is still one row); a buffer on one side only by its own.

Buffers pair by what survives recompilation, never by HLO name: their defining instructions
paired by structure (`check/structure.py`), then (role, source line, op_name, shape), then
(role, source line, op_name), then (role, op_name) or (role, source line).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from hlo_layout.errors import HloLayoutError
from hlo_layout.layout.memory_space import space_label
from hlo_layout.layout.padding import tiling_pattern
from hlo_layout.memory.alias import input_output_aliases
from hlo_layout.memory.analysis import LiveBuffer, MemoryAnalysis, SpacePeak
from hlo_layout.memory.attribution import Grouping, group_buffers
from hlo_layout.memory.metadata import op_name_of
from hlo_layout.syntax.fragments import parse_shape
from hlo_layout.syntax.opcodes import BITCAST, CONSTANT, FUSION, GET_TUPLE_ELEMENT, PARAMETER, TUPLE
from hlo_layout.syntax.shape import ArrayShape
from hlo_layout.syntax.tree import LazyAttributes, Module
from hlo_layout.units import ratio_percent

#: The default grouping of the attribution: by source line.
BY_SOURCE = Grouping("source")

#: Roles a buffer plays (its allocation kind): a parameter never pairs with a temp.
_STATIC = ("parameter", "constant", "output")


def change(old: int | None, new: int | None) -> dict[str, Any]:
    """{old, new, delta, percent}: percent of old, 3 decimals, None when old is 0 or missing."""
    delta = None if old is None or new is None else new - old
    percent = ratio_percent(delta, old) if delta is not None and old else None
    return {"old": old, "new": new, "delta": delta, "percent": percent}


@dataclass(frozen=True, slots=True)
class BufferPair:
    """A buffer held at the peak on one side or both, and how it was paired (`structure`,
    `metadata`, `metadata without shape`, `op_name`, `source`), or why it was not: `added`,
    `removed`, or `not held in NEW` / `not held in OLD` (its instruction has a counterpart,
    whose buffer is not held at the step compared: the schedules differ there)."""

    old: LiveBuffer | None
    new: LiveBuffer | None
    how: str

    @property
    def delta(self) -> int:
        return (self.new.bytes if self.new else 0) - (self.old.bytes if self.old else 0)


class _Keyed(NamedTuple):
    """A buffer's bytes under the attribution of another (its pair's new side)."""

    source: str | None
    op_name: str | None
    bytes: int
    argument: bool


def pair_buffers(
    old: Sequence[LiveBuffer],
    new: Sequence[LiveBuffer],
    counterpart: Callable[[str], str | None] | None = None,
    earlier: Callable[[str], str | None] | None = None,
) -> list[BufferPair]:
    """Pair the buffers live at two peaks (see the module docstring), largest change first.
    `counterpart` maps an old instruction name to its structurally paired new one, `earlier`
    the other way."""
    left_old = list(old)
    left_new = list(new)
    pairs: list[BufferPair] = []
    if counterpart is not None:
        by_name: dict[tuple[str, tuple[int, ...]], list[LiveBuffer]] = defaultdict(list)
        for b in left_new:
            by_name[(b.name, b.index)].append(b)
        keep = []
        for a in left_old:
            name = counterpart(a.name)
            found = by_name.get((name, a.index)) if name is not None else None
            if found:
                b = found.pop(0)
                pairs.append(BufferPair(a, b, "structure"))
            else:
                keep.append(a)
        taken = {id(p.new) for p in pairs}
        left_old, left_new = keep, [b for b in left_new if id(b) not in taken]
    keys: list[tuple[str, Callable[[LiveBuffer], tuple[Any, ...] | None]]] = [
        ("metadata", lambda b: (b.allocation, b.source, b.op_name, b.shape)),
        ("metadata without shape", lambda b: (b.allocation, b.source, b.op_name)),
        ("op_name", lambda b: (b.allocation, b.op_name) if b.op_name else None),
        ("source", lambda b: (b.allocation, b.source) if b.source else None),
    ]
    for how, key in keys:
        pool: dict[tuple[Any, ...], list[LiveBuffer]] = defaultdict(list)
        for b in left_new:
            k = key(b)
            if k is not None:
                pool[k].append(b)
        keep = []
        for a in left_old:
            k = key(a)
            found = pool.get(k) if k is not None else None
            if found:
                pairs.append(BufferPair(a, found.pop(0), how))
            else:
                keep.append(a)
        taken = {id(p.new) for p in pairs}
        left_old, left_new = keep, [b for b in left_new if id(b) not in taken]
    # One side only: gone or new, or its counterpart exists but is not held at the step compared
    # (the two schedules differ there).
    for a in left_old:
        there = counterpart is not None and counterpart(a.name) is not None
        pairs.append(BufferPair(a, None, "not held in NEW" if there else "removed"))
    for b in left_new:
        there = earlier is not None and earlier(b.name) is not None
        pairs.append(BufferPair(None, b, "not held in OLD" if there else "added"))
    pairs.sort(key=lambda p: (-abs(p.delta), _name(p)))
    return pairs


def _name(p: BufferPair) -> str:
    b = p.new or p.old
    return b.name if b is not None else ""


def attribution(pairs: Iterable[BufferPair], grouping: Grouping) -> list[dict[str, Any]]:
    """The pairs' bytes grouped by source line or op_name (`memory.attribution`), each pair under
    its new side's key: rows {key, old_bytes, new_bytes, delta_bytes}, largest change first."""
    olds: list[_Keyed] = []
    news: list[_Keyed] = []
    for p in pairs:
        at = p.new or p.old
        if at is None:
            continue
        if p.old is not None:
            olds.append(_Keyed(at.source, at.op_name, p.old.bytes, at.argument))
        if p.new is not None:
            news.append(_Keyed(at.source, at.op_name, p.new.bytes, at.argument))
    old_by = {g.key: g.bytes for g in group_buffers(olds, grouping)}
    new_by = {g.key: g.bytes for g in group_buffers(news, grouping)}
    rows: list[dict[str, Any]] = [
        {
            "key": key,
            "old_bytes": old_by.get(key, 0),
            "new_bytes": new_by.get(key, 0),
            "delta_bytes": new_by.get(key, 0) - old_by.get(key, 0),
        }
        for key in old_by.keys() | new_by.keys()
    ]
    rows.sort(key=lambda r: (-abs(r["delta_bytes"]), r["key"] is None, r["key"] or ""))
    return rows


class _Live:
    """The buffers live at a step of one analysis, each step asked of it once (every space at
    once: a step's rows cost a pass over all buffers and their attribution)."""

    def __init__(self, analysis: MemoryAnalysis) -> None:
        self.analysis = analysis
        self._at: dict[int, list[LiveBuffer]] = {}

    def live_at(self, step: int, number: int) -> list[LiveBuffer]:
        rows = self._at.get(step)
        if rows is None:
            rows = self._at[step] = self.analysis.live_at(step)
        return [b for b in rows if b.memory_space == number]

    @property
    def sequence(self) -> list[str]:
        return self.analysis.sequence


def _static(a: _Live, number: int) -> list[LiveBuffer]:
    """The buffers a space's parameter and output allocations are for: parameters (live at the
    start) and outputs (live at the end). Constants are counted apart (`_constants`)."""
    last = max(0, len(a.sequence) - 1)
    found = [b for b in a.live_at(0, number) if b.allocation == "parameter"]
    found += [b for b in a.live_at(last, number) if b.allocation == "output"]
    return found


def _constants(a: MemoryAnalysis, number: int) -> int:
    """Bytes of a space's constants (each value once): their allocations are static."""
    seen = {(v.name, v.index): v.bytes for v in a.values if v.allocation == "constant"
            and v.memory_space == number}  # fmt: skip
    return sum(seen.values())


def _temps(a: _Live, number: int, step: int) -> list[LiveBuffer]:
    """The temporaries of a space live at `step` (the heap's share of the peak)."""
    return [b for b in a.live_at(step, number) if b.allocation == "temp"]


def _parts(analysis: MemoryAnalysis, space: SpacePeak) -> dict[str, int]:
    """The parts of a space's headline no listed buffer holds (NOTE: [peak attribution])."""
    counts_temp = any(name == "temp allocation" for name, _ in analysis.headline_parts())
    return {
        "constants": _constants(analysis, space.memory_space),
        "fragmentation": space.fragmentation_bytes if counts_temp else 0,
        "thread-local": space.thread_local_bytes if counts_temp else 0,
    }


#: What `unattributed_bytes` holds, for people.
UNATTRIBUTED = (
    "what no listed buffer accounts for: a static allocation sized for a larger value than the "
    "one listed, the heap's peak against the temporaries live at the peak step (they differ in "
    "time or in how aliased buffers count), and on TPU the heaps the module's headline leaves out"
)


def _space_of(analysis: MemoryAnalysis | None, number: int) -> SpacePeak | None:
    if analysis is None:
        return None
    return next((s for s in analysis.spaces if s.memory_space == number), None)


def _padding(pairs: Iterable[BufferPair]) -> list[dict[str, Any]]:
    """Padding of the buffers live at the peak, by tiling pattern, old → new."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p in pairs:
        for side, b in ((0, p.old), (1, p.new)):
            if b is not None and b.padding_bytes:
                acc[_pattern(b.shape)][side] += b.padding_bytes
    rows: list[dict[str, Any]] = [
        {"pattern": k, "old_bytes": v[0], "new_bytes": v[1], "delta_bytes": v[1] - v[0]}
        for k, v in acc.items()
        if v[0] != v[1]
    ]
    rows.sort(key=lambda r: (-abs(r["delta_bytes"]), r["pattern"]))
    return rows


_PATTERNS: dict[str, str] = {}


def _pattern(shape: str) -> str:
    found = _PATTERNS.get(shape)
    if found is None:
        try:
            parsed = parse_shape(shape)
        except HloLayoutError:  # a shape we print ourselves: only a newer printer could fail
            parsed = None
        found = _PATTERNS[shape] = (
            tiling_pattern(parsed) if isinstance(parsed, ArrayShape) else "untiled"
        )
    return found


def _moves(pairs: Iterable[BufferPair]) -> list[dict[str, Any]]:
    """Paired buffers now in another memory space (HBM → host, → VMEM, ...)."""
    return [
        {
            "old": _brief(p.old),
            "new": _brief(p.new),
            "old_space": p.old.memory_space,
            "new_space": p.new.memory_space,
            "delta_bytes": p.delta,
        }
        for p in pairs
        if p.old is not None and p.new is not None and p.old.memory_space != p.new.memory_space
    ]


def _brief(b: LiveBuffer | None) -> dict[str, Any] | None:
    if b is None:
        return None
    return {
        "name": b.name,
        "index": list(b.index),
        "shape": b.shape,
        "bytes": b.bytes,
        "memory_space": b.memory_space,
        "allocation": b.allocation,
        "op_name": b.op_name,
        "source": b.source,
    }


def pair_dict(p: BufferPair) -> dict[str, Any]:
    return {"old": _brief(p.old), "new": _brief(p.new), "how": p.how, "delta_bytes": p.delta}


def _temp_bytes(a: _Live, number: int, step: int) -> int:
    return sum(b.bytes for b in _temps(a, number, step))


def _moved(
    so: SpacePeak | None, sn: SpacePeak | None, counterpart: Callable[[str], str | None] | None
) -> bool:
    """Whether the peak is at another instruction (not the counterpart of the old one)."""
    if so is None or sn is None or so.peak_instruction is None:
        return so is not sn
    if counterpart is None:
        return so.peak_instruction != sn.peak_instruction
    return counterpart(so.peak_instruction) != sn.peak_instruction


def _compared_at(
    old: MemoryAnalysis,
    so: SpacePeak | None,
    new: MemoryAnalysis,
    sn: SpacePeak | None,
    counterpart: Callable[[str], str | None] | None,
    earlier: Callable[[str], str | None] | None,
) -> tuple[int, int]:
    """The steps the two sides are compared at: the larger peak's own step, and the step of its
    instruction's counterpart on the other side (each side's own peak step when there is none).
    A peak that grew is explained where it now is; one that shrank where it was."""
    at_old = so.peak_step if so is not None else 0
    at_new = sn.peak_step if sn is not None else 0
    if so is None or sn is None:
        return at_old, at_new
    if sn.peak_bytes >= so.peak_bytes:
        name = earlier(sn.peak_instruction) if earlier and sn.peak_instruction else None
        found = old.step_of(name) if name is not None else None
        return (at_old if found is None else found), at_new
    name = counterpart(so.peak_instruction) if counterpart and so.peak_instruction else None
    found = new.step_of(name) if name is not None else None
    return at_old, (at_new if found is None else found)


def _space_entry(
    number: int,
    old: MemoryAnalysis,
    new: MemoryAnalysis,
    live: tuple[_Live, _Live],
    counterpart: Callable[[str], str | None] | None,
    earlier: Callable[[str], str | None] | None,
    grouping: Grouping,
) -> tuple[dict[str, Any], list[BufferPair]]:
    so, sn = _space_of(old, number), _space_of(new, number)
    at_old, at_new = _compared_at(old, so, new, sn, counterpart, earlier)
    lo, ln = live
    held_old = _static(lo, number) + _temps(lo, number, at_old) if so is not None else []
    held_new = _static(ln, number) + _temps(ln, number, at_new) if sn is not None else []
    pairs = pair_buffers(held_old, held_new, counterpart, earlier)
    rows = attribution(pairs, grouping)
    # The smaller peak's excess over what it holds where the larger one is (signed as a change
    # from old to new): its own peak step is elsewhere.
    moved_old = moved_new = 0
    if so is not None and at_old != so.peak_step:
        moved_old = _temp_bytes(lo, number, so.peak_step) - _temp_bytes(lo, number, at_old)
    if sn is not None and at_new != sn.peak_step:
        moved_new = _temp_bytes(ln, number, sn.peak_step) - _temp_bytes(ln, number, at_new)
    parts_old = _parts(old, so) if so is not None else {}
    parts_new = _parts(new, sn) if sn is not None else {}
    explained: list[dict[str, Any]] = [
        {
            "key": "peak step moved",
            "old_bytes": moved_old,
            "new_bytes": moved_new,
            "delta_bytes": moved_new - moved_old,
        },
        *(
            {
                "key": name,
                "old_bytes": parts_old.get(name, 0),
                "new_bytes": parts_new.get(name, 0),
                "delta_bytes": parts_new.get(name, 0) - parts_old.get(name, 0),
            }
            for name in ("constants", "fragmentation", "thread-local")
        ),
    ]
    peak_old = so.peak_bytes if so is not None else 0
    peak_new = sn.peak_bytes if sn is not None else 0
    total = peak_new - peak_old
    attributed = sum(r["delta_bytes"] for r in rows) + sum(r["delta_bytes"] for r in explained)

    def step(s: SpacePeak | None, a: MemoryAnalysis, at: int | None = None) -> Any:
        if s is None:
            return None
        out = {"step": s.peak_step, "of": len(a.sequence), "instruction": s.peak_instruction}
        if at is not None:
            out["compared_at"] = at
            out["compared_instruction"] = a.sequence[at] if 0 <= at < len(a.sequence) else None
        return out

    entry = {
        "memory_space": number,
        "name": (sn or so).name,  # type: ignore[union-attr]
        "label": space_label(number, (new if sn is not None else old).backend == "tpu"),
        **change(peak_old, peak_new),
        "static": change(so.static_bytes if so else 0, sn.static_bytes if sn else 0),
        "temp": change(
            so.temp_allocation_bytes if so else 0, sn.temp_allocation_bytes if sn else 0
        ),
        "heap_peak": change(so.heap_peak_bytes if so else 0, sn.heap_peak_bytes if sn else 0),
        "fragmentation": change(
            so.fragmentation_bytes if so else 0, sn.fragmentation_bytes if sn else 0
        ),
        "live": change(so.live_bytes if so else 0, sn.live_bytes if sn else 0),
        "estimate": {"old": bool(so and so.estimate), "new": bool(sn and sn.estimate)},
        "peak_step": {
            "old": step(so, old, at_old),
            "new": step(sn, new, at_new),
            "moved": _moved(so, sn, counterpart),
        },
        "attribution": rows,
        "explained": [r for r in explained if r["old_bytes"] or r["new_bytes"]],
        "unattributed_bytes": total - attributed,
    }
    return entry, pairs


def peak_diff(
    old: MemoryAnalysis,
    new: MemoryAnalysis,
    *,
    counterparts: Mapping[str, str] | None = None,
    grouping: Grouping = BY_SOURCE,
    top: int | None = None,
) -> dict[str, Any]:
    """The `peak` object of `diff --format json` for one module pair (see the module docstring):
    the headline old → new, each memory space's headline and parts, and why it changed.
    `counterparts`: old instruction name → new (`structure.counterparts`); `top` bounds the
    lists of buffers, padding patterns and moves (the attribution is whole: it adds up)."""
    counterpart = earlier = None
    if counterparts is not None:
        counterpart = counterparts.get
        earlier = {v: k for k, v in counterparts.items()}.get
    numbers = sorted({s.memory_space for s in old.spaces} | {s.memory_space for s in new.spaces})
    live = (_Live(old), _Live(new))
    spaces = []
    every: list[BufferPair] = []
    for number in numbers:
        entry, pairs = _space_entry(number, old, new, live, counterpart, earlier, grouping)
        spaces.append(entry)
        every += pairs
    every.sort(key=lambda p: (-abs(p.delta), _name(p)))
    rows = attribution(every, grouping)
    explained: dict[str, list[int]] = {}
    for s in spaces:
        for r in s["explained"]:
            got = explained.setdefault(r["key"], [0, 0])
            got[0] += r["old_bytes"]
            got[1] += r["new_bytes"]
    explained_rows: list[dict[str, Any]] = [
        {"key": k, "old_bytes": v[0], "new_bytes": v[1], "delta_bytes": v[1] - v[0]}
        for k, v in explained.items()
    ]
    # On TPU the module's headline holds one space's heap, each space's headline its own.
    outside = (
        -(sum(s.peak_bytes for s in old.spaces) - old.peak_bytes),
        -(sum(s.peak_bytes for s in new.spaces) - new.peak_bytes),
    )
    if any(outside):
        explained_rows.append(
            {
                "key": "other spaces' heaps (not in the module's headline)",
                "old_bytes": outside[0],
                "new_bytes": outside[1],
                "delta_bytes": outside[1] - outside[0],
            }
        )
    total = new.peak_bytes - old.peak_bytes
    attributed = sum(r["delta_bytes"] for r in rows) + sum(r["delta_bytes"] for r in explained_rows)
    return {
        **change(old.peak_bytes, new.peak_bytes),
        "backend": {"old": old.backend, "new": new.backend},
        "by": grouping.label,
        "spaces": spaces,
        "attribution": rows,
        "explained": explained_rows,
        "unattributed_bytes": total - attributed,
        "unattributed_note": UNATTRIBUTED,
        "buffers": [pair_dict(p) for p in every[:top]],
        "buffers_total": len(every),
        "padding": _padding(every)[:top],
        "moves": _moves(every)[:top],
    }


# --- what the structure says about the change -------------------------------------------------


def _remat_counts(module: Module, callees: Mapping[str, Sequence[tuple[str, ...]]]) -> tuple[
    int, int, Counter[str]
]:  # fmt: skip
    """(instructions XLA's rematerialization cloned (`.remat` names), instructions of a jax
    `checkpoint`'s recomputation (`rematted_computation` in op_name), instructions per op_name
    outside fusion bodies). `callees`: each computation's instructions' callees, in order."""
    fusion_bodies = {
        name
        for c in module.computations
        for i, called in zip(c.instructions, callees.get(c.name, ()), strict=False)
        if i.opcode == FUSION
        for name in called
    }
    xla = jax = 0
    per_op: Counter[str] = Counter()
    for c in module.computations:
        top_level = c.name not in fusion_bodies
        for i in c.instructions:
            if ".remat" in i.name:
                xla += 1
            a = i.attributes
            if a and "rematted_computation" in (
                a._text if type(a) is LazyAttributes else str(tuple(map(str, a)))
            ):
                jax += 1
            if top_level and i.opcode not in _BOOKKEEPING:
                op_name = op_name_of(i)
                if op_name:
                    per_op[op_name] += 1
    return xla, jax, per_op


#: Opcodes that hold no data of their own: not counted as duplicated work.
_BOOKKEEPING = frozenset({PARAMETER, GET_TUPLE_ELEMENT, TUPLE, BITCAST, CONSTANT})


def rematerialization(
    old: Module,
    new: Module,
    top: int | None = None,
    callees: tuple[Mapping[str, Sequence[tuple[str, ...]]], ...] | None = None,
) -> dict[str, Any]:
    """Recomputation on each side: XLA's (`.remat` clones), jax's (`checkpoint`), and op_names
    with more top-level instructions in NEW than in OLD, where OLD has them too (instructions
    duplicated with the same op_name), most added first. `callees` (each side's computations'
    callees per instruction, as `structure.callees_of` gives them) saves reading them again."""
    if callees is None:
        callees = tuple(
            {c.name: [i.called_computations for i in c.instructions] for c in m.computations}
            for m in (old, new)
        )
    xo, jo, po = _remat_counts(old, callees[0])
    xn, jn, pn = _remat_counts(new, callees[1])
    grown: list[dict[str, Any]] = [
        {"op_name": k, "old": po[k], "new": n} for k, n in pn.items() if n > po.get(k, 0) >= 1
    ]
    grown.sort(key=lambda r: (-(r["new"] - r["old"]), r["op_name"]))
    return {
        "xla_remat_instructions": {"old": xo, "new": xn},
        "checkpoint_instructions": {"old": jo, "new": jn},
        "duplicated_op_names": grown[:top],
    }


def aliasing(old: Module, new: Module) -> dict[str, Any]:
    """Donated parameters (`input_output_alias`) on each side: outputs written into a parameter's
    buffer need no allocation of their own. Each entry is `parameter N {index}`."""

    def donated(m: Module) -> set[str]:
        return {
            f"parameter {n}" + (f" {{{','.join(map(str, p))}}}" if p else "")
            for _, n, p in input_output_aliases(m)
        }

    a, b = donated(old), donated(new)
    return {
        "old": len(a),
        "new": len(b),
        "gained": sorted(b - a, key=_natural),
        "lost": sorted(a - b, key=_natural),
    }


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))
