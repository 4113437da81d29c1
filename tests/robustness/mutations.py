"""Ways to break a real dump, for fuzzing (hypothesis strategies over corpus texts)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.support import CORPUS

SEEDS = [
    (CORPUS / "libtpu-v5e" / "conv" / "conv.after_optimizations.txt").read_text(),
    (CORPUS / "jax-cpu-spmd" / "module_0018.jit_step.cpu_after_optimizations.txt").read_text(),
    next((CORPUS / "jax-gpu-h100").glob("*after_optimizations.txt")).read_text(),
]

_SWAPS = [("{", "}"), ("(", ")"), ("[", "]"), ("{", "("), (",", ""), ("=", ""), ("%", "")]
_INSERTS = [
    "\x00", "é", "\u202e", "99999999999999999999999999", "-1", "{", "(", "]", "/*", "\"",
    "f32[", ":T(", "ROOT ", "ENTRY e {", "}", "\n", "#", "<=", "?", "\t", "S(-1)", "T(0)",
]  # fmt: skip


@st.composite
def mutated_dumps(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "delete", "duplicate", "swap", "insert"]))
        pos = draw(st.integers(0, max(0, len(text) - 1)))
        if kind == "flip" and text:
            char = chr(draw(st.integers(0, 0x2FF)))
            text = text[:pos] + char + text[pos + 1 :]
        elif kind == "truncate":
            text = text[:pos]
        elif kind in ("delete", "duplicate"):
            lines = text.splitlines(keepends=True)
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                lines[i : i + 1] = [] if kind == "delete" else [lines[i], lines[i]]
                text = "".join(lines)
        elif kind == "swap":
            old, new = draw(st.sampled_from(_SWAPS))
            at = text.find(old, pos)
            if at >= 0:
                text = text[:at] + new + text[at + len(old) :]
        else:
            text = text[:pos] + draw(st.sampled_from(_INSERTS)) + text[pos:]
    return text
