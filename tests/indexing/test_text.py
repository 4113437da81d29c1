"""The text form: XLA's printer, the parser (current and legacy forms), errors and the JSON view.

Map texts come from the XLA conformance data (cases.jsonl, simplifier_cases.jsonl) or are quoted
from indexing.md §1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hlo_layout.errors import HloLayoutError, HloSyntaxError
from hlo_layout.indexing import (
    IndexingMap,
    IndexingParseError,
    Interval,
    compose,
    format_indexing_map,
    parse_indexing_map,
    same_text,
    to_json,
)
from hlo_layout.indexing.text import strip_whitespace

from .xla_data import analysis_cases, printed_maps, simplifier_cases

# -- round trips over everything XLA printed ----------------------------------------------------


@pytest.mark.parametrize("text", printed_maps())
def test_xla_printed_map_round_trips(text: str) -> None:
    """print(parse(s)) is s up to whitespace, and printing is a fixed point of parse."""
    m = parse_indexing_map(text)
    printed = format_indexing_map(m)
    assert strip_whitespace(printed) == strip_whitespace(text)
    assert "\n" not in printed  # XLA prints one line
    assert format_indexing_map(parse_indexing_map(printed)) == printed
    multiline = format_indexing_map(m, multiline=True)
    assert same_text(multiline, printed)
    assert parse_indexing_map(multiline) == m


def _simplifier_texts() -> list[tuple[str, str, bool]]:
    """(id, text, printed by XLA) for every map text of the simplifier suite."""
    texts = []
    for case in simplifier_cases():
        for key in ("input", "input2", "expected"):
            text = case.get(key)
            if not isinstance(text, str):
                continue
            # Inputs are hand-written. An "expected" text is XLA's output, except where the test
            # only asserts that Simplify() returned false and the text repeats the input.
            by_xla = key == "expected" and not (
                case.get("returns") is False and same_text(text, case["input"])
            )
            texts.append((f"{case['name']}.{key}", text, by_xla))
    return texts


@pytest.mark.parametrize(("text", "by_xla"), [t[1:] for t in _simplifier_texts()],
                         ids=[t[0] for t in _simplifier_texts()])  # fmt: skip
def test_simplifier_texts_round_trip(text: str, by_xla: bool) -> None:
    printed = format_indexing_map(parse_indexing_map(text))
    assert format_indexing_map(parse_indexing_map(printed)) == printed
    if by_xla:
        assert same_text(printed, text)


def _is_plain_multiline(text: str) -> bool:
    """The layout most of XLA's tests use: `<map>,` / `domain:` / one item per line, no indent."""
    lines = text.split("\n")
    return (
        len(lines) >= 3
        and lines[0].endswith(",")
        and lines[1] == "domain:"
        and all(line == line.strip() for line in lines)
    )


def _plain_multiline_texts() -> list[str]:
    return sorted(
        {
            text
            for case in analysis_cases()
            for expected in case["expected"]
            for text in expected["maps"]
            if _is_plain_multiline(text)
        }
    )


@pytest.mark.parametrize("text", _plain_multiline_texts())
def test_multiline_form_matches_xla_tests_exactly(text: str) -> None:
    assert format_indexing_map(parse_indexing_map(text), multiline=True) == text


def test_plain_multiline_texts_exist() -> None:
    assert len(_plain_multiline_texts()) > 100


# -- special maps and the parser's tolerance (indexing.md §1.1, §1.6, §1.7) ---------------------

CURRENT = "(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]"


def test_special_maps() -> None:
    assert format_indexing_map(IndexingMap.undefined()) == "UNDEFINED"
    assert parse_indexing_map("UNDEFINED").is_undefined
    empty = IndexingMap.known_empty(num_dims=2, num_range_vars=1, num_results=3)
    assert format_indexing_map(empty) == "KNOWN EMPTY"
    assert empty.num_results == 3 and empty.num_dims == 2  # counts survive (indexing.md §1.1)
    assert parse_indexing_map("KNOWN EMPTY").is_known_empty
    assert format_indexing_map(parse_indexing_map("() -> ()")) == "() -> ()"


def test_known_empty_from_construction() -> None:
    # simplifier_cases KnownEmpty_*: an empty interval or a violated constant constraint.
    for text in (
        "(d0) -> (d0), domain: d0 in [10, 0]",
        "(d0) -> (d0), domain: d0 in [0, 49], 0 in [10, 15]",
    ):
        m = parse_indexing_map(text)
        assert m.is_known_empty and m.num_dims == 1 and m.num_results == 1
        assert format_indexing_map(m) == "KNOWN EMPTY"


def test_parser_ignores_whitespace_and_accepts_xla_test_spellings() -> None:
    # indexing.md §1.1's example, once as printed and once with the odd spacing of XLA's
    # ComposeIndexingMapsComputationPartitionerTestCrash (`->` unspaced, `domain :`, `in[`).
    one_line = parse_indexing_map(CURRENT)
    odd = parse_indexing_map(
        "(d0,d1)[s0]->(d0,d1+s0)\n  , domain :d0 in[0, 1023],\n\td1 in[0,2], s0 in [0,511]"
    )
    assert one_line == odd
    # `[]` is accepted (XLA's RangeEvaluatorTest writes `(d0, d1, d2, d3)[] -> (0)`).
    assert parse_indexing_map("(d0)[] -> (0), domain: d0 in [0, 9]").num_range_vars == 0


@pytest.mark.parametrize("spelling", ["/", "floordiv", "floorDiv"])
def test_floor_division_spellings(spelling: str) -> None:
    m = parse_indexing_map(f"(d0) -> (d0 {spelling} 8, d0 mod 8), domain: d0 in [0, 31]")
    assert format_indexing_map(m) == "(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]"
    assert format_indexing_map(m, legacy=True) == (
        "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]"
    )


@pytest.mark.parametrize("spelling", ["ceildiv", "ceilDiv"])
def test_ceil_division_spellings(spelling: str) -> None:
    m = parse_indexing_map(f"(d0) -> (d0 {spelling} 8), domain: d0 in [0, 31]")
    assert format_indexing_map(m) == "(d0) -> (d0 ceildiv 8), domain: d0 in [0, 31]"


def test_legacy_multiline_form_without_commas() -> None:
    # indexing.md §1.7: until 2024-09 `domain:` and every item stood on a line of their own.
    legacy = "(d0, d1)[s0] -> (d0, d1 + s0)\ndomain:\nd0 in [0, 1023]\nd1 in [0, 2]\ns0 in [0, 511]"
    assert parse_indexing_map(legacy) == parse_indexing_map(CURRENT)


def test_is_simplified_item_is_skipped() -> None:
    # indexing.md §1.6: a trailing `is_simplified: true|false` item existed in September 2024.
    base = "(d0) -> (d0 mod 8), domain: d0 in [0, 31], d0 / 8 in [0, 2]"
    for flag in ("true", "false"):
        assert parse_indexing_map(f"{base}, is_simplified: {flag}") == parse_indexing_map(base)


def test_custom_names_are_kept_and_default_names_are_not_stored() -> None:
    # simplifier_cases RTVar: a named range var and two rt vars.
    text = (
        "(d0, d1)[range]{rt0, rt1} -> (d1, d0, range + rt0, rt1), domain: d0 in [0, 99], "
        "d1 in [0, 43], range in [-99, 99], rt0 in [0, 2], rt1 in [0, 7]"
    )
    m = parse_indexing_map(text)
    assert m.range_vars[0].name == "range"
    assert m.range_vars[0].bounds == Interval(-99, 99)
    assert [v.name for v in (*m.dims, *m.rt_vars)] == ["", "", "", ""]
    assert format_indexing_map(m) == text


def test_constraints_print_sorted_as_strings() -> None:
    # cases.jsonl SliceOp.input_to_output: `(d1 - 3) mod 7` sorts before `d2 mod 2`.
    m = parse_indexing_map(
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) / 7, d2 / 2), domain: d0 in [5, 9], d1 in [3, 17], "
        "d2 in [0, 48], d2 mod 2 in [0, 0], (d1 - 3) mod 7 in [0, 0]"
    )
    text = format_indexing_map(m)
    assert text.index("(d1 - 3) mod 7 in [0, 0]") < text.index("d2 mod 2 in [0, 0]")


def test_maps_print_through_str() -> None:
    text = "(d0) -> (d0 + 42), domain: d0 in [0, 9]"
    assert str(parse_indexing_map(text)) == text


def test_same_text_is_xla_matcher() -> None:
    # indexing.md §1.1: XLA's test matcher drops all whitespace before comparing.
    assert same_text("domain:\nd0 in [0, 9]", "domain: d0 in [0, 9]")
    assert same_text("( d0 - 5 )", "(d0 - 5)")
    assert not same_text("(d0 - 5)", "(d0 + 5)")


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("(d0) -> (d3), domain: d0 in [0, 3]", "unknown variable 'd3'", 1, 10),
        ("(d0) -> (d0 +), domain: d0 in [0, 3]", "expected an expression", 1, 14),
        ("(d0) -> (d0),\ndomain:\nd1 in [0, 3]", "domain lists 'd1' where 'd0' was declared", 3, 1),
        ("(d0) -> (d0),\ndomain:\nd0 in [0, 3", "expected ']'", 3, 12),
        ("(d0, d0) -> (d0)", "duplicate variable name 'd0'", 1, 6),
        ("(d0) -> (d0)", "expected 'domain'", 1, 13),
        ("(d0) -> (d0 % 2), domain: d0 in [0, 1]", "unexpected character '%'", 1, 13),
        ("(d0)[s0] -> (d0), domain: d0 in [0, 3]", "expected the domain of 's0'", 1, 39),
        ("(d0) -> (d0), domain: d0 in [0, 3], d0 in [a, 3]", "expected an integer", 1, 44),
        ("(d0) -> (min(d0 d0)), domain: d0 in [0, 3]", "expected ','", 1, 17),
    ],
)
def test_parse_errors_have_positions(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(IndexingParseError) as info:
        parse_indexing_map(text)
    error = info.value
    assert message in error.message
    assert (error.line, error.column) == (line, column)
    assert isinstance(error, HloSyntaxError) and isinstance(error, HloLayoutError)
    assert isinstance(error, ValueError)
    rendered = str(error)
    assert rendered.startswith(f"<indexing map>:{line}:{column}: ")
    assert rendered.splitlines()[-1] == " " * (column - 1) + "^"


# -- JSON --------------------------------------------------------------------------------------


def test_to_json_structure() -> None:
    # indexing.md §1.1: an example with every part present.
    text = (
        "(d0, d1){rt0} -> (0, d1 + rt0 - 4096), domain: d0 in [0, 0], d1 in [0, 4095], "
        "rt0 in [0, 4096], d1 + rt0 in [4096, 8191]"
    )
    data = to_json(parse_indexing_map(text))
    assert data == {
        "state": "defined",
        "text": text,
        "dims": [{"name": "d0", "range": [0, 0]}, {"name": "d1", "range": [0, 4095]}],
        "range_vars": [],
        "rt_vars": [{"name": "rt0", "range": [0, 4096]}],
        "results": ["0", "d1 + rt0 - 4096"],
        "constraints": [{"expr": "d1 + rt0", "lo": 4096, "hi": 8191}],
    }
    assert json.loads(json.dumps(data)) == data


def test_to_json_special_states() -> None:
    assert to_json(IndexingMap.undefined())["state"] == "undefined"
    empty = to_json(parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 49], 0 in [10, 15]"))
    assert empty["state"] == "known_empty"
    assert empty["text"] == "KNOWN EMPTY"
    assert empty["dims"] == [{"name": "d0", "range": [0, -1]}]


@pytest.mark.parametrize("text", printed_maps())
def test_to_json_agrees_with_text(text: str) -> None:
    m = parse_indexing_map(text)
    data: dict[str, Any] = to_json(m)
    assert data["text"] == format_indexing_map(m)
    if m.is_known_empty or m.is_undefined:
        return
    items = [f"{v['name']} in [{v['range'][0]}, {v['range'][1]}]"
             for key in ("dims", "range_vars", "rt_vars") for v in data[key]]  # fmt: skip
    items += [f"{c['expr']} in [{c['lo']}, {c['hi']}]" for c in data["constraints"]]
    results = ", ".join(data["results"])
    if items:
        assert data["text"].endswith(f" -> ({results}), domain: " + ", ".join(items))


def test_composition_keeps_custom_names() -> None:
    # simplifier_cases Composition_OnlyRTVars: named rt vars survive composition.
    consumer = parse_indexing_map(
        "(d0, d1){cs_0, cs_1} -> (d0 + 2 * cs_0, d1 + 3 * cs_1), domain: d0 in [0, 24], "
        "d1 in [0, 15], cs_0 in [0, 25], cs_1 in [0, 16]"
    )
    producer = parse_indexing_map(
        "(d0, d1){ps_0, ps_1} -> (d0 + ps_0, d1 + 4 * ps_1), domain: d0 in [0, 24], "
        "d1 in [0, 15], ps_0 in [0, 2], ps_1 in [0, 1]"
    )
    names = [v["name"] for v in to_json(compose(consumer, producer))["rt_vars"]]
    assert names == ["ps_0", "ps_1", "cs_0", "cs_1"]
