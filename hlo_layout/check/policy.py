"""What a CI gate allows: limits from flags and from `hlo-layout.toml` / `[tool.hlo-layout]`.

Config layout (every key optional; keys are the flags' names; sizes accept units such as
"64MiB"):

    [check]                       # applies to every module
    max-argument-bytes = "64MiB"  # (also accepted at the top of hlo-layout.toml, or directly
    forbid-space = [5]            #  under [tool.hlo-layout] in pyproject.toml)
    max-padding-percent = 20

    [[check.modules]]             # later sections refine earlier ones for matching modules
    match = "jit_train_*"         # glob over module names
    max-fusions = 400

Without `--config`, the first folder from the current one upwards that holds `hlo-layout.toml`,
or a `pyproject.toml` with a `[tool.hlo-layout]` table, gives the config (as ruff looks for its
own). Unknown or misplaced keys are usage errors naming the key and the file; nothing is
dropped. Flags given on the command line override the config for every module.
"""

from __future__ import annotations

import difflib
import fnmatch
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hlo_layout import limits
from hlo_layout.check.rule_spec import (
    SPACE_NAMES,
    RuleSpec,
    RuleValueError,
)
from hlo_layout.check.rule_spec import parse_space as _parse_space
from hlo_layout.check.rules import RULES, RULES_BY_KEY
from hlo_layout.errors import HloUsageError, Source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["SPACE_NAMES", "Policy", "PolicyError", "PolicySet", "load_config", "parse_space"]


class PolicyError(HloUsageError):
    """A config file or flag value that cannot be a rule (a usage error: exit 2)."""


def parse_space(value: str | int) -> int:
    """`5`, `S(5)`, `host` → 5; PolicyError otherwise."""
    try:
        return _parse_space(value)
    except RuleValueError as e:
        raise PolicyError(str(e)) from None


@dataclass(frozen=True)
class Policy:
    """Limits for one module, by rule key; a missing key means the rule is off.

    Attribute access by parameter name (`policy.max_fusions`) reads the same values.
    """

    limits: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        spec = RULES_BY_KEY[key]
        return self.limits.get(spec.key, spec.default())

    def __getattr__(self, name: str) -> Any:
        key = name.replace("_", "-")
        if key in RULES_BY_KEY:
            return self.get(key)
        raise AttributeError(name)

    def merged(self, changes: Mapping[str, Any]) -> Policy:
        """This policy with `changes` (rule key → value) applied: None is ignored, sets are
        united, tables merged, other values replaced."""
        limits = dict(self.limits)
        for key, value in changes.items():
            if value is None:
                continue
            spec = RULES_BY_KEY[key]
            current = limits.get(spec.key)
            if isinstance(value, frozenset) and current is not None:
                value = current | value
            elif isinstance(value, dict) and current is not None:
                value = {**current, **value}
            limits[spec.key] = value
        return Policy(limits)

    @property
    def is_empty(self) -> bool:
        return not any(v != RULES_BY_KEY[k].default() for k, v in self.limits.items())


def _rules_of(table: Mapping[str, Any], where: str, allowed: tuple[str, ...] = ()) -> dict:
    """Config keys → rule values; any other key is an error naming the key and `where`."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key in allowed:
            continue
        spec = RULES_BY_KEY.get(key)
        if spec is None:
            raise PolicyError(f"{where}: unknown key {key!r}{_did_you_mean(key)}")
        try:
            out[spec.key] = spec.parse(value)
        except (RuleValueError, ValueError, TypeError) as e:
            raise PolicyError(f"{where}: {key}: {e}") from None
    return out


def _did_you_mean(key: str) -> str:
    names = [r.key for r in RULES] + ["check", "match", "modules"]
    close = difflib.get_close_matches(key, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(frozen=True)
class PolicySet:
    """A base policy plus per-module-glob refinements, then command-line overrides."""

    base: Policy = Policy()
    sections: tuple[tuple[str, Policy], ...] = ()
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: The config file read, if any (shown in reports).
    source: str | None = None

    def for_module(self, name: str) -> Policy:
        policy = self.base
        for pattern, section in self.sections:
            if fnmatch.fnmatchcase(name, pattern):
                policy = policy.merged(section.limits)
        return policy.merged(self.overrides)

    def with_overrides(self, overrides: Mapping[str, Any]) -> PolicySet:
        return PolicySet(self.base, self.sections, dict(overrides), self.source)

    def keys_in_use(self) -> set[str]:
        """Rule keys set anywhere (base, any section, or an override)."""
        keys = {k for k, v in self.base.limits.items() if v != RULES_BY_KEY[k].default()}
        for _, section in self.sections:
            keys |= {k for k, v in section.limits.items() if v != RULES_BY_KEY[k].default()}
        keys |= {
            k for k, v in self.overrides.items() if v is not None and v != RULES_BY_KEY[k].default()
        }
        return keys

    def needing_baseline(self) -> list[RuleSpec]:
        """Rules in use that compare with a baseline."""
        used = self.keys_in_use()
        return [r for r in RULES if r.needs_baseline and r.key in used]


CONFIG_NAME = "hlo-layout.toml"


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The first `hlo-layout.toml`, or `pyproject.toml` with `[tool.hlo-layout]`, from `start`
    up to the file-system root, with its hlo-layout table."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate, _read_toml(candidate)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _pyproject_table(pyproject, _read_toml(pyproject), required=False)
            if table is not None:
                return pyproject, table
    return None


def _pyproject_table(path: Path, document: dict[str, Any], required: bool) -> Any:
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        return None
    if "hlo-layout" in tool:
        return tool["hlo-layout"]
    for near in ("hlo_layout", "hlo-layout-check", "hlolayout"):
        if near in tool:
            raise PolicyError(f"{path}: [tool.{near}] is not read; write [tool.hlo-layout]")
    if required:
        raise PolicyError(f"{path}: no [tool.hlo-layout] table")
    return None


def load_config(path: Path | None, *, search_from: Path | None = None) -> PolicySet:
    """The policy in `path` (hlo-layout.toml, or pyproject.toml's `[tool.hlo-layout]`), or in
    the config found from `search_from` (the current directory) upwards; empty when none."""
    if path is not None:
        document = _read_toml(path)
        table = (
            _pyproject_table(path, document, required=True)
            if path.name == "pyproject.toml"
            else document
        )
        where = path
    else:
        found = find_config((search_from or Path.cwd()).resolve())
        if found is None:
            return PolicySet()
        where, table = found
    return _policy_set(table, str(where))


def _policy_set(root: Any, where: str) -> PolicySet:
    """Rules may sit at the root (`hlo-layout.toml` top level, `[tool.hlo-layout]`) or under
    `[check]`; `[[check.modules]]` sections refine them for modules matching a glob."""
    if not isinstance(root, dict):
        raise PolicyError(f"{where}: the hlo-layout config must be a table")
    for key in ("match", "modules"):
        if key in root:
            raise PolicyError(
                f"{where}: {key!r} is misplaced at the top level: it belongs in a "
                "[[check.modules]] section"
            )
    check = root.get("check", {})
    if not isinstance(check, dict):
        raise PolicyError(f"{where}: 'check' must be a table ([check])")
    if "match" in check:
        raise PolicyError(
            f"{where}: 'match' is misplaced in [check]: it belongs in a [[check.modules]] section"
        )
    top = _rules_of(root, f"{where} (top level)", allowed=("check",))
    in_check = _rules_of(check, f"{where} [check]", allowed=("modules",))
    both = sorted(set(top) & set(in_check))
    if both:
        raise PolicyError(
            f"{where}: {both[0]!r} is given both at the top level and in [check]; keep one"
        )
    base = Policy().merged({**top, **in_check})
    modules = check.get("modules", [])
    if not isinstance(modules, list):
        raise PolicyError(f"{where}: write module sections as [[check.modules]] (an array)")
    sections = []
    for i, section in enumerate(modules, start=1):
        label = f"{where} [[check.modules]] #{i}"
        if not isinstance(section, dict):
            raise PolicyError(f"{label}: must be a table")
        if "match" not in section or not isinstance(section["match"], str):
            raise PolicyError(f"{label}: needs a `match` glob (a string)")
        if "modules" in section or "check" in section:
            bad = "modules" if "modules" in section else "check"
            raise PolicyError(f"{label}: {bad!r} is misplaced inside a module section")
        fields_ = _rules_of(section, label, allowed=("match",))
        sections.append((section["match"], Policy().merged(fields_)))
    return PolicySet(base, tuple(sections), source=where)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such config file") from None
    except IsADirectoryError:
        raise PolicyError(f"{path}: is a directory, not a config file") from None
    except OSError as e:
        raise PolicyError(f"{path}: cannot read ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"{path}: not valid TOML ({e})") from None
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: not UTF-8 text") from None
    except RecursionError:
        raise PolicyError(f"{path}: nested too deeply to read") from None
    except ValueError as e:  # tomllib's int() of a number past Python's digit limit
        if not limits.is_int_digits_error(e):
            raise
        where = limits.long_integer_error(Source(path.read_text("utf-8", "replace"), str(path)))
        at = f"{where.span.line}:{where.span.column}: " if where.span is not None else " "
        raise PolicyError(f"{path}:{at}{where.message}") from None
