"""One declaration of how list fields merge: the published OpenAPI v3, strategic merge patch
and server-side apply agree on every path (``controlplane.api.listfields``)."""

from __future__ import annotations

import json
import uuid

import pytest

from components.apiserver import discovery
from components.apiserver import fieldmanager as fm
from controlplane.api import listfields
from controlplane.api.patch import merge_key, strategic_merge_patch
from controlplane.api.resources import REGISTRY


def _resolve(node: dict, schemas: dict) -> dict:
    for ref in node.get("allOf", ()):
        return schemas[ref["$ref"].rsplit("/", 1)[-1]]
    if "$ref" in node:
        return schemas[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _lists(node: dict, schemas: dict, path: str, out: dict, depth: int = 0) -> None:
    """Every array property under ``node`` by dotted path (list elements add no segment)."""
    node = _resolve(node, schemas)
    if depth > 12:
        return
    for name, prop in (node.get("properties") or {}).items():
        sub = f"{path}.{name}" if path else name
        if prop.get("type") == "array":
            out[sub] = prop
            _lists(prop.get("items") or {}, schemas, sub, out, depth + 1)
        else:
            _lists(prop, schemas, sub, out, depth + 1)


def _served_lists() -> list[tuple[str, str, dict]]:
    cases = {}
    for r in REGISTRY:
        doc = discovery.openapi_doc(r.api_version)
        schemas = doc["components"]["schemas"]
        top = schemas[f"io.k8s.controlplane.{r.group or 'core'}.{r.version}.{r.kind}"]
        found: dict[str, dict] = {}
        _lists(top, schemas, "", found)
        for path, prop in found.items():
            cases[(r.kind, path)] = prop
    return [(k, p, prop) for (k, p), prop in sorted(cases.items())]


CASES = _served_lists()


@pytest.mark.parametrize(("kind", "path", "prop"), CASES, ids=[f"{k}:{p}" for k, p, _ in CASES])
def test_openapi_list_keys_match_patch_and_apply(kind, path, prop):
    # strategic merge patch: the published patch merge key is the one the server merges by
    assert prop.get("x-kubernetes-patch-merge-key") == merge_key(kind, path)
    # server-side apply: the published list-map keys (or, without a list type, the merge key
    # of a "merge" list, as kube-openapi's schemaconv reads it) are the field manager's keys
    if prop.get("x-kubernetes-list-type") == "map":
        published = tuple(prop["x-kubernetes-list-map-keys"])
    elif "x-kubernetes-list-type" not in prop and "merge" in prop.get("x-kubernetes-patch-strategy", ""):
        published = (prop.get("x-kubernetes-patch-merge-key"),) if "x-kubernetes-patch-merge-key" in prop else None
    else:
        published = None
    assert published == fm.list_keys(kind, path)


def test_walk_covers_the_keyed_lists():
    by = {(k, p): prop for k, p, prop in CASES}
    assert by[("Service", "spec.ports")]["x-kubernetes-patch-merge-key"] == "port"
    assert by[("Service", "spec.ports")]["x-kubernetes-list-map-keys"] == ["port", "protocol"]
    ports = by[("Deployment", "spec.template.spec.containers.ports")]
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert by[("Pod", "spec.tolerations")]["x-kubernetes-list-type"] == "atomic"
    assert by[("Pod", "metadata.finalizers")]["x-kubernetes-list-type"] == "set"
    assert by[("Pod", "spec.topologySpreadConstraints")]["x-kubernetes-list-map-keys"] == [
        "topologyKey", "whenUnsatisfiable"]


def test_every_declared_path_resolves_to_the_same_tags_by_type_and_by_kind():
    # listfields.for_kind walks the struct graph; schemas read listfields.declared per struct
    for r in REGISTRY:
        for path, f in r.list_fields.items():
            assert listfields.lookup(r.kind, path) is f


def kube_dns_pod(ports):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dns"},
            "spec": {"containers": [{"name": "dnsmasq", "image": "dnsmasq:1", "ports": ports}]}}


DNS_PORTS = [{"name": "dns", "containerPort": 5353, "protocol": "UDP"},
             {"name": "dns-tcp", "containerPort": 5353, "protocol": "TCP"}]


def test_apply_keeps_container_ports_of_one_number_and_two_protocols():
    out = fm.apply("Pod", {}, kube_dns_pod(DNS_PORTS), "kubectl", "v1", "t0", False)
    assert out["spec"]["containers"][0]["ports"] == DNS_PORTS
    owned = out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"dnsmasq"}']
    assert set(owned["f:ports"]) == {'k:{"containerPort":5353,"protocol":"UDP"}',
                                     'k:{"containerPort":5353,"protocol":"TCP"}'}
    # re-applying with one port renamed changes that element only
    renamed = [dict(DNS_PORTS[0], name="dns-udp"), DNS_PORTS[1]]
    again = fm.apply("Pod", json.loads(json.dumps(out)), kube_dns_pod(renamed), "kubectl", "v1", "t1", False)
    assert again["spec"]["containers"][0]["ports"] == renamed


def test_apply_port_without_protocol_is_the_tcp_element():
    cur = fm.apply("Pod", {}, kube_dns_pod(DNS_PORTS), "kubectl", "v1", "t0", False)
    out = fm.apply("Pod", json.loads(json.dumps(cur)),
                   kube_dns_pod([DNS_PORTS[0], {"name": "dns-tcp", "containerPort": 5353, "hostPort": 5353}]),
                   "kubectl", "v1", "t1", False)
    # (the field manager gave up "protocol", which it no longer applies; defaulting sets it again)
    assert [(p.get("protocol", "TCP"), p.get("hostPort")) for p in out["spec"]["containers"][0]["ports"]] == [
        ("UDP", None), ("TCP", 5353)]


async def test_apply_over_http_keeps_both_dns_ports(api):
    ns = "t-" + uuid.uuid4().hex[:8]
    await api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/dns?fieldManager=kubectl", data=json.dumps(kube_dns_pod(DNS_PORTS)),
                        headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 201, await r.text()
    got = await (await api.get(f"/api/v1/namespaces/{ns}/pods/dns")).json()
    assert [(p["containerPort"], p["protocol"]) for p in got["spec"]["containers"][0]["ports"]] == [
        (5353, "UDP"), (5353, "TCP")]


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"},
                    "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                              {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}]}}


def test_strategic_merge_patch_merges_service_ports_by_port():
    out = strategic_merge_patch(SERVICE, {"spec": {"ports": [{"port": 80, "targetPort": 9090},
                                                             {"port": 8081, "name": "admin"}]}}, "Service")
    assert out["spec"]["ports"] == [
        {"name": "http", "port": 80, "targetPort": 9090, "protocol": "TCP"},
        {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"},
        {"port": 8081, "name": "admin"}]


def test_strategic_merge_patch_deletes_a_service_port_by_port():
    out = strategic_merge_patch(SERVICE, {"spec": {"ports": [{"port": 443, "$patch": "delete"}]}}, "Service")
    assert [p["name"] for p in out["spec"]["ports"]] == ["http"]


def test_endpoints_addresses_are_atomic():
    ep = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}
    out = strategic_merge_patch(ep, {"subsets": [{"addresses": [{"ip": "10.0.0.2"}]}]}, "Endpoints")
    assert out["subsets"] == [{"addresses": [{"ip": "10.0.0.2"}]}]
