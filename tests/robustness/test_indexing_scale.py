"""`hlo-layout indexing` on wide and deep valid inputs (issues 13 and 16): nested calls 200 and
2,000 deep, a 2,000-operand tuple, an 8,000-op fusion chain, a 2,000-operand concatenate. Each
runs the CLI in a child process and must exit 0 with the right answer, within generous bounds
(the quadratic walks took 10-90 s here; the goal, under 1 s of work, lives in
benchmarks/bench_indexing.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.bench_indexing import calls_dump, chain_dump, concat_dump, tuple_dump

ROOT = Path(__file__).resolve().parents[2]

#: Seconds of work (interpreter start-up excluded) and peak resident MB allowed per case.
MAX_SECONDS = 20.0
MAX_MB = 400

#: Runs the CLI in-process and prints {"code", "seconds", "hwm_mb", "stdout", "stderr"}.
_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))
    from typer.testing import CliRunner
    from hlo_layout.cli import app
    start = time.perf_counter()
    result = CliRunner().invoke(app, json.loads(sys.argv[1]))
    seconds = time.perf_counter() - start
    hwm = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            hwm = int(line.split()[1]) // 1024
    print(json.dumps({"code": result.exit_code, "seconds": seconds, "hwm_mb": hwm,
                      "stdout": result.stdout, "stderr": result.stderr[-2000:]}))
    """
)

CASES: dict[str, tuple[Callable[[int], str], int, list[str]]] = {
    "200 nested calls": (calls_dump, 200, ["-c", "e"]),
    "2000 nested calls": (calls_dump, 2000, ["-c", "ENTRY"]),
    "2000 nested calls in2out": (calls_dump, 2000, ["-c", "e", "-d", "in2out"]),
    "2000-operand tuple -c": (tuple_dump, 2000, ["-c", "e"]),
    "2000-operand tuple -i": (tuple_dump, 2000, ["-i", "t"]),
    "2000-operand tuple in2out": (tuple_dump, 2000, ["-c", "e", "-d", "in2out"]),
    "8000-op fusion chain": (chain_dump, 8000, ["--fusion", "f"]),
    "8000-op fusion chain in2out": (chain_dump, 8000, ["--fusion", "f", "-d", "in2out"]),
    "2000-operand concatenate in2out": (concat_dump, 2000, ["-c", "e", "-d", "in2out"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_valid_wide_and_deep_inputs_are_answered(case: str, tmp_path: Path) -> None:
    make, n, args = CASES[case]
    path = tmp_path / "case.hlo"
    path.write_text(make(n))
    command = ["indexing", str(path), *args, "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(command)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["code"] == 0, out["stderr"]
    assert out["seconds"] < MAX_SECONDS, out["seconds"]
    assert out["hwm_mb"] < MAX_MB, out["hwm_mb"]
    doc = json.loads(out["stdout"])
    maps = [m for op in doc["operands"] for m in op["maps"]]
    assert not doc["notes"] and all(not op["unknown"] for op in doc["operands"])
    if make is calls_dump:  # the transpose at the bottom, through every call
        (only,) = maps
        want = "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]"
        if "in2out" not in case:
            want = "(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"
        assert only["text"] == want
    elif make is chain_dump:
        assert [m["text"] for m in maps] == [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 7]"
        ]
    else:  # one map per operand, to (or from) its own output or slab
        assert len(maps) == n
