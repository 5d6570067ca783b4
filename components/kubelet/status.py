"""Pod status as the kubelet reports it, computed from the runtime's view.

Pure functions on plain dicts (no I/O):

* :func:`container_statuses` — ``initContainerStatuses`` / ``containerStatuses``
  from the sandbox's containers (waiting reasons ``PodInitializing`` /
  ``ContainerCreating`` / ``CrashLoopBackOff``; running; terminated);
* :func:`pod_phase` — Pending / Running / Succeeded / Failed from those statuses and
  ``restartPolicy`` (``pkg/kubelet/kubelet_pods.go`` getPhase);
* :func:`pod_conditions` — PodReadyToStartContainers, Initialized, Ready,
  ContainersReady, keeping other owners' conditions (PodScheduled) and each
  condition's ``lastTransitionTime`` while its status does not change
  (``pkg/kubelet/status/generate.go``, ``status_manager.go`` updateLastTransitionTime);
* :func:`generate_pod_status` — the whole ``status`` (hostIP(s), podIP(s),
  startTime, qosClass, phase, conditions, container statuses).
"""

from __future__ import annotations

import copy

from components.kubelet.runtime import Container, Sandbox, image_id
from controlplane import apitime
from controlplane.api.defaults import qos_class

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def _names(lst: list[str]) -> str:
    return "[" + " ".join(lst) + "]"  # Go's %v of a []string


def container_status(spec: dict, c: Container | None, waiting_reason: str,
                     waiting_message: str = "") -> dict:
    """One ``ContainerStatus``. ``c`` None → waiting with ``waiting_reason``."""
    st: dict = {"name": spec["name"], "image": spec.get("image", ""), "imageID": "",
                "ready": False, "restartCount": 0, "started": False, "lastState": {}}
    if c is None:
        st["state"] = {"waiting": {"reason": waiting_reason,
                                   **({"message": waiting_message} if waiting_message else {})}}
        return st
    st.update(image=c.image_ref, imageID=image_id(c.image), containerID=c.container_id,
              restartCount=c.restart_count)
    if c.last_terminated:
        st["lastState"] = {"terminated": dict(c.last_terminated)}
    if c.state == "exited" and c.waiting_reason:
        # exited, waiting to be restarted: the exit is reported as lastState
        st["state"] = {"waiting": {"reason": c.waiting_reason,
                                   **({"message": c.waiting_message} if c.waiting_message else {})}}
        st["lastState"] = {"terminated": c.terminated_state()}
    elif c.state == "running":
        # started / ready: the probe manager's view (prober_manager.go UpdatePodStatus):
        # started once the startup probe succeeded, ready once started and the
        # readiness probe succeeded; without probes, running is both
        st["state"] = {"running": {"startedAt": c.started_at}}
        st["started"] = c.probes.started if c.probes is not None else True
        st["ready"] = not c.init and (c.probes.ready if c.probes is not None else True)
    elif c.state == "exited":
        st["state"] = {"terminated": c.terminated_state()}
    else:
        st["state"] = {"waiting": {"reason": "ContainerCreating"}}
    return st


def init_done(spec: dict, sb: Sandbox | None) -> bool:
    """True when every init container has terminated with exit code 0."""
    for ic in spec.get("initContainers") or []:
        c = sb.get(ic["name"], True) if sb else None
        if c is None or c.state != "exited" or c.exit_code != 0:
            return False
    return True


def container_statuses(spec: dict, sb: Sandbox | None) -> tuple[list[dict], list[dict]]:
    """``(initContainerStatuses, containerStatuses)`` in spec order."""
    def one(c: dict, init: bool, default_reason: str) -> dict:
        reason, msg = (sb.waiting.get((init, c["name"])) if sb else None) or (default_reason, "")
        return container_status(c, sb.get(c["name"], init) if sb else None, reason, msg)

    inits = [one(ic, True, "PodInitializing") for ic in spec.get("initContainers") or []]
    app_wait = "ContainerCreating" if init_done(spec, sb) else "PodInitializing"
    apps = [one(c, False, app_wait) for c in spec.get("containers") or []]
    return inits, apps


def pod_phase(spec: dict, init_statuses: list[dict], statuses: list[dict],
              terminal: bool = False) -> str:
    """The pod phase from container statuses (kubelet_pods.go getPhase).

    ``terminal``: the pod is being shut down for good (deleted), so stopped
    containers make the phase Succeeded (all exit 0) or Failed, whatever the
    restart policy (kubelet ≥ 1.27).
    """
    restart = spec.get("restartPolicy") or "Always"
    by_name = {s["name"]: s for s in init_statuses}
    pending_init = failed_init = 0
    for ic in spec.get("initContainers") or []:
        s = by_name.get(ic["name"]) or {}
        state, last = s.get("state") or {}, (s.get("lastState") or {}).get("terminated")
        if "terminated" in state:
            if state["terminated"].get("exitCode", 0) != 0:
                failed_init += 1
        elif "waiting" in state and last and last.get("exitCode", 0) != 0:
            failed_init += 1
        else:
            pending_init += 1
    running = waiting = stopped = succeeded = 0
    by_name = {s["name"]: s for s in statuses}
    for c in spec.get("containers") or []:
        s = by_name.get(c["name"]) or {}
        state, last = s.get("state") or {}, (s.get("lastState") or {}).get("terminated")
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += state["terminated"].get("exitCode", 0) == 0
        elif last:
            stopped += 1
            succeeded += last.get("exitCode", 0) == 0
        else:
            waiting += 1
    if terminal:
        if running == 0 and waiting == 0 and pending_init == 0 and failed_init == 0 \
                and stopped > 0 and stopped == succeeded:
            return "Succeeded"
        return "Failed"
    if failed_init and restart == "Never":
        return "Failed"
    if pending_init or failed_init:
        return "Pending"
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if restart == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if restart == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def _cond(type_: str, ok: bool, reason: str = "", message: str = "") -> dict:
    c: dict = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def pod_conditions(spec: dict, sb: Sandbox | None, phase: str, init_statuses: list[dict],
                   statuses: list[dict], old: list[dict] | None = None,
                   now: str | None = None) -> list[dict]:
    """Kubelet-owned conditions, then the others from ``old`` (e.g. PodScheduled).

    A condition keeps ``old``'s ``lastTransitionTime`` while its status is unchanged.
    """
    completed = phase == "Succeeded"
    conds = [_cond("PodReadyToStartContainers", sb is not None and phase not in ("Succeeded", "Failed"))]
    incomplete = [s["name"] for s in init_statuses
                  if ((s.get("state") or {}).get("terminated") or {}).get("exitCode", 1) != 0]
    if completed:
        conds.append(_cond("Initialized", True, "PodCompleted"))
    elif incomplete:
        conds.append(_cond("Initialized", False, "ContainersNotInitialized",
                           f"containers with incomplete status: {_names(incomplete)}"))
    else:
        conds.append(_cond("Initialized", True))
    unready = [s["name"] for s in statuses if not s.get("ready")]
    for t in ("Ready", "ContainersReady"):
        if completed:
            conds.append(_cond(t, False, "PodCompleted"))
        elif incomplete and not unready:
            conds.append(_cond(t, False, "ContainersNotReady", "containers with incomplete status"))
        elif unready:
            conds.append(_cond(t, False, "ContainersNotReady",
                               f"containers with unready status: {_names(unready)}"))
        else:
            conds.append(_cond(t, True))
    now = now or apitime.now()
    prev = {c.get("type"): c for c in old or []}
    for c in conds:
        p = prev.get(c["type"])
        c["lastTransitionTime"] = p.get("lastTransitionTime") if p and p.get("status") == c["status"] \
            and p.get("lastTransitionTime") else now
    mine = set(KUBELET_CONDITIONS)
    others = [copy.deepcopy(c) for c in old or [] if c.get("type") not in mine]
    if not any(c.get("type") == "PodScheduled" for c in others):
        # a pod placed by spec.nodeName never met a scheduler: the kubelet adds it
        others.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now})
    return conds + others


def generate_pod_status(pod: dict, sb: Sandbox | None, host_ip: str, *, terminal: bool = False,
                        now: str | None = None) -> dict:
    """The pod's full ``status`` as this kubelet would write it.

    ``pod`` is the API object (its current ``status`` supplies PodScheduled, startTime
    and transition times); ``sb`` the runtime sandbox or None; ``host_ip`` the node's
    InternalIP. ``terminal`` as in :func:`pod_phase`.
    """
    spec = pod.get("spec") or {}
    old = pod.get("status") or {}
    now = now or apitime.now()
    inits, apps = container_statuses(spec, sb)
    phase = pod_phase(spec, inits, apps, terminal)
    st: dict = {"phase": phase,
                "conditions": pod_conditions(spec, sb, phase, inits, apps, old.get("conditions"), now),
                "hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}
    if sb is not None:
        st["podIP"] = sb.ip
        st["podIPs"] = [{"ip": sb.ip}]
    elif old.get("podIP"):
        st["podIP"], st["podIPs"] = old["podIP"], old.get("podIPs") or [{"ip": old["podIP"]}]
    st["startTime"] = old.get("startTime") or (sb.start_time if sb and sb.start_time else now)
    if inits:
        st["initContainerStatuses"] = inits
    st["containerStatuses"] = apps
    st["qosClass"] = old.get("qosClass") or qos_class(spec)
    return st


def _omitempty(v):
    """``v`` without null, empty-string, empty-list and empty-object members, at every
    depth: what Go's ``omitempty`` JSON encoding leaves out, so a status read back
    from the apiserver compares equal to the one this kubelet generated."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            x = _omitempty(x)
            if x not in (None, "", [], {}):
                out[k] = x
        return out
    if isinstance(v, list):
        return [_omitempty(x) for x in v]
    return v


STATUS_KEYS = ("phase", "conditions", "hostIP", "hostIPs", "podIP", "podIPs", "startTime",
               "initContainerStatuses", "containerStatuses", "qosClass")


def status_differs(old: dict | None, new: dict) -> bool:
    """Whether ``new`` says something ``old`` does not (both full pod statuses; only
    the fields the kubelet writes, empty values ignored — the status manager's
    ``isPodStatusByKubeletEqual`` on normalized statuses)."""
    if not old:
        return True
    return any(_omitempty(old.get(k)) != _omitempty(new.get(k)) for k in STATUS_KEYS)
