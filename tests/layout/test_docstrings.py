"""The worked examples in the layout engine's docstrings are true (they are its documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hlo_layout.layout.tiling",
    "hlo_layout.layout.size",
    "hlo_layout.layout.padding",
    "hlo_layout.layout.memory_space",
    "hlo_layout.report.units",
    "hlo_layout.report.layout_model",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
