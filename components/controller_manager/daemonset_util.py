"""DaemonSet arithmetic on plain dicts: which nodes should run a daemon pod, the pod
template the controller creates (tolerations, labels, the node affinity that pins a
pod to its node), revision patches, rolling-update limits and pod ordering.

Facts from ``pkg/controller/daemon/daemon_controller.go`` (NodeShouldRunDaemonPod,
predicates, NewPod, podByCreationTimestampAndPhase), ``pkg/controller/daemon/update.go``
(getPatch, Match, findUpdatedPodsOnNode), ``pkg/controller/daemon/util/daemonset_util.go``
(CreatePodTemplate, AddOrUpdateDaemonPodTolerations, ReplaceDaemonSetPodNodeNameNodeAffinity,
GetTargetNodeName, IsPodUpdated, GetTemplateGeneration, SurgeCount, UnavailableCount,
AllowsSurge), ``staging/src/k8s.io/component-helpers/scheduling/corev1`` (the required node
affinity of a pod, FindMatchingUntoleratedTaint) and ``pkg/apis/core/v1/helper``
(Toleration.MatchToleration).
"""

from __future__ import annotations

import copy
from typing import Any

from controlplane import apitime
from controlplane.labels import node_selector_matches

from .controller_utils import meta
from .deployment_util import scaled_value
from .taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    tolerates,
)

#: the pod label naming the ControllerRevision a daemon pod was made from (apps.DefaultDaemonSetUniqueLabelKey)
CONTROLLER_REVISION_HASH = "controller-revision-hash"
#: the pod label carrying the DaemonSet's template generation (extensions.DaemonSetTemplateGenerationKey)
POD_TEMPLATE_GENERATION = "pod-template-generation"
#: the DaemonSet annotation holding its template generation (apps.DeprecatedTemplateGeneration)
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
#: the field a node affinity matchFields requirement names a node by (metav1.ObjectNameField)
OBJECT_NAME_FIELD = "metadata.name"


def _exists(key: str, effect: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists", "effect": effect}


#: what AddOrUpdateDaemonPodTolerations adds to every daemon pod, in its order
DAEMON_TOLERATIONS: tuple[dict[str, Any], ...] = (
    _exists(TAINT_NOT_READY, NO_EXECUTE),
    _exists(TAINT_UNREACHABLE, NO_EXECUTE),
    _exists(TAINT_DISK_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_MEMORY_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_PID_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_UNSCHEDULABLE, NO_SCHEDULE),
)
#: added as well when the pod uses the host network
HOST_NETWORK_TOLERATION = _exists(TAINT_NETWORK_UNAVAILABLE, NO_SCHEDULE)


def _match_toleration(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same key, operator, value and effect (Toleration.MatchToleration)."""
    return all((a.get(f) or "") == (b.get(f) or "") for f in ("key", "operator", "value", "effect"))


def add_or_update_toleration(spec: dict[str, Any], toleration: dict[str, Any]) -> bool:
    """Add ``toleration`` to ``spec.tolerations``, replacing a matching one
    (AddOrUpdateTolerationInPodSpec). True when the list changed."""
    tols = list(spec.get("tolerations") or [])
    out: list[dict[str, Any]] = []
    updated = False
    for t in tols:
        if _match_toleration(toleration, t):
            if t == toleration:
                return False
            out.append(dict(toleration))
            updated = True
            continue
        out.append(t)
    if not updated:
        out.append(dict(toleration))
    spec["tolerations"] = out
    return True


def add_daemon_tolerations(spec: dict[str, Any]) -> None:
    """The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations): not-ready and
    unreachable NoExecute (no tolerationSeconds: never evicted); disk-pressure,
    memory-pressure, pid-pressure and unschedulable NoSchedule; network-unavailable
    NoSchedule for a hostNetwork pod. ``spec`` (a PodSpec) is changed in place."""
    for t in DAEMON_TOLERATIONS:
        add_or_update_toleration(spec, t)
    if spec.get("hostNetwork"):
        add_or_update_toleration(spec, HOST_NETWORK_TOLERATION)


def template_generation(ds: dict[str, Any]) -> int | None:
    """The DaemonSet's template generation (GetTemplateGeneration): the
    ``deprecated.daemonset.template.generation`` annotation when present (ValueError when
    it is not an integer); otherwise ``metadata.generation`` — our apiserver does not
    write that annotation, and metadata.generation moves with every template change too."""
    v = (meta(ds).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if v is not None:
        return int(v)
    g = meta(ds).get("generation")
    return int(g) if g is not None else None


def create_pod_template(template: dict[str, Any], generation: int | None, hash_: str) -> dict[str, Any]:
    """A copy of ``template`` with the daemon tolerations, ``pod-template-generation`` (when
    ``generation`` is known) and ``controller-revision-hash`` (when ``hash_`` is set)
    labels (CreatePodTemplate)."""
    t = copy.deepcopy(template or {})
    add_daemon_tolerations(t.setdefault("spec", {}))
    labels = t.setdefault("metadata", {}).setdefault("labels", {})
    if generation is not None:
        labels[POD_TEMPLATE_GENERATION] = str(generation)
    if hash_:
        labels[CONTROLLER_REVISION_HASH] = hash_
    return t


def node_name_affinity(affinity: dict[str, Any] | None, node_name: str) -> dict[str, Any]:
    """``affinity`` with its required node affinity replaced by one term
    ``matchFields: metadata.name In [node_name]`` (ReplaceDaemonSetPodNodeNameNodeAffinity):
    the default scheduler then places the pod on that node. Other affinity kinds are kept;
    a copy is returned."""
    req = {"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node_name]}
    terms = [{"matchFields": [req]}]
    out = copy.deepcopy(affinity) if affinity else {}
    na = out.get("nodeAffinity")
    if not na:
        out["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        return out
    if not na.get("requiredDuringSchedulingIgnoredDuringExecution"):
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        return out
    na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = terms
    return out


def target_node_name(pod: dict[str, Any]) -> str | None:
    """The node a daemon pod is for (GetTargetNodeName): ``spec.nodeName``, else the value of
    a required ``matchFields metadata.name In [x]`` term; None when there is neither (the
    controller skips such a pod)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or []:
        for e in (term or {}).get("matchFields") or []:
            if e.get("key") == OBJECT_NAME_FIELD and e.get("operator") == "In":
                vals = e.get("values") or []
                return str(vals[0]) if len(vals) == 1 else None
    return None


def _untolerated(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]], effects: tuple[str, ...]) -> bool:
    """Some taint with one of ``effects`` is tolerated by none (FindMatchingUntoleratedTaint)."""
    return any(t.get("effect") in effects and not any(tolerates(x, t) for x in tolerations) for t in taints)


def new_pod(ds: dict[str, Any], node_name: str) -> dict[str, Any]:
    """The pod the DaemonSet would run on ``node_name``, for the eligibility checks (NewPod):
    the template with the daemon tolerations and ``spec.nodeName``."""
    tpl = (ds.get("spec") or {}).get("template") or {}
    spec = copy.deepcopy(tpl.get("spec") or {})
    spec["nodeName"] = node_name
    add_daemon_tolerations(spec)
    return {"metadata": {**copy.deepcopy(tpl.get("metadata") or {}), "namespace": meta(ds).get("namespace")},
            "spec": spec}


def required_affinity_matches(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """``spec.nodeSelector`` and the required node affinity of ``pod`` both match ``node``
    (nodeaffinity.GetRequiredNodeAffinity(pod).Match)."""
    spec = pod.get("spec") or {}
    labels = meta(node).get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    req = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    return req is None or node_selector_matches(req, node)


def node_should_run_daemon_pod(node: dict[str, Any], ds: dict[str, Any]) -> tuple[bool, bool]:
    """``(should_run, should_continue_running)`` for ``ds`` on ``node``
    (NodeShouldRunDaemonPod): a template ``nodeName`` other than the node's, or a
    nodeSelector / required node affinity that does not match → (False, False); an
    untolerated NoSchedule or NoExecute taint → (False, whether no NoExecute taint is
    untolerated): a running pod stays unless a NoExecute taint would evict it;
    otherwise (True, True)."""
    name = meta(node).get("name") or ""
    tpl_node = (((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeName")
    if tpl_node and tpl_node != name:
        return False, False
    pod = new_pod(ds, name)
    if not required_affinity_matches(pod, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tols = pod["spec"].get("tolerations") or []
    if _untolerated(taints, tols, (NO_EXECUTE, NO_SCHEDULE)):
        return False, not _untolerated(taints, tols, (NO_EXECUTE,))
    return True, True


def is_pod_updated(pod: dict[str, Any], hash_: str, generation: int | None) -> bool:
    """The pod was made from the current template (IsPodUpdated): its
    ``controller-revision-hash`` is ``hash_`` or its ``pod-template-generation`` is
    ``generation``."""
    labels = meta(pod).get("labels") or {}
    template_matches = generation is not None and labels.get(POD_TEMPLATE_GENERATION) == str(generation)
    hash_matches = bool(hash_) and labels.get(CONTROLLER_REVISION_HASH) == hash_
    return hash_matches or template_matches


def _rolling(ds: dict[str, Any]) -> dict[str, Any] | None:
    us = (ds.get("spec") or {}).get("updateStrategy") or {}
    if (us.get("type") or "RollingUpdate") != "RollingUpdate":
        return None
    r: dict[str, Any] | None = us.get("rollingUpdate")
    return r


def surge_count(ds: dict[str, Any], number_to_schedule: int) -> int:
    """maxSurge against ``number_to_schedule``, rounded up; 0 unless RollingUpdate (SurgeCount)."""
    r = _rolling(ds)
    return scaled_value(r.get("maxSurge"), number_to_schedule, True) if r else 0


def unavailable_count(ds: dict[str, Any], number_to_schedule: int) -> int:
    """maxUnavailable against ``number_to_schedule``, rounded up; 0 unless RollingUpdate
    (UnavailableCount)."""
    r = _rolling(ds)
    return scaled_value(r.get("maxUnavailable"), number_to_schedule, True) if r else 0


def allows_surge(ds: dict[str, Any]) -> bool:
    """A RollingUpdate whose maxSurge is not zero (AllowsSurge)."""
    try:
        return surge_count(ds, 1) != 0
    except ValueError:
        return False


def revision_patch(ds: dict[str, Any]) -> dict[str, Any]:
    """What a ControllerRevision of ``ds`` stores in ``data`` (getPatch): a strategic merge
    patch replacing ``spec.template`` — ``{"spec": {"template": {..., "$patch": "replace"}}}`` —
    which ``kubectl rollout undo`` sends back to restore that template."""
    tpl = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    tpl["$patch"] = "replace"
    return {"spec": {"template": tpl}}


def matches_revision(ds: dict[str, Any], history: dict[str, Any]) -> bool:
    """The revision holds ``ds``'s current template (Match; compared as JSON values)."""
    return history.get("data") == revision_patch(ds)


def pod_order_key(pod: dict[str, Any]) -> tuple[int, float, str]:
    """Scheduled pods first, then older first, then by name (podByCreationTimestampAndPhase)."""
    md = meta(pod)
    return (0 if (pod.get("spec") or {}).get("nodeName") else 1,
            apitime.time_or_none(md.get("creationTimestamp")) or 0.0, md.get("name") or "")


def find_updated_pods_on_node(pods: list[dict[str, Any]], hash_: str,
                              generation: int | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """``(new_pod, old_pod, ok)`` among one node's pods not being deleted
    (findUpdatedPodsOnNode); ``ok`` is False when there are two new or two old pods."""
    new: dict[str, Any] | None = None
    old: dict[str, Any] | None = None
    for p in pods:
        if meta(p).get("deletionTimestamp"):
            continue
        if is_pod_updated(p, hash_, generation):
            if new is not None:
                return None, None, False
            new = p
        else:
            if old is not None:
                return None, None, False
            old = p
    return new, old, True
