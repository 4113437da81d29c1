"""Call chains as deep as users write them: the memory analysis walks them without recursion
(`memory/nesting.py`), so 3,000 nested `call`s are analysed, not refused as too deep. A call
tree that flattens past MAX_FLATTENED_INSTRUCTIONS is refused where it does."""

from __future__ import annotations

import sys

import pytest

from hlo_layout.memory import analyze_memory
from hlo_layout.syntax import parse
from tests.memory.helpers import evaluations
from tests.support import Cli


def _chain(depth: int, calls: int = 1) -> str:
    """Computation k calls computation k - 1 `calls` times in a row (c0 negates): a chain, or
    with two calls a binary tree (2.6 KB at depth 22 flattens to 12 million instructions)."""
    parts = ["HloModule m, is_scheduled=true\n"]
    parts.append("c0 {\n  a = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(a)\n}\n")
    for k in range(1, depth):
        body = "".join(
            f"  {'ROOT ' if n == calls - 1 else ''}n{n} = f32[4]{{0}} "
            f"call({'a' if n == 0 else f'n{n - 1}'}), to_apply=c{k - 1}\n"
            for n in range(calls)
        )
        parts.append(f"c{k} {{\n  a = f32[4]{{0}} parameter(0)\n{body}}}\n")
    parts.append(
        "ENTRY e {\n  a = f32[4]{0} parameter(0)\n"
        f"  ROOT n = f32[4]{{0}} call(a), to_apply=c{depth - 1}\n}}\n"
    )
    return "\n".join(parts)


def test_deep_call_chain_is_analysed_like_a_shallow_one() -> None:
    deep = 3 * sys.getrecursionlimit()
    shallow_ma = analyze_memory(parse(_chain(3)))
    deep_ma = analyze_memory(parse(_chain(deep)))
    assert deep_ma.peak_bytes == shallow_ma.peak_bytes
    assert deep_ma.static_bytes == shallow_ma.static_bytes
    # every level's negate/call sits in the flattened schedule: 3 instructions per level
    assert max(v.end for v in deep_ma.values) >= 2 * deep


def test_deep_call_chain_through_the_commands(cli: Cli, tmp_path) -> None:
    path = tmp_path / "deep.txt"
    path.write_text(_chain(3_000))
    for args in (["inspect"], ["memory"], ["check", "--no-rules-ok"], ["inspect", "-f", "json"],
                 ["diff", str(path)]):  # fmt: skip
        result = cli(*args, str(path))
        assert result.exit_code == 0, (args, result.stderr[-300:])


def test_a_call_tree_that_flattens_past_the_limit_is_refused_where_it_does() -> None:
    from hlo_layout.limits import MAX_FLATTENED_INSTRUCTIONS, LimitExceeded

    text = _chain(22, calls=2)
    with pytest.raises(LimitExceeded) as caught:
        analyze_memory(parse(text, "tree.hlo"))
    error = caught.value
    assert "MAX_FLATTENED_INSTRUCTIONS" in error.message
    # the first computation over the limit, at its call of the largest callee
    site = error.span.source.line_text(error.span.start).strip()
    assert site == "n0 = f32[4]{0} call(a), to_apply=c18"
    assert 3 * 2**19 < MAX_FLATTENED_INSTRUCTIONS < 3 * 2**20


def test_a_call_tree_under_the_limit_is_evaluated_at_every_call_site(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """As on the call graph FlattenCallGraph makes: c0, called twice by each of the 2^(d-2)
    evaluations of c1, is evaluated 2^(d-1) times."""
    seen = evaluations(monkeypatch)
    analyze_memory(parse(_chain(9, calls=2)))
    assert seen.count("c0") == 2**8
    assert seen.count("c8") == 1
