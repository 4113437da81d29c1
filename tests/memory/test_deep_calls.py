"""Call chains as deep as users write them: the memory analysis walks them without recursion
(`memory/nesting.py`), so 3,000 nested `call`s are analysed, not refused as too deep."""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from hlo_layout.cli import app
from hlo_layout.memory import analyze_memory
from hlo_layout.syntax import parse


def _chain(depth: int) -> str:
    parts = ["HloModule m, is_scheduled=true\n"]
    parts.append("c0 {\n  a = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(a)\n}\n")
    for k in range(1, depth):
        parts.append(
            f"c{k} {{\n  a = f32[4]{{0}} parameter(0)\n"
            f"  ROOT n = f32[4]{{0}} call(a), to_apply=c{k - 1}\n}}\n"
        )
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


def test_deep_call_chain_through_the_commands(tmp_path) -> None:
    path = tmp_path / "deep.txt"
    path.write_text(_chain(3_000))
    runner = CliRunner()
    for args in (["inspect"], ["memory"], ["check", "--no-rules-ok"], ["inspect", "-f", "json"],
                 ["diff", str(path)]):  # fmt: skip
        result = runner.invoke(app, [*args, str(path)])
        assert result.exit_code == 0, (args, result.stderr[-300:])
