"""Event reasons and messages the kubelet writes, worded as v1.32 does.

Reasons: ``pkg/kubelet/events/event.go``. Messages: image pulls from
``pkg/kubelet/images/image_manager.go``; Created/Started/Killing from
``pkg/kubelet/kuberuntime/kuberuntime_container.go``; BackOff from
``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (doBackOff); node events from
``pkg/kubelet/nodestatus/setters.go`` and ``pkg/kubelet/kubelet.go``.
Durations are printed as Go's ``time.Duration.String`` does.
"""

from __future__ import annotations

from controlplane import apitime

PULLING, PULLED, CREATED, STARTED, KILLING = "Pulling", "Pulled", "Created", "Started", "Killing"
BACKOFF, FAILED, ERR_IMAGE_NEVER_PULL = "BackOff", "Failed", "ErrImageNeverPull"
UNHEALTHY = "Unhealthy"
#: kuberuntime_manager.go SyncPod when the sandbox must be re-created
SANDBOX_CHANGED, SANDBOX_CHANGED_MESSAGE = "SandboxChanged", "Pod sandbox changed, it will be killed and re-created."
STARTING, NODE_READY = "Starting", "NodeReady"
#: the runtime's network error while the node has no podCIDR (containerd's CRI status, as the
#: kubelet's runtimeState.networkErrors reports it), and the pod event it causes (kubelet.go SyncPod)
NETWORK_NOT_READY_ERROR = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                           "message:Network plugin returns error: cni plugin not initialized")
NETWORK_NOT_READY, NETWORK_NOT_READY_MESSAGE = "NetworkNotReady", f"network is not ready: {NETWORK_NOT_READY_ERROR}"


def go_duration(seconds: float) -> str:
    """``seconds`` truncated to the millisecond, as the image manager's messages truncate
    them (``Truncate(time.Millisecond)``), printed as Go's Duration.String: ``0.2`` →
    ``200ms``, ``1.234`` → ``1.234s``, ``80`` → ``1m20s``, ``300`` → ``5m0s``, ``0`` → ``0s``."""
    return apitime.format_duration_ns(int(seconds * 1000 + 1e-9) * apitime.MILLISECOND)


def pulling(image: str) -> str:
    return f'Pulling image "{image}"'


def pulled(image: str, pull_seconds: float, total_seconds: float, size: int) -> str:
    return (f'Successfully pulled image "{image}" in {go_duration(pull_seconds)} '
            f"({go_duration(total_seconds)} including waiting). Image size: {size} bytes.")


def already_present(image: str) -> str:
    return f'Container image "{image}" already present on machine'


def never_pull(image: str) -> str:
    return f'Container image "{image}" is not present with pull policy of Never'


def created(name: str) -> str:
    return f"Created container: {name}"


def started(name: str) -> str:
    return f"Started container {name}"


def killing(name: str) -> str:
    return f"Stopping container {name}"


def pod_ref(pod: dict) -> str:
    """``NAME_NAMESPACE(UID)`` — the kubelet's format.Pod."""
    md = pod.get("metadata") or {}
    return f"{md.get('name')}_{md.get('namespace')}({md.get('uid')})"


def backoff_event(name: str, pod: dict) -> str:
    return f"Back-off restarting failed container {name} in pod {pod_ref(pod)}"


def backoff_waiting(name: str, pod: dict, seconds: float) -> str:
    """The CrashLoopBackOff waiting message in the container status."""
    return f"back-off {go_duration(seconds)} restarting failed container={name} pod={pod_ref(pod)}"


def field_path(name: str, init: bool) -> str:
    """involvedObject.fieldPath of a container event: ``spec.containers{nginx}``."""
    return f"spec.{'initContainers' if init else 'containers'}{{{name}}}"
