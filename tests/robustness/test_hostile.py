"""Hostile inputs of issue 16 §2: each family exits 0 or 3 (never 4), in a child process whose
time and peak memory (VmHWM) are bounded: < 2 s of work and < 300 MB for inputs under 1 MB."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Runs one command in-process (no interpreter start-up in the time) and prints
#: {"code", "seconds", "hwm_mb", "stderr"}; an address-space rlimit backs the memory bound.
_CHILD = textwrap.dedent(
    """
    import contextlib, io, json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    from typer.testing import CliRunner
    from hlo_layout.cli import app
    args = json.loads(sys.argv[1])
    start = time.perf_counter()
    result = CliRunner().invoke(app, args, input=sys.stdin.read())
    seconds = time.perf_counter() - start
    hwm = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            hwm = int(line.split()[1]) // 1024
    print(json.dumps({"code": result.exit_code, "seconds": seconds, "hwm_mb": hwm,
                      "stderr": result.stderr[:400]}))
    """
)


def _run(args: list[str], stdin: str = "") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _module(body: str, header: str = "HloModule m") -> str:
    return f"{header}\nENTRY e {{\n{body}\n}}\n"


_BIG = "9" * 5000

FAMILIES: dict[str, tuple[str, list[str]]] = {
    "long tile list": (
        _module("  ROOT p = f32[8,32]{1,0:T" + "(8)" * 20000 + "} parameter(0)"),
        ["inspect", "{}"],
    ),
    "huge num_partitions": (
        _module(
            "  ROOT p = f32[8] parameter(0), sharding={replicated}",
            "HloModule m, num_partitions=1000000000",
        ),
        ["sharding", "{}"],
    ),
    "huge maximal device": (
        _module("  ROOT p = f32[8] parameter(0), sharding={maximal device=200000000}"),
        ["sharding", "{}", "-f", "json"],
    ),
    "huge iota devices": (
        _module("  ROOT p = f32[8,8] parameter(0), sharding={devices=[2048,2048]<=[4194304]}"),
        ["sharding", "{}"],
    ),
    "huge integer dim": (_module(f"  ROOT p = f32[{_BIG}] parameter(0)"), ["inspect", "{}"]),
    "huge parameter number": (
        _module(f"  ROOT p = f32[8] parameter({_BIG})"),
        ["inspect", "{}", "-f", "json"],
    ),
    "tuple missing operands": (
        _module("  a = f32[8] parameter(0)\n  ROOT t = (f32[8], f32[8]) tuple(a)"),
        ["indexing", "{}", "-c", "e"],
    ),
    "tuple extra operands": (
        _module("  a = f32[8] parameter(0)\n  ROOT t = (f32[8]) tuple(a, a, a)"),
        ["indexing", "{}", "-i", "t", "-d", "in2out"],
    ),
    "CR line endings": (
        "HloModule m\rENTRY e {\r  ROOT p = f32[8] parameter(0)\r  bad bad\r}\r",
        ["inspect", "{}"],
    ),
    "form feed": (_module("\f  ROOT p = f32[8] parameter(0)\f"), ["inspect", "{}"]),
    "deep brackets": (
        _module("  ROOT p = f32[8] parameter(0), x=" + "{" * 200_000),
        ["inspect", "{}"],
    ),
    "unterminated string": (
        _module('  ROOT p = f32[8] parameter(0), metadata={op_name="' + "a" * 900_000),
        ["inspect", "{}"],
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_hostile_family(tmp_path: Path, family: str) -> None:
    text, args = FAMILIES[family]
    path = tmp_path / "dump.hlo"
    path.write_text(text)
    got = _run([a.replace("{}", str(path)) for a in args])
    assert got["code"] in (0, 3), got
    if got["code"] == 3:
        assert got["stderr"].startswith((str(path), "error:")), got
    assert got["seconds"] < 2.0 * 3, got  # 2 s goal, x3 slack for a loaded CI machine
    assert got["hwm_mb"] < 300, got


def test_grid_on_zero_sized_shape() -> None:
    got = _run(["layout", "f32[0,4]{1,0:T(2,2)}", "--grid"])
    assert got["code"] == 0, got


def test_long_tile_line_on_stdin() -> None:
    line = "f32[8,32,32,64]{3,0,2,1:T" + "(8,8)" * 100_000 + "}\n"
    got = _run(["layout", "-"], stdin=line)
    assert got["code"] == 3, got
    assert "MAX_TILE_LEVELS" in got["stderr"] or got["code"] == 3
    assert got["hwm_mb"] < 300, got


def test_ten_megabyte_garbage_line(tmp_path: Path) -> None:
    path = tmp_path / "dump.hlo"
    path.write_text(_module('  ROOT p = f32[8] parameter(0), metadata={op_name="' + "a" * 10**7))
    got = _run(["inspect", str(path)])
    assert got["code"] == 3, got
    assert got["hwm_mb"] < 600, got
