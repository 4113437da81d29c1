"""print → parse gives back an equal tree: over the corpus and over generated shapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from hlo_layout.syntax import parse_modules, parse_shape
from hlo_layout.syntax.printer import print_module, print_shape
from tests.support import corpus_id, corpus_modules, hlo_files
from tests.syntax.strategies import shapes

FILES = hlo_files()


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_module_round_trip(path: Path) -> None:
    modules = corpus_modules(path)
    for module in modules:
        printed = print_module(module)
        (again,) = parse_modules(printed, "printed")
        assert again == module
        assert print_module(again) == printed  # printing is a fixed point


@settings(max_examples=300, deadline=None)
@given(shapes())
def test_every_generated_shape_round_trips(shape) -> None:
    text = print_shape(shape)
    assert parse_shape(text) == shape
    # The `<...>` notation of the docs reads the same.
    if "{" in text and text.count("{") == 1:
        assert parse_shape(text.replace("{", "<").replace("}", ">")) == shape
