"""``controlplane demo`` as a user runs it: its own cluster of processes, the
13 steps printed live, a summary, exit 0; bad input is one line and exit 1."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.integration.conftest import EXAMPLES

pytestmark = pytest.mark.integration


def demo(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controlplane", "demo", "--no-color", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_demo_prints_the_thirteen_steps_and_a_summary(tmp_path):
    p = demo("--data-dir", str(tmp_path / "d"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = p.stdout
    steps = [int(m) for m in re.findall(r"^\[\s*(\d+)\]", out, re.M)]
    assert set(range(1, 14)) <= set(steps), sorted(set(steps))
    # printed live in time order: the first occurrence of each step after
    # submission follows the seed's order, allowing the two apiserver races
    firsts = {s: steps.index(s) for s in range(2, 14)}
    for a, b in [(2, 3), (2, 4), (4, 5), (5, 6), (6, 9), (9, 10), (10, 11), (11, 12), (12, 13)]:
        assert firsts[a] < firsts[b], (a, b, firsts)
    assert re.search(r"Summary: 3 pod\(s\) Running", out)
    rows = re.findall(r"^\s+(myapp1-\S+)\s+(\S+)\s+(\d+\.\d+\.\d+\.\d+)\s+Running$", out, re.M)
    assert len(rows) == 3 and {r[1] for r in rows} == {"node01"}
    assert "nodeSelector {'kgc': 'a'} → every pod landed on node01" in out
    assert "Step 9 for pod myapp1-" in out and "<= chosen" in out


def test_demo_node_name_example_says_steps_9_to_11_are_skipped(tmp_path):
    p = demo("-f", os.path.join(EXAMPLES, "myapp.yaml"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert not re.search(r"^\[\s*(9|10|11)\]", p.stdout, re.M)
    assert p.stdout.count("skipped: spec.nodeName=node01 is set") == 3
    assert "steps 9-11 skipped" in p.stdout


@pytest.mark.parametrize("content,message", [
    ("a: [\n b", "m.yaml: yaml: "),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "is not a workload the demo traces"),
])
def test_demo_bad_manifest_is_one_line_and_exit_1(tmp_path, content, message):
    f = tmp_path / "m.yaml"
    f.write_text(content)
    p = demo("-f", str(f), timeout=30)
    assert p.returncode == 1
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "Traceback" not in p.stderr


def test_demo_unreachable_cluster_is_a_clear_error():
    p = demo("--master", "http://127.0.0.1:9", "--timeout", "10", timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "cannot reach the apiserver at http://127.0.0.1:9" in p.stderr
