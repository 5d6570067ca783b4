"""The EndpointSlice controller (issue 12 item 8) and its reconciler, on the fake API."""

from __future__ import annotations

import pytest

from components.controller_manager import endpointslice_util as esu
from components.controller_manager.config import ControllerConfig
from components.controller_manager.endpointslice import ENDPOINTSLICES, SERVICES, EndpointSliceController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NODES, PODS


def svc(name="web", selector={"app": "web"}, ports=None, **spec):
    return {"metadata": {"name": name, "namespace": "default", "labels": {"tier": "front"}},
            "spec": {**({"selector": selector} if selector else {}), "clusterIP": "10.96.0.10",
                     "ports": ports or [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                     **spec}}


def pod(name, ip, ready=True, labels={"app": "web"}, node="node01", **md):
    return {"metadata": {"name": name, "namespace": "default", "labels": labels, **md},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                                                       "ports": [{"name": "web", "containerPort": 8080}]}]},
            "status": {"phase": "Running", **({"podIP": ip} if ip else {}),
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def env(max_per_slice=100):
    client, ctx, _ = fake_context(config=ControllerConfig(max_endpoints_per_slice=max_per_slice))
    client.seed(NODES, {"metadata": {"name": "node01", "labels": {esu.ZONE_LABEL: "zone-a"}}})
    client.seed(NODES, {"metadata": {"name": "node02"}})
    return client, EndpointSliceController(ctx)


def slices_of(client, service="web"):
    return [s for s in client.all(ENDPOINTSLICES)
            if s["metadata"]["labels"].get(esu.LABEL_SERVICE_NAME) == service]


async def test_slice_for_a_service_with_ready_not_ready_and_terminating_pods():
    client, esc = env()
    client.seed(PODS, pod("a", "10.244.1.3"))
    client.seed(PODS, pod("slow", "10.244.2.5", ready=False, node="node02"))
    client.seed(PODS, pod("going", "10.244.1.7", deletionTimestamp="2024-01-01T00:00:00Z", finalizers=["x"]))
    client.seed(PODS, pod("noip", None))
    client.seed(PODS, pod("other", "10.244.1.9", labels={"app": "db"}))
    s = client.seed(SERVICES, svc())
    client.seed(SERVICES, svc("manual", selector=None))
    client.seed(SERVICES, svc("ext", type="ExternalName", externalName="example.com"))
    await settle(esc)
    assert slices_of(client, "manual") == [] and slices_of(client, "ext") == []
    [sl] = slices_of(client)
    md = sl["metadata"]
    assert md["name"].startswith("web-") and md["generateName"] == "web-"
    assert md["labels"] == {"tier": "front", esu.LABEL_SERVICE_NAME: "web",
                            esu.LABEL_MANAGED_BY: "endpointslice-controller.k8s.io"}
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                      "uid": s["metadata"]["uid"], "controller": True,
                                      "blockOwnerDeletion": True}]
    assert sl["addressType"] == "IPv4"
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    eps = {e["targetRef"]["name"]: e for e in sl["endpoints"]}
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in client.all(PODS)}
    assert set(eps) == {"a", "slow", "going"}
    assert eps["a"] == {"addresses": ["10.244.1.3"],
                        "conditions": {"ready": True, "serving": True, "terminating": False},
                        "targetRef": {"kind": "Pod", "namespace": "default", "name": "a", "uid": uids["a"]},
                        "nodeName": "node01", "zone": "zone-a"}
    assert eps["slow"]["conditions"] == {"ready": False, "serving": False, "terminating": False}
    assert "zone" not in eps["slow"] and eps["slow"]["nodeName"] == "node02"
    assert eps["going"]["conditions"] == {"ready": False, "serving": True, "terminating": True}


async def test_pods_change_updates_the_slice_in_place_and_no_pods_leave_a_placeholder():
    client, esc = env()
    client.seed(SERVICES, svc())
    await settle(esc)
    [placeholder] = slices_of(client)
    assert placeholder["endpoints"] == [] and "ports" not in placeholder
    client.seed(PODS, pod("a", "10.244.1.3"))
    await settle(esc)
    [sl] = slices_of(client)
    assert sl["metadata"]["name"] == placeholder["metadata"]["name"]       # recycled, not re-created
    assert [e["targetRef"]["name"] for e in sl["endpoints"]] == ["a"]
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    p = client.all(PODS)[0]
    p["metadata"]["labels"] = {"app": "other"}
    await client.update(PODS, p)
    await settle(esc)
    [sl] = slices_of(client)
    assert sl["endpoints"] == [] and "ports" not in sl
    creates = client.actions("create", "endpointslices")
    assert len(creates) == 1
    # a resync with nothing changed writes nothing
    before = len(client.actions())
    esc.enqueue("default/web")
    await settle(esc)
    assert len(client.actions()) == before


@pytest.mark.parametrize("pods,max_per_slice,sizes", [
    (5, 2, [2, 2, 1]), (100, 100, [100]), (101, 100, [100, 1]), (0, 3, [0]),
], ids=["five pods, two per slice", "exactly one full slice", "one more than a slice", "no pods: placeholder"])
async def test_max_endpoints_per_slice(pods, max_per_slice, sizes):
    client, esc = env(max_per_slice)
    for i in range(pods):
        client.seed(PODS, pod(f"p{i:03d}", f"10.244.{i // 250}.{i % 250 + 1}"))
    client.seed(SERVICES, svc())
    await settle(esc)
    got = sorted((len(s["endpoints"]) for s in slices_of(client)), reverse=True)
    assert got == sizes
    names = [e["targetRef"]["name"] for s in slices_of(client) for e in s["endpoints"]]
    assert len(names) == len(set(names)) == pods


async def test_pods_with_different_ports_get_separate_slices():
    client, esc = env()
    client.seed(PODS, pod("a", "10.244.1.3"))
    b = pod("b", "10.244.1.4")
    b["spec"]["containers"][0]["ports"] = [{"name": "web", "containerPort": 9090}]
    client.seed(PODS, b)
    client.seed(SERVICES, svc(ports=[{"name": "http", "port": 80, "targetPort": "web", "protocol": "TCP"}]))
    await settle(esc)
    by_port = {s["ports"][0]["port"]: [e["targetRef"]["name"] for e in s["endpoints"]] for s in slices_of(client)}
    assert by_port == {8080: ["a"], 9090: ["b"]}


async def test_headless_service_label_and_hostname():
    client, esc = env()
    p = pod("a", "10.244.1.3")
    p["spec"].update({"hostname": "a", "subdomain": "web"})
    client.seed(PODS, p)
    client.seed(SERVICES, svc(clusterIP="None"))
    await settle(esc)
    [sl] = slices_of(client)
    assert sl["metadata"]["labels"][esu.HEADLESS_LABEL] == ""
    assert sl["endpoints"][0]["hostname"] == "a"


async def test_pod_on_an_unknown_node_is_left_out_and_the_service_retried():
    client, esc = env()
    client.seed(PODS, pod("a", "10.244.1.3"))
    client.seed(PODS, pod("lost", "10.244.9.3", node="gone"))
    client.seed(SERVICES, svc())
    await esc.process_next()
    [sl] = slices_of(client)
    assert [e["targetRef"]["name"] for e in sl["endpoints"]] == ["a"]
    assert esc.queue.num_requeues("default/web") == 1


def test_reconcile_recycles_a_slice_to_delete_and_drops_foreign_ones():
    service = svc()
    service["metadata"]["uid"] = "u1"
    ep = esu.pod_to_endpoint({**pod("a", "10.244.1.3"), "metadata": {"name": "a", "namespace": "default",
                                                                      "uid": "p1"}}, None, service)
    old_ports = [{"name": "http", "port": 7070, "protocol": "TCP"}]
    mine = {**esu.new_slice(service, old_ports, [ep]), "metadata": {
        "name": "web-abcde", "namespace": "default", "resourceVersion": "5", "labels": esu.slice_labels(service),
        "ownerReferences": [esu.owner_ref(service)]}}
    foreign = {**mine, "metadata": {**mine["metadata"], "name": "web-zzzzz", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Service", "name": "web", "uid": "old"}]}}
    desired = {esu.port_key([{"name": "http", "port": 8080, "protocol": "TCP"}]):
               ([{"name": "http", "port": 8080, "protocol": "TCP"}], {esu.endpoint_key(ep): ep})}
    plan = esu.reconcile(service, desired, [mine, foreign])
    assert plan.create == []
    assert [s["metadata"]["name"] for s in plan.update] == ["web-abcde"]
    assert plan.update[0]["ports"][0]["port"] == 8080 and plan.update[0]["metadata"]["resourceVersion"] == "5"
    assert [s["metadata"]["name"] for s in plan.delete] == ["web-zzzzz"]
