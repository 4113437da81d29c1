"""The one output writer (`cli/output.py`): an output that cannot be written is a message and
exit 2, never an internal error; a special file at an output path is written through, never
replaced; with stderr closed, messages are dropped rather than sent to stdout. Run as a user
runs it: a child process with its streams redirected by the shell."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support import SAMPLES, Cli

SAMPLE = SAMPLES / "tpu-v5e-transformer" / "transformer.after_optimizations.txt"
TINY = "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n"


def _run(
    args: list[str], redirect: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess:
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "hlo_layout", *args])
    return subprocess.run(
        ["sh", "-c", f"{command} {redirect}"], capture_output=True, cwd=cwd, timeout=120
    )


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    path = tmp_path / "m.hlo"
    path.write_text(TINY)
    return path


COMMANDS = [
    ["inspect", "{}"],
    ["inspect", "{}", "-f", "json"],
    ["inspect", "{}", "-f", "json", "--stream"],
    ["memory", "{}"],
    ["memory", "{}", "-f", "json"],
    ["sharding", "{}"],
    ["indexing", "{}", "-i", "n"],
    ["diff", "{}", "{}"],
    ["check", "{}", "--no-rules-ok", "-f", "json"],
    ["layout", "f32[8,128]{1,0:T(8,128)}"],
    ["report", "{}", "-o", "-"],
]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_a_full_device_on_stdout_is_exit_2_with_a_message(dump: Path, args: list[str]) -> None:
    done = _run([a.replace("{}", str(dump)) for a in args], "> /dev/full")
    assert done.returncode == 2, done.stderr
    assert b"error: cannot write to standard output: No space left on device" in done.stderr
    assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_closed_stdout_is_exit_2_with_a_message(dump: Path, args: list[str]) -> None:
    done = _run([a.replace("{}", str(dump)) for a in args], ">&-")
    assert done.returncode == 2, done.stderr
    assert b"error: cannot write to standard output: it is closed" in done.stderr


def test_a_command_that_writes_no_stdout_runs_with_it_closed(dump: Path, tmp_path: Path) -> None:
    done = _run(["report", str(dump), "-o", str(tmp_path / "r.html")], ">&-")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_with_stderr_closed_errors_never_reach_stdout(tmp_path: Path) -> None:
    done = _run(["inspect", str(tmp_path / "missing.hlo")], "2>&-")
    assert done.returncode == 3
    assert done.stdout == b""


@pytest.mark.parametrize("option", [["report", "{}", "-o"], ["inspect", "{}", "--html"]])
def test_a_symlink_to_a_device_stays_one(dump: Path, tmp_path: Path, option: list[str]) -> None:
    link = tmp_path / "null.html"
    link.symlink_to(os.devnull)
    done = _run([a.replace("{}", str(dump)) for a in option] + [str(link)])
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_fifo_is_written_through(dump: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    done = _run(["report", str(dump), "-o", str(fifo)])
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and got[0].startswith(b"<!DOCTYPE html>")
    assert f"wrote {fifo} ({len(got[0]):,} bytes)".encode() in done.stderr


def test_a_symlink_to_a_file_keeps_the_link(dump: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.html"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.html"
    link.symlink_to(target)
    done = _run(["report", str(dump), "-o", str(link)])
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and target.read_text().startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file's mode is kept
    assert not list(tmp_path.glob(".hlo-layout-*"))


@pytest.mark.parametrize(
    ("where", "says"),
    [("/dev/full", "No space left on device"), ("{dump}/r.html", "Not a directory")],
)
def test_an_output_file_that_cannot_be_written_is_exit_2(dump: Path, where: str, says: str) -> None:
    if where == "/dev/full" and not Path(where).exists():
        pytest.skip("needs /dev/full")
    path = where.replace("{dump}", str(dump))
    for args in (["report", str(dump), "-o", path], ["inspect", str(dump), "--html", path]):
        done = _run(args)
        assert done.returncode == 2, done.stderr
        assert f"error: cannot write {path}: {says}".encode() in done.stderr


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """The name's bytes are shown escaped in messages; the page is valid UTF-8."""
    name = os.fsdecode(b"\xff.hlo")
    (tmp_path / name).write_text(TINY)
    page = os.fsdecode(b"\xfe.html")
    done = _run(["report", name, "-o", page], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"wrote \\xfe.html (" in done.stderr
    (tmp_path / page).read_bytes().decode("utf-8")
    done = _run(["inspect", str(tmp_path / name)], cwd=tmp_path)
    assert done.returncode == 0 and b"\\xff.hlo" in done.stdout


@pytest.mark.parametrize("debug", ["", "1"])
def test_an_internal_error_says_how_to_report_it_truly(
    cli: Cli, dump: Path, monkeypatch: pytest.MonkeyPatch, debug: str
) -> None:
    """No made-up address: the traceback (HLO_LAYOUT_DEBUG=1), the command and the input."""

    from hlo_layout.cli import sharding_cmd  # imported first: the patch is undone whole

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(sharding_cmd, "sharding_report", broken)
    env = {"HLO_LAYOUT_DEBUG": debug} if debug else {}
    if not debug:
        monkeypatch.delenv("HLO_LAYOUT_DEBUG", raising=False)
    result = cli("sharding", str(dump), env=env)
    assert result.exit_code == 4
    assert "internal error: KeyError: 'a bug'" in result.stderr
    assert "http" not in result.stderr
    if debug:
        assert "Traceback" in result.stderr and "send the traceback above" in result.stderr
    else:
        assert "HLO_LAYOUT_DEBUG=1 hlo-layout sharding" in result.stderr
    assert "the maintainers of hlo-layout" in " ".join(result.stderr.split())
