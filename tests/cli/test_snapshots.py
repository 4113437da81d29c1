"""The CLI contract as files: arguments → exit code, stdout, stderr, for every command's common
and error paths. Review a changed snapshot like code.

Regenerate after an intended change with `UPDATE_SNAPSHOTS=1 pytest tests/cli/test_snapshots.py`
(each case is `tests/cli/snapshots/NAME.txt`). Runs from the repository root with relative
paths, 100 columns and no colour, so the files are the same on every machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import REPO, Cli

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"

CPU = "tests/data/corpus/jax-cpu"
STEP = f"{CPU}/module_0018.jit_step.cpu_after_optimizations.txt"
STEP_52 = f"{CPU}/module_0052.jit_step.cpu_after_optimizations.txt"
F_60 = f"{CPU}/module_0060.jit_f.cpu_after_optimizations.txt"
SPMD = "tests/data/corpus/jax-cpu-spmd/module_0018.jit_step.before_optimizations.txt"
V5E = "tests/data/corpus/libtpu-v5e/transformer/transformer.after_optimizations.txt"
BAD = "tests/data/configs"

#: name → (arguments, stdin file or None)
CASES: dict[str, tuple[list[str], str | None]] = {
    # help
    "help-root": (["--help"], None),
    "help-check": (["check", "--help"], None),
    "help-diff": (["diff", "--help"], None),
    "help-layout": (["layout", "--help"], None),
    "help-sharding": (["sharding", "--help"], None),
    "help-indexing": (["indexing", "--help"], None),
    # usage errors
    "usage-unknown-command": (["frobnicate"], None),
    "usage-missing-argument": (["check"], None),
    "usage-unknown-option": (["check", STEP, "--max-bytes", "1"], None),
    # check
    "check-pass": (["check", STEP, "--max-fusions", "100", "--max-peak-bytes", "1GiB"], None),
    "check-no-rules-ok": (["check", STEP, "--no-rules-ok"], None),
    "check-folder": (["check", CPU, "--max-fusions", "3", "--max-padding-bytes", "0"], None),
    "check-violations": (["check", V5E, "--max-argument-bytes", "1MiB", "--max-fusions", "10",
                          "--max-padding-percent", "5", "--forbid-space", "1"], None),
    "check-violations-json": (["check", V5E, "--max-argument-bytes", "1MiB", "-f", "json"], None),
    "check-no-match-glob": (["check", "nomatch/*.txt", "--no-rules-ok"], None),
    "check-no-such-path": (["check", "does/not/exist", "--max-fusions", "1"], None),
    "check-growth-without-baseline": (["check", STEP, "--max-peak-growth-percent", "0"], None),
    "check-baseline-itself": (["check", CPU, "--baseline", CPU, "--max-peak-growth-percent", "0"],
                              None),
    "check-baseline-grew": (["check", STEP_52, "--baseline", STEP, "--max-peak-growth-percent", "5",
                             "--max-peak-growth-bytes", "0=1MiB",
                             "--max-physical-growth-percent", "5", "--max-fusion-growth", "0"],
                            None),
    "check-not-a-size": (["check", STEP, "--max-buffer-bytes", "lots"], None),
    "check-huge-number": (["check", STEP, "--max-buffer-bytes", "9" * 5000], None),
    "check-bad-space": (["check", STEP, "--forbid-space", "moon"], None),
    "check-config-unknown-key": (["check", STEP, "--config", f"{BAD}/unknown-key.toml"], None),
    "check-config-given-twice": (["check", STEP, "--config", f"{BAD}/given-twice.toml"], None),
    "check-config-misplaced": (["check", STEP, "--config", f"{BAD}/misplaced-match.toml"], None),
    "check-config-missing": (["check", STEP, "--config", f"{BAD}/nope.toml"], None),
    "check-syntax-error": (["check", "-", "--no-rules-ok"], "tests/data/configs/broken.txt"),
    "check-stdin": (["check", "-", "--no-rules-ok", "-f", "json"], STEP),
    "check-bad-shard": (["check", STEP, "--shard", "3/2"], None),
    # diff
    "diff-same": (["diff", STEP, STEP], None),
    "diff-two-compiles": (["diff", STEP, STEP_52, "--top", "3"], None),
    "diff-renamed-module": (["diff", F_60, STEP], None),
    "diff-folder-itself": (["diff", CPU, CPU], None),
    "diff-json": (["diff", F_60, STEP, "-f", "json"], None),
    "diff-no-match": (["diff", "nomatch/*.txt", STEP], None),
    "diff-both-stdin": (["diff", "-", "-"], None),
    # layout
    "layout-tiled": (["layout", "f32[3,5]{1,0:T(2,2)}", "--at", "2,3"], None),
    "layout-json": (["layout", "bf16[9,130]{1,0:T(8,128)(2,1)}", "-f", "json"], None),
    "layout-bad-shape": (["layout", "f32[3", "f32[2]{0}"], None),
    "layout-flag-value": (["layout", "f32[4]", "--grid", "true"], None),
    "layout-bad-index": (["layout", "f32[4]", "--at", "x"], None),
    # sharding, indexing
    "sharding-top": (["sharding", SPMD, "--top", "2"], None),
    "sharding-stdin": (["sharding", "-", "--top", "1"], SPMD),
    "sharding-top-zero": (["sharding", SPMD, "--top", "0"], None),
    "indexing-fusion": (["indexing", STEP, "--fusion", "multiply_add_fusion"], None),
    "indexing-no-target": (["indexing", STEP], None),
    "inspect-no-such-file": (["inspect", "does/not/exist.txt"], None),
    "inspect-syntax-error": (["inspect", "tests/data/configs/broken.txt"], None),
}  # fmt: skip

GPU = "tests/data/corpus/jax-gpu-h100/module_370468.jit_f.sm_9.0a_gpu_after_optimizations.txt"
#: The terminal at 60, 80 and 200 columns, and piped (no COLUMNS, not a terminal: unwrapped).
#: name → arguments; each runs at every width, as `NAME-60`, `NAME-80`, `NAME-200`, `NAME-piped`.
WIDTH_CASES: dict[str, list[str]] = {
    "width-inspect-tpu": ["inspect", V5E, "--top", "4"],
    "width-inspect-gpu": ["inspect", GPU, "--top", "4"],
    "width-memory-gpu": ["memory", GPU, "--top", "4"],
    "width-memory-cpu": ["memory", STEP, "--top", "4"],
    "width-check-tpu": ["check", V5E, "--max-argument-bytes", "1MiB", "--max-fusions", "10"],
    "width-diff-cpu": ["diff", STEP, STEP_52, "--top", "4"],
    "width-sharding-spmd": ["sharding", SPMD, "--top", "2"],
}
WIDTHS = ("60", "80", "200", "piped")
for _name, _args in WIDTH_CASES.items():
    for _width in WIDTHS:
        CASES[f"{_name}-{_width}"] = (_args, None)


def _columns(name: str) -> str | None:
    """COLUMNS for a case: 100 unless the case names a width; unset when piped."""
    width = name.rsplit("-", 1)[-1] if name.startswith("width-") else "100"
    return None if width == "piped" else width


def _render(cli: Cli, args: list[str], stdin: str | None, columns: str | None = "100") -> str:
    data = (REPO / stdin).read_bytes() if stdin else None
    env: dict[str, str | None] = {"COLUMNS": columns, "NO_COLOR": "1", "GITHUB_ACTIONS": ""}
    result = cli(*args, input=data, env=env)
    command = " ".join(a if len(a) < 80 else a[:20] + "..." for a in args)
    if stdin:
        command += f" < {stdin}"
    if columns != "100":
        command = f"COLUMNS={columns} {command}" if columns else f"{command} | cat"
    return (
        f"$ hlo-layout {command}\n--- exit: {result.exit_code}\n--- stdout\n{result.stdout}"
        f"--- stderr\n{result.stderr}"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_snapshot(cli: Cli, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    args, stdin = CASES[name]
    got = _render(cli, args, stdin, _columns(name))
    assert "internal error" not in got, got
    path = SNAPSHOTS / f"{name}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}: run UPDATE_SNAPSHOTS=1 pytest {__file__}"
    assert got == path.read_text(encoding="utf-8"), (
        f"{path.name} changed; review, then UPDATE_SNAPSHOTS=1 pytest tests/cli/test_snapshots.py"
    )


def test_no_stale_snapshots() -> None:
    stale = {p.stem for p in SNAPSHOTS.glob("*.txt")} - set(CASES)
    assert not stale, f"snapshots without a case: {sorted(stale)}"
