"""Node registration and heartbeats of one simulated node.

* Registration (``pkg/kubelet/kubelet_node_status.go`` registerWithAPIServer):
  POST the Node; when it already exists, take it over — reconcile only the
  kubelet's default labels (``kubernetes.io/hostname``, ``kubernetes.io/os``,
  ``kubernetes.io/arch`` and the ``beta.`` pair), keep every other label (users'
  ``kubectl label``), and patch the status.
* Status (``pkg/kubelet/nodestatus/setters.go``): addresses (InternalIP, Hostname),
  capacity/allocatable (allocatable memory = capacity − 100Mi eviction threshold,
  ephemeral-storage = 90 %), nodeInfo, images, daemonEndpoints, and the conditions
  MemoryPressure/DiskPressure/PIDPressure False and Ready True (``KubeletReady``)
  with heartbeat and transition times. Sent as a merge PATCH of ``nodes/NAME/status``
  every ``status_report_seconds`` or when something changed — never a PUT of the
  whole Node, so labels set meanwhile are not overwritten.
* Lease (``pkg/kubelet/nodelease``, ``staging/src/k8s.io/component-helpers/apimachinery/lease``):
  ``kube-node-lease/<node>`` with holderIdentity = node, leaseDurationSeconds 40,
  renewTime refreshed every ``lease_renew_seconds`` (10 s), owned by the Node.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from components.kubelet.runtime import RUNTIME_VERSION
from controlplane import KUBE_VERSION, apitime
from controlplane.aio import Backoff
from controlplane.api.quantity import cpu_millis, parse_quantity, to_bytes
from controlplane.api.resources import LEASES, NAMESPACES, NODES
from controlplane.client.rest import ApiError
from controlplane.log import event

log = logging.getLogger("kubelet.node")

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
EVICTION_MEMORY = 100 * 1024 * 1024  # evictionHard memory.available default (100Mi)


@dataclass
class NodeConfig:
    """What one simulated node is: name, index (for its podCIDR and IP), extra labels,
    capacity as quantity strings (``cpu`` "4", ``memory`` "8Gi", ``pods`` "110",
    ``ephemeral_storage`` "100Gi"). ``pod_cidr`` / ``internal_ip`` default from the index."""

    name: str
    index: int = 1
    labels: dict[str, str] = field(default_factory=dict)
    cpu: str = "4"
    memory: str = "8Gi"
    pods: str = "110"
    ephemeral_storage: str = "100Gi"
    pod_cidr: str | None = None
    internal_ip: str | None = None
    #: ``spec.taints`` at registration (``--register-with-taints``): ``{"key", "value"?, "effect"}``
    taints: list[dict] = field(default_factory=list)
    #: ``--kube-reserved``: resource name → quantity string, subtracted from allocatable
    reserved: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.pod_cidr is None:
            self.pod_cidr = pod_cidr_for(self.index)
        if self.internal_ip is None:
            self.internal_ip = internal_ip_for(self.index)


def node_index_from_name(name: str) -> int:
    """``node01`` → 1, ``worker-7`` → 7; otherwise a stable number in 1..250."""
    m = re.search(r"(\d+)$", name)
    if m and int(m.group(1)) < 1024:
        return int(m.group(1))
    return 1 + zlib.crc32(name.encode()) % 250


def pod_cidr_for(index: int) -> str:
    """``10.244.<index>.0/24`` for index < 256; beyond, the next /16s (10.245...)."""
    if not 0 <= index < 1024:
        raise ValueError(f"node index {index} out of range 0..1023")
    return f"10.{244 + index // 256}.{index % 256}.0/24"


def internal_ip_for(index: int) -> str:
    """A distinct simulated InternalIP: ``192.168.0.101`` for index 1."""
    return f"192.168.{index // 100}.{100 + index % 100}"


def parse_labels(text: str | None) -> dict[str, str]:
    """``kgc=a,foo=bar`` → dict; raises ValueError on a term without ``=`` or an empty key."""
    out: dict[str, str] = {}
    for term in (text or "").split(","):
        term = term.strip()
        if not term:
            continue
        key, eq, value = term.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"invalid node label {term!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def parse_taints(text: str | None) -> list[dict]:
    """``--register-with-taints``: ``key=value:Effect,key2:Effect`` → Taint dicts, as the kubelet
    parses them (``pkg/util/taints`` ParseTaints). Raises ValueError naming a bad term."""
    out: list[dict] = []
    for term in (text or "").split(","):
        term = term.strip()
        if not term:
            continue
        kv, colon, effect = term.rpartition(":")
        if not colon or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ValueError(f"invalid taint spec: {term}, unsupported taint effect")
        key, eq, value = kv.partition("=")
        if not key:
            raise ValueError(f"invalid taint spec: {term}")
        out.append({"key": key, **({"value": value} if eq and value else {}), "effect": effect})
    return out


def parse_reserved(text: str | None) -> dict[str, str]:
    """``--kube-reserved``: ``cpu=100m,memory=256Mi,ephemeral-storage=1Gi`` → dict. Raises
    ValueError for an unknown resource or a malformed quantity."""
    out: dict[str, str] = {}
    for term in (text or "").split(","):
        term = term.strip()
        if not term:
            continue
        key, eq, value = term.partition("=")
        if not eq or key not in ("cpu", "memory", "ephemeral-storage", "pid"):
            raise ValueError(f"invalid --kube-reserved term {term!r}: expected cpu|memory|ephemeral-storage|pid=QUANTITY")
        parse_quantity(value)
        out[key] = value
    return out


def default_labels(name: str) -> dict[str, str]:
    """The labels every kubelet sets on its Node."""
    return {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux"}


def resources(cfg: NodeConfig) -> tuple[dict, dict]:
    """``(capacity, allocatable)`` as the kubelet reports them (memory in Ki).
    Raises ValueError for a malformed quantity."""
    millis = cpu_millis(cfg.cpu)
    cpu = str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"
    mem = to_bytes(cfg.memory)
    eph = to_bytes(cfg.ephemeral_storage)
    pods = str(int(to_bytes(cfg.pods)))
    cap = {"cpu": cpu, "ephemeral-storage": f"{eph // 1024}Ki", "hugepages-1Gi": "0",
           "hugepages-2Mi": "0", "memory": f"{mem // 1024}Ki", "pods": pods}
    # allocatable = capacity − kube-reserved − evictionHard (memory.available 100Mi,
    # nodefs.available 10%): pkg/kubelet/cm/node_container_manager_linux.go
    # GetNodeAllocatableAbsolute
    res = cfg.reserved
    alloc_millis = max(millis - cpu_millis(res.get("cpu", "0")), 0)
    alloc_mem = max(mem - EVICTION_MEMORY - to_bytes(res.get("memory", "0")), 0)
    alloc_eph = max(eph * 9 // 10 - to_bytes(res.get("ephemeral-storage", "0")), 0)
    alloc = dict(cap, **{"cpu": str(alloc_millis // 1000) if alloc_millis % 1000 == 0 else f"{alloc_millis}m",
                         "ephemeral-storage": str(alloc_eph), "memory": f"{alloc_mem // 1024}Ki"})
    return cap, alloc


def _stable_hex(seed: str, n: int = 32) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def node_info(cfg: NodeConfig) -> dict:
    u = _stable_hex("uuid" + cfg.name)
    return {"architecture": "amd64", "bootID": _stable_hex("boot" + cfg.name + str(time.time())),
            "containerRuntimeVersion": RUNTIME_VERSION,
            "kernelVersion": "6.1.0-controlplane-simulated", "kubeProxyVersion": "",
            "kubeletVersion": KUBE_VERSION, "machineID": _stable_hex("machine" + cfg.name),
            "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm) [simulated]",
            "systemUUID": f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:32]}"}


_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_conditions(old: list[dict] | None, now: str) -> list[dict]:
    """The four kubelet conditions with ``lastHeartbeatTime`` = now and
    ``lastTransitionTime`` kept from ``old`` while the status is the same."""
    prev = {c.get("type"): c for c in old or []}
    out = []
    for t, status, reason, message in _CONDITIONS:
        p = prev.get(t) or {}
        ltt = p.get("lastTransitionTime") if p.get("status") == status and p.get("lastTransitionTime") else now
        out.append({"type": t, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": ltt,
                    "reason": reason, "message": message})
    return out


def node_status(cfg: NodeConfig, images: list[dict], old: dict | None = None,
                info: dict | None = None, now: str | None = None) -> dict:
    """The full ``Node.status`` this kubelet reports."""
    now = now or apitime.now()
    cap, alloc = resources(cfg)
    return {"capacity": cap, "allocatable": alloc,
            "conditions": node_conditions((old or {}).get("conditions"), now),
            "addresses": [{"type": "InternalIP", "address": cfg.internal_ip},
                          {"type": "Hostname", "address": cfg.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": info or node_info(cfg), "images": images}


def build_node(cfg: NodeConfig, images: list[dict], now: str | None = None) -> dict:
    """The Node object to POST at registration."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": cfg.name, "labels": {**default_labels(cfg.name), **cfg.labels},
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"podCIDR": cfg.pod_cidr, "podCIDRs": [cfg.pod_cidr],
                     **({"taints": [dict(t) for t in cfg.taints]} if cfg.taints else {})},
            "status": node_status(cfg, images, now=now)}


def build_lease(node: dict, now_micro: str) -> dict:
    md = node.get("metadata") or {}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": md["name"], "namespace": LEASE_NAMESPACE,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": md["name"],
                                              "uid": md.get("uid", "")}]},
            "spec": {"holderIdentity": md["name"], "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                     "renewTime": now_micro}}


class NodeAgent:
    """Registers one node and keeps its Lease and status fresh.

    ``client``: RestClient-like; ``recorder``: EventRecorder-like (node events);
    ``images``: callable returning ``node.status.images``. Transport errors in the
    loops are logged and retried, never raised.
    """

    def __init__(self, client: Any, cfg: NodeConfig, recorder: Any = None,
                 images: Callable[[], list[dict]] = lambda: [], *, lease_renew_seconds: float = 10.0,
                 status_report_seconds: float = 60.0,
                 volumes: Callable[[], dict] | None = None) -> None:
        self.client = client
        self.cfg = cfg
        self.recorder = recorder
        self.images = images
        #: ``volumesInUse`` / ``volumesAttached`` for the status (VolumeManager.node_status)
        self.volumes = volumes
        self.lease_renew_seconds = lease_renew_seconds
        self.status_report_seconds = status_report_seconds
        self.node: dict | None = None
        self.lease: dict | None = None
        self.info = node_info(cfg)
        self._changed = asyncio.Event()

    @property
    def name(self) -> str:
        return self.cfg.name

    def mark_changed(self) -> None:
        """Ask for an early status update (e.g. a new image on the node)."""
        self._changed.set()

    async def register(self) -> dict:
        """Create the Node, or take over an existing one; returns the Node.
        Adopts an existing ``spec.podCIDR``. Raises ApiError on a refusal."""
        body = build_node(self.cfg, self.images())
        body["status"]["nodeInfo"] = self.info
        try:
            node = await self.client.create(NODES, body)
            event(log, "node.registered", node=self.name, pod_cidr=self.cfg.pod_cidr)
            self._node_events(node, registered=True)
        except ApiError as e:
            if e.code != 409:
                raise
            node = await self.client.get(NODES, self.name)
            labels = (node.get("metadata") or {}).get("labels") or {}
            want = {k: v for k, v in default_labels(self.name).items() if labels.get(k) != v}
            if want:
                node = await self.client.patch(NODES, self.name, {"metadata": {"labels": want}})
            cidr = (node.get("spec") or {}).get("podCIDR")
            if cidr:
                self.cfg.pod_cidr = cidr
            else:
                node = await self.client.patch(NODES, self.name, {"spec": {
                    "podCIDR": self.cfg.pod_cidr, "podCIDRs": [self.cfg.pod_cidr]}})
            event(log, "node.taken_over", node=self.name, pod_cidr=self.cfg.pod_cidr)
            self._node_events(node, registered=False)
        self.node = node
        await self.update_status()
        return self.node

    def _node_events(self, node: dict, registered: bool) -> None:
        if self.recorder is None:
            return
        # kubelet node events name the node by name and use the name as uid
        ref = {"kind": "Node", "apiVersion": "v1",
               "metadata": {"name": self.name, "uid": self.name, "namespace": ""}}
        self.recorder.event(ref, "Normal", "Starting", "Starting kubelet.")
        for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"):
            self.recorder.event(ref, "Normal", reason, f"Node {self.name} status is now: {reason}")
        self.recorder.event(ref, "Normal", "NodeAllocatableEnforced",
                            "Updated Node Allocatable limit across pods")
        if registered:
            self.recorder.event(ref, "Normal", "NodeReady", f"Node {self.name} status is now: NodeReady")

    async def update_status(self) -> None:
        """PATCH ``nodes/NAME/status`` with the current status (labels untouched)."""
        old = (self.node or {}).get("status")
        st = node_status(self.cfg, self.images(), old, self.info)
        if self.volumes is not None:
            st.update(self.volumes())
        self.node = await self.client.patch(NODES, self.name, {"status": st}, subresource="status")
        event(log, "node.status_updated", logging.DEBUG, node=self.name)

    async def renew_lease(self) -> None:
        """Create or renew ``kube-node-lease/<node>`` (PUT with the cached lease;
        on a conflict re-read it; on NotFound create it)."""
        now = apitime.now_micro()
        if self.lease is not None:
            self.lease["spec"]["renewTime"] = now
            self.lease["spec"]["holderIdentity"] = self.name
            try:
                self.lease = await self.client.update(LEASES, self.lease)
                return
            except ApiError as e:
                if e.code not in (404, 409):
                    raise
                self.lease = None
        try:
            cur = await self.client.get(LEASES, self.name, LEASE_NAMESPACE)
            cur.setdefault("spec", {}).update(holderIdentity=self.name, renewTime=now,
                                              leaseDurationSeconds=LEASE_DURATION_SECONDS)
            self.lease = await self.client.update(LEASES, cur)
            return
        except ApiError as e:
            if e.code != 404:
                raise
        body = build_lease(self.node or {"metadata": {"name": self.name}}, now)
        try:
            self.lease = await self.client.create(LEASES, body, LEASE_NAMESPACE)
        except ApiError as e:
            if e.code != 404:  # 404: the namespace is missing
                raise
            try:
                await self.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": LEASE_NAMESPACE}})
            except ApiError as e2:
                if e2.code != 409:
                    raise
            self.lease = await self.client.create(LEASES, body, LEASE_NAMESPACE)

    async def check_status_drift(self) -> None:
        """Read the Node back (``resourceVersion=0``: from the apiserver's cache)
        and ask for a status report when what is stored is not what this kubelet
        reports — e.g. the node lifecycle controller marked it Unknown while the
        kubelet was stalled. The kubelet does the same read every
        nodeStatusUpdateFrequency (10 s) in pkg/kubelet/kubelet_node_status.go
        ``tryUpdateNodeStatus``."""
        stored = await self.client.request("GET", NODES.path(None, self.name),
                                           params={"resourceVersion": "0"})
        conds = {c.get("type"): c.get("status")
                 for c in ((stored or {}).get("status") or {}).get("conditions") or []}
        if conds.get("Ready") != "True":
            self._changed.set()

    async def run_heartbeat(self) -> None:
        """Renew the lease every ``lease_renew_seconds`` (±10 % jitter) and report
        status every ``status_report_seconds`` or on :meth:`mark_changed`."""
        last_status = time.monotonic()
        # a failed renewal is retried with back-off from 200 ms to 7 s, not after a whole
        # interval (component-helpers/apimachinery/lease/controller.go backoffEnsureLease)
        retry = Backoff(0.2, 7.0)
        while True:
            try:
                await self.renew_lease()
                await self.check_status_drift()
                retry.reset()
                wait = self.lease_renew_seconds * random.uniform(0.9, 1.1)
            except Exception as e:  # keep beating
                wait = min(retry.next(), self.lease_renew_seconds)
                event(log, "node.lease_failed", logging.WARNING, node=self.name,
                      error=f"{type(e).__name__}: {e}"[:200], retry_in=f"{wait:.2f}s")
            deadline = time.monotonic() + wait
            while True:
                due_status = last_status + self.status_report_seconds
                timeout = min(deadline, due_status) - time.monotonic()
                if timeout > 0:
                    try:
                        await asyncio.wait_for(self._changed.wait(), timeout)
                    except asyncio.TimeoutError:
                        pass
                if self._changed.is_set() or time.monotonic() >= due_status:
                    self._changed.clear()
                    try:
                        await self.update_status()
                        last_status = time.monotonic()
                    except Exception as e:
                        event(log, "node.status_failed", logging.WARNING, node=self.name,
                              error=f"{type(e).__name__}: {e}"[:200])
                        last_status = time.monotonic()
                if time.monotonic() >= deadline:
                    break
