"""Memory spaces: what the `S(n)` of a layout means (layout_rules.md §3).

Only 0, 1, 5 and 6 have names in XLA (layout.h): 0 = default device memory (HBM on TPU), 1 =
generic fast memory (VMEM on TPU, the alternate memory of memory-space assignment), 5 = pinned
host memory, 6 = unpinned host memory. TPU dumps, though, put `S(6)` on scalars (most likely a
scalar memory, an inference), so on TPU it is reported as device-specific like 2, 3, …: a label,
not a fact.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT = 0
FAST = 1
HOST = 5
UNPINNED_HOST = 6


@dataclass(frozen=True, slots=True)
class MemorySpace:
    """`number` is the `S(n)` value; `name` a stable key for scripts (`default`, `fast`, `host`,
    `unpinned-host`, `device-specific`); `label`, `short` (for table cells: `HBM`, `VMEM`) and
    `description` are for people."""

    number: int
    name: str
    label: str
    description: str
    short: str = ""


_TPU_HINTS = {
    2: "on TPU only the u32[] sync flag of async starts lives here",
    3: "on TPU whole arrays and copy-start targets; possibly CMEM (unconfirmed)",
    6: "on TPU scalars such as loop counters; likely scalar memory (unconfirmed)",
}


def memory_space(number: int, *, tpu: bool = False) -> MemorySpace:
    """What `S(number)` means; `tpu` selects TPU's names (tiled layouts mean a TPU dump).

    >>> memory_space(1, tpu=True).label
    'fast (VMEM)'
    >>> memory_space(3).name
    'device-specific'
    """
    if number == DEFAULT:
        if tpu:
            return MemorySpace(
                number, "default", "default (HBM)", "HBM, the default device memory", "HBM"
            )
        return MemorySpace(
            number,
            "default",
            "default",
            "default device memory (device memory on GPU, RAM on CPU)",
            "default",
        )
    if number == FAST:
        if tpu:
            return MemorySpace(
                number,
                "fast",
                "fast (VMEM)",
                "VMEM, on-chip fast memory (memory-space assignment's alternate memory)",
                "VMEM",
            )
        return MemorySpace(
            number,
            "fast",
            "fast",
            "generic fast memory (memory-space assignment's alternate)",
            "fast",
        )
    if number == HOST:
        return MemorySpace(
            number, "host", "host", "pinned host memory (offloaded from the device)", "host"
        )
    if number == UNPINNED_HOST and not tpu:
        return MemorySpace(
            number, "unpinned-host", "unpinned host", "unpinned host memory", "unpinned host"
        )
    hint = _TPU_HINTS.get(number) if tpu else None
    description = "device-specific memory space" + (f": {hint}" if hint else "")
    return MemorySpace(number, "device-specific", "device-specific", description, "device-specific")


def space_label(number: int, tpu: bool) -> str:
    """`S(1) fast (VMEM)`: the number as written in layouts, then what it means (every view's
    name for a memory space).

    >>> space_label(1, True)
    'S(1) fast (VMEM)'
    """
    return f"S({number}) {memory_space(number, tpu=tpu).label}"


def memory_space_name(number: int, *, tpu: bool = False) -> str:
    """The stable key of `S(number)`: `default`, `fast`, `host`, `unpinned-host` or
    `device-specific`."""
    return memory_space(number, tpu=tpu).name


#: Memory spaces by the names users type (`--space`, check rules); numbers and `S(n)` also work.
SPACE_NAMES = {"hbm": 0, "default": 0, "device": 0, "vmem": 1, "fast": 1, "host": 5}


def space_number(text: str) -> int | None:
    """`5`, `S(5)`, `host` → 5; None when `text` names no memory space."""
    key = text.strip().lower()
    if key.startswith("s(") and key.endswith(")"):
        key = key[2:-1]
    if key.isdigit() and len(key) <= 9:
        return int(key)
    return SPACE_NAMES.get(key)


def peak_space_name(number: int, *, tpu: bool) -> str:
    """A space's `name` in `memory --format json`: `hbm` (TPU) or `device` for S(0), `vmem` for
    TPU's S(1), else the stable key (`fast`, `host`, ...) or `S(n)` for a device-specific one."""
    if number == 0:
        return "hbm" if tpu else "device"
    if number == 1 and tpu:
        return "vmem"
    name = memory_space_name(number, tpu=tpu)
    return name if name != "device-specific" else f"S({number})"
