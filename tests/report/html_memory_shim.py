"""DEVELOPMENT SHIM, tests only: a stand-in for `hlo_layout.memory.analyze_memory` (the memory
helper's package, not on this branch) that returns a dict shaped like the memory contract
(`memory --format json`, one module) from the existing `layout/module_memory.py` figures.

Its numbers are NOT XLA's peak: liveness is a naive pass over the ENTRY computation in text
order (a value lives from its instruction to its last use; parameters and the root's values to
the end). It exists only so the HTML report can be built and checked in a browser before the
real package lands. Delete this file at merge and make `install_shim` use the real package.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from hlo_layout.layout.buffer_assignment import BufferAssignment
from hlo_layout.layout.module_memory import defined_leaves
from hlo_layout.layout.padding import explain_padding  # noqa: F401  (kept: same engine)
from hlo_layout.syntax.printer import print_shape
from hlo_layout.syntax.tree import Module


class ShimAnalysis:
    def __init__(self, d: dict[str, Any]) -> None:
        self._d = d

    def to_dict(self) -> dict[str, Any]:
        return self._d


def _op_name(instruction: Any) -> tuple[str | None, str | None]:
    a = instruction.attr("metadata")
    if a is None:
        return None, None
    raw = a.raw
    op = src = None
    if 'op_name="' in raw:
        op = raw.split('op_name="', 1)[1].split('"', 1)[0]
    if 'source_file="' in raw:
        src = raw.split('source_file="', 1)[1].split('"', 1)[0]
        if "source_line=" in raw:
            src += ":" + raw.split("source_line=", 1)[1].split()[0].rstrip("}, ")
    return op, src


def shim_analyze_memory(
    module: Module,
    backend: str | None = None,
    buffer_assignment: BufferAssignment | None = None,
    *,
    file: str | None = None,
) -> ShimAnalysis:
    entry = module.entry
    assert entry is not None
    seq = list(entry.instructions)
    position = {i.name: n for n, i in enumerate(seq)}
    last_use = {i.name: position[i.name] for i in seq}
    for n, i in enumerate(seq):
        for o in i.operands:
            ref = o.ref.split("#")[0]
            if ref in last_use:
                last_use[ref] = max(last_use[ref], n)
    length = len(seq)
    values: list[dict[str, Any]] = []
    tiled = False
    for n, i in enumerate(seq):
        op, src = _op_name(i)
        for a in defined_leaves(i, is_entry=True):
            if a.physical_bytes is None:
                continue
            tiled = tiled or bool(a.shape.layout and a.shape.layout.tiles)
            kind = "temp"
            end = last_use[i.name]
            if i.opcode == "parameter":
                kind, end = "parameter", length - 1
            elif i.opcode == "constant":
                kind = "constant"
            elif i.is_root:
                kind, end = "output", length - 1
            values.append(
                {
                    "name": i.name,
                    "index": list(a.index),
                    "start": n,
                    "end": end,
                    "bytes": a.physical_bytes,
                    "logical_bytes": a.logical_bytes,
                    "memory_space": a.memory_space,
                    "allocation": kind,
                    "shape": print_shape(a.shape),
                    "op_name": op,
                    "source": src,
                }
            )
    spaces = sorted({v["memory_space"] for v in values}) or [0]
    timeline, space_rows, live_rows = [], [], []
    for sp in spaces:
        delta = [0] * (max(length, 1) + 1)
        for v in values:
            if v["memory_space"] == sp:
                delta[v["start"]] += v["bytes"]
                delta[v["end"] + 1] -= v["bytes"]
        live, run = [], 0
        for d in delta[:-1]:
            run += d
            live.append(run)
        peak_step = max(range(len(live)), key=lambda t: (live[t], -t))
        static = sum(
            v["bytes"]
            for v in values
            if v["memory_space"] == sp and v["allocation"] in ("parameter", "output", "constant")
        )
        space_rows.append(
            {
                "memory_space": sp,
                "name": {0: "device", 1: "vmem", 5: "host"}.get(sp, f"space {sp}"),
                "static_bytes": static,
                "temp_allocation_bytes": live[peak_step] - static,
                "peak_live_bytes": live[peak_step],
                "peak_step": peak_step,
                "peak_instruction": seq[peak_step].name if seq else None,
                "estimate": True,
            }
        )
        timeline.append({"memory_space": sp, "length": length, "bucket": 1, "live_bytes": live})
        for v in values:
            if v["memory_space"] == sp and v["start"] <= peak_step <= v["end"]:
                live_rows.append({**v, "padding_bytes": v["bytes"] - (v["logical_bytes"] or 0)})
    live_rows.sort(key=lambda v: (-v["bytes"], v["name"]))
    by_op: dict[str, list[int]] = {}
    for v in live_rows:
        e = by_op.setdefault(v["op_name"] or v["name"], [0, 0])
        e[0] += v["bytes"]
        e[1] += 1
    static_total = sum(s["static_bytes"] for s in space_rows)
    compiler = None
    if buffer_assignment is not None:
        temp: dict[str, int] = {}
        for a in buffer_assignment.allocations:
            if a.kind == "temp":
                temp[str(a.color)] = temp.get(str(a.color), 0) + a.size
        compiler = {
            "file": buffer_assignment.name,
            "temp_allocation_bytes": temp,
            "allocations": [],
        }
    return ShimAnalysis(
        {
            "module": module.name,
            "file": file,
            "backend": backend or ("tpu" if tiled else "cpu"),
            "scheduled": any(a.key == "is_scheduled" for a in module.attributes),
            "notes": ["DEVELOPMENT SHIM: naive entry-only liveness, not XLA's peak"],
            "peak_bytes": static_total
            + max(s["peak_live_bytes"] - s["static_bytes"] for s in space_rows),
            "static_bytes": static_total,
            "spaces": space_rows,
            "values": [
                {
                    k: v[k]
                    for k in (
                        "name",
                        "index",
                        "start",
                        "end",
                        "bytes",
                        "memory_space",
                        "allocation",
                    )
                }
                for v in values
            ],
            "live_at_peak": live_rows,
            "timeline": timeline,
            "by_op_name": [
                {"op_name": k, "bytes": b, "values": n}
                for k, (b, n) in sorted(by_op.items(), key=lambda kv: (-kv[1][0], kv[0]))
            ],
            "compiler": compiler,
        }
    )


def install_shim(monkeypatch: Any) -> None:
    """Make `import hlo_layout.memory` find the shim (only when the real package is absent)."""
    try:
        import hlo_layout.memory  # noqa: F401
    except ModuleNotFoundError:
        fake = types.ModuleType("hlo_layout.memory")
        fake.analyze_memory = shim_analyze_memory  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "hlo_layout.memory", fake)
