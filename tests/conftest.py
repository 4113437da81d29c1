"""Fixtures every test may ask for, and the suite's settings. Never imported: what tests import
(data paths, corpus readers) is in `tests/support.py`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import settings

from tests.support import Cli, CliProcess

#: The generators of the committed data (jax, TensorFlow, torch-xla scripts) are not modules of
#: the suite: --doctest-modules would import them.
collect_ignore_glob = ["data/*"]

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--timing",
        action="store_true",
        help="also check the generous time bounds of the `time_bound` fixture (the suite times "
        "nothing by default: speed targets live in benchmarks/)",
    )


@pytest.fixture
def time_bound(
    request: pytest.FixtureRequest,
) -> Callable[[float], contextlib.AbstractContextManager[None]]:
    """`with time_bound(5): ...` runs the body, and with `pytest --timing` also fails when it
    took more than 5 seconds (a hang or a blow-up on hostile input, not a speed target)."""
    checked = bool(request.config.getoption("--timing"))

    @contextlib.contextmanager
    def bound(seconds: float) -> Iterator[None]:
        start = time.perf_counter()
        yield
        took = time.perf_counter() - start
        assert not checked or took < seconds, f"took {took:.2f} s, bound {seconds} s"

    return bound
