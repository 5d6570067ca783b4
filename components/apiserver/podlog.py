"""``GET pods/NAME/log``: a plain-text log synthesized from the pod's container statuses.

The kubelet here runs no processes (the container runtime is simulated), so there is no
real output to return. The log is made from what the kubelet reported: one line when the
container started (image, container ID, node) and one when it terminated (exit code,
reason). The request handling follows ``pkg/registry/core/pod/rest/log.go`` and
``pkg/registry/core/pod/strategy.go`` LogLocation: ``container`` (required when the pod
has several), ``previous`` (the last terminated instance), ``tailLines``, ``limitBytes``,
``timestamps``; errors are 400 BadRequest with the Kubernetes messages.
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


def render(pod: dict, query: Mapping[str, str]) -> str:
    """The log text for ``pod`` and the request ``query``; raises 400 like the kubelet/apiserver."""
    name = pod["metadata"]["name"]
    container = container_name(pod, query.get("container", ""))
    previous = query.get("previous", "").lower() in ("1", "true")
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
    lines = _lines(container, image, node, state, cs)
    try:
        tail = int(query["tailLines"]) if query.get("tailLines") not in (None, "") else None
        limit = int(query["limitBytes"]) if query.get("limitBytes") not in (None, "") else None
    except ValueError:
        raise st.bad_request("tailLines and limitBytes must be integers") from None
    if tail is not None:
        if tail < 0:
            raise st.bad_request("tailLines: Invalid value: must be greater than or equal to 0")
        lines = lines[len(lines) - tail:] if tail else []
    stamps = query.get("timestamps", "").lower() in ("1", "true")
    text = "".join((f"{ts} " if stamps and ts else "") + msg + "\n" for ts, msg in lines)
    if limit is not None:
        if limit < 1:
            raise st.bad_request("limitBytes: Invalid value: must be greater than 0")
        text = text.encode()[:limit].decode(errors="ignore")
    return text


