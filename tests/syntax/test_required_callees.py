"""An instruction without the attribute naming the computation XLA's parser requires
(`opcodes.REQUIRED_CALLEES`) is refused by `verify`, so by every command, at the instruction.

Each text below was given to XLA's parser (jaxlib 0.10.2, `hlo_module_from_text`) when this test
was written: it rejects every `missing` case with "attribute KEY is expected but not seen" and
accepts every `complete` one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.syntax import parse
from hlo_layout.syntax.verify import verify
from tests.support import Cli

CALLEES = """a {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
c {
  p = f32[4] parameter(0)
  ROOT t = pred[] constant(false)
}
r {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""

#: (body of ENTRY after `p = f32[4] parameter(0)`, the message's tail); the instruction is on
#: the entry's last line.
MISSING = [
    (
        "s = ((f32[4]), f32[4], u32[]) async-start(p)\n  ROOT d = f32[4] async-done(s)",
        "async-start 's' has no calls=",
    ),
    ("ROOT c = f32[4] call(p)", "call 'c' has no to_apply="),
    ("ROOT c = f32[4] call(p), calls=a", "call 'c' has no to_apply="),
    ("ROOT f = f32[4] fusion(p), kind=kLoop", "fusion 'f' has no calls="),
    ("ROOT w = f32[4] while(p), condition=c", "while 'w' has no condition= and body="),
    ("ROOT w = f32[4] while(p), body=a", "while 'w' has no condition= and body="),
    (
        "z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}",
        "reduce 'r' has no to_apply=",
    ),
    ("ROOT m = f32[4] map(p), dimensions={0}", "map 'm' has no to_apply="),
    ("ROOT s = f32[4] sort(p), dimensions={0}", "sort 's' has no to_apply="),
    ("ROOT s = f32[4] all-reduce(p)", "all-reduce 's' has no to_apply="),
    (
        "ROOT s = f32[2] reduce-scatter(p), dimensions={0}",
        "reduce-scatter 's' has no to_apply=",
    ),
    (
        "b = pred[] constant(true)\n  ROOT k = f32[4] conditional(b, p, p), true_computation=a",
        "conditional 'k' has no branch_computations= or true_computation= and false_computation=",
    ),
    (
        "z = f32[] constant(0)\n  ROOT r = f32[4] reduce-window(p, z), window={size=1}",
        "reduce-window 'r' has no to_apply=",
    ),
    (
        "z = f32[] constant(0)\n  ROOT r = f32[4] select-and-scatter(p, p, z), window={size=1}, "
        "select=c",
        "select-and-scatter 'r' has no select= and scatter=",
    ),
]
COMPLETE = [
    "s = ((f32[4]), f32[4], u32[]) async-start(p), calls=a\n  ROOT d = f32[4] async-done(s)",
    "ROOT c = f32[4] call(p), to_apply=a",
    "b = pred[] constant(true)\n  ROOT k = f32[4] conditional(b, p, p), true_computation=a, "
    "false_computation=a",
    "i = s32[] constant(0)\n  ROOT k = f32[4] conditional(i, p), branch_computations={a}",
    "ROOT w = f32[4] while(p), condition=c, body=a",
    # `<op>-start` sugar wraps its computation itself
    "s = ((f32[4]), f32[4]) negate-start(p)\n  ROOT d = f32[4] negate-done(s)",
]


def _text(body: str) -> str:
    return "HloModule m\n" + CALLEES + "ENTRY e {\n  p = f32[4] parameter(0)\n  " + body + "\n}\n"


@pytest.mark.parametrize(("body", "message"), MISSING)
def test_missing_callee_attribute_is_refused_at_the_instruction(body: str, message: str) -> None:
    text = _text(body)
    problems = verify(parse(text, verify=False))
    assert [p.message.split(":")[0] for p in problems] == [message]
    name = message.split("'")[1]
    line = next(
        n
        for n, s in enumerate(text.splitlines(), 1)
        if s.strip().removeprefix("ROOT ").startswith(f"{name} = ") and n > 15  # in ENTRY
    )
    span = problems[0].span
    assert span is not None and (span.line, span.column) == (line, 3)


@pytest.mark.parametrize("body", COMPLETE)
def test_complete_instructions_pass(body: str) -> None:
    assert verify(parse(_text(body), verify=False)) == ()


@pytest.mark.parametrize(
    "command",
    [["memory"], ["inspect"], ["inspect", "-f", "json"], ["cost"], ["check", "--no-rules-ok"]],
)
def test_every_command_refuses_it_with_a_location(
    cli: Cli, command: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(_text(MISSING[0][0]))
    result = cli(command[0], str(path), *command[1:])
    assert result.exit_code == 3, result.output
    assert f"{path}:17:3: error: async-start 's' has no calls=" in result.stderr
