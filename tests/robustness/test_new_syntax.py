"""The hostile pass over the newer syntax forms (issue 28): `%x#N` on odd operands, `b(...)`
shapes, mesh shardings and `replica_groups=mesh[...]`, SparseCore threads, operand-less
`async-start`, absurd `S(n)`/`L(n)`/`E(n)`, data and control cycles, odd async and collective
pairs. Through every command: exit 0, 1, 2 or 3 (never 4 or a traceback), an input error with
its place, streamed `inspect --format json` equal to the in-memory one. Bounds on time and
memory are the families' (tests/robustness/families.py); this checks behaviour on many forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Cli

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
LOOP = (
    "c {\n  p = f32[4] parameter(0)\n  ROOT t = pred[] constant(false)\n}\n"
    "b {\n  ROOT p = f32[4] parameter(0)\n}\n"
)
WRAPPED = "wrapped {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n"
PAIR = "  a = (f32[8], f32[4]) parameter(0)\n"

#: name -> (computations before ENTRY, ENTRY's body, header)
CASES = {
    "x#N on an array": ("", "  a = f32[8] parameter(0)\n  ROOT n = f32[8] negate(a#1)", ""),
    "x#N past the tuple": ("", PAIR + "  ROOT n = f32[8] negate(a#5)", ""),
    "x#N of 20 digits": ("", PAIR + "  ROOT n = f32[8] negate(a#99999999999999999999)", ""),
    "x#N on a token": ("", "  a = token[] after-all()\n  ROOT n = f32[8] negate(a#0)", ""),
    "x#N into a while": (LOOP, PAIR + "  ROOT w = f32[4] while(a#1), condition=c, body=b", ""),
    "x#N past the tuple into a while": (
        LOOP, PAIR + "  ROOT w = f32[4] while(a#7), condition=c, body=b", ""),
    "x#N as its own operand": ("", "  ROOT a = (f32[8], f32[4]) tuple(a#0, a#1)", ""),
    "b() nested": ("", "  ROOT p = b(b(f32[8])) parameter(0)", ""),
    "b() of a tuple": ("", "  ROOT p = b((f32[8], s32[])) parameter(0)", ""),
    "b() 300 deep": ("", "  ROOT p = " + "b(" * 300 + "f32[]" + ")" * 300 + " parameter(0)", ""),
    "b() while carry": (
        "c {\n  p = b(f32[8]) parameter(0)\n  ROOT t = pred[] constant(false)\n}\n"
        "bb {\n  ROOT p = b(f32[8]) parameter(0)\n}\n",
        "  p = b(f32[8]) parameter(0)\n  ROOT w = b(f32[8]) while(p), condition=c, body=bb", ""),
    "mesh sharding": (
        "", "  ROOT p = f32[8,8] parameter(0), sharding={mesh['x'=2,'y'=2] [{'x'}, {'y'}]}", ""),
    "mesh sharding of an empty axis": (
        "", "  ROOT p = f32[8,8] parameter(0), sharding={mesh['x'=0] [{'x'}]}", ""),
    "mesh sharding of 2^64 devices": (
        "", "  ROOT p = f32[8,8] parameter(0), "
        "sharding={mesh['x'=4294967296,'y'=4294967296] [{'x'}, {'y'}]}", ""),
    "mesh sub-axis that does not divide": (
        "", "  ROOT p = f32[8,8] parameter(0), sharding={mesh['x'=8] [{'x':(3)5}, {}]}", ""),
    "replica_groups=mesh with an unknown axis": (
        ADD, "  p = f32[8] parameter(0)\n"
        "  ROOT a = f32[8] all-reduce(p), replica_groups=mesh['x'=2] {'q'}, to_apply=add", ""),
    "replica_groups=mesh of an empty axis": (
        "", "  p = f32[8] parameter(0)\n"
        "  ROOT a = f32[16] all-gather(p), replica_groups=mesh['x'=0] {'x'}, dimensions={0}", ""),
    "SparseCore async-start": (
        WRAPPED, "  p = f32[8] parameter(0)\n  s = ((f32[8]), f32[8], s32[]) async-start(p), "
        'calls=wrapped, async_execution_thread="sparsecore"\n  ROOT d = f32[8] async-done(s)', ""),
    "operand-less async-start": (
        "wrapped0 {\n  ROOT c = f32[8] constant({1,2,3,4,5,6,7,8})\n}\n",
        "  s = ((), f32[8], s32[]) async-start(), calls=wrapped0\n"
        "  ROOT d = f32[8] async-done(s)", ""),
    "operand-less async-start calling nothing": (
        "", "  s = ((), f32[8], s32[]) async-start()\n  ROOT d = f32[8] async-done(s)", ""),
    "async-update with extra operands": (
        WRAPPED, "  p = f32[8] parameter(0)\n  s = ((f32[8]), f32[8], s32[]) async-start(p), "
        "calls=wrapped\n  u = ((f32[8]), f32[8], s32[]) async-update(s, p, p)\n"
        "  ROOT d = f32[8] async-done(u)", ""),
    "S(999999999) and E(99999)": (
        "", "  p = s4[1024]{0:S(999999999)E(99999)} parameter(0)\n"
        "  ROOT n = s4[1024]{0:S(999999999)E(99999)} negate(p)", ""),
    "L(99999999999) and M(99999999999999)": (
        "", "  p = f32[1024]{0:T(8)L(99999999999)M(99999999999999)} parameter(0)\n"
        "  ROOT n = f32[1024]{0:T(8)L(99999999999)M(99999999999999)} negate(p)", ""),
    "L(0)": ("", "  ROOT p = f32[1024]{0:L(0)} parameter(0)", ""),
    "a data cycle": (
        "", "  a = f32[8] negate(b)\n  b = f32[8] negate(a)\n  ROOT r = f32[8] add(a, b)", ""),
    "a control cycle": (
        "", "  p = f32[8] parameter(0)\n  a = f32[8] negate(p), control-predecessors={b}\n"
        "  b = f32[8] negate(p), control-predecessors={a}\n  ROOT r = f32[8] add(a, b)", ""),
    "use before definition in a scheduled module": (
        "", "  ROOT r = f32[8] negate(p)\n  p = f32[8] parameter(0)", ", is_scheduled=true"),
    "recv-done of a parameter": (
        "", "  p = f32[8] parameter(0)\n"
        "  ROOT rd = (f32[8], token[]) recv-done(p), channel_id=2", ""),
    "send/recv/outfeed written with other shapes": (
        "", "  p = f32[8] parameter(0)\n  t = token[] after-all()\n"
        "  s = f32[8] send(p, t), channel_id=1\n"
        "  sd = f32[8] send-done(s), channel_id=1\n  r = f32[2] recv(t), channel_id=2\n"
        "  rd = f32[2] recv-done(r), channel_id=2\n  ROOT o = f32[8] outfeed(p, t)", ""),
    "input_output_alias to a missing parameter": (
        "", "  ROOT p = f32[8] parameter(0)", ", input_output_alias={ {}: (7, {}, may-alias) }"),
}  # fmt: skip

COMMANDS = [
    ["inspect", "{}"],
    ["inspect", "{}", "-f", "json", "--no-stream"],
    ["inspect", "{}", "-f", "json", "--stream"],
    ["memory", "{}"],
    ["memory", "{}", "-f", "json"],
    ["sharding", "{}"],
    ["indexing", "{}", "--computation", "e"],
    ["indexing", "{}", "--computation", "e", "-d", "in2out"],
    ["check", "{}", "--no-rules-ok"],
    ["diff", "{}", "{}"],
    ["report", "{}", "-o", "{out}"],
    ["cost", "{}"],
    ["cost", "{}", "-f", "json"],
]


@pytest.mark.parametrize("name", CASES)
def test_every_command_reads_it_cleanly(cli: Cli, tmp_path: Path, name: str) -> None:
    before, body, header = CASES[name]
    path = tmp_path / "m.hlo"
    path.write_text(f"HloModule m{header}\n{before}ENTRY e {{\n{body}\n}}\n")
    out: dict[str, tuple[int, str]] = {}
    for args in COMMANDS:
        argv = [a.replace("{}", str(path)).replace("{out}", str(tmp_path / "r.html")) for a in args]
        result = cli(*argv)
        said = " ".join(args[:1] + args[2:])
        assert result.exit_code in (0, 1, 2, 3), (said, result.output)
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr, said
        if result.exit_code == 3:  # the first error line (a `note:` may come before it)
            error = next(
                line for line in result.stderr.splitlines() if not line.startswith("note:")
            )
            assert error.startswith((f"{path}:", "error:")), (said, result.stderr)
        out[said] = (result.exit_code, result.stdout)
    assert out["inspect -f json --stream"] == out["inspect -f json --no-stream"]
