"""BufferAssigner's reuse index (`_ReuseIndex`) against a scan of every allocation's gaps: the
same allocations in the same order (last registered first), whatever the ranges, including
ranges that overlap or run backwards (which send an allocation to the recomputed-gaps path)."""

from __future__ import annotations

import bisect
import itertools
import random

import pytest

from hlo_layout.memory import assigner
from hlo_layout.memory.assigner import Allocation, _ReuseIndex


def _scan(index: _ReuseIndex, start: int, end: int) -> list[int]:
    return [
        index.order[p]
        for p in range(len(index.order) - 1, -1, -1)
        if any(s <= start and e >= end for s, e in zip(index.starts[p], index.ends[p]))
    ]


def _covers(index: _ReuseIndex) -> None:
    """Every block's and super-block's cover is a staircase and holds every gap of its
    allocations."""
    block = assigner._BLOCK
    per_super = block * assigner._SUPER
    covers = [
        *(
            (b * block, (b + 1) * block, cs, ce)
            for b, (cs, ce) in enumerate(zip(index.cover_start, index.cover_end))
        ),
        *(
            (k * per_super, (k + 1) * per_super, cs, ce)
            for k, (cs, ce) in enumerate(zip(index.super_start, index.super_end))
        ),
    ]
    for first, stop, cs, ce in covers:
        assert cs == sorted(set(cs)) and all(x < y for x, y in itertools.pairwise(ce))
        for p in range(first, min(len(index.order), stop)):
            for s, e in zip(index.starts[p], index.ends[p]):
                i = bisect.bisect_right(cs, s) - 1
                assert i >= 0 and ce[i] >= e


@pytest.mark.parametrize("seed", range(60))
def test_candidates_equal_a_scan(seed: int) -> None:
    _candidates_equal_a_scan(seed)


@pytest.mark.parametrize("seed", range(30))
def test_candidates_equal_a_scan_over_many_super_blocks(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of 3 and super-blocks of 2 blocks: tens of super-blocks, some passed over, some
    rebuilt (the real sizes need over a thousand allocations for a second super-block)."""
    monkeypatch.setattr(assigner, "_BLOCK", 3)
    monkeypatch.setattr(assigner, "_SUPER", 2)
    _candidates_equal_a_scan(seed)


def _candidates_equal_a_scan(seed: int) -> None:
    rnd = random.Random(seed)
    horizon = rnd.choice([5, 20, 100])
    index = _ReuseIndex()
    allocations: list[Allocation] = []
    for _ in range(rnd.choice([50, 300, 900])):
        r = rnd.random()
        if r < 0.1 or not allocations:
            a = Allocation(len(allocations), 1, 0, "output")
            allocations.append(a)
            for _ in range(rnd.randrange(3)):
                s = rnd.randrange(horizon)
                bisect.insort(a.ranges, (s, s + rnd.randrange(5), 0))
            index.register(a)
        elif r < 0.65:
            a = rnd.choice(allocations)
            s = rnd.randrange(horizon)
            e = s + rnd.randrange(-1 if rnd.random() < 0.03 else 0, 6)
            bisect.insort(a.ranges, (s, e, 0))
            index.add_range(a, s, e)
        else:
            s = rnd.randrange(-1, horizon)
            e = s + rnd.randrange(-1, 8)
            want = _scan(index, s, e)
            assert list(index.candidates(s, e)) == want
            taken = next(iter(index.candidates(s, e)), None)  # consumed in part
            assert taken == (want[0] if want else None)
    _covers(index)
