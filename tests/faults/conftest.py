"""Fixtures of the fault suite (a ``controlplane up`` per scenario, the real etcd) and the
figures collected by ``tests/faults/harness.py`` (kills, converged phases, lost writes, duplicates,
missed watch events), sent on each scenario's teardown report to the summary printed by
``tests/conftest.py``."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import FAULT_FIGURES
from tests.faults.harness import FIGURES, Cluster, RealEtcd


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """The scenarios' figures recorded since the last report ride on the teardown report, so the
    summary (tests/conftest.py) gets them under pytest-xdist too."""
    report = yield
    global _sent
    if call.when == "teardown" and len(FIGURES) > _sent:
        report.user_properties.append((FAULT_FIGURES, [dict(f) for f in FIGURES[_sent:]]))
        _sent = len(FIGURES)
    return report


_sent = 0
