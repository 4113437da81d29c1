"""Reading dumps: the one place that opens files (see `load`).

`discover` says which files an argument means (file, folder, glob, `-`), `sidefiles` finds what
the compiler wrote beside a dump, `load` parses the dumps and hands each module over with what
was found (`Dump`).
"""

from hlo_layout.reader.loader import Dump, DumpSource, Loaded, Progress, load, load_file

__all__ = ["Dump", "DumpSource", "Loaded", "Progress", "load", "load_file"]
