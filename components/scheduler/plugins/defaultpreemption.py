"""DefaultPreemption (PostFilter), reduced to its verdict: it explains why preemption
cannot help, in kube-scheduler's words, without evicting anything.

Per node: rejected as UnschedulableAndUnresolvable → "Preemption is not helpful for
scheduling"; otherwise "No preemption victims found for incoming pod" (this
scheduler does not evict lower-priority pods). A pod with ``preemptionPolicy:
Never`` gets "not eligible due to preemptionPolicy=Never.". Source:
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go."""

from __future__ import annotations

from components.scheduler.framework import (NO_NODE_AVAILABLE_MSG, UNSCHEDULABLE,
                                            UNSCHEDULABLE_AND_UNRESOLVABLE, Status, histogram)

NAME = "DefaultPreemption"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


class DefaultPreemption:
    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def post_filter(self, state, pod, snapshot, diagnosis) -> Status:
        spec = pod.pod.get("spec") or {}
        if spec.get("preemptionPolicy") == "Never":
            return Status(UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never.")
        reasons = []
        for n in snapshot.nodes:
            st = diagnosis.node_to_status.get(n.name)
            if st is not None and st.code == UNSCHEDULABLE_AND_UNRESOLVABLE:
                reasons.append([NOT_HELPFUL])
            else:
                reasons.append([NO_VICTIMS])
        msg = f"{NO_NODE_AVAILABLE_MSG.format(len(snapshot.nodes))}: {histogram(reasons)}."
        return Status(UNSCHEDULABLE, "preemption: " + msg)
