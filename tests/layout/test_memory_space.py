"""Memory-space names follow layout_rules.md §3: only 0, 1, 5 (and 6 off TPU) have names."""

from __future__ import annotations

import pytest

from hlo_layout.layout import memory_space, memory_space_name


@pytest.mark.parametrize(
    ("number", "tpu", "name"),
    [
        (0, False, "default"),
        (0, True, "default"),
        (1, False, "fast"),
        (1, True, "fast"),
        (5, False, "host"),
        (5, True, "host"),
        (6, False, "unpinned-host"),
        (6, True, "device-specific"),  # TPU dumps put S(6) on scalars
        (2, True, "device-specific"),
        (3, True, "device-specific"),
        (7, False, "device-specific"),
    ],
)
def test_names(number: int, tpu: bool, name: str) -> None:
    assert memory_space_name(number, tpu=tpu) == name
    assert memory_space(number, tpu=tpu).number == number


def test_tpu_labels_say_hbm_and_vmem() -> None:
    assert "HBM" in memory_space(0, tpu=True).label
    assert "VMEM" in memory_space(1, tpu=True).label
    assert "VMEM" not in memory_space(1).label
