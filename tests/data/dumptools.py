"""Helpers the generators of tests/data share, and a check of their oracle files.

    python dumptools.py DIR...   # every dump's memory-usage report against its buffer assignment

For every `*-memory-usage-report.txt` under DIR: its "Total bytes" per memory space equals the
sum of allocation sizes per colour in the `*-buffer-assignment.txt` beside it (older XLA, as in
TensorFlow 2.21 and torch-xla 2.9, gives one "Total bytes used" for all colours: compared with
the sum over all). Prints one line per dump, saying whether a live-range file sits beside it,
and exits 1 if any disagrees. Plain Python: the generators import it from any venv.
"""

import glob
import os
import re
import shutil
import sys


def clean(text):
    """No machine paths in `source_file`/`FileNames`: a package's files from their folder
    under site-packages/ on, any other file by its name."""
    text = re.sub(r'"/[^"\n]*/site-packages/([^"\n]+)"', r'"\1"', text)
    return re.sub(r'"/[^"\n]*?([A-Za-z0-9_]+\.py)"', r'"\1"', text)


def copy_kept(raw, names, dst, keep):
    """Copy the files `names` of folder `raw` whose name `keep` (a regex) finds into `dst`,
    cleaned; `dst` is made afresh."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for n in names:
        if keep.search(n):
            with open(os.path.join(raw, n)) as fh:
                text = clean(fh.read())
            with open(os.path.join(dst, n), "w") as fh:
                fh.write(text)


def report_totals(report_path):
    """{colour: bytes} from a memory-usage report; {"all": bytes} from the older form."""
    with open(report_path) as fh:
        text = fh.read()
    spaces = re.findall(r"Memory Space: .*\(color=(\d+)\)\nTotal bytes: (\d+)", text)
    if spaces:
        return {int(c): int(b) for c, b in spaces}
    return {"all": int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))}


def allocation_sums(assignment_path):
    """{colour: bytes}: a buffer assignment's allocation sizes summed per colour."""
    summed = {}
    with open(assignment_path) as fh:
        for line in fh:
            a = re.match(r"allocation \d+: size (\d+),", line)
            if a:
                c = re.search(r", color (\d+)", line)
                colour = int(c.group(1)) if c else 0
                summed[colour] = summed.get(colour, 0) + int(a.group(1))
    return summed


def checked_totals(stem):
    """The report's totals for dump `stem` (the path before `-memory-usage-report.txt`), and
    whether they equal its buffer assignment's allocation sums."""
    reported = report_totals(stem + "-memory-usage-report.txt")
    summed = allocation_sums(stem + "-buffer-assignment.txt")
    if "all" in reported:
        summed = {"all": sum(summed.values())}
    return reported, reported == summed


def main(dirs):
    bad = 0
    for d in dirs:
        pattern = os.path.join(d, "**", "*-memory-usage-report.txt")
        for report in sorted(glob.glob(pattern, recursive=True)):
            stem = report[: -len("-memory-usage-report.txt")]
            reported, ok = checked_totals(stem)
            live = os.path.exists(stem + "-live-range.txt")
            bad += not ok
            print(
                "ok " if ok else "BAD",
                os.path.relpath(stem),
                reported,
                "live-range" if live else "no live-range",
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
