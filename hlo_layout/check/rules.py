"""Budget rules: each a pure function from a module's metrics (and its baseline's) to violations.

A rule reads only ModuleMetrics, so it is the same rule for a file, a glob or a directory of
dumps, and its outcome does not depend on how the figures were computed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hlo_layout.check.metrics import ModuleMetrics
from hlo_layout.check.policy import Policy
from hlo_layout.check.sizes import format_size
from hlo_layout.layout.memory_space import memory_space_name


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken budget: which rule, in which module, the value found and the limit."""

    rule: str
    module: str
    file: str
    value: str
    limit: str
    where: str = ""
    message: str = ""

    def as_json(self) -> dict[str, str]:
        return {
            "rule": self.rule,
            "module": self.module,
            "file": self.file,
            "value": self.value,
            "limit": self.limit,
            "where": self.where,
            "message": self.message,
        }


def _bytes_rule(
    rule: str, label: str, value: int, limit: int | None, m: ModuleMetrics, where: str = ""
) -> list[Violation]:
    if limit is None or value <= limit:
        return []
    return [
        Violation(
            rule,
            m.module,
            m.file,
            format_size(value),
            format_size(limit),
            where,
            f"{label} {format_size(value)} ({value:,} B) exceeds {format_size(limit)}",
        )
    ]


def _count_rule(rule: str, label: str, value: int, limit: int | None, m: ModuleMetrics):
    if limit is None or value <= limit:
        return []
    return [
        Violation(rule, m.module, m.file, str(value), str(limit), "", f"{value} {label} > {limit}")
    ]


def budgets(m: ModuleMetrics, p: Policy) -> list[Violation]:
    """Entry argument / output bytes, bytes per memory space, largest buffer, allocations."""
    out = _bytes_rule(
        "max-argument-bytes", "entry arguments", m.argument_bytes, p.max_argument_bytes, m
    )
    out += _bytes_rule("max-output-bytes", "entry outputs", m.output_bytes, p.max_output_bytes, m)
    for space, limit in sorted(p.max_space_bytes.items()):
        used = m.space_bytes.get(space, 0)
        out += _bytes_rule(
            "max-space-bytes", f"bytes in {memory_space_name(space)}", used, limit, m, f"S({space})"
        )
    if m.largest:
        big = m.largest[0]
        out += _bytes_rule(
            "max-buffer-bytes",
            f"buffer {big.name}",
            big.physical_bytes,
            p.max_buffer_bytes,
            m,
            f"{big.computation}/{big.name}",
        )
    if m.allocation_bytes is not None:
        out += _bytes_rule(
            "max-allocation-bytes", "allocations", m.allocation_bytes, p.max_allocation_bytes, m
        )
    return out


def padding(m: ModuleMetrics, p: Policy) -> list[Violation]:
    """Module padding share and bytes; single buffers that expand too much."""
    out: list[Violation] = []
    if p.max_padding_percent is not None and m.padding_percent > p.max_padding_percent:
        out.append(
            Violation(
                "max-padding-percent",
                m.module,
                m.file,
                f"{m.padding_percent:.2f}%",
                f"{p.max_padding_percent:g}%",
                "",
                f"padding is {m.padding_percent:.2f}% of physical bytes "
                f"({format_size(m.padding_bytes)})",
            )
        )
    out += _bytes_rule("max-padding-bytes", "padding", m.padding_bytes, p.max_padding_bytes, m)
    if p.max_expansion is not None:
        for b in m.largest:
            if b.physical_bytes < p.expansion_min_bytes or not b.logical_bytes:
                continue
            expansion = b.physical_bytes / b.logical_bytes
            if expansion > p.max_expansion:
                out.append(
                    Violation(
                        "max-expansion",
                        m.module,
                        m.file,
                        f"{expansion:.2f}x",
                        f"{p.max_expansion:g}x",
                        f"{b.computation}/{b.name}",
                        f"{b.name} {b.shape}: {format_size(b.physical_bytes)} for "
                        f"{format_size(b.logical_bytes)} of data",
                    )
                )
    return out


def placement(m: ModuleMetrics, p: Policy) -> list[Violation]:
    """Forbidden memory spaces anywhere; required spaces for named entry buffers."""
    out: list[Violation] = []
    for space in sorted(p.forbid_spaces):
        used = m.space_bytes.get(space, 0)
        if used:
            out.append(
                Violation(
                    "forbid-space",
                    m.module,
                    m.file,
                    format_size(used),
                    "0B",
                    f"S({space})",
                    f"{format_size(used)} placed in {memory_space_name(space)} (S({space}))",
                )
            )
    for pattern, space in sorted(p.require_spaces.items()):
        import fnmatch

        for b in m.entry_buffers:
            if fnmatch.fnmatchcase(b.name, pattern) and b.memory_space != space:
                out.append(
                    Violation(
                        "require-space",
                        m.module,
                        m.file,
                        f"S({b.memory_space})",
                        f"S({space})",
                        b.name,
                        f"{b.name} is in {memory_space_name(b.memory_space)}, "
                        f"required {memory_space_name(space)}",
                    )
                )
    return out


def _forbidden(
    rule: str, counts: dict[str, int], names: frozenset[str], m: ModuleMetrics, message: str
) -> list[Violation]:
    """One violation per forbidden name that occurs (`message` may use {n} and {name})."""
    return [
        Violation(rule, m.module, m.file, str(counts[name]), "0", name,
                  message.format(n=counts[name], name=name))
        for name in sorted(names)
        if counts.get(name)
    ]  # fmt: skip


def structure(m: ModuleMetrics, p: Policy) -> list[Violation]:
    """Instruction / fusion / copy / custom-call counts, forbidden opcodes and targets."""
    out = _count_rule("max-instructions", "instructions", m.instructions, p.max_instructions, m)
    out += _count_rule("max-fusions", "fusions", m.fusions, p.max_fusions, m)
    out += _count_rule("max-copies", "copies", m.copies, p.max_copies, m)
    out += _count_rule("max-custom-calls", "custom calls", m.custom_calls, p.max_custom_calls, m)
    if p.min_fusions is not None and m.fusions < p.min_fusions:
        out.append(
            Violation(
                "min-fusions",
                m.module,
                m.file,
                str(m.fusions),
                f">= {p.min_fusions}",
                "",
                f"{m.fusions} fusions < {p.min_fusions}",
            )
        )
    out += _forbidden("forbid-opcode", m.opcodes, p.forbid_opcodes, m, "{n} {name} instruction(s)")
    out += _forbidden(
        "forbid-custom-call", m.custom_call_targets, p.forbid_targets, m, "custom-call to {name}"
    )
    return out


def growth(m: ModuleMetrics, base: ModuleMetrics, p: Policy) -> list[Violation]:
    """Against the baseline module of the same name: bytes, padding points, fusions."""
    out: list[Violation] = []
    if p.max_growth_percent is not None:
        for label, now, before in (
            ("argument bytes", m.argument_bytes, base.argument_bytes),
            ("output bytes", m.output_bytes, base.output_bytes),
            ("physical bytes", m.physical_bytes, base.physical_bytes),
        ):
            if before and 100.0 * (now - before) / before > p.max_growth_percent:
                grown = 100.0 * (now - before) / before
                out.append(
                    Violation(
                        "max-growth-percent",
                        m.module,
                        m.file,
                        f"+{grown:.2f}%",
                        f"+{p.max_growth_percent:g}%",
                        label,
                        f"{label} grew {format_size(before)} → {format_size(now)}",
                    )
                )
    if p.max_padding_growth_points is not None:
        points = m.padding_percent - base.padding_percent
        if points > p.max_padding_growth_points:
            out.append(
                Violation(
                    "max-padding-growth",
                    m.module,
                    m.file,
                    f"+{points:.2f} points",
                    f"+{p.max_padding_growth_points:g} points",
                    "",
                    f"padding {base.padding_percent:.2f}% → {m.padding_percent:.2f}%",
                )
            )
    if p.max_fusion_growth is not None and m.fusions - base.fusions > p.max_fusion_growth:
        out.append(
            Violation(
                "max-fusion-growth",
                m.module,
                m.file,
                f"+{m.fusions - base.fusions}",
                f"+{p.max_fusion_growth}",
                "",
                f"fusions {base.fusions} → {m.fusions}",
            )
        )
    return out


RULES: tuple[Callable[[ModuleMetrics, Policy], list[Violation]], ...] = (
    budgets,
    padding,
    placement,
    structure,
)


def evaluate(m: ModuleMetrics, p: Policy, base: ModuleMetrics | None = None) -> list[Violation]:
    """Every violation of policy `p` by module metrics `m` (and growth over `base`)."""
    out = [v for rule in RULES for v in rule(m, p)]
    if base is not None:
        out += growth(m, base, p)
    return out
