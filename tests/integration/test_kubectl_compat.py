"""The real kubectl (/usr/bin/kubectl) on the client-compatibility regressions of issue 11
(item 4), against `python -m controlplane apiserver` on a real etcd."""

from __future__ import annotations

import asyncio
import os

import pytest

from controlplane.storage import testing
from tests.integration.conftest import start_apiserver, stop
from tests.integration.test_kubectl_apiserver import kubectl

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("kcompat")
    etcd = testing.EtcdProcess()
    etcd_url = asyncio.run(etcd.start())
    proc, _, url = start_apiserver(etcd_url)
    kubeconfig = d / "kubeconfig"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{url}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u, namespace: default}}}}]
current-context: x
""")
    yield {"url": url, "kubeconfig": str(kubeconfig), "dir": d, "proc": proc}
    stop(proc)
    asyncio.run(etcd.stop())


EVENTS = """\
apiVersion: v1
kind: Event
metadata: {name: ev-late}
involvedObject: {kind: Pod, name: p1, namespace: default}
reason: Late
message: second
type: Normal
lastTimestamp: "2026-01-01T00:00:20Z"
firstTimestamp: "2026-01-01T00:00:20Z"
---
apiVersion: v1
kind: Event
metadata: {name: ev-early}
involvedObject: {kind: Pod, name: p1, namespace: default}
reason: Early
message: first
type: Normal
lastTimestamp: "2026-01-01T00:00:10Z"
firstTimestamp: "2026-01-01T00:00:10Z"
"""


def test_get_events_sort_by_last_timestamp(cluster):
    f = cluster["dir"] / "events.yaml"
    f.write_text(EVENTS)
    r = kubectl(cluster, "create", "-f", str(f))
    assert r.returncode == 0, r.stderr
    r = kubectl(cluster, "get", "events", "--sort-by=.lastTimestamp", "-o", "custom-columns=NAME:.metadata.name,"
                "REASON:.reason", "--no-headers")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ev-early", "Early", "ev-late", "Late"]
    r = kubectl(cluster, "get", "events", "--sort-by=.lastTimestamp")
    assert r.returncode == 0, r.stderr
    assert "No resources found" not in r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "Early" in lines[1] and "Late" in lines[2]


