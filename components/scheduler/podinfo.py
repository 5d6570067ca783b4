"""Facts the scheduler derives from a pod once, then reuses in every cycle.

:class:`PodInfo` caches what the plugins need from a v1 Pod dict: effective
resource requests (the init-container max rule, sidecars and overhead), the
non-zero requests used by scoring, host ports, tolerations and parsed
(anti-)affinity terms. Sources: ``pkg/scheduler/framework/types.go`` (PodInfo,
AffinityTerm, WeightedAffinityTerm), ``staging/src/k8s.io/component-helpers/resource/helpers.go``
(PodRequests), ``pkg/scheduler/util/pod_resources.go`` (DefaultMilliCPURequest,
DefaultMemoryRequest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controlplane.api.quantity import cpu_millis, parse_quantity, to_bytes
from controlplane.selectors import LabelSelector, selector_from_dict

#: requests assumed for scoring when a container asks for none (pod_resources.go)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"


@dataclass
class Resources:
    """Requested or allocatable amounts: ``milli_cpu`` (millicores), ``memory`` and
    ``ephemeral_storage`` (bytes), ``allowed_pods`` (count), ``scalar`` (extended
    resources, integer units). Mirrors framework.Resource."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pods: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    def add(self, other: "Resources", sign: int = 1) -> None:
        """In-place ``self += sign * other``."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + sign * v

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage
                    or any(self.scalar.values()))

    def get(self, name: str) -> int:
        """Amount of one resource by its v1 name (``cpu`` in millicores)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalar.get(name, 0)

    @classmethod
    def from_list(cls, rl: dict | None) -> "Resources":
        """From a v1 ResourceList (``{"cpu": "2", "memory": "4Gi", "pods": "110"}``).

        Raises ValueError on a malformed quantity."""
        r = cls()
        for name, q in (rl or {}).items():
            if name == CPU:
                r.milli_cpu = cpu_millis(q)
            elif name == MEMORY:
                r.memory = to_bytes(q)
            elif name == EPHEMERAL:
                r.ephemeral_storage = to_bytes(q)
            elif name == PODS:
                r.allowed_pods = int(parse_quantity(q))
            else:
                r.scalar[name] = to_bytes(q)
        return r


def _container_requests(c: dict, non_zero: bool = False) -> Resources:
    res = c.get("resources") or {}
    req = dict(res.get("limits") or {})  # requests default to limits (defaults.go)
    req.update(res.get("requests") or {})
    req.pop(PODS, None)
    r = Resources.from_list(req)
    if non_zero:  # only a missing request is replaced; an explicit 0 stays 0
        if CPU not in req:
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST
        if MEMORY not in req:
            r.memory = DEFAULT_MEMORY_REQUEST
    return r


def _max_into(acc: Resources, r: Resources) -> None:
    acc.milli_cpu = max(acc.milli_cpu, r.milli_cpu)
    acc.memory = max(acc.memory, r.memory)
    acc.ephemeral_storage = max(acc.ephemeral_storage, r.ephemeral_storage)
    for k, v in r.scalar.items():
        acc.scalar[k] = max(acc.scalar.get(k, 0), v)


def pod_requests(spec: dict, non_zero: bool = False) -> Resources:
    """Effective requests of a pod spec: max(sum(containers) + sidecars, each init
    container with the sidecars started before it) + ``overhead``.

    ``non_zero`` substitutes 100m CPU / 200Mi memory for containers that do not set them
    (scoring only). Source: component-helpers resource/helpers.go PodRequests.
    """
    total = Resources()
    for c in spec.get("containers") or []:
        r = _container_requests(c, non_zero)
        total.add(r)
    sidecars = Resources()
    init_max = Resources()
    for c in spec.get("initContainers") or []:
        r = _container_requests(c, non_zero)
        if c.get("restartPolicy") == "Always":  # a sidecar keeps running
            sidecars.add(r)
            _max_into(init_max, sidecars)
        else:
            step = Resources()
            step.add(sidecars)
            step.add(r)
            _max_into(init_max, step)
    total.add(sidecars)
    _max_into(total, init_max)
    overhead = spec.get("overhead")
    if overhead:
        total.add(Resources.from_list(overhead))
    return total


@dataclass(frozen=True)
class AffinityTerm:
    """A v1.PodAffinityTerm, parsed: selector, the namespaces it names, its
    namespaceSelector, topology key and weight (0 for required terms' weight 1).

    Namespace rules (``pkg/scheduler/framework/types.go`` newAffinityTerm,
    AffinityTerm.Matches): neither ``namespaces`` nor ``namespaceSelector`` → the
    owning pod's namespace; an empty ``namespaceSelector: {}`` → every namespace
    (``all_namespaces``); otherwise the union of the listed names and the namespaces
    whose labels match ``ns_selector``."""

    selector: LabelSelector
    namespaces: frozenset[str]
    all_namespaces: bool
    topology_key: str
    weight: int = 0
    ns_selector: LabelSelector | None = None

    def matches(self, pod: "PodInfo", ns_labels: dict | None = None) -> bool:
        """Whether ``pod`` is in this term's namespaces and matches its selector;
        ``ns_labels`` are the labels of ``pod``'s namespace (only read when the term
        has a non-empty namespaceSelector; None = no labels)."""
        if not (self.all_namespaces or pod.namespace in self.namespaces
                or (self.ns_selector is not None and self.ns_selector.matches(ns_labels))):
            return False
        return self.selector.matches(pod.labels)


def _terms(owner_ns: str, raw: list | None, weighted: bool) -> list[AffinityTerm]:
    out: list[AffinityTerm] = []
    for item in raw or []:
        term = (item.get("podAffinityTerm") or {}) if weighted else item
        weight = int(item.get("weight") or 0) if weighted else 1
        if weighted and weight == 0:
            continue
        namespaces = frozenset(term.get("namespaces") or [])
        ns_sel = term.get("namespaceSelector")
        ns_selector = None
        all_ns = False
        if ns_sel is not None:
            sel = selector_from_dict(ns_sel)
            if sel.empty():
                all_ns = True
            elif not sel.nothing:
                ns_selector = sel
        elif not namespaces:
            namespaces = frozenset([owner_ns])
        out.append(AffinityTerm(selector_from_dict(term.get("labelSelector")), namespaces, all_ns,
                                term.get("topologyKey") or "", weight, ns_selector))
    return out


class PodInfo:
    """A pod plus everything the plugins precompute from it.

    Attributes: ``pod`` (the dict), ``key`` (``ns/name``), ``namespace``, ``name``,
    ``labels``, ``priority`` (int), ``requests`` / ``non_zero_requests``
    (:class:`Resources`), ``host_ports`` (list of (ip, protocol, port)), ``tolerations``,
    ``required_affinity`` / ``required_anti_affinity`` (list of :class:`AffinityTerm`),
    ``preferred_affinity`` / ``preferred_anti_affinity`` (weighted terms).
    Raises ValueError on malformed quantities or selectors.
    """

    __slots__ = ("pod", "key", "namespace", "name", "uid", "labels", "priority", "requests",
                 "non_zero_requests", "host_ports", "tolerations", "required_affinity",
                 "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity",
                 "node_name", "images")

    def __init__(self, pod: dict[str, Any]) -> None:
        md = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.namespace = md.get("namespace") or "default"
        self.name = md.get("name") or ""
        self.uid = md.get("uid") or ""
        self.key = f"{self.namespace}/{self.name}"
        self.labels: dict[str, str] = md.get("labels") or {}
        self.priority = int(spec.get("priority") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.requests = pod_requests(spec)
        self.non_zero_requests = pod_requests(spec, non_zero=True)
        ports = []
        for c in spec.get("containers") or []:
            for p in c.get("ports") or []:
                hp = int(p.get("hostPort") or 0)
                if hp > 0:
                    ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", hp))
        self.host_ports: list[tuple[str, str, int]] = ports
        self.tolerations: list[dict] = spec.get("tolerations") or []
        self.images = [c.get("image") or "" for c in spec.get("containers") or []]
        aff = spec.get("affinity") or {}
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        ns = self.namespace
        self.required_affinity = _terms(ns, pa.get("requiredDuringSchedulingIgnoredDuringExecution"), False)
        self.preferred_affinity = _terms(ns, pa.get("preferredDuringSchedulingIgnoredDuringExecution"), True)
        self.required_anti_affinity = _terms(ns, paa.get("requiredDuringSchedulingIgnoredDuringExecution"), False)
        self.preferred_anti_affinity = _terms(ns, paa.get("preferredDuringSchedulingIgnoredDuringExecution"), True)

    @staticmethod
    def key_of(pod: dict[str, Any]) -> str:
        """``namespace/name`` of a pod dict without parsing the rest."""
        md = pod.get("metadata") or {}
        return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"

    @property
    def has_affinity(self) -> bool:
        """Any pod (anti-)affinity at all (NodeInfo.PodsWithAffinity)."""
        return bool(self.required_affinity or self.preferred_affinity
                    or self.required_anti_affinity or self.preferred_anti_affinity)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether one v1.Toleration tolerates one v1.Taint (v1 helper ToleratesTaint):
    effects equal (an empty toleration effect matches all), keys equal (an empty key
    with ``Exists`` matches all), and ``Exists`` or ``Equal`` values."""
    eff = toleration.get("effect") or ""
    if eff and eff != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    op = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def find_untolerated(taints: list[dict], tolerations: list[dict], effects: tuple[str, ...]) -> dict | None:
    """The first taint with an effect in ``effects`` that no toleration tolerates, or None
    (v1helper.FindMatchingUntoleratedTaint)."""
    for t in taints:
        if t.get("effect") in effects and not any(tolerates(tol, t) for tol in tolerations):
            return t
    return None


def is_assigned(pod: dict) -> bool:
    """The pod has ``spec.nodeName`` (eventhandlers.go assignedPod)."""
    return bool((pod.get("spec") or {}).get("nodeName"))


def is_deleting(pod: dict) -> bool:
    """The pod has ``metadata.deletionTimestamp`` (graceful deletion under way)."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))
