"""The pytest plugin (controlplane/testing/pytest_plugin.py) in a sub-pytest: its fixtures
give a usable cluster, and a failing test's report carries the components' logs."""

from __future__ import annotations

import re
import shutil

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

USES_FIXTURES = '''
import json

import pytest


def test_cluster_is_usable(cluster, kubeconfig):
    assert cluster.node_names == ["node01", "node02"]
    assert open(kubeconfig).read().count(cluster.server) == 1
    status, nodes = cluster.request("GET", "/api/v1/nodes")
    assert status == 200
    assert sorted(n["metadata"]["name"] for n in nodes["items"]) == ["node01", "node02"]


def test_namespace_has_its_default_service_account(cluster, namespace):
    status, sa = cluster.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
    assert status == 200, sa
    pytest.shared_namespace = namespace


def test_namespace_is_gone_after_its_test(cluster):
    status, _ = cluster.request("GET", f"/api/v1/namespaces/{pytest.shared_namespace}")
    assert status == 404


def test_kubectl_runs_a_pod_to_running(kubectl, namespace):
    kubectl("-n", namespace, "run", "web", "--image=nginx")
    kubectl("-n", namespace, "wait", "--for=jsonpath={.status.phase}=Running", "pod/web", "--timeout=60s")
    pod = json.loads(kubectl("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert pod["spec"]["nodeName"] in ("node01", "node02")


def test_kubectl_check_false_returns_the_failure(kubectl):
    p = kubectl("get", "pod", "nope", "-n", "default", check=False)
    assert p.returncode == 1 and "NotFound" in p.stderr


def test_k8s_client_lists_nodes(k8s_client):
    from kubernetes import client
    names = sorted(n.metadata.name for n in client.CoreV1Api(k8s_client).list_node().items)
    assert names == ["node01", "node02"]


@pytest.mark.controlplane(nodes=["solo"])
def test_marker_gives_a_cluster_of_its_own(controlplane, cluster, kubectl):
    assert controlplane is not cluster
    assert kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/solo"]
'''

FAILS = '''
def test_fails_after_creating_a_pod(cluster, namespace):
    status, _ = cluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "doomed"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert status == 201
    # the scheduler and the pod's kubelet have logged once the pod runs
    cluster.watch_until(f"/api/v1/namespaces/{namespace}/pods",
                        lambda pods: (pods.get("doomed", {}).get("status") or {}).get("phase") == "Running")
    assert False, "on purpose"


def test_passes_without_logs(cluster):
    pass
'''


@pytest.fixture()
def kubectl_installed() -> None:
    if not shutil.which("kubectl"):
        pytest.skip("kubectl not on PATH")


def test_fixtures_give_a_usable_cluster(pytester, kubectl_installed):
    pytester.makepyfile(test_uses_fixtures=USES_FIXTURES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", timeout=240)
    result.assert_outcomes(passed=7)


def test_failing_report_carries_component_logs(pytester):
    pytester.makepyfile(test_fails=FAILS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", timeout=240)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    failure = out.split("test_fails_after_creating_a_pod", 1)[1]
    # every component that logged during the test has a section (the pod's node's kubelet at least)
    for component in ("apiserver", "scheduler", "kubelet-node0[12]"):
        assert re.search(rf"-- controlplane {component} log --", failure), component
    # only what was logged during the test: the pod's scheduling, not the cluster's start
    assert "doomed" in failure
    assert "event=apiserver.ready" not in failure
    assert out.count("controlplane apiserver log") == 1  # the passing test has none


PER_WORKER = '''
import os

import pytest


@pytest.mark.parametrize("i", range(4))
def test_records_its_workers_cluster(cluster, namespace, i):
    status, _ = cluster.request("GET", f"/api/v1/namespaces/{namespace}")
    assert status == 200
    with open(os.path.join(os.environ["SERVERS_DIR"], f"{i}"), "w") as f:
        f.write(f"{os.environ['PYTEST_XDIST_WORKER']} {cluster.server}")
'''


def test_xdist_workers_get_a_cluster_each(pytester, monkeypatch):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    servers = pytester.mkdir("servers")
    monkeypatch.setenv("SERVERS_DIR", str(servers))
    pytester.makepyfile(test_per_worker=PER_WORKER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "load", timeout=240)
    result.assert_outcomes(passed=4)
    by_worker: dict[str, set[str]] = {}
    for f in servers.iterdir():
        worker, server = f.read_text().split()
        by_worker.setdefault(worker, set()).add(server)
    servers_seen = [s for v in by_worker.values() for s in v]
    assert len(by_worker) == 2
    assert all(len(v) == 1 for v in by_worker.values())      # one cluster per worker...
    assert len(set(servers_seen)) == len(servers_seen)      # ...and none shared


ASYNC_CLIENT = '''
async def test_async_client_lists_nodes(k8s_async_client, namespace):
    from kubernetes_asyncio import client
    core = client.CoreV1Api(k8s_async_client)
    nodes = await core.list_node()
    assert sorted(n.metadata.name for n in nodes.items) == ["node01", "node02"]
    sa = await core.read_namespaced_service_account("default", namespace)
    assert sa.metadata.namespace == namespace
'''


def test_async_client_fixture(pytester):
    pytest.importorskip("kubernetes_asyncio", reason="kubernetes_asyncio is not installed")
    pytester.makepyfile(test_async=ASYNC_CLIENT)
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=240)
    result.assert_outcomes(passed=1)
