"""Mutated real dumps: every outcome is a tree or one clean HloLayoutError.

Bounded for CI (a few hundred inputs); `python benchmarks/fuzz_long.py` runs the long version
and reports the slowest input's time (the suite times nothing).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import parse_modules
from tests.robustness.mutations import mutated_dumps
from tests.support import Cli


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_dumps())
def test_parser_never_crashes(text: str) -> None:
    try:
        parse_modules(text, "fuzz.hlo")
    except HloLayoutError as e:
        rendered = str(e)
        assert rendered and "Traceback" not in rendered


#: Every command that reads a dump, `{}` standing for the file.
COMMANDS = [
    ["inspect", "{}", "-f", "json"],
    ["inspect", "{}"],
    ["check", "{}", "--max-fusions", "3", "-j", "1"],
    ["diff", "{}", "{}", "-f", "json"],
    ["indexing", "{}", "-f", "json"],
    ["sharding", "{}", "-f", "json"],
]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_dumps(), st.sampled_from(COMMANDS))
def test_commands_exit_cleanly(cli: Cli, tmp_path_factory, text: str, command: list[str]) -> None:
    path: Path = tmp_path_factory.mktemp("fuzz") / "dump.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = cli(*[a.replace("{}", str(path)) for a in command])
    assert result.exit_code in (0, 1, 2, 3), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 3:
        first = result.stderr.splitlines()[0]
        assert first.startswith(str(path)) or first.startswith("error:"), first


_SHAPE_ALPHABET = st.sampled_from([*list("fsub0123456789[]{}(),:<=?*TLESMP#x-"), "f32", "bf16"])


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_SHAPE_ALPHABET, max_size=40).map("".join))
def test_layout_command_on_garbled_shapes(cli: Cli, text: str) -> None:
    result = cli("layout", "--", text)
    assert result.exit_code in (0, 2, 3), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
