"""The worked examples in the interop views' docstrings are true (they are their documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
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
