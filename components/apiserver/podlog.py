"""``GET pods/NAME/log``: a plain-text log synthesized from the pod's container statuses.

The kubelet here runs no processes (the container runtime is simulated), so there is no
real output to return. The log is made from what the kubelet reported: one line when the
container started (image, container ID, node) and one when it terminated (exit code,
reason). The request handling follows ``pkg/registry/core/pod/rest/log.go`` and
``pkg/registry/core/pod/strategy.go`` LogLocation: ``container`` (required when the pod
has several), ``previous`` (the last terminated instance), ``tailLines``, ``limitBytes``,
``timestamps``; errors are 400 BadRequest with the Kubernetes messages. ``follow=true``
keeps the stream open while the container instance runs (:class:`LogFollower`: the lines
of the pod's later status updates, through the watch cache) and ends it when the instance
terminates, the pod is deleted or the apiserver shuts down.
"""

from __future__ import annotations

from typing import Mapping

from components.apiserver import status as st


def _names(spec: dict, key: str) -> list[str]:
    return [c.get("name", "") for c in spec.get(key) or [] if isinstance(c, dict)]


def container_name(pod: dict, requested: str) -> str:
    """The container a log request is for; raises 400 as LogLocation does."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    main, init = _names(spec, "containers"), _names(spec, "initContainers")
    eph = _names(spec, "ephemeralContainers")
    if not requested:
        if len(main) == 1:
            return main[0]
        msg = f"a container name must be specified for pod {name}, choose one of: [{' '.join(main)}]"
        if init:
            msg += f" or one of the init containers: [{' '.join(init)}]"
        raise st.bad_request(msg)
    if requested not in main + init + eph:
        raise st.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _status_of(pod: dict, container: str) -> dict | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(key) or []:
            if isinstance(cs, dict) and cs.get("name") == container:
                return cs
    return None


def _lines(container: str, image: str, node: str, state: dict, cs: dict) -> list[tuple[str, str]]:
    """(timestamp, text) lines for one container instance described by ``state``."""
    out = []
    run = state.get("running") or state.get("terminated")
    if run:
        out.append((run.get("startedAt") or "", f'container "{container}" started: image "{image}", '
                    f'containerID "{cs.get("containerID", "")}", node "{node}" (simulated runtime: no process output)'))
    term = state.get("terminated")
    if term:
        reason = term.get("reason") or ""
        out.append((term.get("finishedAt") or "", f'container "{container}" terminated: exitCode {term.get("exitCode", 0)}'
                    + (f", reason {reason}" if reason else "")))
    return out


def _instance(pod: dict, container: str, previous: bool) -> tuple[dict, dict, str, str]:
    """(state, container status, image, node) of the container instance a log request is
    for; raises 400 for no previous instance or one still waiting, as the kubelet does."""
    name = pod["metadata"]["name"]
    cs = _status_of(pod, container) or {}
    spec = pod.get("spec") or {}
    image = next((c.get("image", "") for k in ("containers", "initContainers", "ephemeralContainers")
                  for c in spec.get(k) or [] if isinstance(c, dict) and c.get("name") == container), "")
    node = spec.get("nodeName", "")
    if previous:
        state = (cs.get("lastState") or {})
        if not state.get("terminated"):
            raise st.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    else:
        state = cs.get("state") or {}
        if not (state.get("running") or state.get("terminated")):
            reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
            raise st.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return state, cs, image, node


def _int_option(query: Mapping[str, str], key: str) -> int | None:
    try:
        return int(query[key]) if query.get(key) not in (None, "") else None
    except ValueError:
        raise st.bad_request("tailLines and limitBytes must be integers") from None


def _format(lines: list[tuple[str, str]], stamps: bool) -> str:
    return "".join((f"{ts} " if stamps and ts else "") + msg + "\n" for ts, msg in lines)


def render(pod: dict, query: Mapping[str, str]) -> str:
    """The log text for ``pod`` and the request ``query``; raises 400 like the kubelet/apiserver."""
    container = container_name(pod, query.get("container", ""))
    previous = query.get("previous", "").lower() in ("1", "true")
    state, cs, image, node = _instance(pod, container, previous)
    lines = _lines(container, image, node, state, cs)
    tail, limit = _int_option(query, "tailLines"), _int_option(query, "limitBytes")
    if tail is not None:
        if tail < 0:
            raise st.bad_request("tailLines: Invalid value: must be greater than or equal to 0")
        lines = lines[len(lines) - tail:] if tail else []
    stamps = query.get("timestamps", "").lower() in ("1", "true")
    text = _format(lines, stamps)
    if limit is not None:
        if limit < 1:
            raise st.bad_request("limitBytes: Invalid value: must be greater than 0")
        text = text.encode()[:limit].decode(errors="ignore")
    return text


def follows(query: Mapping[str, str]) -> bool:
    """``?follow=true`` without ``previous``: the log stays open while the container runs
    (a previous instance has ended: its log is complete, as the kubelet serves it)."""
    truthy = ("1", "true")
    return query.get("follow", "").lower() in truthy and query.get("previous", "").lower() not in truthy


class LogFollower:
    """``GET pods/NAME/log?follow=true``: the synthesized log of one container instance, then
    its later lines as the pod's status shows them, until the instance ends.

    The kubelet streams the container's log file until the container exits
    (``pkg/kubelet/kuberuntime/logs`` ReadLogs with ``Follow``; the apiserver proxies it,
    ``pkg/registry/core/pod/rest/log.go``). Here the log is made from the pod's container
    statuses, so the stream follows the pod through the watch cache: it writes the lines of
    each update (the termination line when the container terminates), and ends when that
    instance has terminated (its state, or ``lastState`` after a restart), when the pod is
    deleted, or when the watch is closed (apiserver shutdown). No I/O here: the handler
    writes :meth:`initial`, then what :meth:`update` returns for each of the pod's watch
    events, and ends the stream when it says the instance has ended. ``limitBytes`` caps the
    whole stream; ``tailLines`` the initial lines. Raises 400 as :func:`render` does.
    """

    def __init__(self, pod: dict, query: Mapping[str, str]) -> None:
        self.container = container_name(pod, query.get("container", ""))
        self.stamps = query.get("timestamps", "").lower() in ("1", "true")
        self.limit = _int_option(query, "limitBytes")
        self.tail = _int_option(query, "tailLines")
        if self.limit is not None and self.limit < 1:
            raise st.bad_request("limitBytes: Invalid value: must be greater than 0")
        self.sent: list[tuple[str, str]] = []
        self.written = 0
        state, cs, _, _ = _instance(pod, self.container, False)
        self.container_id = cs.get("containerID", "")
        self.pod = pod

    def initial(self) -> bytes:
        """The lines so far (``tailLines`` of them), marked sent."""
        text = render(self.pod, {"container": self.container, "timestamps": "true" if self.stamps else "",
                                 **({"tailLines": str(self.tail)} if self.tail is not None else {})})
        state, cs, image, node = _instance(self.pod, self.container, False)
        self.sent = _lines(self.container, image, node, state, cs)
        return self._cap(text.encode())

    def _cap(self, data: bytes) -> bytes:
        if self.limit is not None:
            data = data[:max(self.limit - self.written, 0)]
        self.written += len(data)
        return data

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.written >= self.limit

    def update(self, pod: dict) -> tuple[bytes, bool]:
        """The new lines an updated ``pod`` adds, and whether the followed instance has ended."""
        cs = _status_of(pod, self.container) or {}
        spec = pod.get("spec") or {}
        image = next((c.get("image", "") for k in ("containers", "initContainers", "ephemeralContainers")
                      for c in spec.get(k) or [] if isinstance(c, dict) and c.get("name") == self.container), "")
        node = spec.get("nodeName", "")
        state = cs.get("state") or {}
        if self.container_id and cs.get("containerID", "") != self.container_id:
            # restarted: the followed instance is the previous one now
            last = cs.get("lastState") or {}
            lines = _lines(self.container, image, node, last, {**cs, "containerID": self.container_id})[1:]
            ended = True
        else:
            lines = _lines(self.container, image, node, state, cs)
            ended = bool(state.get("terminated"))
        new = [ln for ln in lines if ln not in self.sent]
        self.sent += new
        return self._cap(_format(new, self.stamps).encode()), ended or self.exhausted
