"""Issue 14: a CI gate that cannot pass by accident, on real dumps (jax-cpu repeats the module
names `jit_step` and `jit_f`)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hlo_layout.check.policy import PolicyError, load_config
from hlo_layout.check.run import measure_file
from tests.support import CORPUS, DATA, REPO, Cli

JAX_CPU = CORPUS / "jax-cpu"
STEP_18 = JAX_CPU / "module_0018.jit_step.cpu_after_optimizations.txt"
F_60 = JAX_CPU / "module_0060.jit_f.cpu_after_optimizations.txt"
TRANSFORMER = CORPUS / "libtpu-v5e" / "transformer" / "transformer.after_optimizations.txt"


def check(cli: Cli, *args: str, cwd: Path | None = None) -> tuple[int, dict, str]:
    """Exit code, JSON document, stderr of `check ... -f json`."""
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = cli("check", *args, "-f", "json")
    finally:
        os.chdir(old)
    assert result.exit_code != 4, result.output
    doc = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, doc, result.stderr


# --- no accidental green ---------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["nomatch/*.txt", "empty_dir", "does/not/exist.txt"])
def test_nothing_matched_exits_3(cli: Cli, tmp_path: Path, pattern: str) -> None:
    (tmp_path / "empty_dir").mkdir()
    arg = str(tmp_path / pattern)
    result = cli("check", arg, "--max-fusions", "1000")
    assert result.exit_code == 3
    assert f"no dumps matched {arg}" in result.stderr
    assert "all within budget" not in result.stdout
    code, doc, _ = check(cli, arg, "--no-rules-ok")
    assert code == 3 and doc["passed"] is False and doc["modules_checked"] == 0


def test_no_rule_at_all_exits_2_naming_where_config_was_looked_for(
    cli: Cli, tmp_path: Path
) -> None:
    # A CI job whose config was not found must not pass silently.
    code, _, err = check(cli, str(STEP_18), cwd=tmp_path)
    assert code == 2
    assert "no rule to check" in err and str(tmp_path.resolve()) in err
    assert "hlo-layout.toml" in err and "--no-rules-ok" in err
    # A config without a rule is named.
    (tmp_path / "hlo-layout.toml").write_text("[check]\n")
    code, _, err = check(cli, str(STEP_18), cwd=tmp_path)
    assert code == 2 and str((tmp_path / "hlo-layout.toml").resolve()) in err
    code, doc, _ = check(cli, str(STEP_18), "--no-rules-ok", cwd=tmp_path)
    assert code == 0 and doc["modules_checked"] == 1


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--max-physical-growth-percent", "0"),
        ("--max-growth-percent", "0"),  # its older name
        ("--max-peak-growth-percent", "0"),
        ("--max-peak-growth-bytes", "hbm=0"),
        ("--max-padding-growth", "0"),
        ("--max-fusion-growth", "0"),
    ],
)
def test_a_rule_needing_a_baseline_without_one_exits_2(cli: Cli, flag: str, value: str) -> None:
    result = cli("check", str(STEP_18), flag, value)
    assert result.exit_code == 2, flag
    named = flag.replace("--max-growth-percent", "--max-physical-growth-percent")
    assert named in result.stderr and "--baseline" in result.stderr


@pytest.mark.parametrize(
    "rule", ["max-growth-percent = 1", "max-peak-growth-percent = 1", "max-peak-growth-bytes = 1"]
)
def test_growth_rule_from_config_without_baseline_exits_2(
    cli: Cli, tmp_path: Path, rule: str
) -> None:
    (tmp_path / "hlo-layout.toml").write_text(f"[check]\n{rule}\n")
    assert check(cli, str(STEP_18), cwd=tmp_path)[0] == 2


# --- config: discovery, forms, unknown and misplaced keys --------------------------------------


def _argument_bytes() -> int:
    (m,) = measure_file(STEP_18).metrics
    return m.argument_bytes


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("hlo-layout.toml", "max-argument-bytes = {n}\n"),
        ("hlo-layout.toml", "[check]\nmax-argument-bytes = {n}\n"),
        ("pyproject.toml", "[tool.hlo-layout]\nmax-argument-bytes = {n}\n"),
        ("pyproject.toml", "[tool.hlo-layout.check]\nmax-argument-bytes = {n}\n"),
    ],
)
def test_every_documented_config_form_is_applied(
    cli: Cli, tmp_path: Path, name: str, text: str
) -> None:
    n = _argument_bytes()
    (tmp_path / name).write_text(text.format(n=n - 1))
    code, doc, _ = check(cli, str(STEP_18), cwd=tmp_path)
    assert code == 1 and doc["violations"][0]["rule"] == "max-argument-bytes"
    assert doc["config"] == str((tmp_path / name).resolve())
    (tmp_path / name).write_text(text.format(n=n))
    assert check(cli, str(STEP_18), cwd=tmp_path)[0] == 0


def test_config_is_found_in_a_parent_folder(cli: Cli, tmp_path: Path) -> None:
    n = _argument_bytes()
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.hlo-layout.check]\nmax-argument-bytes = {n - 1}\n"
    )
    (tmp_path / "sub" / "pyproject.toml").parent.mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.other]\nx = 1\n")  # not ours: skipped
    nested = tmp_path / "sub" / "deeper"
    nested.mkdir()
    code, doc, _ = check(cli, str(STEP_18), cwd=nested)
    assert code == 1 and doc["config"] == str((tmp_path / "pyproject.toml").resolve())
    # The nearest config wins, as with ruff.
    (tmp_path / "sub" / "hlo-layout.toml").write_text(f"[check]\nmax-argument-bytes = {n}\n")
    assert check(cli, str(STEP_18), cwd=nested)[0] == 0


@pytest.mark.parametrize(
    ("name", "text", "key"),
    [
        ("hlo-layout.toml", "[check]\nmax-argument-byte = 1\n", "max-argument-byte"),
        ("hlo-layout.toml", "max-fusionz = 1\n", "max-fusionz"),
        ("hlo-layout.toml", 'match = "jit_*"\n', "match"),
        ("hlo-layout.toml", '[check]\nmatch = "jit_*"\n', "match"),
        ("hlo-layout.toml", "max-fusions = 1\n[check]\nmax-fusions = 2\n", "max-fusions"),
        ("hlo-layout.toml", "[[check.modules]]\nmax-fusions = 1\n", "match"),
        ("hlo-layout.toml", '[[check.modules]]\nmatch = "a"\n[check.modules.x]\n', "x"),
        ("pyproject.toml", "[tool.hlo_layout]\nmax-fusions = 1\n", "tool.hlo_layout"),
        ("pyproject.toml", "[tool.hlo-layout.inspect]\ntop = 3\n", "inspect"),
    ],
)
def test_unknown_or_misplaced_keys_exit_2_naming_key_and_file(
    cli: Cli, tmp_path: Path, name: str, text: str, key: str
) -> None:
    (tmp_path / name).write_text(text)
    code, _, err = check(cli, str(STEP_18), cwd=tmp_path)
    assert code == 2
    assert key in err and name in err


def test_config_values_are_checked(tmp_path: Path) -> None:
    cfg = tmp_path / "hlo-layout.toml"
    for bad in ('max-argument-bytes = "a lot"', "max-fusions = -1", "forbid-space = ['moon']",
                "max-padding-percent = 'nan'", "max-fusions = true"):  # fmt: skip
        cfg.write_text(f"[check]\n{bad}\n")
        with pytest.raises(PolicyError, match=r"hlo-layout\.toml"):
            load_config(cfg)


# --- pairing you can trust ---------------------------------------------------------------------


def test_folder_against_itself_has_zero_growth(cli: Cli) -> None:
    code, doc, _ = check(cli,
        str(JAX_CPU), "--baseline", str(JAX_CPU), "--max-growth-percent", "0",
        "--max-padding-growth", "0", "--max-fusion-growth", "0",
    )  # fmt: skip
    assert code == 0, doc["violations"]
    assert doc["modules_checked"] == 4 and not doc["baseline_missing"]
    for pair in doc["baseline_pairs"]:
        assert pair["module"] == pair["baseline"]  # each module with its own file


def test_repeated_names_are_never_paired_silently(cli: Cli, tmp_path: Path) -> None:
    # A recompile renumbers the dumps: relative paths differ, jit_step / jit_f repeat.
    renumbered = tmp_path / "new"
    renumbered.mkdir()
    for path in JAX_CPU.glob("*after_optimizations.txt"):
        shutil.copy(path, renumbered / path.name.replace("module_00", "module_10"))
    code, doc, _ = check(
        cli, str(renumbered), "--baseline", str(JAX_CPU), "--max-growth-percent", "0"
    )
    assert code == 0 and not doc["baseline_pairs"]
    assert sorted(doc["baseline_ambiguous"]) == ["jit_f", "jit_step"]
    assert len(doc["baseline_missing"]) == 4 and len(doc["baseline_unpaired"]) == 4
    # A name that is unique on both sides pairs by name.
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(F_60, only / "module_0999.jit_f.cpu_after_optimizations.txt")
    code, doc, _ = check(cli, str(only), "--baseline", str(F_60), "--max-growth-percent", "0")
    assert code == 0 and len(doc["baseline_pairs"]) == 1


def test_diff_folder_with_itself_shows_no_change(cli: Cli) -> None:
    result = cli("diff", str(JAX_CPU), str(JAX_CPU), "-f", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert len(doc["modules"]) == 4 and doc["changed"] is False
    assert all(m["old_file"] == m["new_file"] for m in doc["modules"])
    text = cli("diff", str(JAX_CPU), str(JAX_CPU))
    assert text.stdout.count("no change") == 4


def test_diff_of_two_differently_named_modules_warns(cli: Cli) -> None:
    result = cli("diff", str(F_60), str(TRANSFORMER), "-f", "json")
    assert result.exit_code == 0
    assert "different names: jit_f → jit_transformer" in result.stderr
    assert json.loads(result.stdout)["warnings"]


# --- JSON a script can use ---------------------------------------------------------------------


def test_violation_values_are_numbers(cli: Cli) -> None:
    n = _argument_bytes()
    code, doc, _ = check(cli, str(STEP_18), "--max-argument-bytes", str(n - 1),
                         "--max-fusions", "0", "--max-padding-percent", "0")  # fmt: skip
    assert code == 1
    by_rule = {v["rule"]: v for v in doc["violations"]}
    arg = by_rule["max-argument-bytes"]
    assert arg["value"] == arg["value_bytes"] == n and arg["limit"] == arg["limit_bytes"] == n - 1
    assert arg["unit"] == "bytes" and arg["value_text"].endswith("B")
    fusions = by_rule["max-fusions"]
    assert isinstance(fusions["value"], int) and fusions["limit"] == 0
    assert "value_bytes" not in fusions
    if "max-padding-percent" in by_rule:
        assert isinstance(by_rule["max-padding-percent"]["value"], float)


# --- exit codes hold everywhere ------------------------------------------------------------------


def test_junit_parent_folders_are_created(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "dir" / "that" / "does" / "not" / "exist" / "j.xml"
    done = cli("check", str(STEP_18), "--no-rules-ok", "--junit-xml", str(target))
    assert done.exit_code == 0
    assert "<testsuites" in target.read_text()
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = cli(
        "check", str(STEP_18), "--max-fusions", "99", "--junit-xml", str(blocker / "j.xml")
    )
    assert result.exit_code == 2 and "cannot write" in result.stderr


def test_huge_numbers_on_the_command_line_exit_2(cli: Cli) -> None:
    huge = "9" * 5000
    for flag in ("--max-buffer-bytes", "--max-fusions", "--max-padding-percent"):
        result = cli("check", str(STEP_18), flag, huge)
        assert result.exit_code == 2, (flag, result.output)
    assert cli("diff", str(STEP_18), str(STEP_18), "--top", huge).exit_code == 2


def test_320_digit_dims_do_not_overflow(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    small = tmp_path / "small.txt"
    text = "HloModule big\nENTRY e {{\n  ROOT p = f32[{}]{{0}} parameter(0)\n}}\n"
    big.write_text(text.format("9" * 320))
    small.write_text(text.format("2"))
    for args in (
        ["check", str(big), "--max-buffer-bytes", "1", "--max-padding-percent", "1"],
        ["check", str(big), "--baseline", str(small), "--max-physical-growth-percent", "1",
         "--max-peak-growth-percent", "1", "--max-peak-growth-bytes", "1",
         "--max-padding-growth", "0"],
        ["diff", str(small), str(big)],
        ["diff", str(small), str(big), "-f", "json"],
    ):  # fmt: skip
        result = cli(*args)
        assert result.exit_code in (0, 1, 3), (args, result.output)


def test_one_error_format(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n")
    for command in (["check", "--no-rules-ok"], ["inspect"]):
        result = cli(*command, str(bad))
        assert result.exit_code == 3
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"{bad}:3:"), (command, first)
        assert ": error: " in first and "^" in result.stderr


def _run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlo_layout", *args],
        input=stdin,
        capture_output=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


COMMANDS = [
    ["inspect", str(STEP_18)],
    ["check", str(STEP_18), "--no-rules-ok"],
    ["diff", str(STEP_18), str(STEP_18)],
    ["layout", "f32[3,5]{0,1:T(2,2)}"],
    ["sharding", str(STEP_18)],
    ["indexing", str(STEP_18), "--fusion", "multiply_add_fusion"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_any_terminal_encoding(args: list[str]) -> None:
    for fmt in ("text", "json"):
        done = _run(*args, "-f", fmt, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, done.stderr.decode("ascii", "replace")
        if fmt == "json":
            json.loads(done.stdout)


# --- stdin everywhere --------------------------------------------------------------------------


@pytest.mark.parametrize("args", [a for a in COMMANDS if a[0] != "layout"], ids=lambda a: a[0])
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_stdin_for_every_command(cli: Cli, args: list[str], packed: bool) -> None:
    data = STEP_18.read_bytes()
    if packed:
        data = gzip.compress(data)
    piped = [a if a != str(STEP_18) else "-" for a in args]
    if piped[0] == "diff":
        piped = ["diff", "-", str(STEP_18)]
    from_file = cli(*args, "-f", "json")
    result = cli(*piped, "-f", "json", input=data)
    assert result.exit_code == from_file.exit_code == 0, result.output
    # The same module was read (a file's buffer assignment beside it cannot be, from a pipe).
    assert '"jit_step"' in result.stdout or '"main.5"' in result.stdout
    assert json.loads(result.stdout).keys() == json.loads(from_file.stdout).keys()


def test_an_empty_shard_passes_and_says_so(cli: Cli) -> None:
    # 4 dumps in 5 slices: the 5th slice has nothing to check, which is not an error.
    result = cli("check", str(JAX_CPU), "--max-fusions", "999", "--shard", "5/5")
    assert result.exit_code == 0 and "shard 5/5 holds none of the 4 dump(s)" in result.stderr


# --- the peak as a gate ------------------------------------------------------------------------

GROWN = DATA / "diff" / "widen-line"  # one line widened a matmul: the peak grew 4.5 MiB


def test_peak_growth_fails_the_pair_that_grew_and_passes_a_folder_against_itself(cli: Cli) -> None:
    old, new = str(GROWN / "old"), str(GROWN / "new")
    code, doc, _ = check(cli, new, "--baseline", old, "--max-peak-growth-percent", "1")
    assert code == 1
    (v,) = doc["violations"]
    assert v["rule"] == "max-peak-growth-percent" and v["where"] == "module" and v["value"] > 100
    assert v["file"].endswith("jit_step.cpu_after_optimizations.txt")
    rules = ["--max-peak-growth-percent", "0", "--max-peak-growth-bytes", "0",
             "--max-peak-growth-bytes", "0=0"]  # fmt: skip
    code, doc, _ = check(cli, new, "--baseline", new, *rules)
    assert code == 0 and len(doc["baseline_pairs"]) == 1
    assert (
        check(cli, str(JAX_CPU), "--baseline", str(JAX_CPU), "--max-peak-growth-percent", "0")[0]
        == 0
    )


def test_peak_growth_in_bytes_and_per_space(cli: Cli) -> None:
    old, new = str(GROWN / "old"), str(GROWN / "new")
    _, before, _ = check(cli, old, "--no-rules-ok")
    _, after, _ = check(cli, new, "--no-rules-ok")
    grown = after["modules"][0]["module_peak_bytes"] - before["modules"][0]["module_peak_bytes"]
    assert grown > 0
    for limit, code in ((grown, 0), (grown - 1, 1)):
        assert check(cli, new, "--baseline", old, "--max-peak-growth-bytes", str(limit))[0] == code
    space = after["modules"][0]["peak_bytes"]["0"] - before["modules"][0]["peak_bytes"]["0"]
    for limit, code in ((space, 0), (space - 1, 1)):
        got = check(cli, new, "--baseline", old, "--max-peak-growth-bytes", f"0={limit}")
        assert got[0] == code
        if code:
            assert got[1]["violations"][0]["where"] == "S(0)"


def test_max_peak_bytes_takes_the_module_headline_and_spaces(cli: Cli) -> None:
    _, doc, _ = check(cli, str(STEP_18), "--no-rules-ok")
    peak = doc["modules"][0]["module_peak_bytes"]
    assert check(cli, str(STEP_18), "--max-peak-bytes", str(peak))[0] == 0
    code, doc, _ = check(cli, str(STEP_18), "--max-peak-bytes", str(peak - 1))
    assert code == 1 and doc["violations"][0]["value"] == peak
    cfg_code = check(cli, str(STEP_18), "--max-peak-bytes", f"module={peak - 1}")[0]
    assert cfg_code == 1
