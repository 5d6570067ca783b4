"""SchedulingGates (PreEnqueue): a pod with ``spec.schedulingGates`` is not queued for
scheduling; it waits in the unschedulable pods (gated) until an update removes every
gate. Status UnschedulableAndUnresolvable ``waiting for scheduling gates: [a b]``
(the gate names as Go prints a ``[]string``). No cluster event un-gates a pod: only
the pod's own update does (the queue re-runs PreEnqueue on it).
Source: pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go.
"""

from __future__ import annotations

from components.scheduler.framework import UNSCHEDULABLE_AND_UNRESOLVABLE, Status

SCHEDULING_GATES = "SchedulingGates"


def gate_names(pod: dict) -> list[str]:
    """The names in ``spec.schedulingGates`` (``[{name}]``), in order."""
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return [g.get("name", "") if isinstance(g, dict) else str(g) for g in gates]


class SchedulingGates:
    name = SCHEDULING_GATES

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def pre_enqueue(self, pod) -> Status | None:
        """None (may be queued) or UnschedulableAndUnresolvable while gates remain;
        ``pod`` is a PodInfo."""
        names = gate_names(pod.pod)
        if not names:
            return None
        return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{' '.join(names)}]")
