"""Container lifecycle timings: grace periods and how long a hook takes.

Sources: ``pkg/kubelet/kuberuntime/kuberuntime_container.go`` (setTerminationGracePeriod,
killContainer: the preStop hook's time is taken from the grace period, at least 2 s
stay for SIGTERM) and ``pkg/kubelet/lifecycle`` (exec, httpGet and sleep handlers).
"""

from __future__ import annotations

from components.kubelet.runtime import Container
from components.kubelet.script import run_against

#: what is left for SIGTERM after a preStop hook, at least (minimumGracePeriodInSeconds)
MINIMUM_GRACE_SECONDS = 2.0


def grace_period_seconds(pod: dict, probe: dict | None = None) -> float:
    """The grace period of a stop, seconds: a probe's ``terminationGracePeriodSeconds``
    (liveness / startup kills), else ``metadata.deletionGracePeriodSeconds``, else the
    spec's ``terminationGracePeriodSeconds``, else 30 (``kuberuntime_container.go``
    setTerminationGracePeriod)."""
    for v in ((probe or {}).get("terminationGracePeriodSeconds"),
              (pod.get("metadata") or {}).get("deletionGracePeriodSeconds"),
              (pod.get("spec") or {}).get("terminationGracePeriodSeconds")):
        if v is not None:
            return max(float(v), 0.0)
    return 30.0


def hook_seconds(hook: dict, c: Container, now: float) -> float:
    """How long a lifecycle hook takes: an ``exec`` command's run time by the rules of
    ``script.py`` (one that never ends: forever), ``sleep.seconds``, else 0."""
    if isinstance(hook.get("sleep"), dict):
        return float(hook["sleep"].get("seconds") or 0)
    if isinstance(hook.get("exec"), dict):
        argv = [str(w) for w in hook["exec"].get("command") or []]
        tl, _ = run_against(argv, c.timeline, now - c.started_mono)
        return float("inf") if tl.end is None else tl.end
    return 0.0


def should_restart(restart_policy: str, exit_code: int | None, killed_by_probe: str = "") -> bool:
    """Whether an exited container starts again: ``Always``; ``OnFailure`` after a non-zero
    exit — or after a liveness / startup probe killed it, whatever its exit code
    (``kuberuntime_manager.go`` computePodActions restarts a probe-killed container
    unless the policy is ``Never``); never under ``Never``."""
    if restart_policy == "Always":
        return True
    if restart_policy == "OnFailure":
        return bool(exit_code) or bool(killed_by_probe)
    return False
