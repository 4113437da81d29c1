"""Laws of module pairing: a side paired with itself pairs every module with itself; no module is
used twice; every module is paired or reported; a repeated name never pairs by name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hlo_layout.check.pairing import pair

# A module: (relative path, index in file, name).
Item = tuple[str, int, str]
items = st.lists(
    st.tuples(st.sampled_from(["a.txt", "b.txt", "c/d.txt", "e.txt"]), st.integers(0, 2),
              st.sampled_from(["jit_f", "jit_step", "jit_g", "main"])),
    max_size=8,
    unique_by=lambda x: (x[0], x[1]),
)  # fmt: skip


def _pair(old: list[Item], new: list[Item]):  # type: ignore[no-untyped-def]
    return pair(old, new, key=lambda x: (x[0], x[1]), name=lambda x: x[2])


@given(items)
def test_a_side_with_itself_pairs_each_with_itself(side: list[Item]) -> None:
    result = _pair(side, list(side))
    assert all(a == b for a, b in result.pairs)
    assert len(result.pairs) == len(side) and not result.only_old and not result.only_new


@given(items, items)
def test_every_module_is_paired_once_or_reported(old: list[Item], new: list[Item]) -> None:
    result = _pair(old, new)
    olds = [a for a, _ in result.pairs] + list(result.only_old)
    news = [b for _, b in result.pairs] + list(result.only_new)
    assert sorted(olds) == sorted(old) and sorted(news) == sorted(new)
    by_place = {(a[0], a[1]) for a, b in result.pairs if (a[0], a[1]) == (b[0], b[1])}
    rest_old = [x[2] for x in old if (x[0], x[1]) not in by_place]
    rest_new = [y[2] for y in new if (y[0], y[1]) not in by_place]
    for a, b in result.pairs:
        if (a[0], a[1]) in by_place or len(old) == len(new) == 1:
            continue
        # Paired by name: the name is unique among the modules not paired by path.
        assert a[2] == b[2] and rest_old.count(a[2]) == 1 and rest_new.count(b[2]) == 1
    if not (len(old) == len(new) == 1):
        assert not result.warnings


def test_renumbered_folder_reports_repeated_names() -> None:
    old = [("m1.jit_f.txt", 0, "jit_f"), ("m2.jit_f.txt", 0, "jit_f"), ("m3.g.txt", 0, "jit_g")]
    new = [("n1.jit_f.txt", 0, "jit_f"), ("n2.jit_f.txt", 0, "jit_f"), ("n3.g.txt", 0, "jit_g")]
    result = _pair(old, new)
    assert result.pairs == ((old[2], new[2]),)
    assert result.ambiguous == ("jit_f",)
    assert len(result.only_old) == len(result.only_new) == 2


def test_lone_modules_with_different_names_pair_with_a_warning() -> None:
    result = _pair([("a.txt", 0, "jit_f")], [("b.txt", 0, "jit_transformer")])
    assert len(result.pairs) == 1 and "jit_f → jit_transformer" in result.warnings[0]
