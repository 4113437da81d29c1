"""The dependencies whose internals `hlo_layout/compat` reaches: the pins in pyproject.toml are
the ranges the compat modules were tested with, and the installed versions are in them (else
the grammar tier and the CLI quietly use the slower public paths: this fails so CI notices)."""

from __future__ import annotations

import re

import pytest

from hlo_layout.compat import lark as lark_compat
from hlo_layout.compat import typer as typer_compat
from tests.support import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def _pin(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(lowest allowed, first excluded) version of `name` in pyproject.toml's dependencies."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (spec,) = [d for d in project["dependencies"] if re.match(rf"{name}\b", d)]
    low = re.search(r">=([0-9.]+)", spec)
    high = re.search(r"<([0-9.]+)", spec)
    assert low is not None and high is not None, spec
    return tuple(map(int, low.group(1).split("."))), tuple(map(int, high.group(1).split(".")))


@pytest.mark.parametrize("name, compat", [("lark", lark_compat), ("typer", typer_compat)])
def test_pins_are_the_tested_range(name: str, compat: object) -> None:
    assert _pin(name) == compat.TESTED  # type: ignore[attr-defined]


@pytest.mark.parametrize("compat", [lark_compat, typer_compat], ids=["lark", "typer"])
def test_installed_versions_are_tested(compat: object) -> None:
    assert compat.usable(), compat.version()  # type: ignore[attr-defined]
