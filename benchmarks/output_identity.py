"""Before/after byte-identity of `inspect -f json` and `memory -f json` on every dump.

    python benchmarks/output_identity.py run OUT.json [--repo DIR] [--pure] [--stream]
    python benchmarks/output_identity.py compare BEFORE.json AFTER.json

`run` sends every `*.txt` and `*.txt.gz` under tests/data, samples and ../shared/corpus (all of
them: a file that is no dump must fail alike) through both commands in-process (Typer's runner)
with the code of checkout DIR (default: this one), and keeps the digest of stdout, stderr and the
exit code of each. `--pure` sets HLO_LAYOUT_PURE_PYTHON=1 before the package is imported;
`--stream` adds `inspect -f json --stream`. Run it once on a checkout of main and once on the
branch, then `compare`. `benchmarks/json_identity.py` keeps the JSON outputs themselves.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def dumps(repo: Path) -> list[Path]:
    """Every text file of the three trees, in a stable order (paths of this checkout's data)."""
    roots = [repo / "tests" / "data", repo / "samples", repo.parent / "shared" / "corpus"]
    if not roots[2].is_dir():
        roots[2] = Path("/work/shared/corpus")
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files += sorted(p for p in root.rglob("*") if p.name.endswith((".txt", ".txt.gz")))
    return files


def run(out: Path, repo: Path, stream: bool) -> None:
    sys.path.insert(0, str(repo))
    from typer.testing import CliRunner

    import hlo_layout
    from hlo_layout.cli import app

    assert Path(hlo_layout.__file__).is_relative_to(repo), hlo_layout.__file__
    commands = {"inspect": ["inspect", "-f", "json"], "memory": ["memory", "-f", "json"]}
    if stream:
        commands["stream"] = ["inspect", "-f", "json", "--stream"]
    runner = CliRunner()
    results: dict[str, dict] = {}
    files = dumps(HERE)
    started = time.perf_counter()
    for n, path in enumerate(files):
        key = str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent) else str(path)
        for name, args in commands.items():
            r = runner.invoke(app, [*args, str(path)])
            results[f"{key}|{name}"] = {
                "stdout": hashlib.sha256(r.stdout_bytes).hexdigest(),
                "stderr": hashlib.sha256(r.stderr_bytes).hexdigest(),
                "exit": r.exit_code,
            }
        if n % 500 == 0:
            print(f"{n}/{len(files)} {time.perf_counter() - started:.0f} s", file=sys.stderr)
    out.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(f"{len(results)} outputs of {len(files)} files in {time.perf_counter() - started:.0f} s")


def compare(before: Path, after: Path) -> int:
    a = json.loads(before.read_text())
    b = json.loads(after.read_text())
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only = sorted(a.keys() ^ b.keys())
    for k in differ:
        print("DIFFERS", k, a[k]["exit"], b[k]["exit"])
    for k in only:
        print("ONLY IN ONE", k)
    print(
        f"{len(a.keys() & b.keys())} outputs compared: {len(differ)} differ, {len(only)} unpaired"
    )
    return 1 if differ or only else 0


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["compare"]:
        sys.exit(compare(Path(args[1]), Path(args[2])))
    if args[:1] != ["run"]:
        sys.exit(__doc__)
    repo = HERE
    if "--repo" in args:
        repo = Path(args[args.index("--repo") + 1]).resolve()
    if "--pure" in args:
        os.environ["HLO_LAYOUT_PURE_PYTHON"] = "1"
    run(Path(args[1]), repo, "--stream" in args)


if __name__ == "__main__":
    main()
