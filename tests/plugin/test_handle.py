"""controlplane.testing.ClusterHandle: the parallel start of a LocalCluster from sync code."""

from __future__ import annotations

import os

import pytest

from controlplane.cli import zygote
from controlplane.testing import ClusterHandle, ClusterSpec

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_a_service_exiting_fails_the_start_at_once_naming_it(tmp_path):
    h = ClusterHandle(str(tmp_path / "cp"), ClusterSpec(nodes=("Bad_Node!",)))
    with pytest.raises(RuntimeError, match=r"^kubelet-Bad_Node! exited with status 2 while starting: .*invalid node name"):
        h.start(60)
    assert h.running == []  # everything it had started is stopped again


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


@pytest.mark.skipif(not zygote.available(), reason="the zygote needs Linux")
def test_two_clusters_of_a_session_fork_from_one_zygote(tmp_path):
    handles = [ClusterHandle(str(tmp_path / f"cp{i}"), ClusterSpec(nodes=("node01",))) for i in range(2)]
    try:
        for h in handles:
            h.start(120)
        forks = [h._cluster.zygote for h in handles]
        assert forks[0] is not None and forks[0] is forks[1] is zygote.shared()
        assert forks[0].alive
        pids = [s.proc.pid for h in handles for s in h._cluster.services]
        assert {_ppid(p) for p in pids} == {forks[0]._proc.pid}  # every process is the zygote's child
        # the second cluster is usable on its own: its own apiserver, its node Ready
        status, nodes = handles[1].request("GET", "/api/v1/nodes")
        assert status == 200 and [n["metadata"]["name"] for n in nodes["items"]] == ["node01"]
    finally:
        for h in handles:
            h.stop()
    assert [h.running for h in handles] == [[], []]


def test_a_cluster_without_the_fork_server_execs_its_processes(tmp_path):
    h = ClusterHandle(str(tmp_path / "cp"), ClusterSpec(nodes=("node01",), fork_server=False))
    try:
        h.start(120)
        assert h._cluster.zygote is None
        assert {_ppid(s.proc.pid) for s in h._cluster.services} == {os.getpid()}
    finally:
        h.stop()
