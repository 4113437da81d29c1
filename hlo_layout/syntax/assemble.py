"""A file's top-level items → modules, without Lark: the scanner's last step and the grammar's.

Kept apart from `grammar.py` so a dump the scanner reads whole never imports Lark (about 0.1 s
of start-up); only items that need the finishing pass, which only the grammar produces, load it.
"""

from __future__ import annotations

from typing import Any

from hlo_layout.errors import Source, Span
from hlo_layout.syntax.tree import Attribute, Computation, Instruction, Module, Section


def finish_items(items: tuple[Any, ...], source: Source, needs_finish: bool) -> tuple[Module, ...]:
    """A file's top-level items → modules; with `needs_finish`, inline operands and computations
    are named and placed (NOTE: [inline instructions and computations]) and missing shapes
    inferred (NOTE: [inferred shapes]) — a pass over the whole file, so names are unique in it."""
    if not needs_finish:
        return assemble_modules(items, source)
    from hlo_layout.syntax.grammar import expand_inline
    from hlo_layout.syntax.shape_inference import infer_shapes

    return tuple(infer_shapes(m) for m in assemble_modules(expand_inline(items), source))


def assemble_modules(items: tuple[Any, ...], source: Source) -> tuple[Module, ...]:
    """Group the top-level items of a file into modules.

    Items before any `HloModule` header form a header-less module; consecutive bare instruction
    lines form one synthetic computation, so documentation snippets still parse.
    """
    modules: list[Module] = []
    name: str | None = None
    attrs: tuple[Attribute, ...] = ()
    span: Span | None = None
    comps: list[Computation] = []
    sections: list[Section] = []
    bare: list[Instruction] = []
    started = False

    def flush_bare() -> None:
        if bare:
            comps.append(Computation("", tuple(bare), synthetic=True, span=bare[0].span))
            bare.clear()

    def flush_module() -> None:
        flush_bare()
        if started or comps or sections:
            modules.append(Module(name, tuple(comps), attrs, tuple(sections), span))

    for item in items:
        if isinstance(item, tuple) and item and item[0] == "header":
            flush_module()
            _, name, attrs, span = item
            comps, sections, started = [], [], True
        elif isinstance(item, Section):
            flush_bare()
            sections.append(item)
        elif isinstance(item, Computation):
            flush_bare()
            comps.append(item)
        elif isinstance(item, Instruction):
            bare.append(item)
    flush_module()
    return tuple(modules)
