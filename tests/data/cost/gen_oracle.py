"""XLA's HloCostAnalysis of HLO texts, through jaxlib (the oracle of tests/cost/).

Usage (with jax 0.10.2, e.g. /work/venvs/jax010/bin/python):

    JAX_PLATFORMS=cpu python gen_oracle.py OUT.jsonl DIR

Writes one JSON line per HLO text under DIR (`*.hlo.txt`, `*optimizations.txt`): {"file": its
path relative to DIR, "sha1": ..., "properties": {key: value}} with XLA's
module properties (`jax._src.lib._jax.hlo_module_cost_analysis` on the CPU client: `flops`,
`transcendentals`, `bytes accessed`, `bytes accessedN{index}`, `bytes accessedout{index}`,
`utilizationN{index}`; XLA leaves out keys whose value is 0), or {"file", "error": message} when
XLA's parser or the analysis refuses the text, or {"file", "crash": ...} when XLA aborts (a CHECK
failure). Each text is analysed in a child process that is restarted after a crash, so one bad text
costs only itself. Values are XLA's float32 sums, printed as Python floats.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

TIMEOUT = 300


def _worker() -> None:
    """Read paths on stdin, answer one JSON line each on stdout."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jaxlib._hlo as H
    from jax._src.lib import _jax

    client = jax.devices("cpu")[0].client
    for line in sys.stdin:
        path = line.rstrip("\n")
        try:
            module = H.hlo_module_from_text(Path(path).read_text())
            props = dict(_jax.hlo_module_cost_analysis(client, module))
            out: dict = {"properties": props}
        except Exception as e:  # XLA's error: recorded, not fatal
            out = {"error": str(e).splitlines()[0][:300] if str(e) else type(e).__name__}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def _texts(root: Path) -> list[Path]:
    return sorted(
        q for q in root.rglob("*.txt") if q.name.endswith((".hlo.txt", "optimizations.txt"))
    )


def main() -> None:
    dst, root = Path(sys.argv[1]), Path(sys.argv[2])
    paths = _texts(root)
    done = set()
    if dst.exists():
        done = {json.loads(r)["file"] for r in dst.read_text().splitlines() if r.strip()}
    child = None
    with dst.open("a") as f:
        for path in paths:
            name = path.relative_to(root).as_posix()
            if name in done:
                continue
            if child is None:
                child = subprocess.Popen(
                    [sys.executable, __file__, "--worker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            record: dict = {"file": name, "sha1": hashlib.sha1(path.read_bytes()).hexdigest()}
            child.stdin.write(str(path) + "\n")
            child.stdin.flush()
            answer = child.stdout.readline()
            if answer:
                record.update(json.loads(answer))
            else:
                code = child.wait()
                record["crash"] = f"exit {code}"
                child = None
            f.write(json.dumps(record) + "\n")
            f.flush()
    if child is not None:
        child.stdin.close()
        child.wait()


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        main()
