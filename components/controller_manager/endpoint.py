"""The endpoints controller: one core/v1 Endpoints object per Service with a
selector, listing the IPs of the pods it selects.

Facts from ``pkg/controller/endpoint/endpoints_controller.go`` (syncService,
addEndpointSubset, podToEndpointAddressForService, endpointPortFromServicePort),
``pkg/api/v1/endpoints/util.go`` (RepackSubsets), ``pkg/api/v1/pod/util.go``
(FindPort) and ``pkg/controller/util/endpoint`` (ShouldPodBeInEndpoints):

* a pod counts when it has ``status.podIP``, is not being deleted (unless the Service
  has ``publishNotReadyAddresses``) and can still run (restartPolicy Never: not
  Succeeded/Failed; OnFailure: not Succeeded);
* its address ``{ip, nodeName, targetRef: {kind: Pod, namespace, name, uid}}`` goes
  to ``addresses`` when the pod is Ready (or publishNotReadyAddresses), to
  ``notReadyAddresses`` otherwise;
* each Service port gives ``{name, port, protocol}`` with ``port`` = the targetPort
  (a number, or a container port looked up by name; a pod without that named port is
  left out for that port); subsets group addresses with identical port sets, sorted;
* the Endpoints carries the Service's labels (plus ``service.kubernetes.io/headless``
  for ``clusterIP: None``); it is written only when it would change, and deleted
  with its Service. Services without a selector are left alone (user-managed).
"""

from __future__ import annotations

import logging

from controlplane.api.resources import PODS, get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import selector_from_dict

from .controller import Controller, ControllerContext
from .controller_utils import is_pod_ready, meta, pod_service_memberships

log = logging.getLogger("controller-manager")

SERVICES = get("services")
ENDPOINTS = get("endpoints")
HEADLESS_LABEL = "service.kubernetes.io/headless"


def should_pod_be_in_endpoints(pod: dict, include_terminating: bool) -> bool:
    """ShouldPodBeInEndpoints (see the module docstring)."""
    status = pod.get("status") or {}
    if not status.get("podIP"):
        return False
    if not include_terminating and meta(pod).get("deletionTimestamp"):
        return False
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    phase = status.get("phase")
    if policy == "Never":
        return phase not in ("Succeeded", "Failed")
    if policy == "OnFailure":
        return phase != "Succeeded"
    return True


def find_port(pod: dict, service_port: dict) -> int | None:
    """The pod's port for a Service port (FindPort): an int targetPort as is, a
    named one from the containers' ports (same protocol); None when absent."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    proto = service_port.get("protocol") or "TCP"
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target and (p.get("protocol") or "TCP") == proto:
                return p.get("containerPort")
    return None


def endpoint_subsets(service: dict, pods: list[dict]) -> list[dict]:
    """The repacked ``subsets`` for ``service`` over the selected ``pods``."""
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    ports = spec.get("ports") or []
    # (ip, ready) → (address, set of EndpointPort tuples)
    addrs: dict[tuple[str, bool], tuple[dict, set]] = {}
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, publish):
            continue
        md = meta(pod)
        ip: str = pod["status"]["podIP"]  # set: should_pod_be_in_endpoints checked it
        addr = {"ip": ip, "targetRef": {"kind": "Pod", "namespace": md.get("namespace"), "name": md.get("name"),
                                        "uid": md.get("uid")}}
        if (pod.get("spec") or {}).get("nodeName"):
            addr["nodeName"] = pod["spec"]["nodeName"]
        ready = publish or is_pod_ready(pod)
        port_set: set = set()
        for sp in ports:
            num = find_port(pod, sp)
            if num is None:
                event(log, "endpoints.port_not_found", service=key_of(service), pod=md.get("name"),
                      port=str(sp.get("targetPort")))
                continue
            port_set.add((sp.get("name") or "", int(num), sp.get("protocol") or "TCP"))
        if ports and not port_set:
            continue
        addrs.setdefault((ip, ready), (addr, set()))[1].update(port_set)
    groups: dict[frozenset, dict[str, list]] = {}
    for (ip, ready), (addr, port_set) in addrs.items():
        g = groups.setdefault(frozenset(port_set), {"addresses": [], "notReadyAddresses": []})
        g["addresses" if ready else "notReadyAddresses"].append(addr)
    out = []
    for ports_of_group, g in groups.items():
        subset: dict = {}
        for k in ("addresses", "notReadyAddresses"):
            if g[k]:
                subset[k] = sorted(g[k], key=lambda a: (_ip_key(a["ip"]), a["targetRef"]["name"]))
        eps = []
        for name, port, proto in sorted(ports_of_group, key=lambda p: (p[0], p[1], p[2])):
            ep = {"port": port, "protocol": proto}
            if name:
                ep = {"name": name, **ep}
            eps.append(ep)
        if eps:
            subset["ports"] = eps
        out.append(subset)
    out.sort(key=lambda s: str(s.get("ports")))
    return out


def _ip_key(ip: str) -> tuple:
    try:
        return tuple(int(x) for x in ip.split("."))
    except ValueError:
        return (ip,)


class EndpointController(Controller):
    """See the module docstring. Queue keys are Service keys ``namespace/name``."""

    name = "endpoint"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.services = ctx.informers.informer(SERVICES)
        self.pods = ctx.informers.informer(PODS)
        self.endpoints = ctx.informers.informer(ENDPOINTS)
        self.services.add_handlers(lambda s: self.enqueue(key_of(s)), lambda o, n: self.enqueue(key_of(n)),
                                   lambda s: self.enqueue(key_of(s)))
        self.pods.add_handlers(lambda p: self._pod_changed(p), lambda o, n: self._pod_changed(n, o),
                               lambda p: self._pod_changed(p))
        self.endpoints.add_handlers(None, lambda o, n: self._endpoints_changed(n), self._endpoints_changed)

    def _pod_changed(self, pod: dict, old: dict | None = None) -> None:
        for key in pod_service_memberships(pod, old, self.services.store.values()):
            self.enqueue(key)

    def _endpoints_changed(self, ep: dict) -> None:
        if key_of(ep) in self.services.store:
            self.enqueue(key_of(ep))

    async def sync(self, key: str) -> None:
        ns, _, name = key.partition("/")
        svc = self.services.store.get(key)
        if svc is None:
            if key in self.endpoints.store:
                try:
                    await self.client.delete(ENDPOINTS, name, ns)
                except ApiError as e:
                    if e.code != 404:
                        raise
                event(log, "endpoints.deleted", service=key)
            return
        sel = (svc.get("spec") or {}).get("selector")
        if not sel:
            return
        s = selector_from_dict({"matchLabels": sel})
        pods = [p for p in self.pods.store.values()
                if meta(p).get("namespace") == ns and s.matches(meta(p).get("labels") or {})]
        subsets = endpoint_subsets(svc, pods)
        labels = dict(meta(svc).get("labels") or {})
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        cur = self.endpoints.store.get(key)
        if cur is not None and (cur.get("subsets") or []) == subsets and \
                (meta(cur).get("labels") or {}) == labels:
            return
        body: dict = {"apiVersion": "v1", "kind": "Endpoints",
                      "metadata": {"name": name, "namespace": ns, **({"labels": labels} if labels else {})}}
        if subsets:
            body["subsets"] = subsets
        if cur is None:
            try:
                await self.client.create(ENDPOINTS, body, ns)
            except ApiError as e:
                if e.code != 409:
                    raise
                cur = await self.client.get(ENDPOINTS, name, ns)
        if cur is not None:
            body["metadata"] = {**meta(cur), "labels": labels or None}
            if not labels:
                body["metadata"].pop("labels")
            await self.client.update(ENDPOINTS, body)
        event(log, "endpoints.synced", service=key, ready=sum(len(x.get("addresses") or []) for x in subsets),
              not_ready=sum(len(x.get("notReadyAddresses") or []) for x in subsets))
