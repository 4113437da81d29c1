"""What a check rule is: one declarative entry that names its flag, config key and violation id
(all the same kebab-case `key`), its value kind and unit, its help, and the function that judges
a module. The table of entries is `hlo_layout.check.rules.RULES`; the Typer options
(`cli/check_cmd.py`), the config loader (`check/policy.py`) and the violations are derived from
it, so a new rule is one entry there.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hlo_layout.layout.memory_space import SPACE_NAMES, space_number
from hlo_layout.units import MAX_SIZE_DIGITS, parse_size

if TYPE_CHECKING:
    from hlo_layout.check.metrics import ModuleMetrics
    from hlo_layout.check.policy import Policy


class Kind(enum.Enum):
    """How a rule's value is written on the command line and in a config file."""

    SIZE = "size"  # `64MiB` / 67108864 → int bytes
    COUNT = "count"  # `400` → int
    NUMBER = "number"  # `2.5` → float (percent, points, ratio)
    SPACE_SIZES = "space-sizes"  # `--flag 1=16MiB` repeated / `{ 1 = "16MiB" }` → {space: bytes}
    #: `--flag 16MiB` (the module) and `--flag hbm=8MiB` repeated / `"16MiB"` or
    #: `{ module = "16MiB", hbm = "8MiB" }` → {None (the module) or space: bytes}
    MODULE_OR_SPACE_SIZES = "module-or-space-sizes"
    #: The same with numbers: `--flag 2` / `--flag hbm=1` → {None or space: float}
    MODULE_OR_SPACE_NUMBERS = "module-or-space-numbers"
    SPACES = "spaces"  # `--flag 5` repeated / `[5, "host"]` → frozenset[int]
    NAMES = "names"  # `--flag copy` repeated / `["copy"]` → frozenset[str]
    PATTERN_SPACES = "pattern-spaces"  # config only: `{ "param*" = 0 }` → {glob: space}

    @property
    def repeatable(self) -> bool:
        return self in (
            Kind.SPACE_SIZES,
            Kind.SPACES,
            Kind.NAMES,
            Kind.PATTERN_SPACES,
            Kind.MODULE_OR_SPACE_SIZES,
            Kind.MODULE_OR_SPACE_NUMBERS,
        )


class RuleValueError(ValueError):
    """A value that cannot be this rule's (the CLI turns it into exit 2)."""


def parse_space(value: str | int) -> int:
    """`5`, `S(5)`, `host` → 5."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    number = space_number(str(value))
    if number is not None:
        return number
    raise RuleValueError(
        f"not a memory space: {value!r} (a number, S(n), or one of {sorted(SPACE_NAMES)})"
    )


def _count(value: Any) -> int:
    if isinstance(value, bool):
        raise RuleValueError(f"not a count: {value!r}")
    text = str(value).strip()
    if len(text) > MAX_SIZE_DIGITS:
        raise RuleValueError(f"number has {len(text)} digits; at most {MAX_SIZE_DIGITS} are read")
    try:
        n = int(text)
    except ValueError:
        raise RuleValueError(f"not a whole number: {value!r}") from None
    if n < 0:
        raise RuleValueError(f"{n} is negative")
    return n


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise RuleValueError(f"not a number: {value!r}")
    text = str(value).strip()
    if len(text) > MAX_SIZE_DIGITS:
        raise RuleValueError(f"number has {len(text)} digits; at most {MAX_SIZE_DIGITS} are read")
    try:
        x = float(text)
    except ValueError:
        raise RuleValueError(f"not a number: {value!r}") from None
    if not math.isfinite(x):
        raise RuleValueError(f"not a finite number: {value!r}")
    return x


def _size(value: Any) -> int:
    try:
        return parse_size(value)
    except ValueError as e:
        raise RuleValueError(str(e)) from None


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


#: The key of a module-or-space table that means the whole module (its headline).
MODULE_KEY = "module"


def _module_or_space(value: Any, one: Callable[[Any], Any], example: str) -> dict[int | None, Any]:
    """`VALUE` (the module) or `SPACE=VALUE`, from flags (strings) or TOML (a value, or a table
    whose `module` key is the module) → {None or space: value}."""
    if isinstance(value, dict):
        return {
            None if str(k) == MODULE_KEY else parse_space(k): one(v) for k, v in value.items()
        }  # fmt: skip
    out: dict[int | None, Any] = {}
    for item in _as_list(value):
        space, sep, rest = str(item).partition("=") if isinstance(item, str) else ("", "", item)
        if not sep:
            out[None] = one(item)
        elif not space.strip():
            raise RuleValueError(f"{item!r}: write VALUE or SPACE=VALUE, e.g. {example}")
        else:
            out[None if space.strip() == MODULE_KEY else parse_space(space.strip())] = one(rest)
    return out


#: An evaluator: (its rule, the module's figures, the rule's value, the baseline module or
#: None, the whole policy for modifiers such as `expansion-min-bytes`) → violations.
Evaluator = Callable[
    ["RuleSpec", "ModuleMetrics", Any, "ModuleMetrics | None", "Policy"], list[Any]
]


@dataclass(frozen=True)
class RuleSpec:
    """One check rule. `key` is the flag (`--key`), the config key and the violation's `rule`."""

    key: str
    kind: Kind
    #: Unit of the rule's value and of its violations' `value`/`limit`: bytes, count, percent,
    #: points, ratio, space, opcode, target.
    unit: str
    help: str
    #: None for a modifier that only tunes another rule (e.g. `expansion-min-bytes`).
    evaluate: Evaluator | None
    needs_baseline: bool = False
    #: False for rules only a config file can express (a table value).
    on_command_line: bool = True
    #: Older config spellings still read.
    aliases: tuple[str, ...] = ()
    #: Metavar override (default from the kind and unit).
    metavar_text: str | None = None

    @property
    def flag(self) -> str:
        return f"--{self.key}"

    @property
    def param(self) -> str:
        """The Python parameter / attribute name (`max_argument_bytes`)."""
        return self.key.replace("-", "_")

    @property
    def metavar(self) -> str:
        if self.metavar_text:
            return self.metavar_text
        if self.kind is Kind.SIZE:
            return "SIZE"
        if self.kind is Kind.COUNT:
            return "N"
        if self.kind is Kind.NUMBER:
            return {"percent": "PERCENT", "points": "POINTS", "ratio": "X"}.get(self.unit, "N")
        if self.kind is Kind.SPACE_SIZES:
            return "SPACE=SIZE"
        if self.kind is Kind.SPACES:
            return "SPACE"
        if self.kind is Kind.MODULE_OR_SPACE_SIZES:
            return "[SPACE=]SIZE"
        if self.kind is Kind.MODULE_OR_SPACE_NUMBERS:
            return "[SPACE=]" + {"percent": "PERCENT"}.get(self.unit, "N")
        return self.unit.upper()

    def default(self) -> Any:
        if self.kind in (Kind.SPACES, Kind.NAMES):
            return frozenset()
        if self.kind in (
            Kind.SPACE_SIZES,
            Kind.PATTERN_SPACES,
            Kind.MODULE_OR_SPACE_SIZES,
            Kind.MODULE_OR_SPACE_NUMBERS,
        ):
            return {}
        return None

    def parse(self, value: Any) -> Any:
        """A config value (TOML) or a flag's values (a string, or a list for a repeatable flag)
        as this rule's value; raises RuleValueError saying what is wrong."""
        kind = self.kind
        if kind is Kind.SIZE:
            return _size(value)
        if kind is Kind.COUNT:
            return _count(value)
        if kind is Kind.NUMBER:
            return _number(value)
        if kind is Kind.SPACES:
            return frozenset(parse_space(v) for v in _as_list(value))
        if kind is Kind.NAMES:
            return frozenset(str(v) for v in _as_list(value))
        if kind is Kind.SPACE_SIZES:
            if isinstance(value, dict):
                return {parse_space(k): _size(v) for k, v in value.items()}
            out: dict[int, int] = {}
            for item in _as_list(value):
                space, sep, size = str(item).partition("=")
                if not sep:
                    raise RuleValueError(f"{item!r}: write SPACE=SIZE, e.g. 1=16MiB or vmem=16MiB")
                out[parse_space(space)] = _size(size)
            return out
        if kind is Kind.MODULE_OR_SPACE_SIZES:
            return _module_or_space(value, _size, "16GiB or hbm=16GiB")
        if kind is Kind.MODULE_OR_SPACE_NUMBERS:
            return _module_or_space(value, _number, "2 or hbm=2")
        if kind is Kind.PATTERN_SPACES:
            if not isinstance(value, dict):
                raise RuleValueError('write a table of glob = space, e.g. { "param*" = 0 }')
            return {str(k): parse_space(v) for k, v in value.items()}
        raise AssertionError(kind)
