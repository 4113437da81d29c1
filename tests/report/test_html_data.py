"""The HTML report's data (what the page embeds) and page text, without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_layout.layout.memory_space import space_label
from hlo_layout.layout.size import footprint
from hlo_layout.layout.tiling import tile_grid
from hlo_layout.memory.attribution import ARGUMENTS
from hlo_layout.memory.footprint import memory_report
from hlo_layout.memory.peak import legend
from hlo_layout.reader import load
from hlo_layout.report.html import (
    bound_memory,
    build_report,
    embed_json,
    memory_document,
    module_overview,
    render_html,
    report_data,
    summarize_inspect,
)
from hlo_layout.report.html.data import TIMELINE_POINTS
from hlo_layout.report.html.grids import pattern_picture, stand_in
from hlo_layout.report.html.page import content_security_policy
from hlo_layout.report.model import inspect_json
from hlo_layout.syntax import parse_file, parse_shape
from tests.support import CORPUS, SAMPLES

TPU = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
GPU = CORPUS / "jax-gpu-h100" / "module_51652.jit_step.sm_9.0a_gpu_after_optimizations.txt"
CPU = CORPUS / "jax-cpu" / "module_0052.jit_step.cpu_after_optimizations.txt"
DUMPS = [
    TPU,
    GPU,
    CPU,
    CORPUS / "libtpu-v5e/elementwise_odd_shapes/elementwise_odd_shapes.after_optimizations.txt",
]


def _entries(dump: Path):
    return list(load(dump).dumps)


def _measured(dump: Path):
    return [
        (d.file, memory_report(d.module, assignment=d.assignment, file=d.file, backend=d.backend))
        for d in _entries(dump)
    ]


def _embedded(page: str) -> dict:
    m = re.search(
        r'<script type="application/json" id="hlo-layout-data">(.*?)</script>', page, re.S
    )
    assert m is not None
    return json.loads(m.group(1))


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_overview_equals_the_summarized_inspect_document(dump: Path) -> None:
    # One source of truth: the overview built from the module equals the full `inspect --format
    # json` document summarized, on every key both have.
    (d,) = _entries(dump)
    file, module, assignment = d.file, d.module, d.assignment
    report = memory_report(module, assignment=assignment, backend=d.backend)
    full = inspect_json(
        [(file, module)], assignments={0: assignment} if assignment else {}, reports={0: report}
    )
    summary = summarize_inspect(full)["modules"][0]
    overview = module_overview(
        module,
        file,
        memory_report(module, assignment=assignment, top=200, backend=d.backend),
        top=200,
    )
    assert "computations" not in overview and "computations" not in summary
    shared = set(summary) & set(overview)
    assert shared >= {
        "entry_parameters",
        "totals",
        "instructions",
        "opcodes",
        "fusions_by_kind",
        "computations_by_kind",
        "attributes",
        "entry_outputs",
    }
    for key in shared:
        assert summary[key] == overview[key], key
    assert overview["instructions"] == module.instruction_count
    assert sum(n for _, n in overview["opcodes"]) == module.instruction_count


def test_padding_groups_and_largest_buffers_follow_the_memory_report() -> None:
    module = parse_file(DUMPS[3])
    report = memory_report(module, top=5)
    overview = module_overview(module, "x", report, top=5)
    assert [b["name"] for b in overview["largest_buffers"]] == [r.name for r in report.buffers]
    groups = overview["padding_groups"]
    assert [g["pattern"] for g in groups] == [g.pattern for g in report.padding]
    for g, ours in zip(groups, report.padding):
        assert g["padding_bytes"] == ours.padding_bytes
        assert sum(r["padding_bytes"] for r in g["rows"]) == ours.padding_bytes
        assert g["picture"]["of"] == g["rows"][0]["shape"]


def test_grid_picture_is_the_layout_engines_grid() -> None:
    # The tiled-layout document's example is small enough to draw whole.
    p = pattern_picture("f32[3,5]{1,0:T(2,2)}")
    grid = tile_grid(parse_shape("f32[3,5]{1,0:T(2,2)}"))
    assert p is not None and p["shape"] == p["of"]
    assert p["offsets"] == [c.offset for row in grid.cells for c in row]
    assert p["offsets"][2 * p["columns"] : 3 * p["columns"]] == [12, 13, 16, 17, 20, 21]


def _padded(size: int, tile: int) -> int:
    return -(-size // tile) * tile


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 700),
    cols=st.integers(1, 3000),
    tile=st.sampled_from([(8, 128), (4, 128), (2, 2), (16, 128), (1, 128)]),
    dtype=st.sampled_from(["f32", "bf16", "s8"]),
    transposed=st.booleans(),
)
def test_stand_in_pads_its_last_tile_like_the_shape(rows, cols, tile, dtype, transposed) -> None:
    # Law: the stand-in keeps each of the two most-minor dims' padding (what the tile adds to the
    # last tile) while holding at most one whole tile plus the remainder.
    m2m = "0,1" if transposed else "1,0"
    dims = (cols, rows) if transposed else (rows, cols)
    shape = parse_shape(f"{dtype}[{dims[0]},{dims[1]}]{{{m2m}:T({tile[0]},{tile[1]})}}")
    small = stand_in(shape)
    assert small.layout is not None and small.layout.tiles == shape.layout.tiles
    (r, c) = small.dims
    assert _padded(r, tile[0]) - r == _padded(rows, tile[0]) - rows
    assert _padded(c, tile[1]) - c == _padded(cols, tile[1]) - cols
    assert r <= 2 * tile[0] and c <= 2 * tile[1]
    assert footprint(small).physical_bytes <= footprint(shape).physical_bytes


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda kids: (
            st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_embedded_json_cannot_end_its_script_element(value) -> None:
    text = embed_json({"v": value})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"v": value}


def test_page_embeds_its_data_once_and_loads_nothing() -> None:
    data = report_data(
        summarize_inspect(inspect_json([(str(TPU), parse_file(TPU))])),
        None,
        notes=["a </script><script>alert(1)</script> note"],
    )
    page = render_html(data)
    assert page.count('id="hlo-layout-data"') == 1
    assert _embedded(page) == data
    csp = content_security_policy()
    assert f'content="{csp}"' in page and csp.startswith("default-src 'none';")
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    # No URL the browser could load: no src/href/url()/@import to anything, no fetch API.
    assert not re.search(r"""(src|href)\s*=\s*["']?[a-z]+:""", page, re.I)
    assert not re.search(
        r"url\(|@import|fetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon", page
    )
    assert "</script><script>alert" not in page
    assert page.count("</script>") == 2 and page.count("</style>") == 1
    fragment = render_html(data, fragment=True)
    assert "<html" not in fragment and _embedded(fragment) == data


def test_memory_document_follows_the_contract(monkeypatch) -> None:
    doc, notes = memory_document(_measured(CPU))
    assert notes == [] and doc is not None
    (m,) = doc["modules"]
    assert m["file"] == str(CPU)
    for key in (
        "module",
        "backend",
        "scheduled",
        "notes",
        "peak_bytes",
        "static_bytes",
        "spaces",
        "values",
        "live_at_peak",
        "timeline",
        "by_op_name",
        "compiler",
    ):
        assert key in m, key


@pytest.mark.parametrize("dump", [TPU, DUMPS[3]], ids=["tpu", "tpu-padding"])
def test_the_page_gets_the_lists_of_every_spaces_peak_step(dump: Path) -> None:
    # The module's own lists are `memory --format json`'s (the space with the most live);
    # `space_peaks` adds the same lists at each other space's peak step, from the analysis.
    ((file, report),) = _measured(dump)
    ma = report.peak
    assert ma is not None
    doc, _ = memory_document([(file, report)])
    (m,) = doc["modules"]
    assert m["legend"] == legend(True)
    assert m["arguments_group"] == ARGUMENTS
    assert [s["label"] for s in m["spaces"]] == [
        space_label(s.memory_space, True) for s in ma.spaces
    ]
    assert ma.peak_space is not None
    assert m["live_at_peak_space"] == ma.peak_space.memory_space
    whole = ma.to_dict()
    for key in ("live_at_peak", "live_at_peak_total", "by_source", "by_op_name"):
        assert m[key] == whole[key] == ma.peak_lists()[key]
    others = [s for s in ma.spaces if s.memory_space != m["live_at_peak_space"] and s.live_bytes]
    assert others, "the sample has buffers live at the peak of more than one space"
    assert [p["memory_space"] for p in m["space_peaks"]] == [s.memory_space for s in others]
    for p, s in zip(m["space_peaks"], others):
        assert p == {"memory_space": s.memory_space, **ma.peak_lists(s.memory_space)}
        assert {b["memory_space"] for b in p["live_at_peak"]} == {s.memory_space}
        assert sum(b["bytes"] for b in p["live_at_peak"]) == s.live_bytes <= s.peak_bytes
        assert sum(g["bytes"] for g in p["by_source"]) == s.live_bytes
    bounded = bound_memory(doc, top=2)["modules"][0]
    for p in bounded["space_peaks"]:
        full = next(q for q in m["space_peaks"] if q["memory_space"] == p["memory_space"])
        for key in ("live_at_peak", "by_source", "by_op_name"):
            assert p[key] == full[key][:2]
            if len(full[key]) > 2:
                assert p[f"{key}_total"] == len(full[key])


def test_bounding_keeps_the_peak_and_says_what_it_cut() -> None:
    live = [i % 97 for i in range(9001)]
    live[4321] = 10**9
    doc = {
        "modules": [
            {
                "values": [{"name": f"v{i}"} for i in range(5000)],
                "live_at_peak": [{"name": f"v{i}", "bytes": 5000 - i} for i in range(5000)],
                "by_op_name": [{"op_name": str(i), "bytes": 1, "values": 1} for i in range(300)],
                "timeline": [{"memory_space": 0, "length": 9001, "bucket": 1, "live_bytes": live}],
                "compiler": {
                    "file": "f",
                    "temp_allocation_bytes": {"0": 1},
                    "allocations": [
                        {"index": i, "size": i, "values": [{"name": "x"}] * 20} for i in range(400)
                    ],
                },
            }
        ]
    }
    (m,) = bound_memory(doc, top=50)["modules"]
    assert "values" not in m and m["values_total"] == 5000
    assert len(m["live_at_peak"]) == 50 and m["live_at_peak_total"] == 5000
    assert m["live_at_peak"][0]["name"] == "v0"
    assert len(m["by_op_name"]) == 50 and m["by_op_name_total"] == 300
    (t,) = m["timeline"]
    assert len(t["live_bytes"]) <= TIMELINE_POINTS and max(t["live_bytes"]) == 10**9
    assert t["bucket"] * len(t["live_bytes"]) >= 9001
    assert t["live_bytes"][4321 // t["bucket"]] == 10**9
    allocations = m["compiler"]["allocations"]
    assert len(allocations) == 50 and allocations[0]["size"] == 399
    assert len(allocations[0]["values"]) == 8 and allocations[0]["values_total"] == 20


def test_report_of_a_big_gpu_dump_stays_small(tmp_path: Path, monkeypatch) -> None:
    # The bound: under 2 MB for a 17.8 MB GPU dump (here: the GPU corpus module's
    # computations repeated under fresh names to 17.8 MB).
    text = GPU.read_text()
    head, _, body = text.partition("\n")
    chunks, size, copy = [head], len(head), 0
    while size < 17_800_000:
        renamed = (body.replace("ENTRY ", "") if copy else body).replace("%", f"%c{copy}_")
        chunks.append(renamed)
        size += len(renamed)
        copy += 1
    big = tmp_path / "big.txt"
    big.write_text("\n".join(chunks))
    page = render_html(build_report(load(big).dumps))
    assert len(page.encode()) < 2_000_000


def test_a_module_without_a_peak_becomes_a_note() -> None:
    """A report with no peak analysis (one computation's) has no memory object: a note says so."""
    (d,) = _entries(TPU)
    report = memory_report(d.module, computation=d.module.computations[0].name)
    assert report.peak is None
    doc, notes = memory_document([(d.file, report)])
    assert doc["modules"] == []
    assert notes == [f"{d.file}: no peak-memory analysis (the module has no entry computation)"]
