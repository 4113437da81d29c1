"""Fixtures every test may ask for, and the suite's settings. Never imported: what tests import
(data paths, corpus readers) is in `tests/support.py`."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.support import Cli, CliProcess

#: Hypothesis examples have no deadline: the suite asserts behaviour, not time (speed targets
#: live in benchmarks/), and a loaded CI machine must not fail a law for being slow.
settings.register_profile("hlo-layout", deadline=None)
settings.load_profile("hlo-layout")


@pytest.fixture
def cli() -> Cli:
    """Runs `hlo-layout ARGS` in this process: `cli("memory", path)` → the Result;
    `cli.json(...)` → the parsed stdout of a run that must exit 0."""
    return Cli()


@pytest.fixture
def cli_process() -> CliProcess:
    """Runs `python -m hlo_layout ARGS` in a child process: `cli_process("layout", "f32[8]")` →
    the CompletedProcess; `cli_process.json(...)` as `cli.json`."""
    return CliProcess()
