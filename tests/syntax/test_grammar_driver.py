"""The grammar tier's tree-free LALR driver (`grammar._parse_tree_free`) gives what Lark's own
parse and transform give, and the tier falls back to those when the driver's check of the
installed Lark fails (`grammar._tree_free_ok`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlo_layout.errors import HloLayoutError
from hlo_layout.syntax import grammar
from hlo_layout.syntax.parse import parse_modules, read_text
from tests.support import DATA

TEXTS = (
    sorted((DATA / "xla-tests").glob("*.hlo.txt"))
    + sorted((DATA / "corpus" / "jax-cpu").glob("*.txt"))[:20]
)


def _read(path: Path) -> object:
    """The grammar tier's trees with every span, or the error with its place."""
    try:
        modules = parse_modules(read_text(path), path.name, engine="lark", verify=False)
    except HloLayoutError as e:
        span = e.span
        return (type(e).__name__, e.message, (span.start, span.end) if span else None)
    return modules, grammar._spans(modules)


def test_the_installed_lark_runs_the_driver() -> None:
    """CI notices when a Lark release changes what the driver reads (the tier would stay
    correct, through Lark's own transform, but twice as slow)."""
    assert grammar._tree_free_ok()


def test_driver_equals_lark_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TEXTS
    fast = [_read(p) for p in TEXTS]
    monkeypatch.setattr(grammar, "_tree_free_ok", lambda: False)
    slow = [_read(p) for p in TEXTS]
    for path, a, b in zip(TEXTS, fast, slow, strict=True):
        assert a == b, path.name
