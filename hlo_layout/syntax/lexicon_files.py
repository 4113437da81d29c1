"""The files generated from the lexicon (`syntax/lexicon.py`): the grammar's terminals (a block
of `grammars/hlo.lark` between two marker lines) and `accel/lexicon.h` (the token classes and the
name reader of the compiled modules).

    python -m hlo_layout.syntax.lexicon_files          # exit 1 and name the stale files
    python -m hlo_layout.syntax.lexicon_files --write  # rewrite them

Only in a source checkout: an installed package has no `accel/` and reads the grammar it ships.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hlo_layout.syntax.lexicon import CLASSES, TERMINALS, members

GENERATOR = "python -m hlo_layout.syntax.lexicon_files --write"
_LARK_BEGIN = f"// ---- generated from hlo_layout/syntax/lexicon.py by `{GENERATOR}`: do not edit"
_LARK_END = "// ---- end of the generated terminals"


def _lark_regexp(pattern: str) -> str:
    """`pattern` as a Lark regular-expression literal: `/` escaped, the rest as written (Lark
    reads `\\t`, `\\n`, ... as the characters, which the regex engine reads alike)."""
    return "/" + pattern.replace("/", "\\/") + "/"


def lark_block() -> str:
    """The generated terminals of grammars/hlo.lark, between their marker lines."""
    lines = [_LARK_BEGIN]
    for t in TERMINALS:
        if t.note:
            lines.append(f"// {t.note}")
        name = t.name if not t.priority else f"{t.name}.{t.priority}"
        lines.append(f"{name}: {_lark_regexp(t.pattern)}")
    lines.append(_LARK_END)
    return "\n".join(lines) + "\n"


def _replace_block(text: str, begin: str, end: str, block: str) -> str:
    start = text.find(begin)
    stop = text.find(end, start)
    if start < 0 or stop < 0:
        raise ValueError(f"no generated block ({begin!r} ... {end!r})")
    return text[:start] + block + text[text.index("\n", stop) + 1 :]


def c_header() -> str:
    """accel/lexicon.h: one bit per class of `CLASSES`, a table over ASCII, and the name
    reader both compiled modules share."""
    if len(CLASSES) > 8:
        raise ValueError("the table holds 8 classes (one byte a character)")
    table = [0] * 128
    defines = []
    for bit, (name, body) in enumerate(CLASSES.items()):
        for c in members(body):
            table[c] |= 1 << bit
        shown = body.replace("\\\\", "\\").replace("*/", "*\\/")
        defines.append(f"#define HLO_{name} 0x{1 << bit:02x} /* [{shown}] */")
    rows = []
    for start in range(0, 128, 16):
        rows.append("    " + ", ".join(f"0x{v:02x}" for v in table[start : start + 16]) + ",")
    return f"""/* accel/lexicon.h: HLO's token classes for the compiled scanner and JSON writer.
 *
 * Generated from hlo_layout/syntax/lexicon.py by `{GENERATOR}`: do not edit.
 * tests/syntax/test_lexicon.py fails when this file is stale.
 */
#ifndef HLO_LEXICON_H
#define HLO_LEXICON_H

#include <Python.h>

{chr(10).join(defines)}

/* The classes of each ASCII character (bits above); other characters are in none. */
static const unsigned char hlo_classes[128] = {{
{chr(10).join(rows)}
}};

/* Whether the character `c` is in every class of `classes`. */
static inline int hlo_is(Py_UCS4 c, int classes) {{
    return c < 128 && (hlo_classes[c] & classes) == classes;
}}

/* The end of the run of a name's characters (lexicon.NAME_RUN: `-?[NAME_START][NAME_CHAR]*`,
 * ended before a `-` that begins `->`) starting at p in the `n` characters of `kind`/`data` (a
 * str's), or -1. Every reader of a name here follows it with a character no name holds, so the
 * longest run is the regular expression's. */
static inline Py_ssize_t hlo_run_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t p) {{
    if (p < 0)
        return -1;
    if (p < n && PyUnicode_READ(kind, data, p) == '-')
        p++;
    if (p >= n || !hlo_is(PyUnicode_READ(kind, data, p), HLO_NAME_START))
        return -1;
    for (p++; p < n; p++) {{
        Py_UCS4 c = PyUnicode_READ(kind, data, p);
        if (!hlo_is(c, HLO_NAME_CHAR) || (c == '-' && p + 1 < n &&
                                          PyUnicode_READ(kind, data, p + 1) == '>'))
            break;
    }}
    return p;
}}

/* The end of the bare name (lexicon.BARE_NAME) at p, or -1: a run that is no integer (digits
 * after an optional `-`, then no name character: a run of digits ends before `->` only). */
static inline Py_ssize_t hlo_name_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t p) {{
    Py_ssize_t e = hlo_run_end(kind, data, n, p);
    if (e < 0)
        return -1;
    Py_ssize_t q = p < n && PyUnicode_READ(kind, data, p) == '-' ? p + 1 : p;
    while (q < e && hlo_is(PyUnicode_READ(kind, data, q), HLO_DIGIT))
        q++;
    if (q == e && (e >= n || PyUnicode_READ(kind, data, e) != '-'))
        return -1; /* an integer */
    return e;
}}

#endif /* HLO_LEXICON_H */
"""


# ---------------------------------------------------------------- generated files
_ROOT = Path(__file__).resolve().parents[2]
GRAMMAR_FILE = _ROOT / "grammars" / "hlo.lark"
HEADER_FILE = _ROOT / "accel" / "lexicon.h"


def generated() -> dict[Path, str]:
    """Each generated file and the text it should hold (the grammar's with its block renewed).
    Only in a source checkout: an installed package has no `accel/` and reads the grammar it
    ships."""
    grammar = GRAMMAR_FILE.read_text("utf-8")
    return {
        GRAMMAR_FILE: _replace_block(grammar, _LARK_BEGIN, _LARK_END, lark_block()),
        HEADER_FILE: c_header(),
    }


def stale() -> list[Path]:
    """The generated files whose text differs from what this module generates."""
    return [p for p, text in generated().items() if not p.exists() or p.read_text("utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hlo_layout.syntax.lexicon_files",
        description="Check or rewrite the files generated from the lexicon.",
    )
    parser.add_argument("--write", action="store_true", help="rewrite the stale files")
    args = parser.parse_args(argv)
    files = stale()
    if args.write:
        texts = generated()
        for path in files:
            path.write_text(texts[path], "utf-8")
            print(f"wrote {path.relative_to(_ROOT)}")
        return 0
    for path in files:
        print(f"stale: {path.relative_to(_ROOT)} (run `{GENERATOR}`)", file=sys.stderr)
    return 1 if files else 0


if __name__ == "__main__":
    sys.exit(main())
