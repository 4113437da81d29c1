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
    text: str | bytes | Callable[[], str | bytes]
    args: list[str]
    codes: tuple[int, ...] = (0, 3)
    max_seconds: float = 2.0
    max_mb: int = 300
    #: For exit 3: the `LINE:COL` (or `LINE:`) the message must start with after the path.
    where: str | None = None
    stdin: bool = False
    #: Text the error message must contain.
    says: tuple[str, ...] = field(default=())
    #: Side files written beside the dump: (name, text), e.g. its buffer assignment.
    beside: tuple[tuple[str, str], ...] = field(default=())
    #: The side file `where` is in (by name), when the error is there rather than in the dump.
    in_file: str | None = None
    #: The dump's file name.
    file_name: str = "dump.hlo"


_BIG = "9" * 5000
#: An entry parameter of 20,000 scalars, each an allocation and a buffer live at the peak.
_WIDE_TUPLE = _module(
    "  p = (" + ", ".join(["f32[]"] * 20_000) + ") parameter(0)\n"
    "  ROOT g = f32[] get-tuple-element(p), index=0"
)


def _wide_parameter(leaves: int = 100_000, through: str = "") -> str:
    """An entry parameter of `leaves` f32[8] leaves (700 KB of text), a value and an allocation
    each; `through` = "while" passes it through a loop whose body copies it."""
    shape = "(" + ", ".join(["f32[8]"] * leaves) + ")"
    if through != "while":
        return _module(
            f"  p = {shape} parameter(0)\n  ROOT g = f32[8] get-tuple-element(p), index=0",
            "HloModule m, is_scheduled=true",
        )
    return (
        "HloModule m, is_scheduled=true\n"
        f"body {{\n  bp = {shape} parameter(0)\n  ROOT bc = {shape} copy(bp)\n}}\n"
        f"cond {{\n  cp = {shape} parameter(0)\n  ROOT k = pred[] constant(false)\n}}\n"
        f"ENTRY e {{\n  p = {shape} parameter(0)\n"
        f"  w = {shape} while(p), condition=cond, body=body\n"
        "  ROOT g = f32[8] get-tuple-element(w), index=0\n}\n"
    )


def _wide_root(leaves: int = 100_000) -> str:
    """A ROOT tuple of `leaves` distinct adds (4.5 MB of text): an output allocation each, all
    live to the end (the buffer assigner's reuse index met each one's range in every block)."""
    adds = "\n".join(f"  a{k} = f32[8] add(x{k % 2}, x{(k + 1) % 2})" for k in range(leaves))
    shape = "(" + ", ".join(["f32[8]"] * leaves) + ")"
    names = ", ".join(f"a{k}" for k in range(leaves))
    return _module(
        f"  x0 = f32[8] parameter(0)\n  x1 = f32[8] parameter(1)\n{adds}\n"
        f"  ROOT t = {shape} tuple({names})",
        "HloModule m, is_scheduled=true",
    )


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


def _binary_call_tree(depth: int = 22) -> str:
    """Computation k calls computation k - 1 twice (2.6 KB; 12 million instructions flattened)."""
    out = ["HloModule m", "c0 {\n  ROOT p = f32[8] parameter(0)\n}"]
    for i in range(1, depth):
        out.append(
            f"c{i} {{\n  p = f32[8] parameter(0)\n  a = f32[8] call(p), to_apply=c{i - 1}\n"
            f"  ROOT b = f32[8] call(a), to_apply=c{i - 1}\n}}"
        )
    out.append(
        f"ENTRY e {{\n  p = f32[8] parameter(0)\n"
        f"  ROOT r = f32[8] call(p), to_apply=c{depth - 1}\n}}"
    )
    return "\n".join(out) + "\n"


def _nested_whiles(depth: int, carry: str) -> str:
    """`depth` loops, each body the next loop; the innermost negates the carried f32[8]."""
    tuple_carry = carry.startswith("(")
    out = ["HloModule m"]
    for i in range(depth):
        out.append(f"cond{i} {{\n  p = {carry} parameter(0)\n  ROOT c = pred[] constant(true)\n}}")
        if i:
            body = f"  ROOT w = {carry} while(p), condition=cond{i - 1}, body=body{i - 1}"
        elif tuple_carry:
            body = (
                "  i = s32[] get-tuple-element(p), index=0\n"
                "  x = f32[8] get-tuple-element(p), index=1\n"
                f"  n = f32[8] negate(x)\n  ROOT t = {carry} tuple(i, n)"
            )
        else:
            body = f"  ROOT n = {carry} negate(p)"
        out.append(f"body{i} {{\n  p = {carry} parameter(0)\n{body}\n}}")
    out.append(
        f"ENTRY e {{\n  p = {carry} parameter(0)\n"
        f"  ROOT w = {carry} while(p), condition=cond{depth - 1}, body=body{depth - 1}\n}}"
    )
    return "\n".join(out) + "\n"


def _loop_nest(depth: int, trips: str) -> str:
    """`depth` nested while loops, each with `known_trip_count` `trips` (a JSON value)."""
    config = f'backend_config={{"known_trip_count":{{"n":{trips}}}}}'
    out = ["HloModule m"]
    for i in range(depth):
        out.append(f"c{i} {{\n  p = s32[] parameter(0)\n  ROOT t = pred[] constant(false)\n}}")
        body = (
            f"  ROOT w = s32[] while(p), condition=c{i - 1}, body=b{i - 1}, {config}"
            if i
            else "  ROOT n = s32[] negate(p)"
        )
        out.append(f"b{i} {{\n  p = s32[] parameter(0)\n{body}\n}}")
    out.append(
        f"ENTRY e {{\n  p = s32[] parameter(0)\n"
        f"  ROOT w = s32[] while(p), condition=c{depth - 1}, body=b{depth - 1}, {config}\n}}"
    )
    return "\n".join(out) + "\n"


_CALL_CYCLE = (
    "HloModule m\ncond {\n  p = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
    "a {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=b\n}\n"
    "b {\n  p = f32[4] parameter(0)\n  ROOT w = f32[4] while(p), condition=cond, body=a\n}\n"
    "ENTRY main {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=a\n}\n"
)


def _shapes(count: int) -> str:
    """`count` shapes, one a line, of every rank to 4, tiled and not (deterministic)."""
    types = ("f32", "bf16", "s32", "pred", "u8", "f16", "s4")
    sizes = (1, 2, 3, 7, 8, 16, 33, 128, 129, 256, 512)
    tiles = ("", ":T(8,128)(2,1)", ":T(8,128)", ":T(4,128)(2,1)S(1)", ":T(256)")
    lines = []
    for n in range(count):
        rank = 1 + n % 4
        dims = ",".join(str(sizes[(n * 7 + k * 3) % len(sizes)]) for k in range(rank))
        order = ",".join(str(d) for d in reversed(range(rank)))
        tile = tiles[n % len(tiles)] if rank >= 2 else ("", ":T(256)")[n % 2]
        lines.append(f"{types[n % len(types)]}[{dims}]{{{order}{tile}}}")
    return "\n".join(lines) + "\n"


def _llama_dump() -> str:
    """A 370 KB benchmark model of XLA's (tests/data/corpus/public/models)."""
    name = "004_xla_bench_llama31_70b_fp8_16x8.hlo.txt"
    return (ROOT / "tests/data/corpus/public/models" / name).read_text()


_TEXT = "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n"
_ENCODED = _TEXT.encode()


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
        "a 20,000-leaf tuple parameter through memory (each leaf's attribution: was quadratic)",
        _WIDE_TUPLE,
        ["memory", "{}"],
        codes=(0,),
        max_seconds=5.0,
    ),
    # A value per leaf: the analysis' memory per value (NOTE: [value memory] in
    # memory/dataflow.py) and the JSON writers' (they stream the long lists).
    *(
        Family(
            "a 100,000-leaf tuple parameter through " + " ".join(a for a in args if a != "{}"),
            _wide_parameter,
            args,
            codes=(0,),
            max_seconds=30.0,
        )
        for args in (
            ["memory", "{}"],
            ["memory", "{}", "--format", "json"],
            ["inspect", "{}", "--format", "json"],
        )
    ),
    Family(
        "a 100,000-leaf tuple through a while loop, through memory",
        lambda: _wide_parameter(through="while"),
        ["memory", "{}"],
        codes=(0,),
        max_seconds=30.0,
    ),
    Family(
        "a ROOT tuple of 100,000 distinct adds, through memory",
        _wide_root,
        ["memory", "{}"],
        codes=(0,),
        max_seconds=30.0,
    ),
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
        max_mb=300,
    ),
    *(
        Family(
            f"ENTRY holding one 10 MB line: {label}",
            lambda line=line: _module("  ROOT p = f32[8] parameter(0)\n  " + line()),
            ["inspect", "{}"],
            codes=(3,),
            max_seconds=20.0,
            max_mb=300,
        )
        for label, line in (
            ("one word", lambda: "a" * 10**7),
            ("a word of 5 million dashes", lambda: "a-" * (5 * 10**6)),
            ("words", lambda: "a " * (5 * 10**6)),
        )
    ),
    Family(
        "an attribute value of one 10 MB word",
        _module("  ROOT p = f32[8] parameter(0), x={" + "a" * 10**7 + "}"),
        ["inspect", "{}"],
        codes=(0, 3),
        max_seconds=20.0,
        max_mb=300,
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
    # --- integers outside shapes (issue 28): the one reader, limits.read_int ---------------
    Family(
        "5,000-digit get-tuple-element index",
        _module(
            "  a = (f32[8], f32[4]) parameter(0)\n"
            f"  ROOT g = f32[8] get-tuple-element(a), index={_BIG}"
        ),
        ["memory", "{}"],
        codes=(3,),
        where="4:",
        says=("MAX_INT_DIGITS",),
    ),
    Family(
        "5,000-digit output_to_operand_aliasing",
        _module(
            "  a = f32[8] parameter(0)\n  ROOT c = f32[8] custom-call(a), "
            f'custom_call_target="x", output_to_operand_aliasing={{{{}}: ({_BIG}, {{}})}}'
        ),
        ["inspect", "{}", "-f", "json"],
        codes=(3,),
        where="4:",
    ),
    Family(
        "5,000-digit input_output_alias in the header",
        _module(
            "  ROOT a = f32[8] parameter(0)",
            f"HloModule m, input_output_alias={{ {{}}: ({_BIG}, {{}}, may-alias) }}",
        ),
        ["memory", "{}"],
        codes=(3,),
        where="1:",
    ),
    Family(
        "5,000-digit padding= in indexing",
        _module(
            "  a = f32[8] parameter(0)\n  z = f32[] constant(0)\n"
            f"  ROOT p = f32[10] pad(a, z), padding={_BIG}_1"
        ),
        ["indexing", "{}", "-i", "p"],
        codes=(3,),
        where="5:",
    ),
    Family(
        "memory --at with 5,000 digits",
        _module("  ROOT a = f32[8] parameter(0)"),
        ["memory", "{}", "--at", _BIG],
        codes=(2,),
        says=("MAX_INT_DIGITS",),
    ),
    Family(
        "layout of f32[5,000 nines] (the plain layout path)",
        "",
        ["layout", f"f32[{_BIG}]"],
        codes=(3,),
        says=("MAX_INT_DIGITS",),
    ),
    # --- the buffer-assignment reader beside a dump (issue 28) ------------------------------
    *(
        Family(
            f"buffer assignment: {label}",
            _module("  ROOT a = f32[8] parameter(0)"),
            [command, "{}"],
            codes=(3,),
            where=where,
            in_file="dump-buffer-assignment.txt",
            beside=(("dump-buffer-assignment.txt", f"BufferAssignment:\n{line}\n"),),
        )
        for label, line, where in (
            ("size 1.2.3KiB", "allocation 0: size 1.2.3KiB, parameter 0:", "2:20"),
            ("size .KiB", "allocation 0: size .KiB, parameter 0:", "2:20"),
            ("size of 400 digits in KiB", f"allocation 0: size {'9' * 400}KiB:", "2:20"),
            ("size of 5,000 digits", f"allocation 0: size {_BIG}:", "2:20"),
            ("color of 5,000 digits", f"allocation 0: size 32, color {_BIG}:", "2:30"),
            (
                "value shape with a 5,000-digit dimension",
                "allocation 0: size 32, parameter 0:\n"
                f" value: <0 a @0> (size=32,offset=0): f32[{_BIG}]{{0}}",
                "3:42",
            ),
            (
                "value shape cut short",
                "allocation 0: size 32, parameter 0:\n value: <0 a @0> (size=32,offset=0): f32[8",
                "3:",
            ),
        )
        for command in ("memory", "inspect")
    ),
    Family(
        "buffer assignment: size 3EiB",
        _module("  ROOT a = f32[8] parameter(0)"),
        ["memory", "{}", "-f", "json"],
        codes=(0,),
        beside=(("dump-buffer-assignment.txt", "BufferAssignment:\nallocation 0: size 3EiB:\n"),),
    ),
    # --- dot dimension numbers out of range (issue 28): the verifier, for every command -----
    *(
        Family(
            f"dot with {which} dims out of range, {command}",
            _module(
                "  a = f32[4,8] parameter(0)\n  b = f32[8,16] parameter(1)\n"
                f"  ROOT d = f32[4,16] dot(a, b), {attributes}"
            ),
            [command, "{}", *extra],
            codes=(3,),
            where="5:3",
            says=("out of range",),
        )
        for which, attributes in (
            ("contracting", "lhs_contracting_dims={5}, rhs_contracting_dims={0}"),
            (
                "batch",
                "lhs_batch_dims={7}, rhs_batch_dims={0}, lhs_contracting_dims={1}, "
                "rhs_contracting_dims={1}",
            ),
        )
        for command, extra in (("indexing", ["-i", "d"]), ("inspect", []), ("memory", []))
    ),
    # --- encodings and empty input (issue 28): every command the same, with a place ---------
    *(
        Family(
            f"{label}, {' '.join(args[:1] + args[2:])}",
            data,
            [args[0], "{}", *args[2:]],
            codes=(3,),
            where=where,
            says=(says,),
        )
        for label, data, where, says in (
            ("invalid UTF-8", _ENCODED.replace(b"ROOT p", b"ROOT p\xff"), "3:9", "not UTF-8"),
            ("a NUL byte", _ENCODED.replace(b"ROOT p", b"ROOT \x00p"), "3:8", "NUL"),
            ("UTF-16 with a BOM", _TEXT.encode("utf-16"), "1:1", "UTF-16LE"),
            ("UTF-16LE without a BOM", _TEXT.encode("utf-16-le"), "1:1", "UTF-16LE"),
            ("UTF-16BE without a BOM", _TEXT.encode("utf-16-be"), "1:1", "UTF-16BE"),
            (
                "invalid UTF-8 after CR-only lines",
                _ENCODED.replace(b"\n", b"\r").replace(b"ROOT p", b"ROOT p\xff"),
                "3:9",
                "not UTF-8",
            ),
        )
        for args in (
            ["inspect", "{}"],
            ["inspect", "{}", "-f", "json", "--stream"],
            ["sharding", "{}"],
            ["memory", "{}"],
        )
    ),
    Family(
        "a UTF-8 byte-order mark is not text",
        b"\xef\xbb\xbf" + _ENCODED,
        ["inspect", "{}"],
        codes=(0,),
    ),
    Family(
        "a .gz file that is not gzip",
        _TEXT,
        ["inspect", "{}"],
        codes=(3,),
        says=("not gzip",),
        file_name="dump.hlo.gz",
    ),
    *(
        Family(
            f"{label}, {args[0]}",
            text,
            [args[0], "{}", *args[1:]],
            codes=(3,),
            says=("no HLO module",),
        )
        for label, text in (("an empty file", ""), ("a comment-only file", "// nothing\n\n"))
        for args in (["sharding"], ["indexing", "--computation", "e"], ["inspect"])
    ),
    Family(
        "`?` dims and `T(*)` tiles on values that are not sharded, sharding",
        _module(
            "  a = f32[?,8] parameter(0)\n  b = f32[8,32]{1,0:T(*,8)} parameter(1)\n"
            "  ROOT n = f32[8] parameter(2), sharding={replicated}"
        ),
        ["sharding", "{}"],
        codes=(0,),
    ),
    # --- rendering of valid input (issue 28): ~1 ms a table row before -------------------
    Family(
        "layout - of 5,000 shapes",
        lambda: _shapes(5000),
        ["layout", "-"],
        codes=(0,),
        stdin=True,
        max_seconds=5.0,
    ),
    Family(
        "layout -f json - of 1 MB of shapes",
        lambda: _shapes(40_000),
        ["layout", "-f", "json", "-"],
        codes=(0,),
        stdin=True,
        max_seconds=15.0,
    ),
    Family(
        "inspect --top 100000000 on a 370 KB dump",
        _llama_dump,
        ["inspect", "{}", "--top", "100000000"],
        codes=(0,),
        max_seconds=5.0,
    ),
    # --- the cost command (issue 29 landed during issue 28) ---------------------------------
    Family(
        "known_trip_count of 5,000 digits, cost",
        lambda: _loop_nest(1, f'"{_BIG}"'),
        ["cost", "{}"],
        codes=(3,),
        says=("MAX_INT_DIGITS",),
    ),
    Family(
        "300 nested loops of int64 trip counts, cost",
        lambda: _loop_nest(300, '"9223372036854775807"'),
        ["cost", "{}", "-f", "json"],
        codes=(3,),
        says=("MAX_EXECUTIONS",),
    ),
    Family(
        "300 nested loops of 10 trips, cost",
        lambda: _loop_nest(300, '"10"'),
        ["cost", "{}"],
        codes=(0, 3),
    ),
    # --- call graphs (issue 28) -------------------------------------------------------------
    Family(
        "call cycle through a while body",
        _CALL_CYCLE,
        ["memory", "{}"],
        codes=(3,),
        where="12:3",
        says=("call cycle a -> b -> a",),
    ),
    Family(
        "call cycle, streamed JSON",
        _CALL_CYCLE,
        ["inspect", "{}", "-f", "json", "--stream"],
        codes=(3,),
        where="12:3",
    ),
    Family(
        "binary call tree of depth 22 (flattens to 12 million)",
        _binary_call_tree,
        ["inspect", "{}"],
        codes=(3,),
        where="97:3",
        says=("MAX_FLATTENED_INSTRUCTIONS",),
    ),
    Family(
        "binary call tree of depth 19 (flattens to 1.6 million)",
        lambda: _binary_call_tree(19),
        ["memory", "{}", "-f", "json"],
        codes=(0,),
        max_seconds=3.0,
    ),
    Family("20 nested while loops", _nested_whiles(20, "s32[]"), ["memory", "{}"], codes=(0,)),
    Family(
        "18 nested tuple-carrying while loops",
        _nested_whiles(18, "(s32[], f32[8])"),
        ["memory", "{}"],
        codes=(0,),
    ),
    Family(
        "400 nested tuple-carrying while loops",
        _nested_whiles(400, "(s32[], f32[8])"),
        ["inspect", "{}", "-f", "json"],
        codes=(0,),
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
    path = workdir / family.file_name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    for name, side in family.beside:
        (workdir / name).write_text(side, encoding="utf-8")
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
    path = got["path"]
    if family.in_file is not None:
        path = str(Path(path).with_name(family.in_file))
    # The error is the first line that is one (a `note:` about the backend may come first).
    lines = got["stderr"].splitlines(keepends=True)
    errors = [n for n, line in enumerate(lines) if line.startswith("error:") or ": error: " in line]
    stderr = "".join(lines[errors[0] :]) if errors else got["stderr"]
    if got["code"] == 3:
        if not stderr.startswith((path, "error:")):
            out.append(f"message without a location: {stderr[:120]!r}")
        if family.where is not None and not stderr.startswith(f"{path}:{family.where}"):
            out.append(f"expected {family.where}, got {stderr[: len(path) + 20]!r}")
        out += [f"message lacks {s!r}" for s in got["missing"]]
    return out


__all__ = ["FAMILIES", "Family", "problems", "run_family"]
