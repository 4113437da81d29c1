"""`hlo-layout layout`: offsets, grids, JSON lists in input order, stdin batches, exit codes."""

from __future__ import annotations

import json

import pytest

from hlo_layout.reader.sidefiles import read_buffer_assignment
from hlo_layout.syntax import ArrayShape
from tests.support import CORPUS, Cli, CliProcess


def test_document_example_offset_17(cli: Cli) -> None:
    result = cli("layout", "f32[3,5]{1,0:T(2,2)}", "--at", "2,3", "-f", "json")
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["shapes"]
    assert item["offset"] == 17
    assert item["byte_offset"] == 17 * 4
    assert (item["logical_bytes"], item["physical_bytes"], item["padding_bytes"]) == (60, 96, 36)
    assert item["memory_space"] == 0


def test_text_view_and_grid(cli: Cli) -> None:
    result = cli("layout", "f32[4,8]{1,0:T(2,4)(2,1)}", "--grid")
    assert result.exit_code == 0, result.output
    assert "0   2   4   6│  8  10  12  14" in result.stdout  # Figure 2, first row


def test_json_list_in_input_order_with_stdin(cli_process: CliProcess) -> None:
    shapes = ["bf16[3,5]{1,0:T(8,128)(2,1)}", "token[]", "(f32[], s32[4]{0:S(1)})"]
    result = cli_process(
        "layout", "s32[8388608,8,4]{2,1,0:T(8,128)}", "-", "-f", "json", input="\n".join(shapes)
    )
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["shapes"]
    assert [i["shape"] for i in items] == [
        "s32[8388608,8,4]{2,1,0:T(8,128)}",
        "bf16[3,5]{1,0:T(8,128)(2,1)}",
        "token[]",
        "(f32[], s32[4]{0:S(1)})",
    ]
    assert (items[0]["logical_bytes"], items[0]["physical_bytes"]) == (2**30, 32 * 2**30)
    assert items[2]["physical_bytes"] == 0
    assert items[3]["memory_space"] is None and items[3]["pointer_table_bytes"] == 16
    for item in items:
        assert set(item) >= {"shape", "logical_bytes", "physical_bytes", "padding_bytes"}
    assert result.stderr == ""


def test_thousands_of_compiler_shapes_from_stdin(cli_process: CliProcess) -> None:
    # Every array value of the v5e buffer assignments, one call; sizes equal the compiler's.
    values = [
        v
        for path in sorted((CORPUS / "libtpu-v5e").rglob("*buffer-assignment.txt"))
        for v in read_buffer_assignment(path).values
        if isinstance(v.shape, ArrayShape)
    ]
    repeat = -(-2000 // len(values))
    values = (values * repeat)[:2000]
    result = cli_process("layout", "-", "-f", "json", input="\n".join(v.shape_text for v in values))
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["shapes"]
    assert [i["physical_bytes"] for i in items] == [v.size for v in values]


def test_a_bad_shape_is_reported_and_the_rest_still_explained(cli_process: CliProcess) -> None:
    result = cli_process("layout", "f32[3", "f32[2]{0}", "f99[2]", "-f", "json")
    assert result.returncode == 3
    bad, good, unknown = json.loads(result.stdout)["shapes"]
    assert "error" in bad and "column 6" in bad["error"]
    assert good["physical_bytes"] == 8
    assert "f99" in unknown["error"]
    assert "2 of 3 shapes" in result.stderr and "Traceback" not in result.stderr


def test_at_out_of_bounds_and_on_a_tuple(cli_process: CliProcess) -> None:
    result = cli_process("layout", "f32[3,5]{1,0}", "(f32[2], f32[2])", "--at", "3,0", "-f", "json")
    assert result.returncode == 3
    first, second = json.loads(result.stdout)["shapes"]
    assert "out of bounds" in first["error"] and "tuple" in second["error"]


def test_usage_errors_exit_2(cli_process: CliProcess) -> None:
    assert cli_process("layout", "f32[2]", "--at", "x,1").returncode == 2
    assert cli_process("layout").returncode == 2


def test_grid_refuses_large_and_high_rank_shapes(cli_process: CliProcess) -> None:
    result = cli_process("layout", "f32[2,2,2]", "--grid")
    assert result.returncode == 3 and "rank 3" in result.stdout


def test_cute_and_axe_flags_match_the_interop_functions(cli: Cli) -> None:
    from hlo_layout.interop import axe_json, cute_string
    from hlo_layout.syntax import parse_shape

    shapes = [
        "f32[8,12]{1,0:T(4,4)}",
        "bf16[16,256]{1,0:T(8,128)(2,1)}",
        "(f32[3]{0}, s8[4,4]{0,1})",
    ]
    result = cli("layout", *shapes, "--cute", "--axe", "-f", "json")
    assert result.exit_code == 0, result.output
    for text, item in zip(shapes, json.loads(result.stdout)["shapes"]):
        leaves = parse_shape(text).leaves()
        arrays = item.get("arrays", [item])
        for (_, leaf), got in zip(leaves, arrays):
            assert got["cute"] == cute_string(leaf)
            assert got["axe"] == axe_json(leaf)


WIDE = "bf16[7,129]{1,0:T(8,128)(2,1)}"  # 8×256 cells, 1,500 characters a row in full


@pytest.mark.parametrize("columns", [None, "40", "80", "120"])
def test_a_wide_grid_fits_the_width_with_a_marker(cli: Cli, columns: str | None) -> None:
    """On a terminal the grid fits it, piped 80 columns: the middle columns are left out, a `…`
    column in their place, and the footnote says which (issue 28)."""
    env = {"COLUMNS": columns} if columns else {}
    result = cli("layout", WIDE, "--grid", env=env)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.strip().startswith(("0 ", "1 "))]
    assert len(rows) == 2
    for row in rows:
        assert len(row) <= int(columns or 80)
        assert "…" in row
    assert rows[0].split()[0] == "0" and rows[0].split()[-1].endswith("·1278")  # both ends kept
    assert "left out (…) to fit the width (--full shows them)" in " ".join(result.stdout.split())


def test_full_draws_every_column(cli: Cli) -> None:
    result = cli("layout", WIDE, "--grid", "--full", env={"COLUMNS": "80"})
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("0 "))
    assert "…" not in row and len(row.split()) == 256
