"""Lark's internals that the grammar tier reads, and nothing else, in one place.

Lark's public API parses to a Tree (`Lark.parse`), then transforms it (`Transformer.transform`).
The grammar tier (`syntax/grammar.py`, `_parse_tree_free`) instead calls our transformer's
callbacks as the LALR parse reduces each rule, which halves its time (README, "How the parser
is built"). That reads what Lark does not publish: its LALR parse table, the scanners of its
contextual lexer's states, its rules' filtering options, its `v_args` wrappers, its Token
constructor without the deprecated-keyword check, and its parser state (so that Lark raises its
own errors). Each such read is a function here; grammar.py reaches Lark's internals through
these only (`tests/test_layers.py` holds it to that).

`TESTED` is the range of Lark versions the driver was run with (the oldest and the newest
allowed by pyproject.toml's pin, each through tests/syntax): outside it `usable()` is False and
grammar.py parses with Lark's public parse and transform instead, slower but never wrong (it
also checks, once per process, that the driver gives what that public path gives on a probe).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import lark
from lark import Lark, Token

#: The Lark versions the tree-free driver is known to work with: from the first to below the
#: second (pyproject.toml pins the same range).
TESTED = ((1, 3), (1, 4))


def version() -> tuple[int, ...]:
    """The installed Lark's version as numbers (`1.3.1` → (1, 3, 1))."""
    numbers = []
    for part in lark.__version__.split("."):
        digits = "".join(c for c in part if c.isdigit())
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers)


def usable() -> bool:
    """Whether the installed Lark is one the internals below were tested with."""
    return TESTED[0] <= version() < TESTED[1]


# ---------------------------------------------------------------- callbacks (lark.visitors)
#: How a callback takes its node: children inlined, or `(meta, children)` (v_args styles).
INLINE, META = 0, 1


def v_args_style(member: Any) -> tuple[Any, int] | None:
    """(the plain function, INLINE or META) of a `v_args`-wrapped transformer callback, None for
    a member `v_args` did not wrap; a style the driver does not call raises TypeError."""
    from lark.visitors import _vargs_inline, _vargs_meta, _VArgsWrapper

    if not isinstance(member, _VArgsWrapper):
        return None
    if member.visit_wrapper is _vargs_inline:
        return (member.base_func, INLINE)
    if member.visit_wrapper is _vargs_meta:
        return (member.base_func, META)
    raise TypeError(f"transformer callback {member!r} uses an unsupported v_args style")


def static_member(cls: type, name: str) -> Any:
    """`cls`'s attribute `name` without calling descriptors (a `v_args` wrapper's `__get__`
    builds a new function each time), or None."""
    return inspect.getattr_static(cls, name, None)


# ---------------------------------------------------------------- grammar rules and table
def rule_facts(rule: Any) -> tuple[str, str, bool, list[tuple[bool, bool]]]:
    """What a reduction of `rule` does to the Tree Lark would build (`ParseTreeBuilder`): its
    origin's name, the name its callback has (alias, template or origin), whether it is a
    `?rule` whose one child stands for it, and for each symbol of its expansion (is it kept for
    the callback, is it an inlined `_rule`)."""
    options = rule.options
    name = rule.alias or options.template_source or rule.origin.name
    symbols = [
        (
            bool(options.keep_all_tokens) or not (sym.is_term and sym.filter_out),
            not sym.is_term and sym.name.startswith("_"),
        )
        for sym in rule.expansion
    ]
    return rule.origin.name, name, bool(options.expand1) and not rule.alias, symbols


def parse_table(parser: Lark) -> Any:
    """The LALR parse table of a `parser="lalr"` Lark."""
    return parser.parser.parser.parser.parse_table


def table_rows(parser: Lark) -> Iterator[tuple[Any, Iterator[tuple[str, bool, Any]]]]:
    """(state, its actions as (symbol, is a shift, the state shifted to or the rule reduced))."""
    from lark.parsers.lalr_analysis import Shift

    for state, actions in parse_table(parser).states.items():
        yield state, ((s, action is Shift, arg) for s, (action, arg) in actions.items())


def expected(parser: Lark, state: Any) -> set[str]:
    """The terminals the parse table accepts in `state` (an error's `expected`)."""
    return {s for s in parse_table(parser).states[state] if s.isupper()}


def kept_terminals(parser: Lark) -> frozenset[str]:
    """The terminals some rule passes on to its callback (the others, punctuation, only mark
    where a rule's text starts and ends)."""
    from lark.grammar import Terminal

    return frozenset(
        sym.name
        for rule in parser.rules
        for sym in rule.expansion
        if isinstance(sym, Terminal) and (rule.options.keep_all_tokens or not sym.filter_out)
    )


def parser_state(parser: Lark, start: str, state_stack: list[Any], values: list[Any]) -> Any:
    """(Lark's ParserState over our stacks, for its lexer and errors; the start state; the end
    state) of a parse from rule `start`."""
    from lark.parsers.lalr_parser_state import ParseConf, ParserState

    frontend = parser.parser
    conf = ParseConf(parse_table(parser), {}, frontend._verify_start(start))
    state_stack.append(conf.start_state)
    return ParserState(conf, None, state_stack, values), conf.end_state  # type: ignore[arg-type]


# ---------------------------------------------------------------- the contextual lexer
def state_scanner(parser: Lark, state: Any) -> tuple[tuple[Any, ...], Any, dict[str, Any]]:
    """(the compiled alternations, the ignored terminals, the keyword callbacks) with which the
    contextual lexer reads a token in parser state `state` (first alternation that matches)."""
    basic = parser.parser.lexer.lexers[state]
    mres = tuple(basic.scanner._mres)  # builds the scanner and `callback`
    return mres, basic.ignore_types, basic.callback


def new_token(type_: str, value: str, start: int, end: int) -> Token:
    """A Token with its start and end positions, as the lexer makes it (without `Token()`'s
    check for a deprecated keyword: one per token)."""
    return Token._future_new(type_, value, start, None, None, None, None, end)  # type: ignore[no-any-return]


def end_token(last: Token | None) -> Token:
    """The `$END` token after `last` (the last token read, or None: an empty text)."""
    if last is None:
        return Token("$END", "", 0, 1, 1)
    return Token.new_borrow_pos("$END", "", last)


def lark_lex(parser: Lark, text: str, pos: int, last: Token | None, state: Any) -> Iterator[Token]:
    """The tokens Lark's own contextual lexer reads from `text[pos:]` in parser state `state`
    (its ParserState), `last` the token before: where the driver's scanners match nothing,
    Lark's lexer raises the error it raises."""
    from lark.lexer import LexerState, LineCounter, TextSlice

    line_ctr = LineCounter("\n")
    line_ctr.feed(text[:pos])
    lexer_state = LexerState(TextSlice(text, 0, len(text)), line_ctr, last)
    return iter(parser.parser.lexer.lex(lexer_state, state))


__all__ = [
    "INLINE",
    "META",
    "TESTED",
    "end_token",
    "expected",
    "kept_terminals",
    "lark_lex",
    "new_token",
    "parser_state",
    "rule_facts",
    "state_scanner",
    "static_member",
    "table_rows",
    "usable",
    "v_args_style",
    "version",
]
