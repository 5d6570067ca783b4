"""controlplane.testing.ClusterHandle: the parallel start of a LocalCluster from sync code."""

from __future__ import annotations

import pytest

from controlplane.testing import ClusterHandle, ClusterSpec

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_a_service_exiting_fails_the_start_at_once_naming_it(tmp_path):
    h = ClusterHandle(str(tmp_path / "cp"), ClusterSpec(nodes=("Bad_Node!",)))
    with pytest.raises(RuntimeError, match=r"^kubelet-Bad_Node! exited with status 2 while starting: .*invalid node name"):
        h.start(60)
    assert h.running == []  # everything it had started is stopped again
