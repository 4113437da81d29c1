"""The worked examples in docstrings are true: they are the documentation of these modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hlo_layout",
    "hlo_layout.layout.tiling",
    "hlo_layout.layout.size",
    "hlo_layout.layout.padding",
    "hlo_layout.layout.memory_space",
    "hlo_layout.units",
    "hlo_layout.report.layout_model",
    "hlo_layout.interop",
    "hlo_layout.interop.cute",
    "hlo_layout.interop.axe",
    "hlo_layout.interop.sharding_axe",
    "hlo_layout.syntax.sharding",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
