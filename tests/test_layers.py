"""The layers the folders show (README "Architecture"): a module imports only from its own layer
or the ones below, analyses open no files, and only the views import Rich. Checked on the source
(every `import`, at module level or inside a function), so a lazy upward import fails too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import REPO

PACKAGE = REPO / "hlo_layout"

#: Bottom to top. Within a layer, a group imports only the groups listed before it in the layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("printable", "errors", "limits", "units", "strides", "collector", "accel", "compat")),
    ("syntax", ("syntax",)),
    ("layout", ("layout",)),
    ("analyses", ("memory", "indexing", "interop", "cost")),
    ("reader", ("reader",)),
    ("check", ("check",)),
    ("report", ("report",)),
    ("api", ("api", "compiled")),
    ("cli", ("cli", "__main__")),
)
_RANK = {group: (n, k) for n, (_, groups) in enumerate(LAYERS) for k, group in enumerate(groups)}

#: The modules of the analyses layer and below read no files: the reader hands them text and
#: records (`hlo_layout.reader`). These calls open files.
_FILE_CALLS = ("open", "read_text", "read_bytes", "open_binary", "is_file", "exists", "stat")


def _group(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _modules() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE or p.name != "__init__.py"
    )


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, the first part below hlo_layout) of every hlo_layout import of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "hlo_layout":
                names = [a.name for a in node.names]
            elif node.module.startswith("hlo_layout."):
                names = [node.module.split(".")[1]]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("hlo_layout.")]
        out.extend((node.lineno, n) for n in names)
    return out


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_upward_import(path: Path) -> None:
    here = _group(path)
    assert here in _RANK, f"{here}: not in a layer (add it to LAYERS and the README)"
    bad = [
        f"line {line}: imports hlo_layout.{there}"
        for line, there in _imports(path)
        if there in _RANK and there != here and _RANK[there] > _RANK[here]
    ]
    assert not bad, f"{path.relative_to(REPO)} ({LAYERS[_RANK[here][0]][0]} layer): {bad}"


def _typing_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under `if TYPE_CHECKING:` (annotations only: nothing is imported)."""
    return {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(node)
    }


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_views_import_rich(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _typing_only(tree)
    uses = [
        node.lineno
        for node in ast.walk(tree)
        if id(node) not in typing_only
        and (
            (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich")
            or (
                isinstance(node, ast.Import)
                and any(a.name.split(".")[0] == "rich" for a in node.names)
            )
        )
    ]
    if not uses:
        return
    relative = path.relative_to(PACKAGE).as_posix()
    allowed = relative.startswith("cli/") or (
        relative.startswith("report/")
        and (relative.endswith("_view.py") or relative in ("report/console.py", "report/theme.py"))
    )
    assert allowed, f"{relative} imports Rich (lines {uses}): pure code never does"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if _RANK[_group(p)][0] <= _RANK["cost"][0]],
    ids=lambda p: p.relative_to(PACKAGE).as_posix(),
)
def test_analyses_open_no_files(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "open")
            or (isinstance(node.func, ast.Attribute) and node.func.attr in _FILE_CALLS)
        )
    ]
    relative = path.relative_to(PACKAGE).as_posix()
    # syntax/parse.py and stream.py read a dump's text for the reader (parse_file, the
    # streamer); grammar.py reads the grammar (package data); accel.py finds the extensions;
    # lexicon_files.py rewrites the files generated from the lexicon (a developer's command).
    exempt = ("syntax/parse.py", "syntax/stream.py", "syntax/grammar.py", "accel.py")
    if relative in (*exempt, "syntax/lexicon_files.py"):
        return
    assert not calls, f"{relative} opens files (lines {calls}): the reader hands it what it needs"


#: What only `hlo_layout/compat/` may touch of Lark and Typer: their modules other than the
#: public ones, and their private names (`Token._future_new`, `scanner._mres`, ...).
_PUBLIC_MODULES = {"lark", "lark.exceptions", "typer", "typer.core", "typer.testing"}


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_dependency_internals_only_in_compat(path: Path) -> None:
    """Lark's and Typer's internals are reached from one module per dependency
    (`compat/lark.py`, `compat/typer.py`), version-checked there; the rest uses their public
    API, so a release that moves an internal breaks one small module."""
    if path.relative_to(PACKAGE).parts[0] == "compat":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in ("lark", "typer") and (
                node.module not in _PUBLIC_MODULES
                or any(a.name.startswith("_") for a in node.names)
            ):
                bad.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("lark", "typer") and a.name not in _PUBLIC_MODULES:
                    bad.append(f"line {node.lineno}: import {a.name}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in ("lark", "typer", "Token", "Lark", "Transformer", "rich_utils")
        ):
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    relative = path.relative_to(PACKAGE).as_posix()
    assert not bad, f"{relative} reaches a dependency's internals (use hlo_layout/compat): {bad}"
