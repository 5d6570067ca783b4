"""EndpointSlice arithmetic on plain dicts: a pod as an endpoint, a Service's ports per pod,
the slices' labels, and the reconcile plan (which slices to create, update and delete).

Facts from ``staging/src/k8s.io/endpointslice`` (v1.32): ``reconciler.go``
(reconcileByAddressType, reconcileByPortMapping, finalize: existing slices of the same port
set are kept and updated in place, endpoints no longer wanted removed, new ones first put
into slices that are updated anyway, then — when less than a full slice is left — into the
fullest unchanged slice with room, then into new slices of at most ``maxEndpointsPerSlice``;
a slice left empty is deleted, a slice to delete is recycled as an update for one to create;
a Service with no endpoints keeps one placeholder slice without ports or endpoints),
``utils.go`` (podToEndpoint, getEndpointPorts, newEndpointSlice, getEndpointSlicePrefix,
setEndpointSliceLabels, ownedBy) and ``pkg/controller/util/endpoint`` (ShouldSetHostname).
Only the IPv4 address type is generated: pods here have IPv4 addresses only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .controller_utils import is_pod_ready, meta
from .endpoint import find_port

#: discovery.LabelServiceName
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
#: discovery.LabelManagedBy
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
#: the controller's name in the managed-by label (ControllerName)
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
#: v1.IsHeadlessService
HEADLESS_LABEL = "service.kubernetes.io/headless"
#: v1.LabelTopologyZone
ZONE_LABEL = "topology.kubernetes.io/zone"
ADDRESS_TYPE = "IPv4"
#: --max-endpoints-per-slice default (and its upper bound 1000)
DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100

PortKey = tuple[tuple[str, int, str, str], ...]


def endpoint_ports(service: dict, pod: dict) -> list[dict]:
    """getEndpointPorts: one ``{name, port, protocol[, appProtocol]}`` per Service port the
    pod has (FindPort: a number as is, a name looked up in its containers' ports); a headless
    Service may have none."""
    out: list[dict] = []
    for sp in (service.get("spec") or {}).get("ports") or []:
        num = find_port(pod, sp)
        if num is None:
            continue
        p: dict[str, Any] = {"name": sp.get("name") or "", "port": int(num), "protocol": sp.get("protocol") or "TCP"}
        if sp.get("appProtocol") is not None:
            p["appProtocol"] = sp["appProtocol"]
        out.append(p)
    return out


def port_key(ports: list[dict] | None) -> PortKey:
    """The identity of a port set, order ignored (endpointsliceutil.NewPortMapKey)."""
    return tuple(sorted((p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP",
                         p.get("appProtocol") or "") for p in ports or []))


def pod_addresses(pod: dict) -> list[str]:
    """getEndpointAddresses: the pod's IPv4 addresses (``status.podIPs``, else ``podIP``)."""
    st = pod.get("status") or {}
    ips = [p.get("ip") for p in st.get("podIPs") or [] if p.get("ip")] or ([st["podIP"]] if st.get("podIP") else [])
    return [ip for ip in ips if ":" not in ip][:1]


def should_set_hostname(pod: dict, service: dict) -> bool:
    """ShouldSetHostname: the pod has a hostname and its subdomain is the Service's name."""
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == meta(service).get("name") and \
        meta(pod).get("namespace") == meta(service).get("namespace")


def pod_to_endpoint(pod: dict, node: dict | None, service: dict) -> dict:
    """podToEndpoint: addresses, conditions (serving = the pod is Ready; terminating = being
    deleted; ready = serving and not terminating, or the Service's publishNotReadyAddresses),
    the Pod targetRef, nodeName, the node's ``topology.kubernetes.io/zone`` and the hostname."""
    md = meta(pod)
    serving = is_pod_ready(pod)
    terminating = md.get("deletionTimestamp") is not None
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or (serving and not terminating)
    ep: dict[str, Any] = {
        "addresses": pod_addresses(pod),
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": md.get("namespace"), "name": md.get("name"), "uid": md.get("uid")},
    }
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        ep["nodeName"] = node_name
    zone = (meta(node).get("labels") or {}).get(ZONE_LABEL) if node is not None else None
    if zone:
        ep["zone"] = zone
    if should_set_hostname(pod, service):
        ep["hostname"] = pod["spec"]["hostname"]
    return ep


def endpoint_key(ep: dict) -> tuple[str, str, tuple[str, ...]]:
    """An endpoint's identity in a slice (the EndpointSet hash: target and addresses)."""
    ref = ep.get("targetRef") or {}
    return (ref.get("namespace") or "", ref.get("name") or "", tuple(ep.get("addresses") or []))


def is_service_ip_set(service: dict) -> bool:
    """helper.IsServiceIPSet: a clusterIP that is neither empty nor ``None``."""
    ip = (service.get("spec") or {}).get("clusterIP")
    return bool(ip) and ip != "None"


def slice_labels(service: dict) -> dict[str, str]:
    """setEndpointSliceLabels: the Service's labels but the reserved ones, the headless label
    when no cluster IP is set, then the service-name and managed-by labels."""
    labels = {k: v for k, v in (meta(service).get("labels") or {}).items()
              if k not in (LABEL_SERVICE_NAME, LABEL_MANAGED_BY)}
    if not is_service_ip_set(service):
        labels[HEADLESS_LABEL] = ""
    else:
        labels.pop(HEADLESS_LABEL, None)
    labels[LABEL_SERVICE_NAME] = meta(service).get("name", "")
    labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
    return labels


def slice_prefix(service_name: str) -> str:
    """getEndpointSlicePrefix: ``<service>-`` (the service name alone if that is too long
    for a generateName: 58 characters leave room for the random suffix)."""
    prefix = f"{service_name}-"
    return prefix if len(prefix) <= 58 else service_name


def owner_ref(service: dict) -> dict:
    """metav1.NewControllerRef(service, v1 Service)."""
    md = meta(service)
    return {"apiVersion": "v1", "kind": "Service", "name": md.get("name"), "uid": md.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


def owned_by(slice_: dict, service: dict) -> bool:
    """ownedBy: a controller reference to this Service (by uid)."""
    return any(r.get("kind") == "Service" and r.get("uid") == meta(service).get("uid")
               for r in meta(slice_).get("ownerReferences") or [])


def new_slice(service: dict, ports: list[dict], endpoints: list[dict]) -> dict:
    """newEndpointSlice: generateName ``<service>-``, the labels, the owner reference."""
    md = meta(service)
    obj: dict[str, Any] = {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"generateName": slice_prefix(md.get("name", "")), "namespace": md.get("namespace"),
                     "labels": slice_labels(service), "ownerReferences": [owner_ref(service)]},
        "addressType": ADDRESS_TYPE,
        "endpoints": list(endpoints),
    }
    if ports:
        obj["ports"] = copy.deepcopy(ports)
    return obj


def is_placeholder(slice_: dict) -> bool:
    """The placeholder slice: no ports, no endpoints (placeholderSliceCompare)."""
    return not slice_.get("ports") and not slice_.get("endpoints")


@dataclass
class Plan:
    """What :func:`reconcile` decided: slices to POST (``create``, with generateName), to
    PUT (``update``, full objects with their resourceVersion) and to DELETE (``delete``)."""

    create: list[dict] = field(default_factory=list)
    update: list[dict] = field(default_factory=list)
    delete: list[dict] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.create or self.update or self.delete)


def desired_endpoints(service: dict, pods: list[dict], nodes: Mapping[str, dict],
                      should_be_in: Any) -> tuple[dict[PortKey, tuple[list[dict], dict]], list[str]]:
    """The endpoints wanted per port set: ``{port_key: (ports, {endpoint_key: endpoint})}``, and
    the names of pods left out because their node is unknown (reconcileByAddressType: skipped,
    the Service retried, unless it publishes not-ready addresses). ``should_be_in(pod)``:
    ShouldPodBeInEndpoints with terminating pods included; ``nodes``: node name → Node (the
    nodes informer's store)."""
    out: dict[PortKey, tuple[list[dict], dict]] = {}
    missing: list[str] = []
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    for pod in sorted(pods, key=lambda p: meta(p).get("name", "")):
        if not should_be_in(pod):
            continue
        ports = endpoint_ports(service, pod)
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        node = nodes.get(node_name)
        if node is None and not publish:
            missing.append(meta(pod).get("name", ""))
            continue
        ep = pod_to_endpoint(pod, node, service)
        if not ep["addresses"]:
            continue
        key = port_key(ports)
        out.setdefault(key, (ports, {}))[1][endpoint_key(ep)] = ep
    return out, missing


def reconcile(service: dict, desired: dict[PortKey, tuple[list[dict], dict]], existing: list[dict],
              max_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE) -> Plan:
    """The plan that turns ``existing`` (the slices labelled for this Service and managed by
    this controller) into ``desired`` (see the module docstring)."""
    plan = Plan()
    labels = slice_labels(service)
    by_key: dict[PortKey, list[dict]] = {}
    for s in existing:
        if s.get("addressType") != ADDRESS_TYPE or not owned_by(s, service):
            plan.delete.append(s)
        else:
            by_key.setdefault(port_key(s.get("ports")), []).append(s)
    for key, slices in by_key.items():
        if key not in desired:
            plan.delete.extend(slices)
    for key, (ports, wanted) in desired.items():
        placed: set = set()
        updated: list[dict] = []
        unchanged: list[dict] = []
        for s in by_key.get(key, []):
            eps: list[dict] = []
            changed = (meta(s).get("labels") or {}) != labels
            for ep in s.get("endpoints") or []:
                k = endpoint_key(ep)
                if k in wanted and k not in placed:
                    placed.add(k)
                    eps.append(wanted[k])
                    changed = changed or wanted[k] != ep
                else:
                    changed = True
            if not eps:
                plan.delete.append(s)
                continue
            if changed:
                body = copy.deepcopy(s)
                body["metadata"]["labels"] = dict(labels)
                body["endpoints"] = eps
                updated.append(body)
            else:
                unchanged.append(s)
        remaining = [ep for k, ep in wanted.items() if k not in placed]
        # 1. into slices updated anyway
        for body in updated:
            room = max_per_slice - len(body["endpoints"])
            if room > 0 and remaining:
                body["endpoints"].extend(remaining[:room])
                remaining = remaining[room:]
        # 2. less than a full slice left: the fullest unchanged slice it fits in
        if remaining and len(remaining) < max_per_slice:
            fits = [s for s in unchanged if max_per_slice - len(s.get("endpoints") or []) >= len(remaining)]
            if fits:
                target = max(fits, key=lambda s: len(s.get("endpoints") or []))
                unchanged.remove(target)
                body = copy.deepcopy(target)
                body["endpoints"] = list(body.get("endpoints") or []) + remaining
                updated.append(body)
                remaining = []
        # 3. new slices
        while remaining:
            plan.create.append(new_slice(service, ports, remaining[:max_per_slice]))
            remaining = remaining[max_per_slice:]
        plan.update.extend(updated)
    # the placeholder: a Service with no endpoints keeps one empty slice
    if len(existing) == len(plan.delete) and not plan.create:
        if len(plan.delete) == 1 and is_placeholder(plan.delete[0]) and owned_by(plan.delete[0], service) and \
                plan.delete[0].get("addressType") == ADDRESS_TYPE:
            keep = plan.delete.pop()
            if (meta(keep).get("labels") or {}) != labels:
                body = copy.deepcopy(keep)
                body["metadata"]["labels"] = dict(labels)
                plan.update.append(body)
        else:
            plan.create.append(new_slice(service, [], []))
    # finalize: recycle a slice to delete as an update for one to create
    i = 0
    while i < len(plan.delete) and plan.create:
        old = plan.delete[i]
        if old.get("addressType") == ADDRESS_TYPE and owned_by(old, service):
            new = plan.create.pop()
            body = copy.deepcopy(old)
            body["metadata"]["labels"] = new["metadata"]["labels"]
            body["endpoints"] = new["endpoints"]
            if new.get("ports"):
                body["ports"] = new["ports"]
            else:
                body.pop("ports", None)
            plan.update.append(body)
            plan.delete.pop(i)
        else:
            i += 1
    return plan
