"""Summarise a py-spy collapsed-stack file (``py-spy record --format raw``): the top
functions by self samples (where the CPU is spent) and by inclusive samples (what
the time is spent under), each as a share of all samples.

    python bench/profile_top.py FILE [--top 40]

Benchmark tooling only (never tests).
"""

from __future__ import annotations

import argparse
import collections
import re

_LINE = re.compile(r"(.*) (\d+)$")
_FRAME_LINE = re.compile(r":\d+\)$")


def _frame(f: str) -> str:
    # "func (path/file.py:123)" -> "func (path/file.py)": aggregate per function, not per line
    return _FRAME_LINE.sub(")", f.strip())


def summarise(path: str, top: int = 40) -> str:
    """The report for ``path`` as text: total samples, then the ``top`` functions by
    self and by inclusive samples with their percentages."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path, errors="replace") as f:
        for line in f:
            m = _LINE.match(line.rstrip("\n"))
            if not m:
                continue
            n = int(m.group(2))
            frames = [_frame(x) for x in m.group(1).split(";") if x]
            if not frames:
                continue
            total += n
            own[frames[-1]] += n
            for fr in set(frames):
                incl[fr] += n
    out = [f"{path}: {total} samples"]
    for title, counter in (("self", own), ("inclusive", incl)):
        out.append(f"\ntop {top} by {title} samples:")
        for fr, n in counter.most_common(top):
            out.append(f"  {n / max(total, 1) * 100:5.1f}%  {fr}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    print(summarise(a.file, a.top), end="")
