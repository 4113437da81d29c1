"""XLA's cost properties: named numbers per instruction, keyed as HloCostAnalysis keys them.

HloCostAnalysis::Properties is a map from key to number in which a missing key means 0 and a 0 is
never listed (`Properties::ForEach` skips zeros). The keys are strings, and some carry an operand
number and a ShapeIndex: `bytes accessed1{}` (operand 1), `bytes accessed0{1}` (element 1 of a
tuple operand 0), `bytes accessedout{}` (the output), `utilization0{}`. We keep XLA's keys as
they are, so a module's sum is compared key by key with `hlo_module_cost_analysis`.

Our numbers are exact: Python integers where XLA computes integers (XLA stores each in a float32,
so counts above 2**24 round there), floats only where XLA divides (utilizations, the halves of
triangular-solve and cholesky).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

FLOPS = "flops"
TRANSCENDENTALS = "transcendentals"
BYTES_ACCESSED = "bytes accessed"
OPTIMAL_SECONDS = "optimal_seconds"
UTILIZATION = "utilization"

#: One instruction's (or a computation's summed) properties; a missing key is 0.
Properties = dict[str, int | float]


def shape_index_text(index: Iterable[int]) -> str:
    """ShapeIndex::ToString: `{}`, `{1}`, `{3,0}`."""
    return "{" + ",".join(map(str, index)) + "}"


def operand_bytes_key(operand: int, index: tuple[int, ...] = ()) -> str:
    """HloCostAnalysis::GetOperandBytesAccessedKey: `bytes accessed0{}`, `bytes accessed2{1}`."""
    if not index and operand < len(_OPERAND_BYTES):
        return _OPERAND_BYTES[operand]
    return f"{BYTES_ACCESSED}{operand}{shape_index_text(index)}"


def operand_utilization_key(operand: int, index: tuple[int, ...] = ()) -> str:
    """HloCostAnalysis::GetOperandUtilizationKey: `utilization0{}`."""
    if not index and operand < len(_OPERAND_UTILIZATION):
        return _OPERAND_UTILIZATION[operand]
    return f"{UTILIZATION}{operand}{shape_index_text(index)}"


def output_bytes_key(index: tuple[int, ...] = ()) -> str:
    """HloCostAnalysis::GetOutputBytesAccessedKey: `bytes accessedout{}`, `bytes accessedout{0}`."""
    return f"{BYTES_ACCESSED}out{shape_index_text(index)}"


# The keys of the first operands, built once: every instruction asks for them.
_OPERAND_BYTES = tuple(f"{BYTES_ACCESSED}{k}{{}}" for k in range(64))
_OPERAND_UTILIZATION = tuple(f"{UTILIZATION}{k}{{}}" for k in range(64))
OUTPUT_BYTES = output_bytes_key()


def accumulate(total: Properties, properties: Mapping[str, int | float]) -> None:
    """`total += properties`, key by key, zeros left out (XLA's Postprocess: properties_sum_)."""
    get = total.get
    for key, value in properties.items():
        if value:
            total[key] = get(key, 0) + value


def nonzero(properties: Mapping[str, int | float]) -> Properties:
    """The properties as `Properties::ForEach` lists them: zeros left out."""
    return {k: v for k, v in properties.items() if v}


def is_subcomputation_key(key: str) -> bool:
    """HloCostAnalysis::KeyToCopyFromSubcomputation: what a reduce, map, scatter or
    select-and-scatter takes from its applied computation (times its count) — everything but
    bytes and utilizations."""
    return not key.startswith(BYTES_ACCESSED) and not key.startswith(UTILIZATION)


__all__ = [
    "BYTES_ACCESSED",
    "FLOPS",
    "OPTIMAL_SECONDS",
    "OUTPUT_BYTES",
    "TRANSCENDENTALS",
    "UTILIZATION",
    "Properties",
    "accumulate",
    "is_subcomputation_key",
    "nonzero",
    "operand_bytes_key",
    "operand_utilization_key",
    "output_bytes_key",
    "shape_index_text",
]
