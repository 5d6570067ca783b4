"""The declarative cluster config: ``controlplane up --config cluster.yaml``.

In the style users know from kind's ``Cluster`` config (``kind.x-k8s.io/v1alpha4``): one YAML
document describing what the cluster runs. The same file drives ``controlplane up``, the pytest
plugin (``--controlplane-config`` or ``@pytest.mark.controlplane(config=...)``) and the compose
demo (``CP_CLUSTER_CONFIG``)::

    apiVersion: controlplane.io/v1alpha1
    kind: Cluster
    nodes:                          # one kubelet process each
    - name: node01
      labels: {disktype: ssd}
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      capacity: {cpu: "8", memory: 16Gi, pods: "110", ephemeral-storage: 100Gi}
      allocatable: {cpu: 7500m}     # capacity minus what the kubelet reserves
    hollowNodePools:                # many nodes in one kubelet process each pool
    - namePrefix: zone-a-
      count: 100
      labels: {topology.kubernetes.io/zone: "zone-{index%3}"}
    scheduler:
      config: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, ...}
      # or configFile: sched.yaml (relative to this file)
    controllerManager:
      controllers: ["*", "-cronjob"]    # kube-controller-manager's --controllers
    apiServer:
      enableAdmissionPlugins: [AlwaysPullImages]
      disableAdmissionPlugins: [DefaultStorageClass]

Hollow-node label values and taint values are templates: ``{index}`` is the node's ordinal in its
pool (0-based) and ``{index%N}`` that ordinal modulo N (:func:`expand`).

Errors: :func:`load` raises :class:`ConfigError` naming the file and the field path with
Kubernetes' field-error wording (``nodes[1].taints[0].effect: Unsupported value: "Foo":
supported values: "NoExecute", "NoSchedule", "PreferNoSchedule"``); the CLI prints it on one line
and exits 2.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from controlplane.api.quantity import parse_quantity
from controlplane.api.validators import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from controlplane.yamlfile import YAMLFileError, load_file

API_VERSION = "controlplane.io/v1alpha1"
KIND = "Cluster"
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")
#: resources a node's capacity may set (the kubelet flags ``--cpu``, ``--memory``, ``--pods``,
#: ``--ephemeral-storage``) and those its allocatable may lower (``--kube-reserved``)
CAPACITY_KEYS = ("cpu", "memory", "pods", "ephemeral-storage")
ALLOCATABLE_KEYS = ("cpu", "memory", "ephemeral-storage")
#: the kubelet's evictionHard thresholds, subtracted from capacity besides what is reserved
#: (``pkg/kubelet/cm/node_container_manager_linux.go`` GetNodeAllocatableAbsolute):
#: memory.available 100Mi, nodefs.available 10%
EVICTION_MEMORY = 100 * 1024 * 1024
EVICTION_EPHEMERAL_FRACTION = Fraction(1, 10)
#: hollow nodes take node indexes (their InternalIP) from 100 on; the kubelet's InternalIP scheme
#: covers indexes up to MAX_NODE_INDEX (``components/kubelet/node.py`` internal_ip_for). Pod CIDRs
#: are the node IPAM controller's: the cluster CIDR, not this index, bounds the node count.
HOLLOW_FIRST_INDEX = 100
MAX_NODE_INDEX = 25_600 + (1 << 20) - 2

_TEMPLATE = re.compile(r"\{index(?:%(\d+))?\}")


class ConfigError(ValueError):
    """A cluster config that cannot be used; ``str()`` is one line naming file and field."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def flag(self) -> str:
        """The kubelet's ``--register-with-taints`` term: ``key=value:Effect`` (``key:Effect``)."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class NodeSpec:
    """A named node (one kubelet process) or a hollow-node pool (``count`` nodes named
    ``name`` + ordinal, in one process). ``labels`` and taint values of a pool are templates."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    capacity: dict[str, str] = field(default_factory=dict)
    #: kube-reserved per resource (capacity − allocatable − eviction thresholds), quantity strings
    reserved: dict[str, str] = field(default_factory=dict)
    count: int = 0   # hollow pools only
    first_index: int = 0   # hollow pools only: node index of the pool's first node

    def kubelet_args(self) -> list[str]:
        """The kubelet flags this node (or pool) adds to a kubelet's command line."""
        args: list[str] = []
        if self.labels:
            args += ["--node-labels", ",".join(f"{k}={v}" for k, v in self.labels.items())]
        if self.taints:
            args += ["--register-with-taints", ",".join(t.flag() for t in self.taints)]
        for key in CAPACITY_KEYS:
            if key in self.capacity:
                args += [f"--{key}", self.capacity[key]]
        if self.reserved:
            args += ["--kube-reserved", ",".join(f"{k}={v}" for k, v in self.reserved.items())]
        return args


@dataclass(frozen=True)
class ClusterConfig:
    """A parsed, validated cluster config (see the module docstring)."""

    path: str
    nodes: tuple[NodeSpec, ...] = ()
    hollow_pools: tuple[NodeSpec, ...] = ()
    #: a KubeSchedulerConfiguration document, or None (the scheduler's defaults)
    scheduler_config: dict[str, Any] | None = None
    #: kube-controller-manager's ``--controllers`` list, or None (``*``)
    controllers: tuple[str, ...] | None = None
    enable_admission_plugins: tuple[str, ...] = ()
    disable_admission_plugins: tuple[str, ...] = ()

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)

    @property
    def hollow_node_count(self) -> int:
        return sum(p.count for p in self.hollow_pools)


def controller_enabled(controllers: tuple[str, ...] | None, name: str) -> bool:
    """Whether kube-controller-manager's ``--controllers`` list (None: ``*``) runs ``name``:
    ``-name`` always wins, ``*`` turns on every controller (``app/controllermanager.go``
    IsControllerEnabled)."""
    items = controllers if controllers is not None else ("*",)
    if f"-{name}" in items:
        return False
    return "*" in items or name in items


def expand(template: str, index: int) -> str:
    """A hollow-node template for the node of ordinal ``index``: ``"zone-{index%3}"`` → ``zone-2``
    for index 5; ``"n{index}"`` → ``n5``."""
    def sub(m: re.Match[str]) -> str:
        mod = m.group(1)
        return str(index % int(mod)) if mod else str(index)
    return _TEMPLATE.sub(sub, template)


def has_template(text: str) -> bool:
    """Whether ``text`` holds an ``{index}`` / ``{index%N}`` template (:func:`expand`)."""
    return _TEMPLATE.search(text) is not None


class _Checker:
    """Walks the document, collecting the first error with its field path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {where}: {message}")

    def mapping(self, value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"Invalid value: {type(value).__name__}: must be a mapping")
        for k in value:
            if k not in allowed:
                raise self.fail(f"{where}.{k}" if where else str(k),
                                f"unknown field {str(k)!r} (known: {', '.join(allowed)})")
        return value

    def seq(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, f"Invalid value: {type(value).__name__}: must be a list")
        return value

    def string(self, value: Any, where: str, required: bool = False) -> str:
        if value is None or value == "":
            if required:
                raise self.fail(where, "Required value")
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(where, f"Invalid value: {type(value).__name__}: must be a string")
        return str(value)

    def strings(self, value: Any, where: str) -> tuple[str, ...]:
        return tuple(self.string(v, f"{where}[{i}]", required=True) for i, v in enumerate(self.seq(value, where)))

    def labels(self, value: Any, where: str, template: bool) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in self.mapping(value, where, tuple(str(k) for k in (value or {}))).items():
            key, val = str(k), self.string(v, f"{where}.{k}")
            if not template and has_template(val):
                raise self.fail(f"{where}.{key}", f"Invalid value: {val!r}: templates are for hollowNodePools only")
            problems = is_qualified_name(key) or is_valid_label_value(expand(val, 0) if template else val)
            if problems:
                raise self.fail(f"{where}.{key}", f"Invalid value: {val!r}: {problems[0]}")
            out[key] = val
        return out

    def taints(self, value: Any, where: str, template: bool) -> tuple[Taint, ...]:
        out = []
        seen = set()
        for i, t in enumerate(self.seq(value, where)):
            w = f"{where}[{i}]"
            t = self.mapping(t, w, ("key", "value", "effect"))
            key = self.string(t.get("key"), f"{w}.key", required=True)
            for m in is_qualified_name(key):
                raise self.fail(f"{w}.key", f"Invalid value: {key!r}: {m}")
            val = self.string(t.get("value"), f"{w}.value")
            for m in is_valid_label_value(expand(val, 0) if template else val):
                raise self.fail(f"{w}.value", f"Invalid value: {val!r}: {m}")
            effect = self.string(t.get("effect"), f"{w}.effect", required=True)
            if effect not in TAINT_EFFECTS:
                supported = ", ".join(f'"{e}"' for e in TAINT_EFFECTS)
                raise self.fail(f"{w}.effect", f'Unsupported value: "{effect}": supported values: {supported}')
            if (key, effect) in seen:   # ValidateNodeSpecificTaints: unique by key + effect
                raise self.fail(w, f'Duplicate value: "{key}:{effect}"')
            seen.add((key, effect))
            out.append(Taint(key, val, effect))
        return tuple(out)

    def quantities(self, value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        out = {}
        for k, v in self.mapping(value, where, allowed).items():
            text = self.string(v, f"{where}.{k}", required=True)
            try:
                q = parse_quantity(text)
            except ValueError as e:
                raise self.fail(f"{where}.{k}", f"Invalid value: {text!r}: {e}") from None
            if q < 0:
                raise self.fail(f"{where}.{k}", f"Invalid value: {text!r}: must be greater than or equal to 0")
            if k == "pods" and (q.denominator != 1 or q > 2 ** 31 - 1):
                raise self.fail(f"{where}.{k}", f"Invalid value: {text!r}: must be a whole number")
            out[str(k)] = (text, q)
        return out


#: the kubelet's defaults (components/kubelet/cli.py), for allocatable checks
_DEFAULT_CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def _reserved(c: _Checker, where: str, capacity: dict[str, Any], allocatable: dict[str, Any]) -> dict[str, str]:
    """kube-reserved that makes the kubelet report ``allocatable``: capacity − allocatable − the
    eviction threshold (memory 100Mi, ephemeral-storage 10%)."""
    out = {}
    for key, (text, alloc) in allocatable.items():
        cap = capacity[key][1] if key in capacity else parse_quantity(_DEFAULT_CAPACITY[key])
        eviction: Any = 0
        if key == "memory":
            eviction = EVICTION_MEMORY
        elif key == "ephemeral-storage":
            eviction = cap * EVICTION_EPHEMERAL_FRACTION
        reserved = cap - eviction - alloc
        if reserved < 0:
            extra = {"memory": " minus evictionHard memory.available (100Mi)",
                     "ephemeral-storage": " minus evictionHard nodefs.available (10%)"}.get(key, "")
            raise c.fail(f"{where}.allocatable.{key}", f"Invalid value: {text!r}: must be at most the capacity{extra}")
        if key == "cpu":
            out[key] = f"{int(reserved * 1000)}m"
        else:
            out[key] = str(int(reserved))
    return out


def _node(c: _Checker, raw: Any, where: str, pool: bool) -> NodeSpec:
    keys = ("namePrefix", "count") if pool else ("name",)
    m = c.mapping(raw, where, keys + ("labels", "taints", "capacity", "allocatable"))
    if pool:
        name = c.string(m.get("namePrefix"), f"{where}.namePrefix") or "hollow-"
        count = m.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise c.fail(f"{where}.count", f"Invalid value: {count!r}: must be a whole number of at least 1")
        check = f"{name}{count - 1}"
    else:
        name = c.string(m.get("name"), f"{where}.name", required=True)
        count = 0
        check = name
    for p in is_dns1123_subdomain(check):   # ValidateNodeName
        raise c.fail(f"{where}.{keys[0]}", f"Invalid value: {name!r}: {p}")
    capacity = c.quantities(m.get("capacity"), f"{where}.capacity", CAPACITY_KEYS)
    allocatable = c.quantities(m.get("allocatable"), f"{where}.allocatable", ALLOCATABLE_KEYS)
    return NodeSpec(name=name, labels=c.labels(m.get("labels"), f"{where}.labels", pool),
                    taints=c.taints(m.get("taints"), f"{where}.taints", pool),
                    capacity={k: t for k, (t, _) in capacity.items()},
                    reserved=_reserved(c, where, capacity, allocatable), count=count)


def parse(doc: Any, path: str = "cluster config") -> ClusterConfig:
    """Validate a decoded config document. Raises :class:`ConfigError`."""
    c = _Checker(path)
    top = c.mapping(doc, "", ("apiVersion", "kind", "nodes", "hollowNodePools", "scheduler",
                              "controllerManager", "apiServer"))
    if top.get("apiVersion") != API_VERSION:
        raise c.fail("apiVersion", f"Unsupported value: {top.get('apiVersion')!r}: supported values: \"{API_VERSION}\"")
    if top.get("kind") != KIND:
        raise c.fail("kind", f"Unsupported value: {top.get('kind')!r}: supported values: \"{KIND}\"")
    nodes = tuple(_node(c, n, f"nodes[{i}]", False) for i, n in enumerate(c.seq(top.get("nodes"), "nodes")))
    pools = []
    index = HOLLOW_FIRST_INDEX
    for i, p in enumerate(c.seq(top.get("hollowNodePools"), "hollowNodePools")):
        spec = _node(c, p, f"hollowNodePools[{i}]", True)
        pools.append(NodeSpec(**{**spec.__dict__, "first_index": index}))
        index += spec.count
    if index > MAX_NODE_INDEX:
        raise c.fail("hollowNodePools", f"Invalid value: {index - HOLLOW_FIRST_INDEX}: at most "
                                        f"{MAX_NODE_INDEX - HOLLOW_FIRST_INDEX} hollow nodes in all")
    if not nodes and not pools:
        raise c.fail("nodes", "Required value: a cluster needs at least one node or hollow node pool")
    seen: dict[str, str] = {}
    for i, n in enumerate(nodes):
        if n.name in seen:
            raise c.fail(f"nodes[{i}].name", f'Duplicate value: "{n.name}"')
        seen[n.name] = f"nodes[{i}]"
    prefixes = [p.name for p in pools]
    for i, p in enumerate(pools):
        if p.name in prefixes[:i]:
            raise c.fail(f"hollowNodePools[{i}].namePrefix", f'Duplicate value: "{p.name}"')
    sched = c.mapping(top.get("scheduler"), "scheduler", ("config", "configFile"))
    scheduler_config = None
    if "config" in sched and "configFile" in sched:
        raise c.fail("scheduler", "Forbidden: config and configFile are mutually exclusive")
    if sched.get("configFile") is not None:
        file = c.string(sched["configFile"], "scheduler.configFile", required=True)
        file = os.path.join(os.path.dirname(os.path.abspath(path)), file) if not os.path.isabs(file) else file
        try:
            scheduler_config = _one_document(file)
        except (OSError, YAMLFileError) as e:
            raise c.fail("scheduler.configFile", f"Invalid value: {str(e)}") from None
        where = "scheduler.configFile"
    else:
        scheduler_config = sched.get("config")
        where = "scheduler.config"
    if scheduler_config is not None:
        if not isinstance(scheduler_config, dict):
            raise c.fail(where, "Invalid value: must be a KubeSchedulerConfiguration mapping")
        if scheduler_config.get("kind") != "KubeSchedulerConfiguration":
            raise c.fail(f"{where}.kind", f"Unsupported value: {scheduler_config.get('kind')!r}: "
                                          f'supported values: "KubeSchedulerConfiguration"')
    cm = c.mapping(top.get("controllerManager"), "controllerManager", ("controllers",))
    controllers = c.strings(cm.get("controllers"), "controllerManager.controllers") if "controllers" in cm else None
    api = c.mapping(top.get("apiServer"), "apiServer", ("enableAdmissionPlugins", "disableAdmissionPlugins"))
    return ClusterConfig(path=path, nodes=nodes, hollow_pools=tuple(pools), scheduler_config=scheduler_config,
                         controllers=controllers,
                         enable_admission_plugins=c.strings(api.get("enableAdmissionPlugins"),
                                                            "apiServer.enableAdmissionPlugins"),
                         disable_admission_plugins=c.strings(api.get("disableAdmissionPlugins"),
                                                             "apiServer.disableAdmissionPlugins"))


def load(path: str) -> ClusterConfig:
    """Read and validate the config file at ``path``. Raises :class:`ConfigError` (one line)."""
    try:
        doc = _one_document(path)
    except YAMLFileError as e:
        raise ConfigError(str(e)) from None
    return parse(doc, path)


def _one_document(path: str) -> Any:
    docs = [d for d in load_file(path) if d is not None]
    if len(docs) != 1:
        raise YAMLFileError(f"{path}: expected one YAML document, found {len(docs)}")
    return docs[0]
