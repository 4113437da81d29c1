"""Loads `grammars/hlo.lark` (shipped as package data) and turns Lark trees into our tree types.

The parser is built once per process, from a pickled cache when one can be written. The
transformer is the only place Lark objects are seen: no `lark.Tree` or `lark.Token` leaves this
module, and a rule without a callback fails loudly instead of silently rebuilding a Tree. Its
callbacks run as the LALR parse reduces each rule (`parse_transformed`): no Tree is built, which
halves the grammar tier's time.

NOTE: [inline instructions and computations] XLA's parser reads an operand written as an
instruction (`add(f32[] parameter(0), f32[] constant(1))`) by creating that instruction first,
named `<opcode>.anon`, and a computation written as an attribute value (`to_apply={ ... }`) by
creating a computation named `_`. We do the same: the operand becomes an instruction of its own,
placed just before its user and named `<opcode>.anon` (made unique within the computation with
XLA's `.N` suffix); the inline computation becomes a computation named `_` (`_.1`, `_.2`, ...
made unique within the file), placed before the computation that uses it, and the attribute's
value becomes that name (`to_apply=_`). Printing such a tree writes the expanded form, which
parses back to an equal tree.

NOTE: [inferred shapes] An instruction written without a shape (`ROOT n = negate(a)`) gets the
shape XLA's shape inference gives it (hlo_layout/syntax/shape_inference.py) with
`Instruction.shape_inferred` set; the scanner declines such lines, so only this path meets them.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, v_args

from hlo_layout import limits
from hlo_layout.compat import lark as compat
from hlo_layout.errors import HloSemanticError, Source, Span
from hlo_layout.syntax import values as V
from hlo_layout.syntax.assemble import finish_items
from hlo_layout.syntax.layout_text import ShapeTextError as _Bad
from hlo_layout.syntax.layout_text import make_array_shape as make_array_shape  # re-exported
from hlo_layout.syntax.layout_text import make_layout as make_layout  # re-exported
from hlo_layout.syntax.shape import (
    COMBINE,
    UNBOUNDED,
    BufferShape,
    Shape,
    SplitConfig,
    Tile,
    TupleShape,
    check_tuple_depth,
)
from hlo_layout.syntax.tree import (
    CALLED_COMPUTATION_KEYS,
    Attribute,
    Computation,
    Instruction,
    Module,
    Operand,
    ParameterDecl,
    Section,
    SectionEntry,
)

#: Start symbols the rest of the package may parse on their own.
STARTS = (
    "start",
    "shape",
    "value",
    "literal",
    "instruction",
    "computation",
    "inline_computation",
)


def grammar_text() -> str:
    """The grammar file's text, from the installed package or, in a source checkout, the repo."""
    try:
        return resources.files("hlo_layout.grammars").joinpath("hlo.lark").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        here = Path(__file__).resolve().parents[2] / "grammars" / "hlo.lark"
        return here.read_text("utf-8")


@functools.cache
def lark_parser() -> Lark:
    """The LALR parser over the whole grammar. Its tables and lexer read the text for
    `_parse_tree_free`; its own `parse` (a Tree with positions) runs only where that driver
    does not match the installed Lark (`_tree_free_ok`)."""
    text = grammar_text()
    options: dict[str, Any] = {
        "parser": "lalr",
        "lexer": "contextual",
        "start": list(STARTS),
        "propagate_positions": True,
        "maybe_placeholders": False,
    }
    try:
        # Lark keys its cache file (in the temp dir) by grammar, options and Lark version.
        return Lark(text, cache=True, **options)
    except OSError:  # an unwritable temp dir only costs the build time (~0.3 s)
        return Lark(text, **options)


class _InlineOperand:
    """An operand written as an instruction, before it is given its `<opcode>.anon` name."""

    __slots__ = ("instruction",)

    def __init__(self, instruction: Instruction) -> None:
        self.instruction = instruction


class _InlineComputation:
    """An attribute whose value is a computation body, before the body is given its `_` name."""

    __slots__ = ("instructions", "key", "span")

    def __init__(self, key: str, instructions: tuple[Instruction, ...], span: Span) -> None:
        self.key = key
        self.instructions = instructions
        self.span = span


#: How a callback takes its node (`_callback`): children inlined, `(meta, children)`, or the
#: children list (a plain method, as in a subclass that `v_args` did not decorate); a rule with
#: no callback goes to `__default__`, and an inlined `_rule` hands its children to its parent.
_INLINE, _META, _LIST, _DEFAULT, _INLINED = 0, 1, 2, 3, 4


def _callback(cls: type, name: str) -> tuple[Any, int] | None:
    """The plain function behind `cls`'s callback for rule `name` and how it is called, or None.

    Looked up once per class (`_actions`): Lark's `Transformer._call_userfunc` did it with
    `getattr` on every node, and a `v_args` callback's `__get__` builds a new wrapper each time
    (`functools.update_wrapper`)."""
    member = compat.static_member(cls, name)
    if member is None:
        return None
    wrapped = compat.v_args_style(member)
    if wrapped is not None:
        return (wrapped[0], _INLINE if wrapped[1] == compat.INLINE else _META)
    if inspect.isfunction(member):
        return (member, _LIST)
    raise TypeError(f"transformer callback {name!r} is not a function")


class _Meta:
    """What a `meta=True` callback reads of Lark's `Meta`: where its rule's text starts and ends
    (`empty` when it holds no token), as Lark's `PropagatePositions` computes it."""

    __slots__ = ("empty", "end_pos", "start_pos")

    def __init__(self, start_pos: int | None, end_pos: int | None) -> None:
        self.start_pos = start_pos
        self.end_pos = end_pos
        self.empty = start_pos is None


def _reduction(cls: type, rule: Any) -> tuple:
    """What reducing `rule` does: Lark's `ParseTreeBuilder` wrapper chain (child filter, `?rule`
    single-child expansion) ending in `cls`'s callback instead of a Tree.

    `(size, origin, kept, expanding, expand1, style, function, name, passthrough)`: `kept` the
    indices of the children passed on (`(index, inlined)` pairs when an inlined `_rule`'s children
    are spliced in), or None when all are; `passthrough` when the rule is one symbol that stands
    for itself (`?value: value_primary`): its value, span and depth are its child's."""
    origin, name, expand1, symbols = compat.rule_facts(rule)
    kept = [(i, inlined) for i, (passed, inlined) in enumerate(symbols) if passed]
    expanding = any(inlined for _, inlined in kept)
    indices: Any = None
    if expanding:
        indices = tuple(kept)
    elif len(kept) < len(symbols):
        indices = tuple(i for i, _ in kept)
    if name.startswith("_"):
        if expand1:
            raise TypeError(f"inlined rule {name!r} cannot also be a ?rule")
        style, function = _INLINED, None
    else:
        found = _callback(cls, name)
        style, function = found[::-1] if found is not None else (_DEFAULT, None)
    size = len(symbols)
    passthrough = expand1 and size == 1 and kept == [(0, False)]
    return (size, origin, indices, expanding, expand1, style, function, name, passthrough)


#: An action of `_actions`: shift to the state its argument names, reduce by a rule, or reduce
#: by a rule whose one child stands for it (`_reduction`'s passthrough; the argument names the
#: rule's origin).
_SHIFT, _REDUCE, _PASS = 0, 1, 2


def _actions(cls: type) -> dict[Any, dict[str, tuple[int, Any]]]:
    """Lark's LALR table (state → terminal or rule name → action) with each reduction's rule
    replaced by what reducing it does for `cls` (`_reduction`), built once per class: a
    subclass overrides callbacks."""
    table = cls.__dict__.get("_lalr_actions")
    if table is None:
        reductions: dict[Any, tuple] = {}
        table = {}
        for state, actions in compat.table_rows(lark_parser()):
            row = {}
            for symbol, shift, arg in actions:
                if shift:
                    row[symbol] = (_SHIFT, arg)
                else:
                    if arg not in reductions:
                        reductions[arg] = _reduction(cls, arg)
                    reduction = reductions[arg]
                    row[symbol] = (_PASS, reduction[1]) if reduction[-1] else (_REDUCE, reduction)
            table[state] = row
        cls._lalr_actions = table  # type: ignore[attr-defined]
    return table  # type: ignore[no-any-return]


def _lex(text: str, parser_state: Any, kept: frozenset[str]) -> Any:
    """`(type, token, start, end)` for each token of `text` and then `$END`, as Lark's
    `ContextualLexer` gives them to `_Parser.parse_from_state`, with the lexer's loop
    (`BasicLexer.next_token`) inlined: each token is matched by the scanner of the parser's
    current state, keyword terminals are told apart by the lexer's callbacks, ignored terminals
    are skipped. `token` is a Lark Token for the `kept` terminals and None for the others;
    Tokens carry positions, not lines and columns (nothing reads them). Where no terminal
    matches, Lark's own lexer takes over at that position, so that it raises the error it raises
    (`UnexpectedToken` when a terminal of another state matches)."""
    parser = lark_parser()
    size = len(text)
    pos = 0
    last: tuple = ()
    stack = parser_state.state_stack
    scanners: dict[int, tuple] = {}
    new = compat.new_token
    state = None
    while pos < size:
        if stack[-1] != state:  # the parser moved: the next token is read with its scanner
            state = stack[-1]
            scanner = scanners.get(state)
            if scanner is None:
                scanner = scanners[state] = compat.state_scanner(parser, state)
            mres, ignore_types, callbacks = scanner
        for mre in mres:
            m = mre.match(text, pos)
            if m:
                break
        else:
            previous = _token(text, *last) if last else None
            for token in compat.lark_lex(parser, text, pos, previous, parser_state):
                last = (token.type, token, token.start_pos, token.end_pos)
                yield last
            break
        type_ = m.lastgroup
        end = m.end()
        if type_ not in ignore_types:
            if type_ in callbacks:
                token = callbacks[type_](new(type_, m.group(0), pos, end))
                last = (token.type, token, pos, end)
            elif type_ in kept:
                last = (type_, new(type_, m.group(0), pos, end), pos, end)
            else:
                last = (type_, None, pos, end)
            yield last
        pos = end
    if last:
        yield ("$END", compat.end_token(_token(text, *last)), last[2], last[3])
    else:
        yield ("$END", compat.end_token(None), 0, None)


def _token(text: str, type_: str, token: Any, start: int, end: int) -> Any:
    """The Lark Token `_lex` gave, or made now for a terminal it gave without one."""
    if token is None:
        token = compat.new_token(type_, text[start:end], start, end)
    return token


#: A text touching most rules (header attributes, tiled layouts, tuple shapes, nested and
#: string values, an inline operand, a literal, an empty tail) for `_tree_free_ok`'s check.
_PROBE_MODULE = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[8])->f32[8]}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[8,128]) -> f32[8,128] {
  %p = f32[8,128]{1,0:T(8,128)} parameter(0), sharding={devices=[2,1]0,1}
  %c = f32[] constant(0)
  %t = (f32[8,128]{1,0}, s32[]) tuple(%p, s32[] constant(1)), metadata={op_name="a/b" source_line=3}
  %g = f32[8,128]{1,0} get-tuple-element(%t), index=0, backend_config={"x":{"y":[1,2]}}
  %r = f32[8]{0} reduce(%g, %c), dimensions={1}, to_apply=%add
  ROOT %n = f32[8,128]{1,0} negate(%g)
}
"""


@functools.cache
def _kept_terminals() -> frozenset[str]:
    return compat.kept_terminals(lark_parser())


@functools.cache
def _tree_free_ok() -> bool:
    """Whether `_parse_tree_free` works with the installed Lark: it reads Lark's parse tables,
    lexers and Token internals (through `hlo_layout/compat/lark.py`), so the Lark must be one
    that module was tested with and the driver must give what Lark's own parse and transform
    give on a probe text, or the grammar tier uses those (slower, never wrong)."""
    from hlo_layout.errors import Source as _Source

    if not compat.usable():
        return False  # a Lark the internals were not tested with: its public parse, slower
    source = _Source(_PROBE_MODULE, "<probe>")
    try:
        fast = _parse_tree_free(_PROBE_MODULE, "start", HloTransformer(source))
    except Exception:  # any failure of the internals means: do not use them
        return False
    slow = HloTransformer(source).transform(lark_parser().parse(_PROBE_MODULE, start="start"))
    return bool(fast == slow) and _spans(fast) == _spans(slow)


def _spans(modules: tuple[Module, ...]) -> list[tuple[int, int] | None]:
    """Every computation's, instruction's and attribute's (start, end), in order: the trees'
    equality leaves spans out."""
    out: list[tuple[int, int] | None] = []
    for m in modules:
        for c in m.computations:
            out.append((c.span.start, c.span.end) if c.span else None)
            for i in c.instructions:
                out.append((i.span.start, i.span.end) if i.span else None)
                out.extend((a.span.start, a.span.end) if a.span else None for a in i.attributes)
    return out


def parse_transformed(text: str, start: str, transformer: HloTransformer | None) -> Any:
    """`transformer.transform(lark_parser().parse(text, start=start))` (None without a
    transformer: only the syntax is checked), by `_parse_tree_free` where `_tree_free_ok`."""
    if _tree_free_ok():
        return _parse_tree_free(text, start, transformer)
    tree = lark_parser().parse(text, start=start)
    return None if transformer is None else transformer.transform(tree)


def _parse_tree_free(text: str, start: str, transformer: HloTransformer | None) -> Any:
    """`transformer.transform(lark_parser().parse(text, start=start))` without the Tree: the
    LALR parse (Lark's `ParserState.feed_token` loop, over `_lex`'s tokens) calls each rule's
    callback as it reduces the rule, with `meta` as Lark's `propagate_positions` computes it.
    With no transformer, only check the syntax (returns None).

    Lark's errors are raised as Lark raises them: `UnexpectedInput` for a syntax error, a
    callback's exception wrapped in `VisitError`. That one is kept and raised after the parse,
    so that a syntax error later in the text wins, as when the whole tree was parsed before it
    was transformed (callbacks run in the order transform visited the nodes: children first,
    left to right). Lark's recursive transform ran out of Python's stack on a Tree deeper than
    about half the recursion limit (two frames a level), which `lark_parse` reports as input
    nested too deeply: a deeper Tree fails so here too (a RecursionError, kept likewise)."""
    from lark.exceptions import GrammarError, UnexpectedToken, VisitError

    parser = lark_parser()
    table = _actions(HloTransformer if transformer is None else type(transformer))
    building = transformer is not None
    # Two frames a Tree level, less the frames below Lark's transform in a top-level parse: the
    # depth at which it failed, within a level (measured on nested tuple shapes and braces).
    max_depth = sys.getrecursionlimit() // 2 - 7
    failed: Exception | None = None

    # The stacks of Lark's ParserState, and beside the values where each value's text starts
    # and ends (None when it holds no token) and the depth of the Tree Lark would have built.
    state_stack: list[Any] = []
    values: list[Any] = []
    starts: list[int | None] = []
    ends: list[int | None] = []
    depths: list[int] = []
    parser_state, end_state = compat.parser_state(parser, start, state_stack, values)

    for type_, token, token_start, token_end in _lex(text, parser_state, _kept_terminals()):
        while True:
            state = state_stack[-1]
            entry = table[state].get(type_)
            if entry is None:
                expected = compat.expected(parser, state)
                token = _token(text, type_, token, token_start, token_end)
                raise UnexpectedToken(token, expected, state=parser_state, interactive_parser=None)
            kind, arg = entry
            if kind == _SHIFT:
                state_stack.append(arg)
                values.append(token)
                starts.append(token_start)
                ends.append(token_end)
                depths.append(0)
                break

            if kind == _PASS:
                state_stack.pop()
                state_stack.append(table[state_stack[-1]][arg][1])
                if type_ == "$END" and state_stack[-1] == end_state:
                    break
                continue
            size, origin, indices, expanding, expand1, style, function, name, _ = arg
            start_pos = end_pos = None
            depth = 0
            if size:
                children = values[-size:]
                for start_pos in starts[-size:]:
                    if start_pos is not None:
                        break
                if start_pos is not None:
                    for end_pos in reversed(ends[-size:]):
                        if end_pos is not None:
                            break
                depth = max(depths[-size:])
                del state_stack[-size:]
                del values[-size:]
                del starts[-size:]
                del ends[-size:]
                del depths[-size:]
            else:
                children = []

            value = None
            if building:
                if indices is not None:
                    if expanding:
                        kept: list = []
                        for i, inlined in indices:
                            if not inlined:
                                kept.append(children[i])
                            elif kept:
                                kept += children[i]
                            else:  # take the list over, as Lark does (left recursion)
                                kept = children[i]
                        children = kept
                    else:
                        children = [children[i] for i in indices]
                if style == _INLINED:
                    value = children
                elif expand1 and len(children) == 1:
                    value = children[0]
                else:
                    depth += 1
                    try:
                        if depth > max_depth:
                            raise RecursionError("maximum recursion depth exceeded")
                        if style == _INLINE:
                            value = function(transformer, *children)
                        elif style == _META:
                            value = function(transformer, _Meta(start_pos, end_pos), children)
                        elif style == _LIST:
                            value = function(transformer, children)
                        else:
                            meta = _Meta(start_pos, end_pos)
                            value = transformer.__default__(name, children, meta)  # type: ignore[union-attr]
                    except GrammarError:
                        raise
                    except RecursionError as e:
                        failed = e
                        building = False  # only the syntax from here
                    except Exception as e:  # as Lark's Transformer wraps it
                        failed = VisitError(name, children, e)
                        building = False

            state_stack.append(table[state_stack[-1]][origin][1])
            values.append(value)
            starts.append(start_pos)
            ends.append(end_pos)
            depths.append(depth)
            if type_ == "$END" and state_stack[-1] == end_state:
                break
    if failed is not None:
        raise failed
    return values[-1]


@v_args(inline=True)
class HloTransformer(Transformer):
    """Lark's reductions → hlo_layout.syntax tree (`parse_transformed` calls the callbacks).
    `source` gives spans and raw value text."""

    def __init__(self, source: Source, offset: int = 0, text: str | None = None) -> None:
        super().__init__(visit_tokens=False)
        self.source = source
        # The text Lark parsed; it sits at `offset` in `source.text`.
        self.text = source.text if text is None else text
        self.offset = offset
        #: Set when a node needs the module-wide finishing pass (inline operands or
        #: computations, shapes to infer).
        self.needs_finish = False

    def __default__(self, data, children, meta):  # type: ignore[no-untyped-def]
        raise NotImplementedError(f"grammar rule {data!r} has no transformer callback")

    def _span(self, meta: Any) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return Span(meta.start_pos + self.offset, meta.end_pos + self.offset, self.source)

    # ---------------------------------------------------------------- file structure
    def start(self, *items: Any) -> tuple[Module, ...]:
        return finish_items(items, self.source, self.needs_finish)

    def inline_computation(self, *instructions: Instruction) -> tuple[Instruction, ...]:
        return instructions

    @v_args(meta=True)
    def module_header(self, meta: Any, children: list[Any]) -> tuple[str, str, tuple, Any]:
        name = str(children[0]).removeprefix("%")
        return ("header", name, tuple(children[1:]), self._span(meta))

    def section(self, name: Token, *entries: SectionEntry) -> Section:
        return Section(str(name), tuple(entries))

    @v_args(meta=True)
    def section_entry(self, meta: Any, children: list[Any]) -> SectionEntry:
        ident = children[0]
        raw = self.text[ident.end_pos : meta.end_pos].strip()
        return SectionEntry(int(ident), raw)

    @v_args(meta=True)
    def computation(self, meta: Any, children: list[Any]) -> Computation:
        is_entry = False
        name = ""
        signature = None
        instructions: list[Instruction] = []
        attributes: list[Attribute] = []
        for child in children:
            if isinstance(child, Token):
                if child.type == "ENTRY":
                    is_entry = True
                else:
                    name = str(child).removeprefix("%")
            elif isinstance(child, Instruction):
                instructions.append(child)
            elif isinstance(child, Attribute):
                attributes.append(child)
            else:
                signature = child
        params, result = signature if signature is not None else (None, None)
        return Computation(
            name,
            tuple(instructions),
            is_entry=is_entry,
            parameters=params,
            result_shape=result,
            attributes=tuple(attributes),
            span=self._span(meta),
        )

    def signature(self, *children: Any) -> tuple[tuple[ParameterDecl, ...], Shape]:
        return tuple(children[:-1]), children[-1]

    def parameter_decl(self, name: Token, shape: Shape) -> ParameterDecl:
        return ParameterDecl(str(name).removeprefix("%"), shape)

    # ---------------------------------------------------------------- instructions
    @v_args(meta=True)
    def instruction(self, meta: Any, children: list[Any]) -> Instruction:
        is_root = isinstance(children[0], Token) and children[0].type == "ROOT"
        rest = children[1:] if is_root else children
        name = rest[0]
        if isinstance(rest[1], tuple):  # no shape written: XLA infers it
            shape, op, attrs = None, rest[1], rest[2:]
            self.needs_finish = True
        else:
            shape, op, attrs = rest[1], rest[2], rest[3:]
        opcode, operands, literal, number = op
        return Instruction(
            str(name).removeprefix("%"),
            opcode,
            shape,  # type: ignore[arg-type]  # None until shape_inference fills it
            operands,
            tuple(attrs),
            is_root,
            literal,
            number,
            self._span(meta),
        )

    @v_args(meta=True)
    def inline_operand(self, meta: Any, children: list[Any]) -> _InlineOperand:
        self.needs_finish = True
        if len(children) == 1:
            shape, op = None, children[0]
        else:
            shape, op = children
        opcode, operands, literal, number = op
        instruction = Instruction(
            "",
            opcode,
            shape,  # type: ignore[arg-type]  # None until shape_inference fills it
            operands,
            (),
            False,
            literal,
            number,
            self._span(meta),
        )
        return _InlineOperand(instruction)

    @v_args(meta=True)
    def constant_op(self, meta: Any, children: list[Any]) -> tuple:
        text = self.text[meta.start_pos : meta.end_pos]
        inner = text[text.index("(") + 1 : text.rindex(")")].strip()
        return ("constant", (), inner, None)

    def parameter_op(self, _kw: Token, number: Token) -> tuple:
        return ("parameter", (), None, int(number))

    def generic_op(self, opcode: Token, *operands: Operand | _InlineOperand) -> tuple:
        return (str(opcode), tuple(operands), None, None)

    def operand(self, *children: Any) -> Operand:
        shape = None
        index = None
        name = ""
        for child in children:
            if isinstance(child, Token):
                name = str(child).removeprefix("%")
            elif isinstance(child, int):
                index = child
            else:
                shape = child
        return Operand(name, index, shape)

    def tuple_index(self, index: Token) -> int:
        return int(index)

    @v_args(meta=True)
    def attribute(self, meta: Any, children: list[Any]) -> Attribute | _InlineComputation:
        key = children[0]
        text = self.text
        eq = text.index("=", key.end_pos)
        raw = text[eq + 1 : meta.end_pos].strip()
        span = Span(eq + 1 + self.offset, meta.end_pos + self.offset, self.source)
        if str(key) in CALLED_COMPUTATION_KEYS and raw.startswith("{") and "=" in raw:
            start = text.index("{", eq)
            return self._inline_computation(str(key), text[start : meta.end_pos], start, span)
        return Attribute(str(key), raw, span)

    def _inline_computation(
        self, key: str, body: str, start: int, span: Span
    ) -> _InlineComputation:
        """Re-read `{ instructions }` (already accepted as a generic value) as a computation."""
        from lark.exceptions import UnexpectedInput

        from hlo_layout.syntax.fragments import convert_lark_error

        sub = HloTransformer(self.source, self.offset + start, body)
        try:
            instructions = parse_transformed(body, "inline_computation", sub)
        except UnexpectedInput as e:
            raise convert_lark_error(e, self.source, self.offset + start) from None
        self.needs_finish = True
        return _InlineComputation(key, instructions, span)

    # ---------------------------------------------------------------- literals (kept raw)
    def literal_word(self, *_: Any) -> None:
        return None

    def literal_list(self, *_: Any) -> None:
        return None

    def literal_tuple(self, *_: Any) -> None:
        return None

    def shaped_literal(self, *_: Any) -> None:
        return None

    # ---------------------------------------------------------------- shapes
    @v_args(meta=True)
    def spaced_array_shape(self, meta: Any, children: list[Any]) -> Shape:
        head = "".join(str(children[0]).split())
        return self.array_shape(meta, [head, *children[1:]])  # type: ignore[call-arg]

    @v_args(meta=True)
    def array_shape(self, meta: Any, children: list[Any]) -> Shape:
        head = str(children[0])
        dims: list[tuple[int, bool]] = []
        for c in children[1:]:
            if type(c) is Token:  # a static size (`?dim` keeps the bare INT)
                dims.append(self._static_dim(c))
            elif type(c) is tuple and len(c) == 2:
                dims.append(c)
        layout = children[-1] if children and isinstance(children[-1], list) else None
        try:
            if layout is not None:
                m2m, props, start, end = layout
                return make_array_shape(head, dims, (m2m, props, start, end))
            return make_array_shape(head, dims, None)
        except _Bad as bad:
            raise HloSemanticError(
                bad.message, Span(bad.start + self.offset, bad.end + self.offset, self.source)
            ) from None
        except limits.LimitExceeded as e:
            raise limits.LimitExceeded(e.message, self._span(meta)) from None

    def _static_dim(self, size: Token) -> tuple[int, bool]:
        value = int(size)
        if value < 0:
            raise HloSemanticError(
                f"dimension size {value} is negative",
                Span(
                    (size.start_pos or 0) + self.offset,
                    (size.end_pos or 0) + self.offset,
                    self.source,
                ),
            )
        return (value, False)

    def bounded_dim(self, size: Token) -> tuple[int, bool]:
        return (int(size), True)

    def unbounded_dim(self) -> tuple[int, bool]:
        return (UNBOUNDED, True)

    @v_args(meta=True)
    def tuple_shape(self, meta: Any, elements: list[Shape]) -> TupleShape:
        check_tuple_depth(elements, self._span(meta))
        return TupleShape(tuple(elements))

    def buffer_shape(self, _open: Token, element: Shape) -> BufferShape:
        return BufferShape(element)

    @v_args(meta=True)
    def layout(self, meta: Any, children: list[Any]) -> list:
        m2m = tuple(int(c) for c in children if isinstance(c, Token) and c.type == "INT")
        props = [c for c in children if isinstance(c, tuple)]
        return [m2m, props, meta.start_pos, meta.end_pos]

    def tiles(self, *tiles: Tile) -> tuple[str, Any]:
        return ("tiles", tuple(tiles))

    def tile(self, *dims: Any) -> Tile:
        return Tile(tuple(int(d) for d in dims))

    def combine_dim(self) -> int:
        return COMBINE

    def tail_padding(self, n: Token) -> tuple[str, Any]:
        return ("tail_padding_alignment", int(n))

    def index_type(self, t: Token) -> tuple[str, Any]:
        return ("index_type", str(t))

    def pointer_type(self, t: Token) -> tuple[str, Any]:
        return ("pointer_type", str(t))

    def element_size(self, n: Token) -> tuple[str, Any]:
        return ("element_size_bits", int(n))

    def memory_space(self, n: Token) -> tuple[str, Any]:
        return ("memory_space", int(n))

    def split_configs(self, *configs: SplitConfig) -> tuple[str, Any]:
        return ("split_configs", tuple(configs))

    def split_config(self, dim: Token, *indices: Token) -> SplitConfig:
        return SplitConfig(int(dim), tuple(int(i) for i in indices))

    def physical_shape(self, shape: Shape) -> tuple[str, Any]:
        return ("physical_shape", shape)

    def dynamic_metadata(self, n: Token) -> tuple[str, Any]:
        return ("dynamic_shape_metadata_prefix_bytes", int(n))

    def dim_level_types(self, *letters: Token) -> tuple[str, Any]:
        return ("dim_level_types", tuple(str(x) for x in letters))

    @v_args(meta=True)
    def unknown_prop(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("unknown_props", self.text[meta.start_pos : meta.end_pos])

    # ---------------------------------------------------------------- generic values
    def word(self, token: Token) -> V.Word:
        return V.Word(str(token))

    def sq_string(self, token: Token) -> V.Str:
        return V.Str(str(token)[1:-1])

    def mesh(self, _head: Token, items: tuple) -> V.Group:
        """`mesh['x'=2,'y'=2]` (a mesh sharding's axes) as the group `mesh[...]`."""
        return V.Group("mesh[", items)

    def mesh_value(self, head: Token, items: tuple, axes: V.Value) -> V.Group:
        """`mesh['x'=2] {'x'}` (a value on its own) as the group `mesh` of the mesh and axes."""
        return V.Group("mesh", (self.mesh(head, items), axes))

    def string(self, token: Token) -> V.Str:
        return V.Str(V.unescape(str(token)[1:-1]))

    def brace_group(self, items: tuple) -> V.Group:
        return V.Group("{", items)

    def value_bracket(self, items: tuple) -> V.Group:
        return V.Group("[", items)

    def paren_group(self, items: tuple) -> V.Group:
        return V.Group("(", items)

    def angle_group(self, items: tuple) -> V.Group:
        return V.Group("<", items)

    def value_item_list(self, *items: Any) -> tuple:
        return tuple(items)

    def chain(self, *children: Any) -> V.Chain:
        parts = tuple(c for c in children if not isinstance(c, Token))
        seps = tuple(str(c) for c in children if isinstance(c, Token))
        return V.Chain(parts, seps)

    def iota(self, dims: V.Group, reshape: V.Group, transpose: Token | None = None) -> V.Iota:
        perm = None
        if transpose is not None:
            body = str(transpose)[2:-1]
            perm = tuple(int(x) for x in body.split(",") if x.strip())
        return V.Iota(dims, reshape, perm)

    def bare_iota(self, reshape: V.Group, transpose: Token) -> V.Iota:
        """`[4,16]T(1,0)`: an iota with no tile dims (an empty `[` group stands for them)."""
        return self.iota(V.Group("[", ()), reshape, transpose)

    def arrow(self) -> V.Arrow:
        return V.Arrow()


def _unique_name(base: str, taken: set[str]) -> str:
    """`base`, or `base.N` with the smallest free N (the shape of XLA's NameUniquer names)."""
    name = base
    n = 0
    while name in taken:
        n += 1
        name = f"{base}.{n}"
    taken.add(name)
    return name


def _expand_instructions(
    instructions: tuple[Instruction, ...], hoisted: list[Computation], computation_names: set[str]
) -> tuple[Instruction, ...]:
    """Instructions with inline operands made instructions of their own, placed before their
    users, and inline computations hoisted into `hoisted` (callees first) and named."""
    taken = {i.name for i in instructions}
    out: list[Instruction] = []

    def visit(instruction: Instruction) -> Instruction:
        operands = instruction.operands
        if any(isinstance(o, _InlineOperand) for o in operands):
            expanded: list[Operand] = []
            for operand in operands:
                if isinstance(operand, _InlineOperand):
                    inner = visit(operand.instruction)
                    name = _unique_name(f"{inner.opcode}.anon", taken)
                    out.append(inner._replace(name=name))
                    expanded.append(Operand(name))
                else:
                    expanded.append(operand)
            instruction = instruction._replace(operands=tuple(expanded))
        attributes = instruction.attributes
        if any(isinstance(a, _InlineComputation) for a in attributes):
            replaced: list[Attribute] = []
            for attribute in attributes:
                if isinstance(attribute, _InlineComputation):
                    body = _expand_instructions(attribute.instructions, hoisted, computation_names)
                    name = _unique_name("_", computation_names)
                    hoisted.append(Computation(name, body, span=attribute.span))
                    replaced.append(Attribute(attribute.key, name, attribute.span))
                else:
                    replaced.append(attribute)
            instruction = instruction._replace(attributes=tuple(replaced))
        return instruction

    for instruction in instructions:
        out.append(visit(instruction))
    return tuple(out)


def expand_inline(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """The file's top-level items with inline operands and computations expanded (see the NOTE
    at the top of this module)."""
    names = {c.name for c in items if isinstance(c, Computation)}
    out: list[Any] = []
    for item in items:
        if isinstance(item, Computation):
            hoisted: list[Computation] = []
            instructions = _expand_instructions(item.instructions, hoisted, names)
            out.extend(hoisted)
            out.append(dataclasses.replace(item, instructions=instructions))
        elif isinstance(item, Instruction):
            hoisted = []
            instructions = _expand_instructions((item,), hoisted, names)
            out.extend(hoisted)
            out.extend(instructions)
        else:
            out.append(item)
    return tuple(out)
