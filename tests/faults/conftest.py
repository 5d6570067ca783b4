"""Fixtures of the fault suite (a ``controlplane up`` per scenario, the real etcd) and the
figures printed at the end of the run (kills, converged phases, lost writes, duplicates,
missed watch events), collected by ``tests/faults/harness.py``."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.faults.harness import FIGURES, Cluster, RealEtcd

COLUMNS = ("kills", "phases", "converged", "lost", "duplicates", "missed", "relists", "acked",
           "unanswered", "worst_converge_s", "seconds")


@pytest.fixture()
def up(tmp_path):
    """A ``controlplane up`` with the embedded etcd: node01, node02 and 4 hollow nodes."""
    c = Cluster(str(tmp_path))
    yield c
    c.stop()


@pytest.fixture()
def up_real_etcd(tmp_path):
    """A ``controlplane up --etcd-servers`` over the real etcd (``/usr/bin/etcd``)."""
    binary = shutil.which("etcd")
    if not binary:
        if os.environ.get("CONTROLPLANE_REQUIRE_REAL_ETCD"):
            pytest.fail("etcd binary not found (apt-get install -y etcd-server)")
        pytest.skip("real etcd not installed (apt-get install -y etcd-server)")
    etcd = RealEtcd(binary, str(tmp_path / "etcd"))
    etcd.start()
    try:
        c = Cluster(str(tmp_path), real_etcd=etcd)
        yield c
        c.stop()
    finally:
        etcd.stop()


def pytest_terminal_summary(terminalreporter) -> None:
    if not FIGURES:
        return
    tr = terminalreporter
    tr.section("fault suite figures")
    width = max(len(f["scenario"]) for f in FIGURES)
    tr.write_line(f"{'scenario':<{width}}  " + "  ".join(COLUMNS))
    for f in FIGURES:
        tr.write_line(f"{f['scenario']:<{width}}  " +
                      "  ".join(f"{f[c]:>{len(c)}}" for c in COLUMNS))
    total = {c: sum(f[c] for f in FIGURES) for c in ("kills", "phases", "converged", "lost",
                                                      "duplicates", "missed")}
    tr.write_line("total: " + ", ".join(f"{k} {v}" for k, v in total.items()))
