"""Defaulting rules: the fields the apiserver fills in before validation and storage.

One defaulter per kind (``default_pod``, ``default_deployment``...), each mutating a
wire-shaped object (plain JSON dict) in place the way the real apiserver does on create
and update; :mod:`controlplane.api.builtin` attaches them to the registry entries and
:func:`controlplane.api.defaults.apply_defaults` runs them. The facts come from

* ``pkg/apis/core/v1/defaults.go`` (SetDefaults_Pod, SetDefaults_PodSpec,
  SetDefaults_Container, SetDefaults_ContainerPort, SetDefaults_ReplicationController,
  SetDefaults_Namespace, SetDefaults_Service, SetDefaults_Secret...),
* ``pkg/apis/apps/v1/defaults.go`` (SetDefaults_Deployment, SetDefaults_ReplicaSet,
  SetDefaults_DaemonSet, SetDefaults_StatefulSet),
* ``pkg/registry/core/pod/strategy.go`` PrepareForCreate (``status.phase: Pending``,
  ``status.qosClass`` from ``pkg/apis/core/helper/qos/qos.go``).

Tables below list the simple "set if absent" fields; functions handle the rest. What the
admission plugins add to pods (the service account and its token volume, priority, the
default tolerations, LimitRange defaults...) is the apiserver's admission chain
(``components/apiserver/admission/``), not defaulting: it applies to pods, never to templates.
"""

from __future__ import annotations

import copy

from controlplane.api.quantity import parse_quantity
from controlplane.api.registry import JSON

# "set if absent" defaults, per concept. Values are deep-copied on use.
POD_SPEC_DEFAULTS: dict[str, object] = {
    "restartPolicy": "Always",
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {},
    "enableServiceLinks": True,
}
CONTAINER_DEFAULTS: dict[str, object] = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "resources": {},
}
DEPLOYMENT_SPEC_DEFAULTS: dict[str, object] = {
    "replicas": 1,
    "revisionHistoryLimit": 10,
    "progressDeadlineSeconds": 600,
}
STATEFULSET_SPEC_DEFAULTS: dict[str, object] = {
    "replicas": 1,
    "podManagementPolicy": "OrderedReady",
    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    "revisionHistoryLimit": 10,
    "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
}
DAEMONSET_SPEC_DEFAULTS: dict[str, object] = {
    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    "revisionHistoryLimit": 10,
}
SERVICE_SPEC_DEFAULTS: dict[str, object] = {
    "type": "ClusterIP",
    "sessionAffinity": "None",
    "internalTrafficPolicy": "Cluster",
    "ipFamilyPolicy": "SingleStack",
    "ipFamilies": ["IPv4"],
}


def _set_absent(target: JSON, defaults: dict[str, object]) -> None:
    for k, v in defaults.items():
        if target.get(k) is None:
            target[k] = copy.deepcopy(v)


def _sub(obj: JSON, key: str) -> JSON:
    v = obj.get(key)
    if not isinstance(v, dict):
        v = {}
        obj[key] = v
    return v


def image_pull_policy(image: str) -> str:
    """Default imagePullPolicy for an image reference: ``Always`` when the tag is
    ``latest`` or missing (and no digest), else ``IfNotPresent`` (defaults.go
    SetDefaults_Container, using the reference's tag after the last ``/``)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def default_container(c: JSON) -> None:
    """Container defaults: imagePullPolicy, terminationMessagePath/Policy, resources,
    ports[].protocol TCP; requests copied from limits where unset (SetDefaults_Pod)."""
    if not isinstance(c, dict):
        return
    _set_absent(c, CONTAINER_DEFAULTS)
    if not c.get("imagePullPolicy") and isinstance(c.get("image"), str):
        c["imagePullPolicy"] = image_pull_policy(c["image"])
    for p in c.get("ports") or []:
        if isinstance(p, dict) and not p.get("protocol"):
            p["protocol"] = "TCP"
    res = c.get("resources")
    if isinstance(res, dict) and isinstance(res.get("limits"), dict) and res["limits"]:
        req: JSON = res["requests"] if isinstance(res.get("requests"), dict) else {}
        for k, v in res["limits"].items():
            req.setdefault(k, v)
        res["requests"] = req
    for e in c.get("env") or []:
        vf = (e or {}).get("valueFrom") if isinstance(e, dict) else None
        if isinstance(vf, dict) and isinstance(vf.get("fieldRef"), dict):
            vf["fieldRef"].setdefault("apiVersion", "v1")


def default_pod_spec(spec: JSON) -> None:
    """Pod spec defaults (SetDefaults_PodSpec + containers, volumes), for pods and pod templates alike."""
    _set_absent(spec, POD_SPEC_DEFAULTS)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            default_container(c)
    for v in spec.get("volumes") or []:
        if isinstance(v, dict):
            for kind in ("secret", "configMap", "downwardAPI", "projected"):
                if isinstance(v.get(kind), dict):
                    v[kind].setdefault("defaultMode", 420)
            if not any(k for k in v if k != "name"):
                v["emptyDir"] = {}


def qos_class(spec: JSON) -> str:
    """The pod's QoS class (``pkg/apis/core/helper/qos/qos.go`` GetPodQOS), looking at
    cpu and memory of all containers and init containers:

    * ``BestEffort``: no container has any cpu/memory request or limit;
    * ``Guaranteed``: every container has cpu and memory limits, and requests (after
      defaulting from limits) equal the limits;
    * ``Burstable``: anything else.
    """
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        res = (c or {}).get("resources") or {}
        req = {k: v for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        lim = {k: v for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        try:
            if any(parse_quantity(v) != 0 for v in list(req.values()) + list(lim.values())):
                any_set = True
            if set(lim) != {"cpu", "memory"}:
                guaranteed = False
            for k, v in req.items():
                if k not in lim or parse_quantity(v) != parse_quantity(lim[k]):
                    guaranteed = False
        except ValueError:
            guaranteed = False
            any_set = True
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod(obj: JSON) -> None:
    """The defaults of a pod (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    default_pod_spec(spec)
    status = _sub(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"
    if not status.get("qosClass"):
        status["qosClass"] = qos_class(spec)


def _default_template(spec: JSON) -> None:
    tpl = spec.get("template")
    if isinstance(tpl, dict):
        default_pod_spec(_sub(tpl, "spec"))


def default_deployment(obj: JSON) -> None:
    """The defaults of a deployment (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    _set_absent(spec, DEPLOYMENT_SPEC_DEFAULTS)
    strategy = _sub(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = _sub(strategy, "rollingUpdate")
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    _default_template(spec)


def default_replicaset(obj: JSON) -> None:
    """The defaults of a replicaset (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _default_template(spec)


def default_replication_controller(obj: JSON) -> None:
    """The defaults of a replication controller (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if tpl_labels:
        if not spec.get("selector"):
            spec["selector"] = dict(tpl_labels)
        meta = _sub(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(tpl_labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _default_template(spec)


def default_statefulset(obj: JSON) -> None:
    """The defaults of a statefulset (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    _set_absent(spec, STATEFULSET_SPEC_DEFAULTS)
    _default_template(spec)


def default_daemonset(obj: JSON) -> None:
    """The defaults of a daemonset (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    _set_absent(spec, DAEMONSET_SPEC_DEFAULTS)
    _default_template(spec)


def default_namespace(obj: JSON) -> None:
    """The defaults of a namespace (see the module docstring for the sources)."""
    # spec.finalizers ["kubernetes"] is set by the create strategy, not by defaulting
    # (``pkg/registry/core/namespace/strategy.go`` PrepareForCreate), so /finalize can empty it
    status = _sub(obj, "status")
    status.setdefault("phase", "Active")
    meta = _sub(obj, "metadata")
    if meta.get("name"):
        labels: JSON = meta["labels"] if isinstance(meta.get("labels"), dict) else {}
        labels["kubernetes.io/metadata.name"] = meta["name"]
        meta["labels"] = labels


def default_service(obj: JSON) -> None:
    """The defaults of a service (see the module docstring for the sources)."""
    spec = _sub(obj, "spec")
    _set_absent(spec, SERVICE_SPEC_DEFAULTS)
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if p.get("targetPort") is None and p.get("port") is not None:
                p["targetPort"] = p["port"]


def default_secret(obj: JSON) -> None:
    """The defaults of a secret (see the module docstring for the sources)."""
    if not obj.get("type"):
        obj["type"] = "Opaque"


def default_node(obj: JSON) -> None:
    """The defaults of a node (see the module docstring for the sources)."""
    spec = obj.get("spec")
    if spec is None:
        obj["spec"] = {}
