"""Byte-identity guard for `inspect --format json`: save every dump's output once, then compare
after each change to the JSON writer.

    python benchmarks/json_identity.py save DIR [BIG...]
    python benchmarks/json_identity.py compare DIR [BIG...]

Every `*.txt` under tests/data and ../shared/corpus (all of them except xla-tests, plus an even
sample of about 300 xla-tests texts) runs in-process (Typer's runner: a subprocess per file costs
0.7 s of start-up) both in memory and `--stream`; the digest of stdout, stderr and the exit
code are kept (on `save`, stdout too, as DIR/files/N-VARIANT.json, for diffing). BIG dumps run
as real subprocesses (the CLI's own stdout).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "corpus"
VARIANTS = {"mem": ["--no-stream"], "stream": ["--stream"]}
SAMPLE = 300
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy


def dumps() -> list[Path]:
    """The small dumps, in a stable order."""
    files = sorted((REPO / "tests" / "data").rglob("*.txt"))
    if SHARED.is_dir():
        shared = sorted(SHARED.rglob("*.txt"))
        files += [p for p in shared if "xla-tests" not in p.parts]
        tests = [p for p in shared if "xla-tests" in p.parts]
        step = max(1, len(tests) // SAMPLE)
        files += tests[::step]
    return files


def run_small(files: list[Path], keep: Path | None) -> dict[str, dict]:
    from typer.testing import CliRunner

    import hlo_layout as app_module
    from hlo_layout.cli import app

    assert Path(app_module.__file__).is_relative_to(REPO), app_module.__file__

    runner = CliRunner()
    out: dict[str, dict] = {}
    for n, path in enumerate(files):
        for variant, flags in VARIANTS.items():
            r = runner.invoke(app, ["inspect", "--format", "json", *flags, str(path)])
            if keep is not None:
                (keep / f"{n}-{variant}.json").write_bytes(r.stdout_bytes)
            out[f"{path}|{variant}"] = {
                "stdout": hashlib.sha256(r.stdout_bytes).hexdigest(),
                "stderr": r.stderr,
                "exit": r.exit_code,
                "n": n,
            }
    return out


def run_big(files: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in files:
        for variant, flags in VARIANTS.items():
            cmd = [sys.executable, "-m", "hlo_layout", "inspect", "--format", "json", *flags, path]
            p = subprocess.run(cmd, capture_output=True, cwd=REPO)
            out[f"{path}|{variant}"] = {
                "stdout": hashlib.sha256(p.stdout).hexdigest(),
                "stderr": p.stderr.decode("utf-8", "replace"),
                "exit": p.returncode,
            }
    return out


def main() -> None:
    mode, folder, *big = sys.argv[1:]
    target = Path(folder)
    files = dumps()
    keep = target / "files" if mode == "save" else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    results = {**run_small(files, keep), **run_big(big)}
    if mode == "save":
        (target / "digests.json").write_text(json.dumps(results, indent=1))
        print(f"saved {len(results)} outputs of {len(files)} + {len(big)} dumps")
        return
    saved = json.loads((target / "digests.json").read_text())
    bad = [k for k in results if k not in saved or {**saved[k], "n": 0} != {**results[k], "n": 0}]
    missing = [k for k in saved if k not in results]
    for k in bad + missing:
        print("DIFFERS" if k in bad else "MISSING", k)
    print(f"compared {len(results)} outputs of {len(files)} + {len(big)} dumps: {len(bad)} differ")
    sys.exit(1 if bad or missing else 0)


if __name__ == "__main__":
    main()
