"""What a CI gate allows: limits from flags and from `hlo-layout.toml` / `[tool.hlo-layout]`.

Config layout (every key optional; sizes accept units such as "64MiB"):

    [check]                       # applies to every module
    max-argument-bytes = "64MiB"
    forbid-space = [5]
    max-padding-percent = 20

    [[check.modules]]             # later sections refine earlier ones for matching modules
    match = "jit_train_*"         # glob over module names
    max-fusions = 400

Flags given on the command line override the config for every module.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hlo_layout.check.sizes import parse_size
from hlo_layout.errors import HloLayoutError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class PolicyError(HloLayoutError):
    """A config file or flag value that cannot be a rule (a usage error: exit 2)."""


#: Memory spaces by the names the rules doc gives them (numbers are accepted too).
SPACE_NAMES = {"hbm": 0, "default": 0, "device": 0, "vmem": 1, "fast": 1, "host": 5}


def parse_space(value: str | int) -> int:
    if isinstance(value, int):
        return value
    text = value.strip().lower()
    if text.startswith("s(") and text.endswith(")"):
        text = text[2:-1]
    if text.isdigit():
        return int(text)
    if text in SPACE_NAMES:
        return SPACE_NAMES[text]
    raise PolicyError(
        f"not a memory space: {value!r} (a number, S(n), or one of {sorted(SPACE_NAMES)})"
    )


@dataclass(frozen=True)
class Policy:
    """Limits for one module; None (or empty) means the rule is off."""

    max_argument_bytes: int | None = None
    max_output_bytes: int | None = None
    max_space_bytes: dict[int, int] = field(default_factory=dict)
    max_buffer_bytes: int | None = None
    max_allocation_bytes: int | None = None
    max_padding_percent: float | None = None
    max_padding_bytes: int | None = None
    max_expansion: float | None = None
    expansion_min_bytes: int = 0
    forbid_spaces: frozenset[int] = frozenset()
    require_spaces: dict[str, int] = field(default_factory=dict)
    max_instructions: int | None = None
    max_fusions: int | None = None
    min_fusions: int | None = None
    max_copies: int | None = None
    max_custom_calls: int | None = None
    forbid_opcodes: frozenset[str] = frozenset()
    forbid_targets: frozenset[str] = frozenset()
    max_growth_percent: float | None = None
    max_padding_growth_points: float | None = None
    max_fusion_growth: int | None = None

    def merged(self, **changes: Any) -> Policy:
        """This policy with `changes` applied (None values are ignored; sets and maps merge)."""
        updates: dict[str, Any] = {}
        for key, value in changes.items():
            if value is None:
                continue
            current = getattr(self, key)
            if isinstance(current, frozenset):
                value = current | frozenset(value)
            elif isinstance(current, dict):
                value = {**current, **value}
            updates[key] = value
        return dataclasses.replace(self, **updates)

    @property
    def is_empty(self) -> bool:
        return self == Policy()


_SIZE_KEYS = {
    "max-argument-bytes", "max-output-bytes", "max-buffer-bytes", "max-allocation-bytes",
    "max-padding-bytes", "expansion-min-bytes",
}  # fmt: skip
_FLOAT_KEYS = {
    "max-padding-percent",
    "max-expansion",
    "max-growth-percent",
    "max-padding-growth-points",
}
_INT_KEYS = {
    "max-instructions", "max-fusions", "min-fusions", "max-copies", "max-custom-calls",
    "max-fusion-growth",
}  # fmt: skip


def _from_table(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Config keys (kebab-case) → Policy fields, with values checked."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("match", "modules"):
            continue
        name = key.replace("-", "_")
        try:
            if key in _SIZE_KEYS:
                out[name] = parse_size(value)
            elif key in _FLOAT_KEYS:
                out[name] = float(value)
            elif key in _INT_KEYS:
                out[name] = int(value)
            elif key == "max-space-bytes":
                out[name] = {parse_space(k): parse_size(v) for k, v in dict(value).items()}
            elif key == "forbid-space":
                out["forbid_spaces"] = frozenset(parse_space(v) for v in _as_list(value))
            elif key == "require-space":
                out["require_spaces"] = {str(k): parse_space(v) for k, v in dict(value).items()}
            elif key == "forbid-opcode":
                out["forbid_opcodes"] = frozenset(str(v) for v in _as_list(value))
            elif key == "forbid-custom-call":
                out["forbid_targets"] = frozenset(str(v) for v in _as_list(value))
            else:
                raise PolicyError(f"{where}: unknown key {key!r}")
        except (ValueError, TypeError) as e:
            raise PolicyError(f"{where}: {key}: {e}") from None
    return out


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


@dataclass(frozen=True)
class PolicySet:
    """A base policy plus per-module-glob refinements, then command-line overrides."""

    base: Policy = Policy()
    sections: tuple[tuple[str, Policy], ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)

    def for_module(self, name: str) -> Policy:
        policy = self.base
        for pattern, section in self.sections:
            if fnmatch.fnmatchcase(name, pattern):
                policy = policy.merged(
                    **{f.name: getattr(section, f.name) for f in dataclasses.fields(section)
                       if getattr(section, f.name) != getattr(Policy(), f.name)}
                )  # fmt: skip
        return policy.merged(**self.overrides)


def load_config(path: Path | None, *, search_from: Path | None = None) -> PolicySet:
    """The policy in `path`, or in `hlo-layout.toml` / pyproject's `[tool.hlo-layout]` found
    in `search_from` (the current directory) when no path is given; empty when there is none."""
    table: dict[str, Any] | None = None
    where = ""
    if path is not None:
        table, where = _read_toml(path), str(path)
        if path.name == "pyproject.toml":
            table = table.get("tool", {}).get("hlo-layout", {})
    else:
        folder = search_from or Path.cwd()
        if (folder / "hlo-layout.toml").is_file():
            where = str(folder / "hlo-layout.toml")
            table = _read_toml(folder / "hlo-layout.toml")
        elif (folder / "pyproject.toml").is_file():
            where = str(folder / "pyproject.toml")
            table = _read_toml(folder / "pyproject.toml").get("tool", {}).get("hlo-layout")
    if not table:
        return PolicySet()
    check = table.get("check", {})
    if not isinstance(check, dict):
        raise PolicyError(f"{where}: [check] must be a table")
    base = Policy().merged(**_from_table(check, f"{where} [check]"))
    sections = []
    for i, section in enumerate(check.get("modules", [])):
        if "match" not in section:
            raise PolicyError(f"{where}: [[check.modules]] #{i + 1} needs a `match` glob")
        fields_ = _from_table(section, f"{where} [[check.modules]] #{i + 1}")
        sections.append((str(section["match"]), Policy().merged(**fields_)))
    return PolicySet(base, tuple(sections))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"{path}: not valid TOML ({e})") from None
