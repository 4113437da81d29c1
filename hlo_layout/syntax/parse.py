"""Public entry points of the parser: text → tree, with every failure as one HloSyntaxError.

Two tiers, one grammar: `scan.py` frames the lines of a well-formed dump at C-regex speed and asks
the grammar for every shape, literal and attribute value (memoized by exact text: a dump has a few
hundred distinct shape strings among tens of thousands). Anything the scanner is unsure of goes to
the full Lark parse, which is also what reports errors, with positions.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from hlo_layout import limits
from hlo_layout.errors import HloLayoutError, HloSemanticError, HloSyntaxError, Source, Span
from hlo_layout.syntax.fragments import check_literal as check_literal  # re-exported
from hlo_layout.syntax.fragments import lark_items as lark_items  # re-exported
from hlo_layout.syntax.fragments import lark_parse
from hlo_layout.syntax.fragments import parse_shape as parse_shape  # re-exported
from hlo_layout.syntax.fragments import parse_value as parse_value  # re-exported
from hlo_layout.syntax.tree import Module


class HloInputError(HloLayoutError):
    """A path that cannot be read as HLO text (missing, a directory, undecodable)."""


#: Above this many characters a parse freezes its tree out of the collector's reach.
_FREEZE_ABOVE = 1 << 20


@contextlib.contextmanager
def _gc_paused(size: int) -> Iterator[None]:
    """Pause the cyclic garbage collector while building a tree: the tree has no cycles, and the
    collector's passes over hundreds of thousands of new tuples cost ~10 % of a parse.

    Pausing alone only defers that work: the first collections after the parse would walk the
    whole new tree (0.2-0.5 s for a 4 MB dump, seen as slow first queries). So after a large
    parse every tracked object is moved to the permanent generation (`gc.freeze`); the tree is
    still freed by reference counting when dropped. Small parses (tests run thousands) skip it,
    so cyclic garbage of a long session is never frozen by them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if size > _FREEZE_ABOVE:
            gc.freeze()
        if was_enabled:
            gc.enable()


def parse_modules(
    text: str,
    name: str = "<string>",
    *,
    engine: str = "auto",
    verify: bool = True,
    first_line: int = 1,
    report: Callable[[int, int], None] | None = None,
) -> tuple[Module, ...]:
    """Every module in `text` (a dump may hold several; a snippet gives one header-less module).

    engine: "auto" (fast scanner, Lark where the scanner is unsure), "lark" (grammar only) or
    "scan" (scanner only; raises instead of falling back — for tests). With `verify`, the first
    broken whole-module rule (undefined operand, duplicate name) raises HloSemanticError.
    `report(done, total)` (characters of `text`) hears of the scan's progress, for a bar.
    """
    from hlo_layout.syntax.scan import scan_modules
    from hlo_layout.syntax.shape_inference import with_xla_shapes
    from hlo_layout.syntax.verify import check

    source = Source(text, name, first_line)
    modules: tuple[Module, ...] | None = None
    try:
        with _gc_paused(len(text)):
            if engine != "lark":
                modules = scan_modules(source, fallback=engine != "scan", report=report)
            if modules is None:
                modules = lark_parse(text, source)
            modules = tuple(with_xla_shapes(m) for m in modules)
        if verify:
            for module in modules:
                check(module)
    except limits.LimitExceeded as e:
        raise e.located(source) from None
    except ValueError as e:  # Python's int-string limit, from any int() over the text
        if limits.is_int_digits_error(e):
            raise limits.long_integer_error(source) from None
        raise
    return modules


def parse(
    text: str, name: str = "<string>", *, engine: str = "auto", verify: bool = True
) -> Module:
    """Parse HLO text holding one module (or a header-less computation or instruction snippet).

    >>> m = parse("HloModule m\\nENTRY e { ROOT p = f32[2]{0} parameter(0) }")
    >>> m.entry.root.shape
    ArrayShape(element_type='f32', dims=(2,), dynamic=(), layout=Layout(minor_to_major=(0,), ...))
    """
    modules = parse_modules(text, name, engine=engine, verify=verify)
    if not modules:
        raise HloSyntaxError("no HLO module, computation or instruction found", None)
    if len(modules) > 1:
        raise HloSemanticError(
            f"{name} holds {len(modules)} modules; use hlo_layout.parse_modules to read them all"
        )
    return modules[0]


def open_binary(path: Path) -> BinaryIO:
    """A dump file opened for reading; a directory, a missing or an unreadable path raises
    HloInputError (shared by `read_text` and the streaming reader). `-` is standard input."""
    if str(path) == "-":
        stdin = sys.stdin.buffer
        try:
            return open(stdin.fileno(), "rb", closefd=False)  # the caller closes it
        except (AttributeError, OSError, ValueError):  # a test runner's in-memory stdin
            return io.BytesIO(stdin.read())
    try:
        if path.is_dir():
            raise HloInputError(f"{path}: is a directory, not an HLO file")
        return path.open("rb")
    except FileNotFoundError:
        raise HloInputError(f"{path}: no such file") from None
    except OSError as e:
        raise HloInputError(f"{path}: cannot read ({e.strerror or e})") from None


def read_text(path: str | Path) -> str:
    """The text of a dump file; `.gz` is decompressed. Raises HloInputError on any I/O problem."""
    p = Path(path)
    with open_binary(p) as f:
        try:
            data = f.read()
        except OSError as e:
            raise HloInputError(f"{p}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise HloInputError(f"{p}: broken gzip data ({e})") from None
    elif p.suffix == ".gz":
        raise HloInputError(f"{p}: not gzip data (a .gz file starts with the bytes 1f 8b)")
    check_head(data[:HEAD_BYTES], source_name(p))
    try:
        return data.decode("utf-8-sig")  # a UTF-8 byte-order mark is not text
    except UnicodeDecodeError:
        raise undecodable(source_name(p), data.split(b"\n")) from None


#: The bytes of a file `check_head` looks at before reading it as text.
HEAD_BYTES = 65536


def check_head(head: bytes, name: str) -> None:
    """Refuse, before decoding, a file that is not UTF-8 text: UTF-16 (with a byte-order mark,
    or every other byte NUL) or binary data (a NUL byte), at the place where it shows."""
    encoding = None
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "UTF-16" + ("LE" if head[:1] == b"\xff" else "BE")
        why = "it starts with a UTF-16 byte-order mark"
    elif len(head) >= 8 and head[1:64:2].count(0) * 4 >= len(head[1:64:2]) * 3:
        encoding, why = "UTF-16LE", "every other byte is NUL"
    elif len(head) >= 8 and head[0:64:2].count(0) * 4 >= len(head[0:64:2]) * 3:
        encoding, why = "UTF-16BE", "every other byte is NUL"
    if encoding is not None:  # shown with its first line, read as what it is
        first = head.decode(encoding, "replace").lstrip("\ufeff").split("\n", 1)[0]
        source = Source(first.rstrip("\r"), name)
        raise HloSyntaxError(
            f"the file is {encoding} text ({why}); hlo-layout reads UTF-8: convert it, e.g. "
            f"iconv -f {encoding} -t UTF-8",
            Span(0, 1, source),
        )
    nul = head.find(b"\x00")
    if nul >= 0:
        line = head.count(b"\n", 0, nul)
        start = head.rfind(b"\n", 0, nul) + 1
        end = head.find(b"\n", nul)
        text = head[start : end if end >= 0 else len(head)].decode("utf-8", "replace")
        column = len(head[start:nul].decode("utf-8", "replace"))
        source = Source(text, name, first_line=line + 1)
        raise HloSyntaxError(
            "a NUL byte: binary data, not HLO text", Span(column, column + 1, source)
        )


def undecodable(name: str, lines: Iterable[bytes]) -> HloSyntaxError:
    """The error for the first byte of `lines` (a file split at `\\n`, whose bytes never
    occur inside a UTF-8 character) that is not UTF-8, at its line and column."""
    number = 1
    for raw in lines:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            text = raw.rstrip(b"\n").decode("utf-8", "replace")
            column = len(raw[: e.start].decode("utf-8"))
            source = Source(text, name, first_line=number)
            return HloSyntaxError(
                f"not UTF-8 text: byte 0x{raw[e.start]:02x} ({e.reason})",
                Span(column, column + 1, source),
            )
        number += 1
    return HloSyntaxError("not UTF-8 text", None)


def file_size(path: str | Path) -> int:
    """A dump's size in bytes, for progress totals and the streaming threshold (0 when it cannot
    be read, or for `-`: the reader reports what is wrong)."""
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def text_size(path: str | Path) -> int:
    """The size of a dump's text: `file_size`, or for a gzip file the size its trailer gives
    (ISIZE: the uncompressed size modulo 2**32, of the last member), so a compressed dump is
    judged by what it will be. 0 when it cannot be read."""
    size = file_size(path)
    if size < 18 or str(path) == "-":
        return size
    try:
        with Path(path).open("rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return size
            f.seek(-4, 2)
            return max(size, int.from_bytes(f.read(4), "little"))
    except OSError:
        return size


def source_name(path: str | Path) -> str:
    """The name errors give a dump: its path, or `<stdin>` for `-`."""
    return "<stdin>" if str(path) == "-" else str(path)


def parse_file(path: str | Path, *, engine: str = "auto", verify: bool = True) -> Module:
    """`parse` on a file's text (plain or gzip; `-` reads standard input)."""
    return parse(read_text(path), source_name(path), engine=engine, verify=verify)


def read_dump_modules(path: str | Path) -> tuple[Module, ...]:
    """`parse_file_modules` for a command: a file without any module, computation or
    instruction (empty, comments only) is refused as every command refuses it."""
    modules = parse_file_modules(path)
    if not modules:
        raise HloInputError(f"{source_name(path)}: no HLO module, computation or instruction")
    return modules


def parse_file_modules(
    path: str | Path,
    *,
    engine: str = "auto",
    verify: bool = True,
    report: Callable[[int, int], None] | None = None,
) -> tuple[Module, ...]:
    """`parse_modules` on a file's text (plain or gzip; `-` reads standard input)."""
    return parse_modules(
        read_text(path), source_name(path), engine=engine, verify=verify, report=report
    )
