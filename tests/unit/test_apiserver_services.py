"""Service ClusterIP / NodePort allocation and the `kubernetes` Service."""

from __future__ import annotations

import ipaddress
import uuid

import pytest

from components.apiserver.servicealloc import AllocationError, ServiceAllocator


def svc(name, typ="ClusterIP", **spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "uid": "u-" + name},
            "spec": {"type": typ, "selector": {"app": name}, "ports": [{"port": 80, "protocol": "TCP"}], **spec}}


def test_allocator_unique_in_range_and_errors():
    stored: list[dict] = []
    a = ServiceAllocator("10.0.0.0/29", "30000-30002", services=lambda: stored)
    ips = set()
    for i in range(5):                                  # /29: .2 .. .6 (network, .1, broadcast excluded)
        s = svc(f"s{i}")
        a.allocate(s)
        stored.append(s)
        ips.add(s["spec"]["clusterIP"])
        assert s["spec"]["clusterIPs"] == [s["spec"]["clusterIP"]]
    assert ips == {f"10.0.0.{i}" for i in range(2, 7)}
    with pytest.raises(AllocationError, match="range is full"):
        a.allocate(svc("full"))
    with pytest.raises(AllocationError) as e:
        a.allocate(svc("taken", clusterIP="10.0.0.3"))
    assert e.value.causes[0]["message"] == ('Invalid value: ["10.0.0.3"]: failed to allocate IP 10.0.0.3: '
                                            "provided IP is already allocated")
    with pytest.raises(AllocationError, match=r"not in the valid range. The range of valid IPs is 10.0.0.0/29"):
        a.allocate(svc("out", clusterIP="10.1.0.3"))
    headless = svc("h", clusterIP="None")
    a.allocate(headless)
    assert headless["spec"]["clusterIPs"] == ["None"]


def test_node_ports_and_update_carry_over():
    stored: list[dict] = []
    a = ServiceAllocator("10.96.0.0/12", "30000-30001", services=lambda: stored)
    s = svc("np", "NodePort")
    a.allocate(s)
    stored.append(s)
    port = s["spec"]["ports"][0]["nodePort"]
    assert 30000 <= port <= 30001 and ipaddress.ip_address(s["spec"]["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    new = svc("np", "NodePort")                          # as kubectl apply sends it: no clusterIP / nodePort
    a.allocate(new, old=s)
    assert new["spec"]["clusterIP"] == s["spec"]["clusterIP"] and new["spec"]["ports"][0]["nodePort"] == port
    other = svc("np2", "NodePort", ports=[{"port": 80, "protocol": "TCP", "nodePort": port}])
    with pytest.raises(AllocationError, match=f"Invalid value: {port}: provided port is already allocated"):
        a.allocate(other)
    bad = svc("np3", "NodePort", ports=[{"port": 80, "protocol": "TCP", "nodePort": 80}])
    with pytest.raises(AllocationError, match="The range of valid ports is 30000-30001"):
        a.allocate(bad)
    ext = svc("ext", "ExternalName", externalName="example.com")
    a.allocate(ext)
    assert "clusterIP" not in ext["spec"]


async def test_services_over_http(api):
    ns = "t-" + uuid.uuid4().hex[:8]
    assert (await api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns}})).status == 201
    body = svc("web", "NodePort")
    del body["metadata"]["uid"]
    r = await api.post(f"/api/v1/namespaces/{ns}/services", json=body)
    created = await r.json()
    assert r.status == 201, created
    ip = created["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/12") and ip != "10.96.0.1"
    assert 30000 <= created["spec"]["ports"][0]["nodePort"] <= 32767
    r = await api.put(f"/api/v1/namespaces/{ns}/services/web", json={**body, "metadata": created["metadata"]})
    assert r.status == 200 and (await r.json())["spec"]["clusterIP"] == ip     # carried over
    clash = svc("clash", clusterIP=ip)
    del clash["metadata"]["uid"]
    r = await api.post(f"/api/v1/namespaces/{ns}/services", json=clash)
    err = await r.json()
    assert r.status == 422 and err["reason"] == "Invalid"
    assert err["message"] == (f'Service "clash" is invalid: spec.clusterIPs: Invalid value: ["{ip}"]: '
                              f"failed to allocate IP {ip}: provided IP is already allocated")
    await api.server_obj.ensure_kubernetes_service("127.0.0.1", 6443)
    k = await (await api.get("/api/v1/namespaces/default/services/kubernetes")).json()
    assert k["spec"]["clusterIP"] == "10.96.0.1" and k["spec"]["ports"][0]["port"] == 443
    ep = await (await api.get("/api/v1/namespaces/default/endpoints/kubernetes")).json()
    assert ep["subsets"][0]["addresses"][0]["ip"] == "127.0.0.1" and ep["subsets"][0]["ports"][0]["port"] == 6443
