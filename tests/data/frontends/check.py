"""Check that each dump's oracle files agree with each other: python check.py DIR...

For every `*-memory-usage-report.txt` under DIR: its "Total bytes" per memory space equals the
sum of allocation sizes per colour in the `*-buffer-assignment.txt` beside it; whether a
live-range file sits beside it.
Prints one line per dump and exits 1 if any disagrees.
"""

import glob
import os
import re
import sys


def totals(report_path):
    """{colour: bytes} from the report; older XLA (TensorFlow 2.21, torch-xla 2.9) writes one
    "Total bytes used: N" for all colours, given here as colour "all"."""
    with open(report_path) as fh:
        text = fh.read()
    spaces = re.findall(r"Memory Space: .*\(color=(\d+)\)\nTotal bytes: (\d+)", text)
    if spaces:
        return {int(c): int(b) for c, b in spaces}
    return {"all": int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))}


def allocation_sums(assignment_path):
    summed = {}
    with open(assignment_path) as fh:
        for line in fh:
            a = re.match(r"allocation \d+: size (\d+),", line)
            if a:
                c = re.search(r", color (\d+)", line)
                colour = int(c.group(1)) if c else 0
                summed[colour] = summed.get(colour, 0) + int(a.group(1))
    return summed


def main(dirs):
    bad = 0
    for d in dirs:
        for report in sorted(
            glob.glob(os.path.join(d, "**", "*-memory-usage-report.txt"), recursive=True)
        ):
            stem = report[: -len("-memory-usage-report.txt")]
            reported, summed = totals(report), allocation_sums(stem + "-buffer-assignment.txt")
            if "all" in reported:
                summed = {"all": sum(summed.values())}
            ok = reported == summed
            live = os.path.exists(stem + "-live-range.txt")
            bad += not ok
            print(
                "ok " if ok else "BAD",
                os.path.relpath(stem),
                reported,
                "" if ok else summed,
                "live-range" if live else "no live-range",
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
