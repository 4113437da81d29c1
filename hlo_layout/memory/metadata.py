"""The user's source op of an instruction: `metadata={op_name=... source_file=... source_line=...}`
or, in newer dumps, a `stack_frame_id` resolved through the module's StackFrames sections.

NOTE: [attribution] A buffer is attributed to the line of the user's program that put it there:
1. its defining instruction's own metadata; else
2. for an instruction that runs a computation of its own (a fusion, a call, a custom call with
   a body), the root-most instruction with metadata inside it, found breadth first from the
   computation's root (for element k of a tuple-shaped result, from the root's operand k): the
   instruction that writes the output; else
3. (a copy, layout change or convert the compiler added, with no metadata anywhere inside) the
   nearest producer upstream with metadata, breadth first through its operands: the value it
   is a copy of; else
4. (what the compiler made from nothing the user wrote: an iota, a broadcast constant) the
   nearest user downstream with metadata, breadth first (at most USER_SEARCH users): the line
   that needed it.
A buffer that comes from an entry parameter (the parameter itself, or a copy of it) is an
argument: the caller put it there, and jax and TensorFlow give parameters an op_name (the
argument's path) but no source line; grouped by source line, such buffers are "(arguments)".
XLA's fusion passes keep the fused instructions' metadata but often give the fusion none of its
own, so without rule 2 a fusion root (most of a compiled program's buffers) would have no source.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hlo_layout.syntax.index import users
from hlo_layout.syntax.opcodes import PARAMETER, TUPLE
from hlo_layout.syntax.tree import Computation, Instruction, LazyAttributes, Module
from hlo_layout.syntax.values import unescape

_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_FILE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"')
_LINE = re.compile(r"source_line=(\d+)")
_FRAME = re.compile(r"stack_frame_id=(\d+)")
_FIELD = re.compile(r"(\w+)=(\d+)")
#: How many users downstream the last rule of NOTE [attribution] looks at: the nearest, at a
#: bounded cost per value.
USER_SEARCH = 64


class SourceInfo:
    """Resolves op_name and `file:line` of instructions (stack frames read once per module, when
    an instruction first needs them: the memory report resolves only the buffers it shows)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self._read = False
        self.files: dict[int, str] = {}
        self.locations: dict[int, tuple[int, int]] = {}
        self.frames: dict[int, int] = {}
        self._homes: dict[str, Computation] | None = None

    def _read_sections(self) -> None:
        self._read = True
        for section in self.module.sections:
            for e in section.entries:
                raw = e.raw
                if section.name == "FileNames":
                    self.files[e.id] = unescape(raw.strip().strip('"'))
                elif section.name == "FileLocations":
                    f = dict((k, int(v)) for k, v in _FIELD.findall(raw))
                    self.locations[e.id] = (f.get("file_name_id", 0), f.get("line", 0))
                elif section.name == "StackFrames":
                    f = dict((k, int(v)) for k, v in _FIELD.findall(raw))
                    self.frames[e.id] = f.get("file_location_id", 0)

    def attribute(self, i: Instruction, index: tuple[int, ...] = ()) -> Attribution:
        """Where the value of `i` at `index` comes from in the user's program (NOTE:
        [attribution]). Where the instruction found has an op_name but no source line (jax's
        internal ops, a collective on an argument), the rules are walked again for a source
        line, the op_name kept."""
        found = self._find(i, index, sourced=False)
        if found is None:
            return Attribution(None, None, None, self._is_argument(i))
        first = self._at(i, found)
        if first.source is not None or first.argument:
            return first
        better = self._find(i, index, sourced=True)
        if better is None:
            return first
        second = self._at(i, better)
        return Attribution(
            first.op_name or second.op_name, second.source, second.via, second.argument
        )

    def _find(self, i: Instruction, index: tuple[int, ...], *, sourced: bool) -> Instruction | None:
        """The instruction NOTE [attribution]'s rules take `i`'s figures from: one with
        metadata (`sourced`: with a source line) or an argument of the program."""
        if self._has(i, sourced):
            return i
        seen: set[str] = set()
        for body, start in self._bodies(i, index):
            found = self._root_most(body, start, seen, sourced)
            if found is not None:
                return found
        home = self._home().get(i.name)
        if home is None:
            return None
        found = self._root_most(home, i, seen, sourced, skip_start=True)
        if found is None:
            found = self._nearest_user(home, i, seen, sourced)
        return found

    def _has(self, x: Instruction, sourced: bool) -> bool:
        """Whether `x`'s own metadata has a source line (`sourced`) or anything at all."""
        op_name, source = self.of(x)
        return source is not None or (not sourced and op_name is not None)

    def _at(self, i: Instruction, found: Instruction) -> Attribution:
        if found is i:
            op_name, source = self.of(i)
            return Attribution(op_name, source, None, self._is_argument(i))
        return self._via(found)

    def _nearest_user(
        self, home: Computation, start: Instruction, seen: set[str], sourced: bool
    ) -> Instruction | None:
        """Breadth first through the users of `start` within its computation (at most
        USER_SEARCH of them): the first with metadata, or with metadata root-most in a
        computation it runs. For what the compiler made from nothing the user wrote (an iota, a
        broadcast constant), the line that needed it."""
        table = users(home)
        return self._breadth_first(
            table.get(start.name, ()),
            lambda x: table.get(x.name, ()),
            seen,
            sourced,
            visited={start.name},
            limit=USER_SEARCH,
        )

    def _via(self, found: Instruction) -> Attribution:
        op_name, source = self.of(found)
        return Attribution(op_name, source, found.name, self._is_argument(found))

    def _is_argument(self, i: Instruction) -> bool:
        """Whether `i` is a parameter of the entry computation: an argument of the program,
        which no line of it put there (a caller passed it)."""
        return i.opcode == PARAMETER and self._home().get(i.name) is self.module.entry

    def _home(self) -> dict[str, Computation]:
        """Each instruction's computation (names are unique in a module), built on first use."""
        if self._homes is None:
            self._homes = {i.name: c for c in self.module.computations for i in c.instructions}
        return self._homes

    def _bodies(
        self, i: Instruction, index: tuple[int, ...]
    ) -> list[tuple[Computation, Instruction | None]]:
        """The computations `i` runs, each with where to start: its root, or for a tuple root
        the operand holding element `index[0]` (None: the root)."""
        out: list[tuple[Computation, Instruction | None]] = []
        for name in i.called_computations:
            body = self.module.computation(name)
            if body is not None and body.root is not None:
                out.append((body, _element(body, body.root, index)))
        return out

    def _root_most(
        self,
        body: Computation,
        start: Instruction | None,
        seen: set[str],
        sourced: bool,
        *,
        skip_start: bool = False,
    ) -> Instruction | None:
        """Breadth first from `start` (the root) through operands: the first instruction with
        metadata (or an argument of the program), looking into nested computations the same
        way (`skip_start`: from `start`'s operands, its own being known to be empty)."""
        # (a name, not the instruction: its repr spells out its whole shape)
        key = body.name if not skip_start or start is None else f"{body.name}/{start.name}"
        if key in seen:
            return None
        seen.add(key)
        root = start if start is not None else body.root
        if root is None:
            return None
        return self._breadth_first(
            (root,),
            lambda x: [y for o in x.operands if (y := body.resolve(o)) is not None],
            seen,
            sourced,
            skip=root if skip_start else None,
        )

    def _breadth_first(
        self,
        first: Iterable[Instruction],
        step: Callable[[Instruction], Iterable[Instruction]],
        seen: set[str],
        sourced: bool,
        *,
        skip: Instruction | None = None,
        visited: set[str] | None = None,
        limit: int | None = None,
    ) -> Instruction | None:
        """The walk both searches make: breadth first from `first` through `step` (operands or
        users), the first instruction with metadata (`_has`; `skip`'s own known to be empty)
        or an argument of the program, looking into the computations each runs root-most
        (`_root_most`); at most `limit` instructions are visited."""
        queue: deque[Instruction] = deque(first)
        visited = (visited or set()) | {x.name for x in queue}
        while queue and (limit is None or len(visited) <= limit):
            x = queue.popleft()
            if self._is_argument(x) or (x is not skip and self._has(x, sourced)):
                return x
            for nested, nested_start in self._bodies(x, ()):
                found = self._root_most(nested, nested_start, seen, sourced)
                if found is not None:
                    return found
            for y in step(x):
                if y.name not in visited:
                    visited.add(y.name)
                    queue.append(y)
        return None

    def of(self, i: Instruction) -> tuple[str | None, str | None]:
        a = i.attr("metadata")
        if a is None:
            return None, None
        raw = a.raw
        m = _OP_NAME.search(raw)
        op_name = unescape(m.group(1)) if m else None
        f, line = _FILE.search(raw), _LINE.search(raw)
        if f and line:
            return op_name, f"{unescape(f.group(1))}:{line.group(1)}"
        fr = _FRAME.search(raw)
        if fr:
            if not self._read:
                self._read_sections()
            loc = self.locations.get(self.frames.get(int(fr.group(1)), -1))
            if loc is not None and loc[0] in self.files:
                return op_name, f"{self.files[loc[0]]}:{loc[1]}"
        return op_name, None


@dataclass(frozen=True, slots=True)
class Attribution:
    """A value's op_name and `file:line`, `via`: the instruction inside the computation it
    runs (or upstream) that they were taken from (None when they are its own), and `argument`:
    whether that instruction is an argument of the program (an entry parameter: a copy or
    conversion of one comes from the caller, not from a line of the program)."""

    op_name: str | None
    source: str | None
    via: str | None
    argument: bool = False


def _element(body: Computation, root: Instruction, index: tuple[int, ...]) -> Instruction | None:
    """The instruction of `body` that writes element `index` of its tuple-shaped root (following
    nested tuples), or None for the root itself."""
    x = root
    for k in index:
        if x.opcode != TUPLE or k >= len(x.operands):
            break
        nxt = body.resolve(x.operands[k])
        if nxt is None:
            break
        x = nxt
    return None if x is root else x


def op_name_of(i: Instruction) -> str | None:
    """The op_name of an instruction's own metadata (`SourceInfo.of(i)[0]`), read from the unsplit
    attribute tail when there is one: counting op_names over a whole module must not split every
    instruction's attributes (XLA prints `op_name="..."` only inside `metadata={...}`)."""
    a = i.attributes
    if type(a) is LazyAttributes and a._items is None:
        text = a._text
        if "op_name" not in text:
            return None
        m = _OP_NAME.search(text)
        return unescape(m.group(1)) if m else None
    found = i.attr("metadata")
    if found is None:
        return None
    m = _OP_NAME.search(found.raw)
    return unescape(m.group(1)) if m else None
