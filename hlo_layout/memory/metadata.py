"""The user's source op of an instruction: `metadata={op_name=... source_file=... source_line=...}`
or, in newer dumps, a `stack_frame_id` resolved through the module's StackFrames sections."""

from __future__ import annotations

import re

from hlo_layout.syntax.tree import Instruction, Module
from hlo_layout.syntax.values import unescape

_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_FILE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"')
_LINE = re.compile(r"source_line=(\d+)")
_FRAME = re.compile(r"stack_frame_id=(\d+)")
_FIELD = re.compile(r"(\w+)=(\d+)")


class SourceInfo:
    """Resolves op_name and `file:line` of instructions (stack frames read once per module, when
    an instruction first needs them: the memory report resolves only the buffers it shows)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self._read = False
        self.files: dict[int, str] = {}
        self.locations: dict[int, tuple[int, int]] = {}
        self.frames: dict[int, int] = {}

    def _read_sections(self) -> None:
        self._read = True
        for section in self.module.sections:
            for e in section.entries:
                raw = e.raw
                if section.name == "FileNames":
                    self.files[e.id] = unescape(raw.strip().strip('"'))
                elif section.name == "FileLocations":
                    f = dict((k, int(v)) for k, v in _FIELD.findall(raw))
                    self.locations[e.id] = (f.get("file_name_id", 0), f.get("line", 0))
                elif section.name == "StackFrames":
                    f = dict((k, int(v)) for k, v in _FIELD.findall(raw))
                    self.frames[e.id] = f.get("file_location_id", 0)

    def of(self, i: Instruction) -> tuple[str | None, str | None]:
        a = i.attr("metadata")
        if a is None:
            return None, None
        raw = a.raw
        m = _OP_NAME.search(raw)
        op_name = unescape(m.group(1)) if m else None
        f, line = _FILE.search(raw), _LINE.search(raw)
        if f and line:
            return op_name, f"{unescape(f.group(1))}:{line.group(1)}"
        fr = _FRAME.search(raw)
        if fr:
            if not self._read:
                self._read_sections()
            loc = self.locations.get(self.frames.get(int(fr.group(1)), -1))
            if loc is not None and loc[0] in self.files:
                return op_name, f"{self.files[loc[0]]}:{loc[1]}"
        return op_name, None
