"""Budget rules: the one table of check rules (`RULES`) and the pure functions that judge a
module's metrics (and its baseline's) against them.

A rule reads only ModuleMetrics, so it is the same rule for a file, a glob or a directory of
dumps, and its outcome does not depend on how the figures were computed. Adding a rule is one
`RuleSpec` entry in `RULES`: its flag, config key, help and violation id follow from it. A
per-memory-space budget (`SPACE=SIZE`, like `max-space-bytes`) is `per_space_at_most(...)` over
a function (metrics, space) → bytes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from hlo_layout.check.metrics import ModuleMetrics
from hlo_layout.check.rule_spec import Evaluator, Kind, RuleSpec
from hlo_layout.layout.memory_space import memory_space_name
from hlo_layout.units import (
    format_bytes,
    format_number,
    format_si,
    ratio_percent,
    round_for_people,
)

if TYPE_CHECKING:
    from hlo_layout.check.policy import Policy


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken budget: which rule, in which module, the value found and the limit.

    `value` and `limit` are numbers in `unit` (bytes, count, percent, points, ratio, space);
    `value_text` / `limit_text` are the same for people (`201.00KiB`, `91.47%`).
    """

    rule: str
    module: str
    file: str
    value: int | float
    limit: int | float
    unit: str
    value_text: str
    limit_text: str
    where: str = ""
    message: str = ""
    #: "max": value must be <= limit; "min": value must be >= limit.
    bound: str = "max"

    @property
    def label(self) -> str:
        """`file::module`: dump folders repeat module names (`jit_step` in several files)."""
        return f"{self.file}::{self.module}"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "module": self.module,
            "file": self.file,
            "value": self.value,
            "limit": self.limit,
            "unit": self.unit,
            "bound": self.bound,
            "value_text": self.value_text,
            "limit_text": self.limit_text,
            "where": self.where,
            "message": self.message,
        }
        if self.unit == "bytes":
            out["value_bytes"] = self.value
            out["limit_bytes"] = self.limit
        return out


def display(value: int | float, unit: str) -> str:
    """A rule's value for people, by unit."""
    if unit == "bytes":
        return format_bytes(int(value))
    if unit == "percent":
        return f"{format_number(round_for_people(value, 2))}%"
    if unit == "points":
        return f"{format_number(round_for_people(value, 2))} points"
    if unit == "ratio":
        return f"{format_number(round_for_people(value, 2))}x"
    if unit == "space":
        return f"S({value})"
    if unit == "flops":
        return format_si(value, "FLOP")
    return format_number(value)


def _violation(
    spec: RuleSpec,
    m: ModuleMetrics,
    value: int | float,
    limit: int | float,
    message: str,
    where: str = "",
    bound: str = "max",
    signed: bool = False,
) -> Violation:
    value_text = display(value, spec.unit)
    limit_text = display(limit, spec.unit)
    if signed:
        value_text = ("+" if value >= 0 else "") + value_text
        limit_text = "+" + limit_text
    if bound == "min":
        limit_text = ">= " + limit_text
    return Violation(
        spec.key, m.module, m.file, value, limit, spec.unit, value_text, limit_text, where,
        message, bound,
    )  # fmt: skip


# --- evaluators: each returns a function for one table entry ----------------------------------


def at_most(measure: Callable[[ModuleMetrics], int | float | None], label: str) -> Evaluator:
    """Value of `measure` (skipped when None) must not exceed the limit."""

    def judge(spec: RuleSpec, m: ModuleMetrics, limit: Any, base: Any, p: Any) -> list[Violation]:
        value = measure(m)
        if value is None or value <= limit:
            return []
        if spec.unit == "bytes":
            text = f"{label} {format_bytes(int(value))} ({value:,} B) exceeds {format_bytes(limit)}"
        else:
            text = f"{label}: {display(value, spec.unit)} > {display(limit, spec.unit)}"
        return [_violation(spec, m, value, limit, text)]

    return judge


def at_least(measure: Callable[[ModuleMetrics], int], label: str) -> Evaluator:
    def judge(spec: RuleSpec, m: ModuleMetrics, limit: Any, base: Any, p: Any) -> list[Violation]:
        value = measure(m)
        if value >= limit:
            return []
        return [_violation(spec, m, value, limit, f"{value} {label} < {limit}", bound="min")]

    return judge


def per_space_at_most(measure: Callable[[ModuleMetrics, int], int], label: str) -> Evaluator:
    """A `SPACE=SIZE` budget: `measure(m, space)` bytes must not exceed each space's limit."""

    def judge(spec: RuleSpec, m: ModuleMetrics, limits: Any, base: Any, p: Any) -> list[Violation]:
        out = []
        for space, limit in sorted(limits.items()):
            used = measure(m, space)
            if used > limit:
                text = (
                    f"{label} in {memory_space_name(space)} {format_bytes(used)} ({used:,} B) "
                    f"exceeds {format_bytes(limit)}"
                )
                out.append(_violation(spec, m, used, limit, text, f"S({space})"))
        return out

    return judge


def _largest_buffer(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: Any, p: Any
) -> list[Violation]:
    if not m.largest or m.largest[0].physical_bytes <= limit:
        return []
    big = m.largest[0]
    text = (
        f"buffer {big.name} {format_bytes(big.physical_bytes)} ({big.physical_bytes:,} B) "
        f"exceeds {format_bytes(limit)}"
    )
    return [_violation(spec, m, big.physical_bytes, limit, text, f"{big.computation}/{big.name}")]


def _padding_percent(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: Any, p: Any
) -> list[Violation]:
    if not m.physical_bytes or Fraction(100 * m.padding_bytes, m.physical_bytes) <= limit:
        return []
    share = ratio_percent(m.padding_bytes, m.physical_bytes) or 0.0
    text = f"padding is {share:.2f}% of physical bytes ({format_bytes(m.padding_bytes)})"
    return [_violation(spec, m, share, limit, text)]


def _expansion(spec: RuleSpec, m: ModuleMetrics, limit: Any, base: Any, p: Policy) -> list[Any]:
    floor = p.get("expansion-min-bytes") or 0
    out = []
    for b in m.largest:
        if b.physical_bytes < floor or not b.logical_bytes:
            continue
        if Fraction(b.physical_bytes, b.logical_bytes) > limit:
            ratio = (ratio_percent(b.physical_bytes, b.logical_bytes, 5) or 0.0) / 100
            text = (
                f"{b.name} {b.shape}: {format_bytes(b.physical_bytes)} for "
                f"{format_bytes(b.logical_bytes)} of data"
            )
            value = round_for_people(ratio, 3)
            out.append(_violation(spec, m, value, limit, text, f"{b.computation}/{b.name}"))
    return out


def _forbid_space(spec: RuleSpec, m: ModuleMetrics, spaces: Any, base: Any, p: Any) -> list[Any]:
    out = []
    for space in sorted(spaces):
        used = m.space_bytes.get(space, 0)
        if used:
            text = f"{format_bytes(used)} placed in {memory_space_name(space)} (S({space}))"
            out.append(
                Violation(
                    spec.key,
                    m.module,
                    m.file,
                    used,
                    0,
                    "bytes",
                    format_bytes(used),
                    "0B",
                    f"S({space})",
                    text,
                )
            )
    return out


def _require_space(spec: RuleSpec, m: ModuleMetrics, want: Any, base: Any, p: Any) -> list[Any]:
    out = []
    for pattern, space in sorted(want.items()):
        for b in m.entry_buffers:
            if fnmatch.fnmatchcase(b.name, pattern) and b.memory_space != space:
                text = (
                    f"{b.name} is in {memory_space_name(b.memory_space)}, "
                    f"required {memory_space_name(space)}"
                )
                out.append(_violation(spec, m, b.memory_space, space, text, b.name))
    return out


def forbidden(counts: Callable[[ModuleMetrics], dict[str, int]], message: str) -> Evaluator:
    """One violation per forbidden name that occurs (`message` may use {n} and {name})."""

    def judge(spec: RuleSpec, m: ModuleMetrics, names: Any, base: Any, p: Any) -> list[Violation]:
        found = counts(m)
        return [
            Violation(spec.key, m.module, m.file, found[name], 0, "count", str(found[name]), "0",
                      name, message.format(n=found[name], name=name))
            for name in sorted(names)
            if found.get(name)
        ]  # fmt: skip

    return judge


def _physical_growth(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: ModuleMetrics | None, p: Any
) -> list[Violation]:
    """Argument, output and physical bytes (every value summed once, no liveness)."""
    if base is None:
        return []
    out = []
    for label, now, before in (
        ("argument bytes", m.argument_bytes, base.argument_bytes),
        ("output bytes", m.output_bytes, base.output_bytes),
        ("physical bytes", m.physical_bytes, base.physical_bytes),
    ):
        if not before or Fraction(100 * (now - before), before) <= limit:
            continue
        grown = ratio_percent(now - before, before)
        if grown is not None:
            text = f"{label} grew {format_bytes(before)} → {format_bytes(now)}"
            out.append(_violation(spec, m, grown, limit, text, label, signed=True))
    return out


def peak_of(m: ModuleMetrics, space: int | None) -> int | None:
    """The headline peak `memory` prints: the module's (space None) or one memory space's."""
    return m.module_peak_bytes if space is None else m.peak_bytes.get(space)


def _scope(space: int | None) -> str:
    """Where a peak is taken, for `where` and messages: `S(1)` or the module."""
    return "module" if space is None else f"S({space})"


def _peak_label(space: int | None) -> str:
    return "peak" if space is None else f"peak in {memory_space_name(space)}"


def _max_peak(spec: RuleSpec, m: ModuleMetrics, limits: Any, base: Any, p: Any) -> list[Violation]:
    """The headline peak of the module (limit key None) and of each memory space given."""
    out = []
    for space, limit in _by_scope(limits):
        peak = peak_of(m, space)
        if peak is None or peak <= limit:
            continue
        text = (
            f"{_peak_label(space)} {format_bytes(peak)} ({peak:,} B) exceeds {format_bytes(limit)}"
        )
        out.append(_violation(spec, m, peak, limit, text, _scope(space)))
    return out


def _by_scope(limits: dict[int | None, Any]) -> list[tuple[int | None, Any]]:
    """The module first, then spaces in order."""
    return sorted(limits.items(), key=lambda kv: -1 if kv[0] is None else kv[0])


def _peak_growth(percent: bool) -> Evaluator:
    """The headline peak's growth over the baseline module's, in percent or in bytes, for the
    module (limit key None) and each memory space given."""

    def judge(
        spec: RuleSpec, m: ModuleMetrics, limits: Any, base: ModuleMetrics | None, p: Any
    ) -> list[Violation]:
        if base is None:
            return []
        out = []
        for space, limit in _by_scope(limits):
            now, before = peak_of(m, space), peak_of(base, space)
            if now is None or before is None:
                continue
            grown: int | float | None
            if percent:
                if not before or Fraction(100 * (now - before), before) <= limit:
                    continue
                grown = ratio_percent(now - before, before)
            else:
                grown = now - before if now - before > limit else None
            if grown is None:
                continue
            text = (
                f"{_peak_label(space)} grew {format_bytes(before)} → {format_bytes(now)} "
                f"({now - before:+,} B)"
            )
            out.append(_violation(spec, m, grown, limit, text, _scope(space), signed=True))
        return out

    return judge


def _padding_growth(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: ModuleMetrics | None, p: Any
) -> list[Violation]:
    if base is None:
        return []
    exact_now = Fraction(100 * m.padding_bytes, m.physical_bytes or 1)
    exact_before = Fraction(100 * base.padding_bytes, base.physical_bytes or 1)
    if exact_now - exact_before <= limit:
        return []
    now = ratio_percent(m.padding_bytes, m.physical_bytes) or 0.0
    before = ratio_percent(base.padding_bytes, base.physical_bytes) or 0.0
    points = round_for_people(float(exact_now - exact_before))
    text = f"padding {before:.2f}% → {now:.2f}%"
    return [_violation(spec, m, points, limit, text, signed=True)]


def _fusion_growth(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: ModuleMetrics | None, p: Any
) -> list[Violation]:
    if base is None or m.fusions - base.fusions <= limit:
        return []
    text = f"fusions {base.fusions} → {m.fusions}"
    return [_violation(spec, m, m.fusions - base.fusions, limit, text, signed=True)]


def _flops_growth(
    spec: RuleSpec, m: ModuleMetrics, limit: Any, base: ModuleMetrics | None, p: Any
) -> list[Violation]:
    if base is None or m.flops is None or not base.flops:
        return []
    if Fraction(100 * (m.flops - base.flops), base.flops) <= limit:
        return []
    grown = ratio_percent(m.flops - base.flops, base.flops)
    if grown is None:
        return []
    text = f"flops grew {format_si(base.flops, 'FLOP')} → {format_si(m.flops, 'FLOP')}"
    return [_violation(spec, m, grown, limit, text, "flops", signed=True)]


def _space_bytes(m: ModuleMetrics, space: int) -> int:
    return m.space_bytes.get(space, 0)


#: Every check rule, in the order `check --help`, the README and violations list them.
RULES: tuple[RuleSpec, ...] = (
    RuleSpec("max-argument-bytes", Kind.SIZE, "bytes",
             "Sum of the entry parameters' physical bytes, e.g. 64MiB.",
             at_most(lambda m: m.argument_bytes, "entry arguments")),
    RuleSpec("max-output-bytes", Kind.SIZE, "bytes",
             "The entry result's physical bytes (its array leaves).",
             at_most(lambda m: m.output_bytes, "entry outputs")),
    RuleSpec("max-space-bytes", Kind.SPACE_SIZES, "bytes",
             "Bytes XLA's buffer assignment allocates in a memory space (static + temp "
             "allocation), e.g. 1=16MiB or vmem=16MiB (repeatable).",
             per_space_at_most(_space_bytes, "bytes")),
    RuleSpec("max-peak-bytes", Kind.MODULE_OR_SPACE_SIZES, "bytes",
             "The headline peak `memory` prints: SIZE for the module, SPACE=SIZE for a memory "
             "space, e.g. 16GiB or hbm=16GiB (repeatable).",
             _max_peak),
    RuleSpec("max-temp-bytes", Kind.SPACE_SIZES, "bytes",
             "The temp allocation XLA's buffer assigner gives a memory space, e.g. 1=16MiB "
             "(repeatable).",
             per_space_at_most(lambda m, s: m.temp_bytes.get(s, 0), "temp allocation")),
    RuleSpec("max-buffer-bytes", Kind.SIZE, "bytes", "The largest single buffer.",
             _largest_buffer),
    RuleSpec("max-allocation-bytes", Kind.SIZE, "bytes",
             "Total of the compiler's buffer allocations (needs its *buffer-assignment.txt "
             "beside the dump).",
             at_most(lambda m: m.allocation_bytes, "allocations")),
    RuleSpec("max-padding-percent", Kind.NUMBER, "percent",
             "Padding share of the physical bytes, in percent.", _padding_percent),
    RuleSpec("max-padding-bytes", Kind.SIZE, "bytes", "Padding bytes of the defined values.",
             at_most(lambda m: m.padding_bytes, "padding")),
    RuleSpec("max-expansion", Kind.NUMBER, "ratio",
             "Any buffer's physical/logical ratio, e.g. 2 for twice the data's bytes.",
             _expansion),
    RuleSpec("expansion-min-bytes", Kind.SIZE, "bytes",
             "Only buffers at least this big count for --max-expansion.", None),
    RuleSpec("forbid-space", Kind.SPACES, "space",
             "A memory space no value may use: 5, S(5) or host (repeatable).", _forbid_space),
    RuleSpec("require-space", Kind.PATTERN_SPACES, "space",
             "Config only: entry buffers whose name matches a glob must live in a space.",
             _require_space, on_command_line=False),
    RuleSpec("max-instructions", Kind.COUNT, "count", "Instructions in the module.",
             at_most(lambda m: m.instructions, "instructions")),
    RuleSpec("max-fusions", Kind.COUNT, "count", "Fusion instructions in the module.",
             at_most(lambda m: m.fusions, "fusions")),
    RuleSpec("min-fusions", Kind.COUNT, "count", "At least this many fusion instructions.",
             at_least(lambda m: m.fusions, "fusions")),
    RuleSpec("max-copies", Kind.COUNT, "count", "copy and copy-start instructions.",
             at_most(lambda m: m.copies, "copies")),
    RuleSpec("max-custom-calls", Kind.COUNT, "count", "custom-call instructions.",
             at_most(lambda m: m.custom_calls, "custom calls")),
    RuleSpec("forbid-opcode", Kind.NAMES, "count",
             "An opcode that must not appear, e.g. copy (repeatable).",
             forbidden(lambda m: m.opcodes, "{n} {name} instruction(s)"), metavar_text="OPCODE"),
    RuleSpec("forbid-custom-call", Kind.NAMES, "count",
             "A custom-call target that must not appear (repeatable).",
             forbidden(lambda m: m.custom_call_targets, "custom-call to {name}"),
             metavar_text="TARGET"),
    RuleSpec("max-peak-growth-percent", Kind.MODULE_OR_SPACE_NUMBERS, "percent",
             "Growth of the headline peak over the baseline's, in percent: PERCENT for the "
             "module, SPACE=PERCENT for a memory space (needs --baseline; repeatable).",
             _peak_growth(percent=True), needs_baseline=True),
    RuleSpec("max-peak-growth-bytes", Kind.MODULE_OR_SPACE_SIZES, "bytes",
             "Growth of the headline peak over the baseline's, in bytes: SIZE for the module, "
             "SPACE=SIZE for a memory space (needs --baseline; repeatable).",
             _peak_growth(percent=False), needs_baseline=True),
    RuleSpec("max-physical-growth-percent", Kind.NUMBER, "percent",
             "Growth of argument, output and physical bytes (every value summed once, no "
             "liveness: not the peak) over the baseline, in percent (needs --baseline).",
             _physical_growth, needs_baseline=True, aliases=("max-growth-percent",)),
    RuleSpec("max-padding-growth", Kind.NUMBER, "points",
             "Growth of the padding share over the baseline, in percentage points "
             "(needs --baseline).",
             _padding_growth, needs_baseline=True, aliases=("max-padding-growth-points",)),
    RuleSpec("max-fusion-growth", Kind.COUNT, "count",
             "More fusions than the baseline by at most N (needs --baseline).",
             _fusion_growth, needs_baseline=True),
    RuleSpec("max-flops", Kind.NUMBER, "flops",
             "Flops of one run of the module (XLA's HloCostAnalysis, while bodies times their "
             "trip count), e.g. 2e12.",
             at_most(lambda m: m.flops, "flops")),
    RuleSpec("max-bytes-accessed", Kind.SIZE, "bytes",
             "Bytes accessed in one run of the module (XLA's HloCostAnalysis, loop-aware).",
             at_most(lambda m: m.bytes_accessed, "bytes accessed")),
    RuleSpec("max-flops-growth-percent", Kind.NUMBER, "percent",
             "Growth of the flops over the baseline, in percent (needs --baseline).",
             _flops_growth, needs_baseline=True),
)  # fmt: skip

#: The rules that read the cost totals (`check` computes them only when one is asked for).
COST_RULES = frozenset({"max-flops", "max-bytes-accessed", "max-flops-growth-percent"})

RULES_BY_KEY: dict[str, RuleSpec] = {r.key: r for r in RULES}
for _rule in RULES:
    for _alias in _rule.aliases:
        RULES_BY_KEY[_alias] = _rule


def evaluate(m: ModuleMetrics, p: Policy, base: ModuleMetrics | None = None) -> list[Violation]:
    """Every violation of policy `p` by module metrics `m` (growth rules need `base`)."""
    out: list[Violation] = []
    for spec in RULES:
        value = p.get(spec.key)
        if spec.evaluate is None or value is None or value == spec.default():
            continue
        out += spec.evaluate(spec, m, value, base, p)
    return out
