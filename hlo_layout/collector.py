"""The cyclic garbage collector paused while an analysis builds its objects.

An analysis (the memory model, the indexing report) builds a few hundred thousand small objects
beside a parsed module of millions; each full collection the allocations trigger walks them all
(0.4-0.5 s of mixtral's memory analysis, a third of its indexing report). They hold no cycles:
reference counting frees them, and once the collector is back on it collects the rest. Parsing
has its own variant that also freezes a large tree (`syntax/parse.py` `_gc_paused`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The collector off inside the block, as it was after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
