"""Text form of indexing maps: XLA's printer, a tolerant parser, and a JSON view.

Mirrors xla/hlo/analysis/indexing_map_serialization.cc and symbolic_map_serialization.cc
(indexing.md §1). The printer emits XLA's current one-line form exactly, so printed maps can be
compared with XLA's tests the way XLA compares them: with all whitespace removed (`same_text`).
The parser reads the current form, the legacy forms (`floordiv`, multi-line domains without commas,
a trailing `is_simplified: …`) and the odd spacing XLA's tests use. Not read: the 2024 form that
listed runtime variables as symbols followed by an inline `hlo: %x = …` instruction and its map.

NOTE: [parse semantics] Expressions are built the way XLA's `ParseSymbolicExpr` builds them: every
operator goes through the cheap smart constructor (`binary`), `a - b` is `a + (-b)` and `-b` is
`(b * -1)` canonicalized. So `d0 - (s0 / 3) * 3` parses to `d0 + (s0 / 3) * -3`, exactly the tree
XLA's simplifier starts from, and printing it gives the input back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hlo_layout.indexing.errors import IndexingParseError
from hlo_layout.indexing.expr import AffineExpr, ExprKind, VarSpace, binary, const, var
from hlo_layout.indexing.interval import Interval
from hlo_layout.indexing.map import IndexingMap, MapState, Variable

# -- printing expressions ---------------------------------------------------------------------

_DEFAULT_PREFIX = {VarSpace.DIM: "d", VarSpace.RANGE: "s", VarSpace.RT: "rt"}
_OP_TEXT = {
    ExprKind.ADD: "+",
    ExprKind.MUL: "*",
    ExprKind.FLOORDIV: "/",
    ExprKind.CEILDIV: "ceildiv",
    ExprKind.MOD: "mod",
    ExprKind.MIN: "min",
    ExprKind.MAX: "max",
}

VarNamer = Callable[[AffineExpr], str]


def default_var_name(v: AffineExpr) -> str:
    """`d<i>`, `s<j>` or `rt<k>`: XLA's names for a variable without a custom name."""
    return f"{_DEFAULT_PREFIX[v.space]}{v.value}"


def _precedence(kind: ExprKind) -> int:
    # XLA's GetPrecedence: + below the multiplicative operators; min/max and leaves bind tightest.
    if kind is ExprKind.ADD:
        return 1
    if kind in (ExprKind.MUL, ExprKind.FLOORDIV, ExprKind.CEILDIV, ExprKind.MOD):
        return 2
    return 3


def _is_negative_term(expr: AffineExpr) -> bool:
    """XLA's `IsNegativeTerm`: a summand printed as `- x` (negative constant or factor)."""
    while expr.kind is ExprKind.ADD:
        assert expr.lhs is not None
        expr = expr.lhs
    if expr.kind is ExprKind.CONST:
        return expr.value < 0
    if expr.kind is ExprKind.MUL:
        assert expr.lhs is not None and expr.rhs is not None
        return (expr.lhs.is_const and expr.lhs.value < 0) or (
            expr.rhs.is_const and expr.rhs.value < 0
        )
    return False


def _is_minus_one(expr: AffineExpr) -> bool:
    return expr.is_const and expr.value == -1


def _print_current(
    expr: AffineExpr,
    name: VarNamer,
    out: list[str],
    parent: ExprKind | None = None,
    is_rhs: bool = False,
    is_rhs_of_minus: bool = False,
) -> None:
    """XLA's `PrintImpl` (symbolic_map_serialization.cc), rule for rule (indexing.md §1.2)."""
    kind = expr.kind
    if kind is ExprKind.CONST:
        out.append(str(expr.value))
        return
    if kind is ExprKind.VAR:
        out.append(name(expr))
        return
    assert expr.lhs is not None and expr.rhs is not None
    if kind in (ExprKind.MIN, ExprKind.MAX):
        out.append(f"{_OP_TEXT[kind]}(")
        _print_current(expr.lhs, name, out)
        out.append(", ")
        _print_current(expr.rhs, name, out)
        out.append(")")
        return
    if kind is ExprKind.MUL and (_is_minus_one(expr.lhs) or _is_minus_one(expr.rhs)):
        out.append("-")
        other = expr.rhs if _is_minus_one(expr.lhs) else expr.lhs
        _print_current(other, name, out, ExprKind.MUL)
        return
    precedence = _precedence(kind)
    parent_precedence = 0 if parent is None else _precedence(parent)
    needs_parens = precedence < parent_precedence
    if precedence == parent_precedence:
        if parent is not kind:
            needs_parens = True  # `(a mod b) * c`
        elif kind is ExprKind.ADD:
            needs_parens = is_rhs_of_minus  # `a - (b + c)`
        elif kind is not ExprKind.MUL:
            needs_parens = is_rhs  # `a / (b / c)`, but `a / b / c`
    if needs_parens:
        out.append("(")
    _print_current(expr.lhs, name, out, kind)
    if kind is ExprKind.ADD and _is_negative_term(expr.rhs):
        out.append(" - ")
        _print_current(-expr.rhs, name, out, kind, is_rhs=True, is_rhs_of_minus=True)
    else:
        out.append(f" {_OP_TEXT[kind]} ")
        _print_current(expr.rhs, name, out, kind, is_rhs=True)
    if needs_parens:
        out.append(")")


def _print_legacy(expr: AffineExpr, name: VarNamer, out: list[str], parens: bool = False) -> None:
    """MLIR's AffineExpr printer as XLA used it until 2026-05 (`PrintAffineExprImpl`): every
    non-sum child of an operator is parenthesized, floor division is `floordiv`."""
    kind = expr.kind
    if kind is ExprKind.CONST:
        out.append(str(expr.value))
        return
    if kind is ExprKind.VAR:
        out.append(name(expr))
        return
    assert expr.lhs is not None and expr.rhs is not None
    lhs, rhs = expr.lhs, expr.rhs
    if kind in (ExprKind.MIN, ExprKind.MAX):  # not affine; printed as in the current form
        out.append(f"{_OP_TEXT[kind]}(")
        _print_legacy(lhs, name, out)
        out.append(", ")
        _print_legacy(rhs, name, out)
        out.append(")")
        return
    if parens:
        out.append("(")
    if kind is not ExprKind.ADD:
        if kind is ExprKind.MUL and _is_minus_one(rhs):
            out.append("-")
            _print_legacy(lhs, name, out, True)
        else:
            op = "floordiv" if kind is ExprKind.FLOORDIV else _OP_TEXT[kind]
            _print_legacy(lhs, name, out, True)
            out.append(f" {op} ")
            _print_legacy(rhs, name, out, True)
    elif (
        rhs.kind is ExprKind.MUL
        and rhs.rhs is not None
        and rhs.rhs.is_const
        and (rhs.rhs.value <= -1)
    ):
        assert rhs.lhs is not None
        _print_legacy(lhs, name, out)
        out.append(" - ")
        if rhs.rhs.value == -1:
            _print_legacy(rhs.lhs, name, out, rhs.lhs.kind is ExprKind.ADD)
        else:
            _print_legacy(rhs.lhs, name, out, True)
            out.append(f" * {-rhs.rhs.value}")
    elif rhs.is_const and rhs.value < 0:
        _print_legacy(lhs, name, out)
        out.append(f" - {-rhs.value}")
    else:
        _print_legacy(lhs, name, out)
        out.append(" + ")
        _print_legacy(rhs, name, out)
    if parens:
        out.append(")")


def format_expr(expr: AffineExpr, names: VarNamer | None = None, *, legacy: bool = False) -> str:
    """Print one expression as XLA does; `names` maps a variable to its text (default `d0`, `s0`,
    `rt0`). Example: `(d0 / 128) mod 128`, or with `legacy=True`, `(d0 floordiv 128) mod 128`."""
    out: list[str] = []
    namer = names or default_var_name
    if legacy:
        _print_legacy(expr, namer, out)
    else:
        _print_current(expr, namer, out)
    return "".join(out)


# -- printing maps ----------------------------------------------------------------------------


def var_names(m: IndexingMap) -> dict[AffineExpr, str]:
    """The printed name of every variable of a map (custom name, else `d<i>`/`s<j>`/`rt<k>`)."""
    return {
        var(space, i): variable.name or f"{_DEFAULT_PREFIX[space]}{i}"
        for space in (VarSpace.DIM, VarSpace.RANGE, VarSpace.RT)
        for i, variable in enumerate(m.variables(space))
    }


def _sorted_constraints(m: IndexingMap, namer: VarNamer, legacy: bool) -> list[str]:
    # XLA sorts the printed "expr in [lo, hi]" strings (std::sort on bytes = ASCII order).
    return sorted(f"{format_expr(e, namer, legacy=legacy)} in {i}" for e, i in m.constraints)


def format_indexing_map(m: IndexingMap, *, legacy: bool = False, multiline: bool = False) -> str:
    """Print a map exactly as XLA's `ToString(IndexingMap)` does (indexing.md §1.1).

    Example: `(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]`.
    UNDEFINED and KNOWN EMPTY maps print as those words, and a map without variables prints no
    domain (`() -> ()`). `legacy=True` prints expressions as XLA did before 2026-06 (MLIR printer,
    `floordiv`); summand order is not converted. `multiline=True` gives the layout XLA's tests write
    (`domain:` and each item on a line of its own); it differs from the default only in whitespace.
    """
    if m.is_undefined:
        return "UNDEFINED"
    if m.is_known_empty:
        return "KNOWN EMPTY"
    names = var_names(m)

    def namer(v: AffineExpr) -> str:
        return names[v]

    dims = [names[var(VarSpace.DIM, i)] for i in range(m.num_dims)]
    ranges = [names[var(VarSpace.RANGE, i)] for i in range(m.num_range_vars)]
    rts = [names[var(VarSpace.RT, i)] for i in range(m.num_rt_vars)]
    head = f"({', '.join(dims)})"
    if ranges:
        head += f"[{', '.join(ranges)}]"
    if rts:
        head += f"{{{', '.join(rts)}}}"
    results = ", ".join(format_expr(r, namer, legacy=legacy) for r in m.results)
    text = f"{head} -> ({results})"
    if not (dims or ranges or rts):
        return text
    variables = (*m.dims, *m.range_vars, *m.rt_vars)
    items = [f"{n} in {v.bounds}" for n, v in zip((*dims, *ranges, *rts), variables, strict=True)]
    items += _sorted_constraints(m, namer, legacy)
    if multiline:
        return f"{text},\ndomain:\n" + ",\n".join(items)
    return f"{text}, domain: " + ", ".join(items)


_WHITESPACE = re.compile(r"\s+")


def strip_whitespace(text: str) -> str:
    """Drop every whitespace character, as XLA's test matcher does before comparing map texts."""
    return _WHITESPACE.sub("", text)


def same_text(a: str, b: str) -> bool:
    """Whether two map texts are equal for XLA's tests (equal once all whitespace is dropped)."""
    return strip_whitespace(a) == strip_whitespace(b)


# -- JSON -------------------------------------------------------------------------------------


def to_json(m: IndexingMap) -> dict[str, Any]:
    """A structured, deterministic view of a map for machine-readable output.

    Example: `(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 3], d0 + s0 in [0, 10]` gives
    `{"state": "defined", "text": <the printed map>, "dims": [{"name": "d0", "range": [0, 9]}],
    "range_vars": [{"name": "s0", "range": [0, 3]}], "rt_vars": [], "results": ["d0 + s0"],
    "constraints": [{"expr": "d0 + s0", "lo": 0, "hi": 10}]}`. Ranges are inclusive; constraints
    are in printed (sorted) order. An UNDEFINED map has empty lists.
    """
    state = {
        MapState.DEFINED: "defined",
        MapState.KNOWN_EMPTY: "known_empty",
        MapState.UNDEFINED: "undefined",
    }[m.state]
    names = var_names(m)

    def namer(v: AffineExpr) -> str:
        return names[v]

    def variables(space: VarSpace) -> list[dict[str, Any]]:
        return [
            {"name": names[var(space, i)], "range": [v.bounds.lo, v.bounds.hi]}
            for i, v in enumerate(m.variables(space))
        ]

    constraints = sorted(
        ((format_expr(e, namer), i) for e, i in m.constraints), key=lambda c: f"{c[0]} in {c[1]}"
    )
    return {
        "state": state,
        "text": format_indexing_map(m),
        "dims": variables(VarSpace.DIM),
        "range_vars": variables(VarSpace.RANGE),
        "rt_vars": variables(VarSpace.RT),
        "results": [format_expr(r, namer) for r in m.results],
        "constraints": [{"expr": e, "lo": i.lo, "hi": i.hi} for e, i in constraints],
    }


# -- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "name", "int", "eof" or the punctuation itself ("(", "->", ...)
    text: str
    start: int


_TOKEN_RE = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>[0-9]+)|(?P<punct>->|[-+*/()\[\]{},:])"
)
_FLOORDIV_WORDS = frozenset({"floordiv", "floorDiv"})
_CEILDIV_WORDS = frozenset({"ceildiv", "ceilDiv"})
_KEYWORDS = frozenset({"domain", "in", "mod", "min", "max", *_FLOORDIV_WORDS, *_CEILDIV_WORDS})


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            tokens.append(_Token("eof", "", n))
            return tokens
        match = _TOKEN_RE.match(text, pos)
        if match is None or match.end() == pos:
            raise IndexingParseError(f"unexpected character {text[pos]!r}", text, pos)
        kind = match.lastgroup
        assert kind is not None
        value = match.group(kind)
        start = match.start(kind)
        tokens.append(_Token(value if kind == "punct" else kind, value, start))
        pos = match.end()


class _Parser:
    """Recursive descent over the token list; every error names the offending offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.names: dict[str, AffineExpr] = {}

    # -- helpers ----------------------------------------------------------------------------

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def peek(self, offset: int = 1) -> _Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def error(self, message: str, token: _Token | None = None) -> IndexingParseError:
        token = token or self.tok
        found = "end of input" if token.kind == "eof" else repr(token.text)
        return IndexingParseError(f"{message}, found {found}", self.text, token.start)

    def advance(self) -> _Token:
        token = self.tok
        if token.kind != "eof":
            self.i += 1
        return token

    def at(self, kind: str, text: str | None = None) -> bool:
        return self.tok.kind == kind and (text is None or self.tok.text == text)

    def at_word(self, *words: str) -> bool:
        return self.tok.kind == "name" and self.tok.text in words

    def accept(self, kind: str, text: str | None = None) -> bool:
        if self.at(kind, text):
            self.advance()
            return True
        return False

    def expect(self, kind: str, what: str | None = None) -> _Token:
        if not self.at(kind):
            raise self.error(f"expected {what or repr(kind)}")
        return self.advance()

    def expect_word(self, word: str) -> None:
        if not self.at_word(word):
            raise self.error(f"expected {word!r}")
        self.advance()

    # -- grammar ------------------------------------------------------------------------------

    def parse_int(self) -> int:
        """int := ["-"] digits"""
        negative = self.accept("-")
        token = self.expect("int", "an integer")
        value = int(token.text)
        return -value if negative else value

    def parse_interval(self) -> Interval:
        """interval := "[" int "," int "]"  (both ends inclusive; lo > hi is empty)"""
        self.expect("[")
        lo = self.parse_int()
        self.expect(",")
        hi = self.parse_int()
        self.expect("]")
        return Interval(lo, hi)

    def parse_names(self, close: str, space: VarSpace) -> list[str]:
        """names := "" | name { "," name }  (the opening bracket is already consumed)"""
        names: list[str] = []
        if self.accept(close):
            return names
        while True:
            token = self.expect("name", "a variable name")
            if token.text in _KEYWORDS or token.text in self.names:
                what = "keyword" if token.text in _KEYWORDS else "duplicate variable name"
                raise IndexingParseError(f"{what} {token.text!r}", self.text, token.start)
            self.names[token.text] = var(space, len(names))
            names.append(token.text)
            if self.accept(close):
                return names
            self.expect(",", f"',' or {close!r}")

    def parse_expr(self) -> AffineExpr:
        """expr := term { ("+" | "-") term }"""
        lhs = self.parse_term()
        while True:
            if self.accept("+"):
                lhs = binary(ExprKind.ADD, lhs, self.parse_term())
            elif self.accept("-"):
                lhs = lhs - self.parse_term()
            else:
                return lhs

    def parse_term(self) -> AffineExpr:
        """term := factor { ("*" | "/" | "floordiv" | "ceildiv" | "mod") factor }"""
        lhs = self.parse_factor()
        while True:
            if self.accept("*"):
                kind = ExprKind.MUL
            elif self.accept("/"):
                kind = ExprKind.FLOORDIV
            elif self.at_word(*_FLOORDIV_WORDS):
                self.advance()
                kind = ExprKind.FLOORDIV
            elif self.at_word(*_CEILDIV_WORDS):
                self.advance()
                kind = ExprKind.CEILDIV
            elif self.at_word("mod"):
                self.advance()
                kind = ExprKind.MOD
            else:
                return lhs
            lhs = binary(kind, lhs, self.parse_factor())

    def parse_factor(self) -> AffineExpr:
        """factor := "-" factor | ("min" | "max") "(" expr "," expr ")" | "(" expr ")"
        | name | int"""
        token = self.tok
        if self.accept("-"):
            return -self.parse_factor()
        if self.accept("("):
            inner = self.parse_expr()
            self.expect(")", "')'")
            return inner
        if token.kind == "int":
            self.advance()
            return const(int(token.text))
        if token.kind == "name":
            if token.text in ("min", "max") and self.peek().kind == "(":
                self.advance()
                self.advance()
                lhs = self.parse_expr()
                self.expect(",", "','")
                rhs = self.parse_expr()
                self.expect(")", "')'")
                return binary(ExprKind.MIN if token.text == "min" else ExprKind.MAX, lhs, rhs)
            found = self.names.get(token.text)
            if found is None:
                raise IndexingParseError(f"unknown variable {token.text!r}", self.text, token.start)
            self.advance()
            return found
        raise self.error("expected an expression")

    def parse_domain_var(self, expected_name: str) -> Interval:
        token = self.expect("name", f"the domain of {expected_name!r}")
        if token.text != expected_name:
            raise IndexingParseError(
                f"domain lists {token.text!r} where {expected_name!r} was declared",
                self.text,
                token.start,
            )
        self.expect_word("in")
        return self.parse_interval()

    def skip_is_simplified(self) -> bool:
        """Tolerate the `is_simplified: true|false` item XLA printed in September 2024."""
        if self.at_word("is_simplified") and self.peek().kind == ":":
            self.advance()
            self.advance()
            if not self.at_word("true", "false"):
                raise self.error("expected 'true' or 'false'")
            self.advance()
            return True
        return False

    def item_separator(self) -> None:
        # Commas between domain items are optional: the 2024 multi-line form had none.
        self.accept(",")

    def parse_map(self) -> IndexingMap:
        """indexing_map := "UNDEFINED" | "KNOWN" "EMPTY" | map   (grammar in indexing.md §1.1)"""
        if self.at_word("UNDEFINED") and self.peek().kind == "eof":
            self.advance()
            return IndexingMap.undefined()
        if self.at_word("KNOWN") and self.peek().kind == "name" and self.peek().text == "EMPTY":
            self.advance()
            self.advance()
            self.expect("eof", "end of input")
            return IndexingMap.known_empty()
        self.expect("(", "'(' or UNDEFINED or KNOWN EMPTY")
        dims = self.parse_names(")", VarSpace.DIM)
        ranges = self.parse_names("]", VarSpace.RANGE) if self.accept("[") else []
        rts = self.parse_names("}", VarSpace.RT) if self.accept("{") else []
        self.expect("->", "'->'")
        self.expect("(", "'('")
        results: list[AffineExpr] = []
        if not self.accept(")"):
            while True:
                results.append(self.parse_expr())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        if not (dims or ranges or rts) and self.at("eof"):
            # XLA prints no domain here (`() -> ()`); constant results are accepted as well so
            # that every map we print parses back.
            return IndexingMap(tuple(results))
        self.accept(",")
        self.expect_word("domain")
        self.expect(":", "':'")
        bounds: list[list[Variable]] = []
        for names, space in ((dims, VarSpace.DIM), (ranges, VarSpace.RANGE), (rts, VarSpace.RT)):
            prefix = _DEFAULT_PREFIX[space]
            group: list[Variable] = []
            for index, name in enumerate(names):
                interval = self.parse_domain_var(name)
                self.item_separator()
                # As XLA: a default name is not stored, so it follows renumbering.
                group.append(Variable(interval, "" if name == f"{prefix}{index}" else name))
            bounds.append(group)
        constraints: list[tuple[AffineExpr, Interval]] = []
        while not self.at("eof"):
            if self.skip_is_simplified():
                self.item_separator()
                continue
            expr = self.parse_expr()
            self.expect_word("in")
            constraints.append((expr, self.parse_interval()))
            self.item_separator()
        return IndexingMap(
            tuple(results), tuple(bounds[0]), tuple(bounds[1]), tuple(bounds[2]), tuple(constraints)
        )


def parse_indexing_map(text: str) -> IndexingMap:
    """Parse a map in XLA's text form, current or legacy (indexing.md §1.1, §1.7).

    Grammar: `"UNDEFINED" | "KNOWN EMPTY" | "(" dims ")" ["[" range vars "]"] ["{" rt vars "}"]
    "->" "(" results ")" ["," "domain" ":" items]`, where the items are `name in [lo, hi]` for every
    declared variable in order, then `expr in [lo, hi]` constraints; commas between items are
    optional and whitespace is ignored. Floor division is `/`, `floordiv` or `floorDiv`.
    The map is built as XLA's constructor does (constraints on a bare variable narrow it, an empty
    interval makes the map KNOWN EMPTY). The text `KNOWN EMPTY` carries no variable counts, so it
    parses to an empty map without variables. Example:
    `parse_indexing_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 3]")`.
    Raises `IndexingParseError` with the offset, line and column of the first bad token.
    """
    parser = _Parser(text)
    result = parser.parse_map()
    if not parser.at("eof"):
        raise parser.error("expected end of input")
    return result


def parse_expr(text: str, names: Sequence[str] | None = None) -> AffineExpr:
    """Parse one expression; variables are `d<i>`, `s<j>` and `rt<k>` unless `names` lists the
    dims' names. Example: `parse_expr("(d0 + 3) / 2")`."""
    parser = _Parser(text)
    for match in re.finditer(r"\b(d|s|rt)([0-9]+)\b", text):
        space = {"d": VarSpace.DIM, "s": VarSpace.RANGE, "rt": VarSpace.RT}[match.group(1)]
        parser.names.setdefault(match.group(0), var(space, int(match.group(2))))
    for index, name in enumerate(names or ()):
        parser.names[name] = var(VarSpace.DIM, index)
    expr = parser.parse_expr()
    if not parser.at("eof"):
        raise parser.error("expected end of expression")
    return expr


__all__ = [
    "default_var_name",
    "format_expr",
    "format_indexing_map",
    "parse_expr",
    "parse_indexing_map",
    "same_text",
    "strip_whitespace",
    "to_json",
    "var_names",
]
