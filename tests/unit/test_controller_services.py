"""ServiceAccount and Endpoints controllers on the fake API."""

from __future__ import annotations

from components.controller_manager.endpoint import ENDPOINTS, SERVICES, EndpointController
from components.controller_manager.serviceaccount import SERVICEACCOUNTS, ServiceAccountsController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NAMESPACES, PODS


def env():
    client, ctx, _ = fake_context()
    return client, ctx


async def test_default_serviceaccount_in_every_active_namespace_and_recreated():
    client, ctx = env()
    sac = ServiceAccountsController(ctx)
    client.seed(NAMESPACES, {"metadata": {"name": "default"}, "status": {"phase": "Active"}})
    client.seed(NAMESPACES, {"metadata": {"name": "team"}})
    client.seed(NAMESPACES, {"metadata": {"name": "going", "deletionTimestamp": "2024-01-01T00:00:00Z",
                                          "finalizers": ["x"]}, "status": {"phase": "Terminating"}})
    await settle(sac)
    have = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in client.all(SERVICEACCOUNTS)}
    assert have == {("default", "default"), ("team", "default")}
    await client.delete(SERVICEACCOUNTS, "default", "team")
    await settle(sac)
    assert ("team", "default") in {(s["metadata"]["namespace"], s["metadata"]["name"])
                                   for s in client.all(SERVICEACCOUNTS)}
    creates = client.actions("create", "serviceaccounts")
    assert len(creates) == 3


def svc(name="web", selector={"app": "web"}, ports=None, **spec):
    return {"metadata": {"name": name, "namespace": "default", "labels": {"tier": "front"}},
            "spec": {**({"selector": selector} if selector else {}),
                     "ports": ports or [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                     **spec}}


def pod(name, ip, ready=True, labels={"app": "web"}, node="node01", **md):
    return {"metadata": {"name": name, "namespace": "default", "labels": labels, **md},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                                                       "ports": [{"name": "web", "containerPort": 8080}]}]},
            "status": {"phase": "Running", **({"podIP": ip} if ip else {}),
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


async def test_endpoints_list_ready_and_not_ready_pods_with_target_ports():
    client, ctx = env()
    epc = EndpointController(ctx)
    client.seed(PODS, pod("b", "10.244.1.20"))
    client.seed(PODS, pod("a", "10.244.1.3"))
    client.seed(PODS, pod("slow", "10.244.2.5", ready=False, node="node02"))
    client.seed(PODS, pod("noip", None))
    client.seed(PODS, pod("other", "10.244.1.9", labels={"app": "db"}))
    client.seed(SERVICES, svc())
    client.seed(SERVICES, svc("manual", selector=None))
    await settle(epc)
    eps = {e["metadata"]["name"]: e for e in client.all(ENDPOINTS)}
    assert set(eps) == {"web"}                    # no selector: user-managed, left alone
    ep = eps["web"]
    assert ep["metadata"]["labels"] == {"tier": "front"}
    assert len(ep["subsets"]) == 1
    sub = ep["subsets"][0]
    assert [a["ip"] for a in sub["addresses"]] == ["10.244.1.3", "10.244.1.20"]
    assert sub["addresses"][0]["nodeName"] == "node01"
    assert sub["addresses"][0]["targetRef"]["kind"] == "Pod" and sub["addresses"][0]["targetRef"]["name"] == "a"
    assert [a["ip"] for a in sub["notReadyAddresses"]] == ["10.244.2.5"]
    assert sub["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    # the slow pod becomes ready; a pod leaves by relabelling
    cur = await client.get(PODS, "slow", "default")
    cur["status"]["conditions"][0]["status"] = "True"
    await client.update_status(PODS, cur)
    await client.patch(PODS, "b", {"metadata": {"labels": {"app": "old"}}}, "default")
    await settle(epc)
    sub = client.objects[(ENDPOINTS, "default/web")]["subsets"][0]
    assert [a["ip"] for a in sub["addresses"]] == ["10.244.1.3", "10.244.2.5"]
    assert "notReadyAddresses" not in sub
    n = len(client.writes())
    epc.enqueue("default/web")
    await settle(epc)
    assert len(client.writes()) == n                 # unchanged: no write
    await client.delete(SERVICES, "web", "default")
    await settle(epc)
    assert client.all(ENDPOINTS) == []


async def test_named_target_port_terminating_pods_and_empty_service():
    client, ctx = env()
    epc = EndpointController(ctx)
    client.seed(PODS, pod("a", "10.244.1.3"))
    client.seed(PODS, pod("dying", "10.244.1.4", deletionTimestamp="2024-01-01T00:00:00Z"))
    client.seed(SERVICES, svc(ports=[{"port": 80, "targetPort": "web", "protocol": "TCP"}]))
    client.seed(SERVICES, svc("empty", selector={"app": "none"}, clusterIP="None"))
    await settle(epc)
    web = client.objects[(ENDPOINTS, "default/web")]
    assert web["subsets"] == [{"addresses": [web["subsets"][0]["addresses"][0]],
                               "ports": [{"port": 8080, "protocol": "TCP"}]}]
    assert web["subsets"][0]["addresses"][0]["ip"] == "10.244.1.3"
    empty = client.objects[(ENDPOINTS, "default/empty")]
    assert "subsets" not in empty
    assert empty["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
