"""The README's GitHub Actions example works: its `hlo-layout` command, run as written on a
dump folder (the corpus's jax-cpu dumps, as a JAX test would write them) against a baseline
folder, passes, writes the JUnit report at the path the upload step uploads, and fails (exit 1,
a failed test case in the report) once a module grows."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

from tests.support import CORPUS, REPO

DUMPS = CORPUS / "jax-cpu"


def ci_example() -> str:
    text = (REPO / "README.md").read_text()
    (block,) = re.findall(r"<!-- ci-example -->\n```yaml\n(.*?)\n```", text, re.S)
    return block


def _commands(block: str) -> tuple[list[str], str]:
    runs = [shlex.split(r) for r in re.findall(r"run: (hlo-layout .*)", block)]
    (path,) = re.findall(r"path: (\S+)", block)
    assert len(runs) == 1
    return runs[0], path


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert argv[0] == "hlo-layout"
    return subprocess.run(
        [sys.executable, "-m", "hlo_layout", *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "GITHUB_ACTIONS": "true"},
    )


def test_the_readme_workflow_gates_and_uploads(tmp_path: Path) -> None:
    block = ci_example()
    assert "actions/upload-artifact" in block and "--junit-xml" in block
    argv, uploaded = _commands(block)
    dumps = argv[argv.index("check") + 1]
    baseline = argv[argv.index("--baseline") + 1]
    shutil.copytree(DUMPS, tmp_path / dumps)
    shutil.copytree(DUMPS, tmp_path / baseline)

    done = _run(argv, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = ET.parse(tmp_path / uploaded).getroot()
    assert report.get("tests") == "4" and report.get("failures") == "0"

    # A module that grew more than the budget fails the job and the report says which: the
    # bigger jit_step program (module 52) compiled where module 18 was.
    for path in (tmp_path / dumps).glob("module_0052.*"):
        path.replace(path.with_name(path.name.replace("module_0052", "module_0018")))
    (tmp_path / uploaded).unlink()
    done = _run(argv, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error file=" in done.stdout  # GitHub annotations
    report = ET.parse(tmp_path / uploaded).getroot()
    assert report.get("failures") == "1"
    (failed,) = [c for c in report.iter("testcase") if c.find("failure") is not None]
    assert failed.get("classname", "").endswith("module_0018.jit_step.cpu_after_optimizations.txt")
    assert "max-peak-growth-percent" in (failed.findtext("failure") or "")
