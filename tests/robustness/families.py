"""The hostile-input families of issue 16 §2, each a small input rebuilt from its description,
the command it goes to, and what a good answer is: the exit codes allowed, the time and peak
memory bounds, and for input errors where the error must point.

Used by test_hostile.py (one test per family) and by hostile_table.py (a table of the figures).
Each family runs in a child process (`run_family`): time is measured around the command only,
memory is the child's peak resident size (VmHWM), backed by an address-space rlimit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Runs one command in-process (no interpreter start-up in the time) and prints
#: {"code", "seconds", "hwm_mb", "stderr"}; an address-space rlimit backs the memory bound.
#: "seconds" is the child's CPU time: the work an input costs, whatever else the machine runs.
_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))
    from typer.testing import CliRunner
    from hlo_layout.cli import app
    args, says = json.loads(sys.argv[1])
    stdin = open(sys.argv[2]).read() if len(sys.argv) > 2 else ""
    start = time.process_time()
    result = CliRunner().invoke(app, args, input=stdin)
    seconds = time.process_time() - start
    hwm = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            hwm = int(line.split()[1]) // 1024
    everything = result.stdout + result.stderr
    print(json.dumps({"code": result.exit_code, "seconds": seconds, "hwm_mb": hwm,
                      "stderr": result.stderr[:600],
                      "missing": [s for s in says if s not in everything]}))
    """
)


def _module(body: str, header: str = "HloModule m") -> str:
    return f"{header}\nENTRY e {{\n{body}\n}}\n"


@dataclass(frozen=True)
class Family:
    """One hostile input: `text` is written to a file whose path replaces `{}` in `args`;
    `stdin` (when set) is fed to the command instead."""

    name: str
    text: str | Callable[[], str]
    args: list[str]
    codes: tuple[int, ...] = (0, 3)
    max_seconds: float = 2.0
    max_mb: int = 300
    #: For exit 3: the `LINE:COL` (or `LINE:`) the message must start with after the path.
    where: str | None = None
    stdin: bool = False
    #: Text the error message must contain.
    says: tuple[str, ...] = field(default=())


_BIG = "9" * 5000
_HUGE_BYTES_BODY = "\n".join(f"  p{i} = f32[{2**62}] parameter({i})" for i in range(64))
_HUGE_BYTES = _module(
    _HUGE_BYTES_BODY
    + "\n  ROOT t = ("
    + ", ".join([f"f32[{2**62}]"] * 64)
    + ") tuple("
    + ", ".join(f"p{i}" for i in range(64))
    + ")"
)
_DIMS_320 = _module(f"  ROOT p = f32[{'9' * 320}] parameter(0)")
_TWO_ENTRIES = (
    "HloModule m\nENTRY a {\n  ROOT p = f32[8] parameter(0)\n}\n"
    "ENTRY b {\n  ROOT q = f32[8] parameter(0)\n}\n"
)


def _nested_calls(depth: int = 200) -> str:
    out = ["HloModule m"]
    out.append("c0 {\n  ROOT p = f32[8] parameter(0)\n}")
    for i in range(1, depth):
        out.append(
            f"c{i} {{\n  p = f32[8] parameter(0)\n  ROOT r = f32[8] call(p), to_apply=c{i - 1}\n}}"
        )
    out.append(
        f"ENTRY e {{\n  p = f32[8] parameter(0)\n"
        f"  ROOT r = f32[8] call(p), to_apply=c{depth - 1}\n}}"
    )
    return "\n".join(out) + "\n"


def _comment_lines() -> str:
    """20 MB of `//` comment lines between two small computations."""
    line = "// " + "x" * 77 + "\n"
    comments = line * (20 * 2**20 // len(line))
    return (
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n\n" + comments + "ENTRY e {\n  p = f32[8] parameter(0)\n"
        "  ROOT n = f32[8] negate(p)\n}\n"
    )


FAMILIES: tuple[Family, ...] = (
    # --- long tiles -------------------------------------------------------------------------
    Family(
        "long tile list in a dump (20,000 tiles)",
        _module("  ROOT p = f32[8,32]{1,0:T" + "(8)" * 20000 + "} parameter(0)"),
        ["inspect", "{}"],
        codes=(3,),
        where="3:",
        says=("MAX_TILE_LEVELS",),
    ),
    Family(
        "long tile line on stdin (100,000 entries)",
        "f32[8,32,32,64]{3,0,2,1:T(" + ",".join(["8"] * 100_000) + ")}\n",
        ["layout", "-"],
        codes=(3,),
        stdin=True,
        says=("MAX_TILE_ENTRIES",),
    ),
    # --- huge declared device counts --------------------------------------------------------
    Family(
        "num_partitions=1000000000, replicated",
        _module(
            "  ROOT p = f32[8] parameter(0), sharding={replicated}",
            "HloModule m, num_partitions=1000000000",
        ),
        ["sharding", "{}", "-f", "json"],
        codes=(0,),
    ),
    Family(
        "maximal device=200000000",
        _module("  ROOT p = f32[8] parameter(0), sharding={maximal device=200000000}"),
        ["sharding", "{}"],
        codes=(0,),
    ),
    Family(
        "devices=[2048,2048]<=[4194304]",
        _module("  ROOT p = f32[8,8] parameter(0), sharding={devices=[2048,2048]<=[4194304]}"),
        ["sharding", "{}", "-f", "json", "-i", "p"],
        codes=(0,),
    ),
    Family(
        "last_tile_dim_replicate over 1,048,576-device groups",
        _module(
            "  ROOT p = f32[8,8] parameter(0), "
            "sharding={devices=[2,2,1048576]<=[4194304] last_tile_dim_replicate}"
        ),
        ["sharding", "{}"],
        codes=(0,),
    ),
    Family(
        "mesh of 4,194,304 devices",
        _module(
            "  ROOT p = f32[8,8] parameter(0), sharding={mesh['x'=2048,'y'=2048], [{'y'}, {'x'}]}"
        ),
        ["sharding", "{}", "-f", "json"],
        codes=(0,),
    ),
    Family(
        "explicit list of 100,000 devices (a 600 KB line)",
        _module(
            "  ROOT p = f32[100000] parameter(0), sharding={devices=[100000]"
            + ",".join(map(str, range(99_999, -1, -1)))
            + "}"
        ),
        ["sharding", "{}", "-f", "json"],
        codes=(0,),
    ),
    Family(
        "mesh with a device order over 4,194,304 devices",
        _module(
            "  ROOT p = f32[8,8] parameter(0), "
            "sharding={mesh['x'=2048,'y'=2048], device_ids=([4194304]), [{'x'}, {'y'}]}"
        ),
        ["sharding", "{}"],
        codes=(0,),
    ),
    # --- huge integers ----------------------------------------------------------------------
    Family(
        "5,000-digit dimension",
        _module(f"  ROOT p = f32[{_BIG}] parameter(0)"),
        ["inspect", "{}"],
        codes=(3,),
        where="3:",
    ),
    Family(
        "5,000-digit parameter number",
        _module(f"  ROOT p = f32[8] parameter({_BIG})"),
        ["inspect", "{}", "-f", "json"],
        codes=(3,),
        where="3:",
    ),
    Family(
        "5,000-digit num_partitions",
        _module(
            "  ROOT p = f32[8] parameter(0), sharding={replicated}",
            f"HloModule m, num_partitions={_BIG}",
        ),
        ["sharding", "{}"],
        codes=(3,),
    ),
    Family(
        "5,000-digit device id",
        _module(f"  ROOT p = f32[8] parameter(0), sharding={{maximal device={_BIG}}}"),
        ["sharding", "{}", "-f", "json"],
        codes=(3,),
    ),
    # --- huge byte counts and dims in the formatters ----------------------------------------
    Family("2^70 bytes through inspect", _HUGE_BYTES, ["inspect", "{}"], codes=(0,)),
    Family("2^70 bytes through memory", _HUGE_BYTES, ["memory", "{}"], codes=(0,)),
    Family(
        "2^70 bytes through check",
        _HUGE_BYTES,
        ["check", "{}", "--max-argument-bytes", "1KiB", "--max-padding-percent", "1"],
        codes=(1,),
    ),
    Family("2^70 bytes through diff", _HUGE_BYTES, ["diff", "{}", "{}"], codes=(0,)),
    Family(
        "320-digit dims through check",
        _DIMS_320,
        ["check", "{}", "--no-rules-ok"],
        codes=(3,),
        where="3:12",
    ),
    Family(
        "320-digit dims through diff", _DIMS_320, ["diff", "{}", "{}"], codes=(3,), where="3:12"
    ),
    # --- operand / shape count mismatches ---------------------------------------------------
    Family(
        "tuple with fewer operands than its shape (indexing)",
        _module("  a = f32[8] parameter(0)\n  ROOT t = (f32[8], f32[8]) tuple(a)"),
        ["indexing", "{}", "-c", "e"],
    ),
    Family(
        "tuple with more operands than its shape (indexing)",
        _module("  a = f32[8] parameter(0)\n  ROOT t = (f32[8]) tuple(a, a, a)"),
        ["indexing", "{}", "-i", "t", "-d", "in2out"],
    ),
    Family(
        "get-tuple-element index past the tuple",
        _module(
            "  a = (f32[8], f32[4]) parameter(0)\n  ROOT g = f32[8] get-tuple-element(a), index=7"
        ),
        ["inspect", "{}", "-f", "json"],
    ),
    Family(
        "add with three operands",
        _module("  a = f32[8] parameter(0)\n  ROOT s = f32[8] add(a, a, a)"),
        ["indexing", "{}", "-i", "s"],
    ),
    # --- odd line endings -------------------------------------------------------------------
    Family(
        "CR-only line endings, error on line 4",
        "HloModule m\rENTRY e {\r  ROOT p = f32[8] parameter(0)\r  bad bad\r}\r",
        ["inspect", "{}"],
        codes=(3,),
        where="4:7",
    ),
    Family(
        "CRLF line endings, error on line 4",
        "HloModule m\r\nENTRY e {\r\n  ROOT p = f32[8] parameter(0)\r\n  bad bad\r\n}\r\n",
        ["inspect", "{}"],
        codes=(3,),
        where="4:7",
    ),
    Family(
        "form feeds inside lines, error on line 4",
        "HloModule m\nENTRY e {\n\f  p = f32[8] parameter(0)\f\n"
        "  ROOT q = f32[8] negate(p)\f@\n}\n",
        ["inspect", "{}"],
        codes=(3,),
        where="4:29",
    ),
    Family(
        "vertical tab in an attribute after CR-only lines",
        "HloModule m\rENTRY e {\r  p = f32[8] parameter(0)\r"
        "  ROOT q = f32[8] negate(p), x=\x0b\r}\r",
        ["inspect", "{}"],
        codes=(3,),
        where="4:",
    ),
    # --- deep and long ----------------------------------------------------------------------
    Family(
        "200,000 open braces",
        _module("  ROOT p = f32[8] parameter(0), x=" + "{" * 200_000),
        ["inspect", "{}"],
        codes=(3,),
        where="3:",
    ),
    Family(
        "unterminated string of 900,000 characters",
        _module('  ROOT p = f32[8] parameter(0), metadata={op_name="' + "a" * 900_000),
        ["inspect", "{}"],
        codes=(3,),
    ),
    Family(
        "tuple shape nested 600 deep",
        _module("  ROOT p = " + "(" * 600 + "f32[]" + ")" * 600 + " parameter(0)"),
        ["inspect", "{}"],
        codes=(3,),
        where="3:",
    ),
    Family(
        "tuple shape nested 600 deep, indexing",
        _module("  ROOT p = " + "(" * 600 + "f32[]" + ")" * 600 + " parameter(0)"),
        ["indexing", "{}", "--computation", "ENTRY"],
        codes=(3,),
        where="3:",
    ),
    Family(
        "200 nested calls",
        _nested_calls,
        ["inspect", "{}"],
        codes=(0,),
    ),
    Family(
        "10 MB garbage line",
        _module('  ROOT p = f32[8] parameter(0), metadata={op_name="' + "a" * 10**7),
        ["inspect", "{}"],
        codes=(3,),
        max_seconds=20.0,
        max_mb=600,
    ),
    Family(
        "20 MB of // comment lines through streamed JSON",
        _comment_lines,
        ["inspect", "{}", "-f", "json", "--stream"],
        codes=(0,),
        max_seconds=60.0,
        max_mb=250,
    ),
    Family(
        "2,000 lines of 250 attributes each (keys repeated), JSON",
        lambda: _module(
            "\n".join(
                f"  p{n} = f32[8] parameter({n}), "
                + ", ".join(f"k{k % 200}={k}" for k in range(250))
                for n in range(2000)
            )
            + "\n  ROOT t = f32[8] add(p0, p1)"
        ),
        ["inspect", "{}", "-f", "json"],
        codes=(0,),
        max_seconds=10.0,
    ),
    # --- semantics XLA rejects --------------------------------------------------------------
    Family("two ENTRY computations", _TWO_ENTRIES, ["inspect", "{}"], codes=(3,), where="5:"),
    Family(
        "two ENTRY computations, streamed JSON",
        _TWO_ENTRIES,
        ["inspect", "{}", "-f", "json", "--stream"],
        codes=(3,),
        where="5:",
    ),
    Family(
        "--grid on a zero-sized shape",
        "",
        ["layout", "f32[0,4]{1,0:T(2,2)}", "--grid"],
        codes=(0,),
    ),
)


def run_family(family: Family, workdir: Path) -> dict:
    """Run one family in a child process; returns {"code", "seconds", "hwm_mb", "stderr",
    "path"}."""
    text = family.text() if callable(family.text) else family.text
    path = workdir / "dump.hlo"
    path.write_bytes(text.encode("utf-8"))
    args = [a.replace("{}", str(path)) for a in family.args]
    command = [sys.executable, "-c", _CHILD, json.dumps([args, list(family.says)])]
    if family.stdin:
        command.append(str(path))
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{family.name}: the child failed\n{done.stderr[-2000:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    got["path"] = str(path)
    return got


def problems(family: Family, got: dict) -> list[str]:
    """Every way the answer misses the family's bounds (empty when it meets them)."""
    out = []
    if got["code"] not in family.codes:
        out.append(f"exit {got['code']}, expected {family.codes}")
    if got["seconds"] > family.max_seconds:
        out.append(f"{got['seconds']:.2f} s > {family.max_seconds} s")
    if got["hwm_mb"] > family.max_mb:
        out.append(f"{got['hwm_mb']} MB > {family.max_mb} MB")
    stderr = got["stderr"]
    if got["code"] == 3:
        if not stderr.startswith((got["path"], "error:")):
            out.append(f"message without a location: {stderr[:120]!r}")
        if family.where is not None and not stderr.startswith(f"{got['path']}:{family.where}"):
            out.append(f"expected {family.where}, got {stderr[: len(got['path']) + 20]!r}")
        out += [f"message lacks {s!r}" for s in got["missing"]]
    return out


__all__ = ["FAMILIES", "Family", "problems", "run_family"]
