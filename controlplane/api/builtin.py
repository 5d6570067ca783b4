"""The built-in kinds, each declared once with every fact about it (the kube-apiserver v1.32 subset we serve).

One :class:`~controlplane.api.registry.Resource` per served resource, as Kubernetes keeps
one ``rest.Storage`` + strategy per kind in ``pkg/registry/<group>/<kind>/``: how it is
addressed (``kubectl api-resources`` on a v1.32 cluster: names, short names, scopes,
categories; the URL layout of ``content/en/docs/reference/using-api/api-concepts.md``), and
its printer (:mod:`controlplane.api.printers`), OpenAPI kind schema (top-level fields
referring to the shared types of :mod:`controlplane.api.schemas`), validator and name rule
(:mod:`controlplane.api.validators`), defaulter (:mod:`controlplane.api.defaulters`),
selectable fields (``GetAttrs`` / ``ToSelectableFields`` and the field label conversion
functions of ``pkg/apis/core/v1/conversion.go``) and strategy
(:mod:`controlplane.api.strategies`). How list fields merge stays declared per Go struct
field in :mod:`controlplane.api.listfields`.

:mod:`controlplane.api.resources` builds the process's registry from :data:`BUILTIN`.
"""

from __future__ import annotations

from controlplane.api import defaulters, printers, strategies, validators
from controlplane.api.groups import (
    admissionregistration,
    apiextensions,
    apps,
    authentication,
    authorization,
    autoscaling,
    batch,
    certificates,
    core,
    core_storage,
    discovery,
    flowcontrol,
    metrics,
    networking,
    node,
    policy,
    rbac,
    scheduling,
    storage,
)
from controlplane.api.registry import JSON, FieldFn, KindSchema, Resource

_ALL = "all"


# --------------------------------------------------------------------------- selectable fields

def _path(path: str) -> FieldFn:
    """An extractor of the dotted ``path`` as a string (``""`` when absent, bools ``true``/``false``)."""
    parts = path.split(".")

    def extract(obj: JSON) -> str:
        cur: object = obj
        for part in parts:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(part)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)
    return extract


def _paths(*paths: str) -> dict[str, FieldFn]:
    return {p: _path(p) for p in paths}


def _flag(section: str, name: str) -> FieldFn:
    """``true`` when ``section.name`` is set and truthy, else ``false`` (bool field labels)."""
    def extract(obj: JSON) -> str:
        return "true" if (obj.get(section) or {}).get(name) else "false"
    return extract


def _pod_ip(obj: JSON) -> str:
    """``status.podIP``: the first of ``status.podIPs``, else ``status.podIP``."""
    st = obj.get("status") or {}
    ips = st.get("podIPs") or []
    if ips:
        return str(ips[0].get("ip", ""))
    return str(st.get("podIP") or "")


def _event_source(obj: JSON) -> str:
    """``source``: ``source.component``, else ``reportingController``."""
    return str((obj.get("source") or {}).get("component") or obj.get("reportingController") or "")


def _status_replicas(obj: JSON) -> str:
    return str((obj.get("status") or {}).get("replicas", 0))


#: pkg/registry/core/pod/strategy.go ToSelectableFields (+ podIP, nominatedNodeName)
POD_FIELDS: dict[str, FieldFn] = {
    **_paths("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName"),
    "spec.hostNetwork": _flag("spec", "hostNetwork"),
    "status.phase": _path("status.phase"), "status.podIP": _pod_ip,
    "status.nominatedNodeName": _path("status.nominatedNodeName"),
}
#: pkg/registry/core/event/strategy.go ToSelectableFields
EVENT_FIELDS: dict[str, FieldFn] = {
    **_paths(*(f"involvedObject.{f}" for f in
               ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"))),
    "reason": _path("reason"), "reportingComponent": _path("reportingComponent"), "source": _event_source,
    "type": _path("type"),
}
#: core/v1 and events.k8s.io/v1 Events in one schema: one stored object is read and written
#: through both groups, so a body of either decodes into the fields of both
#: (``staging/src/k8s.io/api/core/v1/types.go`` and ``events/v1/types.go`` Event)
EVENT_SCHEMA = KindSchema("Event is a report of something that happened to an object.", {
    "action": ("string,omitempty", "What was done, or failed, on the regarding object."),
    "count": ("int32,omitempty", "Number of times this event has occurred (core/v1)."),
    "deprecatedCount": ("int32,omitempty", "core/v1 count (events.k8s.io/v1)."),
    "deprecatedFirstTimestamp": ("Time", "core/v1 firstTimestamp (events.k8s.io/v1)."),
    "deprecatedLastTimestamp": ("Time", "core/v1 lastTimestamp (events.k8s.io/v1)."),
    "deprecatedSource": ("EventSource", "core/v1 source (events.k8s.io/v1)."),
    "eventTime": ("MicroTime", "When the event was first observed."),
    "firstTimestamp": ("Time", "When the event was first recorded (core/v1)."),
    "involvedObject": ("ObjectReference", "The object this event is about (core/v1)."),
    "lastTimestamp": ("Time", "When the event was last recorded (core/v1)."),
    "message": ("string,omitempty", "Human-readable description of the status of this operation (core/v1)."),
    "note": ("string,omitempty", "Human-readable description of the status of this operation (events.k8s.io/v1)."),
    "reason": ("string,omitempty", "Why the object is in this state (CamelCase, machine-readable)."),
    "regarding": ("ObjectReference", "The object this event is about (events.k8s.io/v1)."),
    "related": ("ObjectReference", "A second object involved in the action."),
    "reportingComponent": ("string", "Controller that emitted the event, e.g. kubernetes.io/kubelet (core/v1)."),
    "reportingController": ("string,omitempty", "Controller that emitted the event (events.k8s.io/v1)."),
    "reportingInstance": ("string", "Instance of that controller, e.g. kubelet-xyzf."),
    "series": ("EventSeries", "Data about the series this event stands for; absent for a singleton."),
    "source": ("EventSource", "Component reporting the event (core/v1)."),
    "type": ("string,omitempty", "Normal or Warning."),
})


#: The built-in resources, each with its facts (kube-apiserver v1.32's, the subset we build).
BUILTIN: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "namespace", "Namespace", False, ("ns",), ("status", "finalize"),
             printer=printers.NAMESPACE,
             schema=KindSchema("Namespace scopes names; deleting it deletes everything in it.", {
                 "spec": ("NamespaceSpec", "finalizers to clear before the namespace is removed."),
                 "status": ("NamespaceStatus", "phase: Active or Terminating.")}),
             name_rule=validators.is_dns1123_label, default=defaulters.default_namespace,
             selectable_fields=_paths("status.phase"), strategy=strategies.NAMESPACE),
    Resource("", "v1", "nodes", "node", "Node", False, ("no",), ("status",),
             printer=printers.NODE,
             schema=KindSchema("Node is a worker machine; its kubelet registers it and reports its status.", {
                 "spec": ("NodeSpec", "Configuration."), "status": ("NodeStatus", "Observed state.")}),
             validate=validators.validate_node, default=defaulters.default_node,
             selectable_fields={"spec.unschedulable": _flag("spec", "unschedulable")}),
    Resource("", "v1", "pods", "pod", "Pod", True, ("po",),
             ("status", "binding", "eviction", "log", "exec", "attach", "portforward"), (_ALL,),
             printer=printers.POD,
             schema=KindSchema("Pod is a group of containers scheduled together on one node; the smallest deployable unit.", {
                 "spec": ("PodSpec", "Desired state of the pod."), "status": ("PodStatus", "Observed state of the pod (read-only).")}),
             validate=validators.validate_pod, default=defaulters.default_pod,
             selectable_fields=POD_FIELDS, strategy=strategies.POD),
    Resource("", "v1", "bindings", "binding", "Binding", True, (), (), (), ("create",),
             schema=KindSchema("Binding ties a pod to a node (the scheduler's POST).", {
                 "target": ("ObjectReference", "The node the pod is bound to.")})),
    Resource("", "v1", "events", "event", "Event", True, ("ev",),
             printer=printers.EVENT, schema=EVENT_SCHEMA, selectable_fields=EVENT_FIELDS),
    Resource("", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", True,
             ("rc",), ("status", "scale"), (_ALL,),
             printer=printers.REPLICATIONCONTROLLER,
             schema=KindSchema("ReplicationController keeps a number of identical pods running (core/v1).", {
                 "spec": ("ReplicationControllerSpec", "Desired state."),
                 "status": ("ReplicationControllerStatus", "Observed state.")}),
             validate=validators.validate_replication_controller,
             default=defaulters.default_replication_controller,
             selectable_fields={"status.replicas": _status_replicas}, strategy=strategies.WORKLOAD),
    Resource("", "v1", "services", "service", "Service", True, ("svc",), ("status",), (_ALL,),
             printer=printers.SERVICE,
             schema=KindSchema("Service is a stable virtual IP and ports in front of a set of pods.", {
                 "spec": ("ServiceSpec", "Desired state."), "status": ("ServiceStatus", "Load balancer status.")}),
             validate=validators.validate_service, name_rule=validators.is_dns1035_label,
             default=defaulters.default_service),
    Resource("", "v1", "endpoints", "endpoints", "Endpoints", True, ("ep",),
             printer=printers.ENDPOINTS,
             schema=KindSchema("Endpoints lists the addresses and ports behind a service.", {
                 "subsets": ("[]EndpointSubset,omitempty", "Groups of addresses with the same ports.")})),
    Resource("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",),
             printer=printers.CONFIGMAP,
             schema=KindSchema("ConfigMap holds non-confidential configuration as key/value pairs.", {
                 "data": ("map[string],omitempty", "UTF-8 values."),
                 "binaryData": ("map[bytes],omitempty", "Base64 binary values."),
                 "immutable": ("boolean", "Data cannot be changed once set.")}),
             validate=validators.validate_configmap_like),
    Resource("", "v1", "secrets", "secret", "Secret", True,
             printer=printers.SECRET,
             schema=KindSchema("Secret holds confidential data such as passwords or tokens.", {
                 "data": ("map[bytes],omitempty", "Base64-encoded values."),
                 "stringData": ("map[string],omitempty", "Write-only plain values."),
                 "type": ("string,omitempty", "Type of the secret (Opaque)."), "immutable": ("boolean", "Data cannot be changed once set.")}),
             validate=validators.validate_configmap_like, default=defaulters.default_secret,
             selectable_fields=_paths("type")),
    Resource("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", True, ("sa",), ("token",),
             printer=printers.SERVICEACCOUNT,
             schema=KindSchema("ServiceAccount is an identity for processes running in pods.", {
                 "secrets": ("[]ObjectReference,omitempty", "Secrets of the account."),
                 "imagePullSecrets": ("[]LocalObjectReference,omitempty", "Secrets used to pull images of its pods."),
                 "automountServiceAccountToken": ("boolean", "Mount the token into pods.")})),
    Resource("apps", "v1", "deployments", "deployment", "Deployment", True, ("deploy",),
             ("status", "scale"), (_ALL,),
             printer=printers.DEPLOYMENT,
             schema=KindSchema("Deployment declares a replicated application; it manages ReplicaSets to roll out changes.", {
                 "spec": ("DeploymentSpec", "Desired state."), "status": ("DeploymentStatus", "Observed state.")}),
             validate=validators.validate_deployment, default=defaulters.default_deployment,
             strategy=strategies.WORKLOAD),
    Resource("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True, ("rs",),
             ("status", "scale"), (_ALL,),
             printer=printers.REPLICASET,
             schema=KindSchema("ReplicaSet keeps a number of identical pods running.", {
                 "spec": ("ReplicaSetSpec", "Desired state."), "status": ("ReplicaSetStatus", "Observed state.")}),
             validate=validators.validate_replicaset, default=defaulters.default_replicaset,
             selectable_fields={"status.replicas": _status_replicas}, strategy=strategies.WORKLOAD),
    Resource("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True, ("ds",), ("status",), (_ALL,),
             printer=printers.DAEMONSET,
             schema=KindSchema("DaemonSet runs one pod on every eligible node.", {
                 "spec": ("DaemonSetSpec", "Desired state."), "status": ("DaemonSetStatus", "Observed state.")}),
             validate=validators.validate_daemonset, default=defaulters.default_daemonset,
             strategy=strategies.WORKLOAD),
    Resource("apps", "v1", "statefulsets", "statefulset", "StatefulSet", True, ("sts",),
             ("status", "scale"), (_ALL,),
             printer=printers.STATEFULSET,
             schema=KindSchema("StatefulSet runs pods with stable names and storage.", {
                 "spec": ("StatefulSetSpec", "Desired state."), "status": ("StatefulSetStatus", "Observed state.")}),
             validate=validators.validate_statefulset, default=defaulters.default_statefulset,
             strategy=strategies.WORKLOAD),
    Resource("events.k8s.io", "v1", "events", "event", "Event", True, (), (),
             (), extra={"etcd_dir": "events"},
             printer=printers.EVENT, schema=EVENT_SCHEMA, selectable_fields=EVENT_FIELDS),
    Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", True,
             printer=printers.LEASE,
             schema=KindSchema("Lease is a lease held by one holder (leader election, node heartbeats).", {
                 "spec": ("LeaseSpec", "The holder and its timing.")})),
    *apiextensions.ENTRIES,
)
#: the API group modules' entries (controlplane/api/groups), one line per group
BUILTIN += (
    *core.ENTRIES, *core_storage.ENTRIES,
    *apps.ENTRIES,
    *batch.ENTRIES,
    *autoscaling.ENTRIES,
    *policy.ENTRIES,
    *scheduling.ENTRIES,
    *node.ENTRIES,
    *rbac.ENTRIES,
    *authentication.ENTRIES,
    *authorization.ENTRIES,
    *networking.ENTRIES,
    *storage.ENTRIES,
    *certificates.ENTRIES,
    *discovery.ENTRIES,
    *admissionregistration.ENTRIES,
    *flowcontrol.ENTRIES,
    *metrics.ENTRIES,
)
