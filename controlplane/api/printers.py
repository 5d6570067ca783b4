"""Server-side printing, per kind: the Table columns and row functions for ``kubectl get``.

Each printed kind has one :class:`~controlplane.api.registry.Printer` here (``POD``,
``NODE``...), attached to its registry entry by :mod:`controlplane.api.builtin`;
:mod:`controlplane.api.tables` builds the Table from the entry. kubectl asks for
``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints what the server sends:
column definitions (``priority: 1`` columns only with ``-o wide``) and one
row of cells per object, plus ``object`` (a ``PartialObjectMetadata`` by default,
``includeObject=Metadata``) from which kubectl derives NAMESPACE (``-A``) and LABELS
(``--show-labels``). The server always generates the wide cells.

Column sets and cell formatting follow ``pkg/printers/internalversion/printers.go``
(printPod, printNode, printDeployment, printReplicaSet, printReplicationController,
printNamespace, printEvent, printService, ...); AGE uses
``staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go`` HumanDuration; the
Table shape is ``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go`` (Table,
TableColumnDefinition, TableRow, PartialObjectMetadata).
"""

from __future__ import annotations

from typing import Any

from controlplane import apitime
from controlplane.api.registry import JSON, Printer
from controlplane.labels import selector_from_dict

NAME_DESCRIPTION = ("Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name "
                    "automatically. Name is primarily intended for creation idempotence and configuration "
                    "definition. Cannot be updated.")
AGE_DESCRIPTION = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
                   "It is not guaranteed to be set in happens-before order across separate operations. Clients "
                   "may not set this value. It is represented in RFC3339 form and is in UTC.")


def _col(name: str, type_: str = "string", description: str = "", priority: int = 0, format_: str = "") -> JSON:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


NAME_COL = _col("Name", "string", NAME_DESCRIPTION, 0, "name")
AGE_COL = _col("Age", "string", AGE_DESCRIPTION)
WORKLOAD_WIDE = [
    _col("Containers", description="Names of each container in the template.", priority=1),
    _col("Images", description="Images referenced by each container in the template.", priority=1),
    _col("Selector", description="Label selector for pods. Existing ReplicaSets whose pods are selected by "
         "this will be the ones affected by this deployment.", priority=1),
]


# --------------------------------------------------------------------------- time helpers

def human_duration(seconds: float) -> str:
    """kubectl's short duration (HumanDuration): ``45s``, ``3m20s``, ``15m``, ``5h``,
    ``2d3h``, ``30d``, ``2y10d``; ``0s`` for up to one second in the future,
    ``<invalid>`` beyond that."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        sec = s % 60
        return f"{minutes}m" if sec == 0 else f"{minutes}m{sec}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(ts: str | None, now: float) -> str:
    """``translateTimestampSince``: HumanDuration since ``ts``, ``<unknown>`` when unset."""
    t = apitime.time_or_none(ts)
    if t is None:
        return "<unknown>"
    return human_duration(now - t)


def _age(obj: JSON, now: float) -> str:
    return since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _name(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _none(v: object) -> object:
    return "<none>" if v in (None, "") else v


# --------------------------------------------------------------------------- pods

POD_COLUMNS = [
    NAME_COL,
    _col("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", description="The aggregate status of the containers in this pod."),
    _col("Restarts", description="The number of times the containers in this pod have been restarted and when "
         "the last container in this pod has restarted."),
    AGE_COL,
    _col("IP", description="IP address allocated to the pod. Routable at least within the cluster. Empty if "
         "not yet allocated.", priority=1),
    _col("Node", description="NodeName is a request to schedule this pod onto a specific node.", priority=1),
    _col("Nominated Node", description="nominatedNodeName is set only when this pod preempts other pods on "
         "the node, but it cannot be scheduled right away as preemption victims receive their graceful "
         "termination periods.", priority=1),
    _col("Readiness Gates", description="If specified, all readiness gates will be evaluated for pod "
         "readiness.", priority=1),
]


def pod_status_reason(pod: JSON) -> tuple[str, int, int, float | None]:
    """The STATUS column of a pod and its counts, as printPod computes them.

    Returns ``(reason, ready_containers, restarts, last_restart_epoch)``. Reason is
    ``status.reason`` or the phase, overridden by ``Init:N/M`` / ``Init:<reason>`` while
    init containers run, by a container's waiting/terminated reason (``ContainerCreating``,
    ``CrashLoopBackOff``, ``Completed``, ``Error``...), ``SchedulingGated``, and finally
    ``Terminating`` when a deletionTimestamp is set on a non-terminal pod.
    """
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    meta = pod.get("metadata") or {}
    reason = status.get("reason") or status.get("phase") or ""
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    restarts = 0
    sidecar_restarts = 0
    ready = 0
    last_restart: float | None = None

    def note_restart(cs: JSON) -> None:
        nonlocal last_restart
        term = ((cs.get("lastState") or {}).get("terminated") or {})
        t = apitime.time_or_none(term.get("finishedAt"))
        if t is not None and (last_restart is None or t > last_restart):
            last_restart = t

    initializing = False
    n_init = len(spec.get("initContainers") or [])
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += int(cs.get("restartCount") or 0)
        note_restart(cs)
        sidecar = (init_specs.get(cs.get("name")) or {}).get("restartPolicy") == "Always"
        if sidecar:
            sidecar_restarts += int(cs.get("restartCount") or 0)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                reason = (f"Init:Signal:{term['signal']}" if term.get("signal")
                          else f"Init:ExitCode:{term.get('exitCode', 0)}")
            else:
                reason = "Init:" + term["reason"]
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break
    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True"
                      for c in status.get("conditions") or [])
    if not initializing or initialized:
        restarts = sidecar_restarts
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            note_restart(cs)
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            has_ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in status.get("conditions") or [])
            reason = "Running" if has_ready else "NotReady"
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, restarts, last_restart


def _pod_row(pod: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    reason, ready, restarts, last_restart = pod_status_reason(pod)
    total = len(spec.get("containers") or []) + sum(
        1 for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always")
    restarts_s = str(restarts)
    if restarts and last_restart is not None:
        restarts_s = f"{restarts} ({human_duration(now - last_restart)} ago)"
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips else None) or status.get("podIP")
    gates = spec.get("readinessGates") or []
    gates_s = "<none>"
    if gates:
        conds = status.get("conditions") or []
        true = sum(1 for g in gates for c in conds
                   if c.get("type") == g.get("conditionType") and c.get("status") == "True")
        gates_s = f"{true}/{len(gates)}"
    cells = [_name(pod), f"{ready}/{total}", reason, restarts_s, _age(pod, now),
             _none(ip), _none(spec.get("nodeName")), _none(status.get("nominatedNodeName")), gates_s]
    conditions = None
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed"):
        conditions = [{"type": "Completed", "status": "True",
                       "reason": phase, "message": "The pod has completed " +
                       ("successfully." if phase == "Succeeded" else "but failed.")}]
    return cells, conditions


# --------------------------------------------------------------------------- nodes

NODE_COLUMNS = [
    NAME_COL,
    _col("Status", description="The status of the node"),
    _col("Roles", description="The roles of the node"),
    AGE_COL,
    _col("Version", description="Kubelet Version reported by the node."),
    _col("Internal-IP", description="List of addresses reachable to the node. Queried from cloud provider, "
         "if available.", priority=1),
    _col("External-IP", description="List of addresses reachable to the node. Queried from cloud provider, "
         "if available.", priority=1),
    _col("OS-Image", description="OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux "
         "7 (wheezy)).", priority=1),
    _col("Kernel-Version", description="Kernel Version reported by the node from 'uname -r' (e.g. "
         "3.16.0-0.bpo.4-amd64).", priority=1),
    _col("Container-Runtime", description="ContainerRuntime Version reported by the node through runtime "
         "remote API (e.g. containerd://1.4.2).", priority=1),
]


def node_roles(labels: JSON) -> list[str]:
    """Roles from ``node-role.kubernetes.io/<role>`` label keys and the value of
    ``kubernetes.io/role`` (findNodeRoles), sorted."""
    roles = set()
    for k, v in (labels or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            r = k[len("node-role.kubernetes.io/"):]
            if r:
                roles.add(r)
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return sorted(roles)


def node_status(node: JSON) -> str:
    """STATUS of a node: ``Ready`` / ``NotReady`` / ``Unknown`` from the Ready condition,
    plus ``,SchedulingDisabled`` when cordoned."""
    status = []
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            status.append("Ready" if c.get("status") == "True" else "NotReady")
            break
    if not status:
        status.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def _node_row(node: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    st = node.get("status") or {}
    info = st.get("nodeInfo") or {}
    addrs = st.get("addresses") or []

    def addr(t: str) -> str:
        for a in addrs:
            if a.get("type") == t:
                return a.get("address") or "<none>"
        return "<none>"
    roles = ",".join(node_roles((node.get("metadata") or {}).get("labels") or {})) or "<none>"
    cells = [_name(node), node_status(node), roles, _age(node, now), info.get("kubeletVersion", ""),
             addr("InternalIP"), addr("ExternalIP"), info.get("osImage") or "<unknown>",
             info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]
    return cells, None


# --------------------------------------------------------------------------- workloads

def _containers_images(obj: JSON) -> tuple[str, str]:
    cs = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _label_selector_str(sel: JSON | None) -> str:
    if sel is None:
        return "<none>"
    try:
        return str(selector_from_dict(sel))
    except ValueError:
        return "<error>"


DEPLOYMENT_COLUMNS = [
    NAME_COL,
    _col("Ready", description="Number of the pod with ready state"),
    _col("Up-to-date", "integer", "Total number of non-terminated pods targeted by this deployment that have "
         "the desired template spec."),
    _col("Available", "integer", "Total number of available pods (ready for at least minReadySeconds) "
         "targeted by this deployment."),
    AGE_COL, *WORKLOAD_WIDE,
]


def _deployment_row(d: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec, st = d.get("spec") or {}, d.get("status") or {}
    containers, images = _containers_images(d)
    cells = [_name(d), f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", st.get("updatedReplicas", 0),
             st.get("availableReplicas", 0), _age(d, now), containers, images,
             _label_selector_str(spec.get("selector"))]
    return cells, None


REPLICASET_COLUMNS = [
    NAME_COL,
    _col("Desired", "integer", "Replicas is the number of desired replicas."),
    _col("Current", "integer", "Replicas is the most recently observed number of replicas."),
    _col("Ready", "integer", "The number of ready replicas for this replica set."),
    AGE_COL, *WORKLOAD_WIDE,
]


def _replicaset_row(rs: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec, st = rs.get("spec") or {}, rs.get("status") or {}
    containers, images = _containers_images(rs)
    sel = spec.get("selector")
    if rs.get("kind") == "ReplicationController" or (isinstance(sel, dict) and sel
                                                     and "matchLabels" not in sel
                                                     and "matchExpressions" not in sel):
        sel_s = ",".join(f"{k}={v}" for k, v in sorted((sel or {}).items()))
    else:
        sel_s = _label_selector_str(sel)
    cells = [_name(rs), spec.get("replicas", 0), st.get("replicas", 0), st.get("readyReplicas", 0),
             _age(rs, now), containers, images, sel_s]
    return cells, None


def _rc_row(rc: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    rc = dict(rc, kind="ReplicationController")
    return _replicaset_row(rc, now)


DAEMONSET_COLUMNS = [
    NAME_COL,
    _col("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
    _col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed "
         "to run the daemon pod."),
    _col("Ready", "integer", "The number of nodes that should be running the daemon pod and have one or more "
         "of the daemon pod running and ready."),
    _col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
    _col("Available", "integer", "The number of nodes that should be running the daemon pod and have one or "
         "more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
    _col("Node Selector", description="NodeSelector is a selector which must be true for the pod to fit on a "
         "node."),
    AGE_COL, *WORKLOAD_WIDE,
]


def _daemonset_row(ds: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec, st = ds.get("spec") or {}, ds.get("status") or {}
    ns = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    containers, images = _containers_images(ds)
    cells = [_name(ds), st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
             st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
             ",".join(f"{k}={v}" for k, v in sorted(ns.items())) or "<none>", _age(ds, now),
             containers, images, _label_selector_str(spec.get("selector"))]
    return cells, None


STATEFULSET_COLUMNS = [
    NAME_COL,
    _col("Ready", description="Number of the pod with ready state"),
    AGE_COL,
    _col("Containers", description="Names of each container in the template.", priority=1),
    _col("Images", description="Images referenced by each container in the template.", priority=1),
]


def _statefulset_row(ss: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec, st = ss.get("spec") or {}, ss.get("status") or {}
    containers, images = _containers_images(ss)
    return [_name(ss), f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", _age(ss, now),
            containers, images], None


# --------------------------------------------------------------------------- core misc

NAMESPACE_COLUMNS = [
    NAME_COL,
    _col("Status", description="The status of the namespace"),
    AGE_COL,
]


def _namespace_row(ns: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(ns), (ns.get("status") or {}).get("phase", ""), _age(ns, now)], None


EVENT_COLUMNS = [
    _col("Last Seen", description="Time when this Event was last seen"),
    _col("Type", description="Type of this event (Normal, Warning), new types could be added in the future."),
    _col("Reason", description="This should be a short, machine understandable string that gives the reason "
         "for the transition into the object's current status."),
    _col("Object", description="The object that this event is about."),
    _col("Subobject", description="An optional field path of the involved object the event is about.",
         priority=1),
    _col("Source", description="The component reporting this event. Should be a short machine understandable "
         "string.", priority=1),
    _col("Message", description="A human-readable description of the status of this operation."),
    _col("First Seen", description="The time at which the event was first recorded. (Time of server receipt "
         "is in TypeMeta.)", priority=1),
    _col("Count", description="The number of times this event has occurred.", priority=1),
    _col("Name", description=NAME_DESCRIPTION, priority=1),
]


def _event_source(ev: JSON) -> str:
    src = ev.get("source") or {}
    comp, host = src.get("component") or "", src.get("host") or ""
    if not comp and not host:
        comp, host = ev.get("reportingController") or "", ev.get("reportingInstance") or ""
    if host:
        return f"{comp}, {host}"
    return comp


def _event_row(ev: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    first = since(ev.get("firstTimestamp"), now) if ev.get("firstTimestamp") else since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 0
    series = ev.get("series")
    if isinstance(series, dict) and series:
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count", count)
    elif not count:
        count = 1
    io = ev.get("involvedObject") or {}
    target = f"{str(io.get('kind', '')).lower()}/{io['name']}" if io.get("name") else str(io.get("kind", "")).lower()
    cells = [last, ev.get("type", ""), ev.get("reason", ""), target, io.get("fieldPath", ""), _event_source(ev),
             str(ev.get("message", "")).strip(), first, count, _name(ev)]
    return cells, None


SERVICE_COLUMNS = [
    NAME_COL,
    _col("Type", description="type determines how the Service is exposed."),
    _col("Cluster-IP", description="clusterIP is the IP address of the service and is usually assigned randomly."),
    _col("External-IP", description="externalIPs is a list of IP addresses for which nodes in the cluster will "
         "also accept traffic for this service."),
    _col("Port(s)", description="The list of ports that are exposed by this service."),
    AGE_COL,
    _col("Selector", description="Route service traffic to pods with label keys and values matching this "
         "selector.", priority=1),
]


def _service_row(svc: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = svc.get("spec") or {}
    st = svc.get("status") or {}
    typ = spec.get("type") or "ClusterIP"
    ext: str
    if typ == "ExternalName":
        ext = spec.get("externalName") or "<none>"
    elif typ == "LoadBalancer":
        ing = [i.get("ip") or i.get("hostname") for i in (st.get("loadBalancer") or {}).get("ingress") or []]
        ips = list(spec.get("externalIPs") or []) + [i for i in ing if i]
        ext = ",".join(ips) or "<pending>"
    else:
        ext = ",".join(spec.get("externalIPs") or []) or "<none>"
    ports = []
    for p in spec.get("ports") or []:
        proto = p.get("protocol") or "TCP"
        if p.get("nodePort"):
            ports.append(f"{p.get('port')}:{p['nodePort']}/{proto}")
        else:
            ports.append(f"{p.get('port')}/{proto}")
    sel = spec.get("selector") or {}
    cells = [_name(svc), typ, spec.get("clusterIP") or "<none>", ext, ",".join(ports) or "<none>", _age(svc, now),
             ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>"]
    return cells, None


CONFIGMAP_COLUMNS = [NAME_COL, _col("Data", "integer", "Number of data entries"), AGE_COL]


def _configmap_row(cm: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(cm), len(cm.get("data") or {}) + len(cm.get("binaryData") or {}), _age(cm, now)], None


SECRET_COLUMNS = [NAME_COL, _col("Type", description="The type of the secret"),
                  _col("Data", "integer", "The number of entries in the secret"), AGE_COL]


def _secret_row(s: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(s), s.get("type", ""), len(s.get("data") or {}), _age(s, now)], None


SERVICEACCOUNT_COLUMNS = [NAME_COL, _col("Secrets", "integer", "Secrets is a list of the secrets in the same "
                                         "namespace that pods running using this ServiceAccount are allowed to "
                                         "use."), AGE_COL]


def _serviceaccount_row(sa: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(sa), len(sa.get("secrets") or []), _age(sa, now)], None


ENDPOINTS_COLUMNS = [NAME_COL, _col("Endpoints", description="Endpoints of the endpoints"), AGE_COL]


def _endpoints_row(ep: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    pairs: list[str] = []
    for subset in ep.get("subsets") or []:
        ports = subset.get("ports") or []
        for a in subset.get("addresses") or []:
            if ports:
                pairs.extend(f"{a.get('ip')}:{p.get('port')}" for p in ports)
            else:
                pairs.append(str(a.get("ip")))
    text = ",".join(pairs[:3])
    if len(pairs) > 3:
        text += f" + {len(pairs) - 3} more..."
    return [_name(ep), text or "<none>", _age(ep, now)], None


LEASE_COLUMNS = [NAME_COL, _col("Holder", description="The holder of the lease"), AGE_COL]


def _lease_row(lease: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(lease), (lease.get("spec") or {}).get("holderIdentity") or "", _age(lease, now)], None


DEFAULT_COLUMNS = [NAME_COL, AGE_COL]


def _default_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [_name(obj), _age(obj, now)], None


# One Printer per printed kind (the handlers printers.go's AddHandlers registers);
# controlplane.api.builtin attaches each to its registry entry.
POD = Printer(tuple(POD_COLUMNS), _pod_row)
NODE = Printer(tuple(NODE_COLUMNS), _node_row)
DEPLOYMENT = Printer(tuple(DEPLOYMENT_COLUMNS), _deployment_row)
REPLICASET = Printer(tuple(REPLICASET_COLUMNS), _replicaset_row)
REPLICATIONCONTROLLER = Printer(tuple(REPLICASET_COLUMNS), _rc_row)
DAEMONSET = Printer(tuple(DAEMONSET_COLUMNS), _daemonset_row)
STATEFULSET = Printer(tuple(STATEFULSET_COLUMNS), _statefulset_row)
NAMESPACE = Printer(tuple(NAMESPACE_COLUMNS), _namespace_row)
EVENT = Printer(tuple(EVENT_COLUMNS), _event_row)
SERVICE = Printer(tuple(SERVICE_COLUMNS), _service_row)
CONFIGMAP = Printer(tuple(CONFIGMAP_COLUMNS), _configmap_row)
SECRET = Printer(tuple(SECRET_COLUMNS), _secret_row)
SERVICEACCOUNT = Printer(tuple(SERVICEACCOUNT_COLUMNS), _serviceaccount_row)
ENDPOINTS = Printer(tuple(ENDPOINTS_COLUMNS), _endpoints_row)
LEASE = Printer(tuple(LEASE_COLUMNS), _lease_row)
#: the printer of a kind without one (and of every kind added at run time): NAME, AGE
#: (the default table convertor, ``staging/src/k8s.io/apiserver/pkg/registry/rest/table.go``)
DEFAULT = Printer(tuple(DEFAULT_COLUMNS), _default_row)
