"""NodeUnschedulable (Filter): a node with ``spec.unschedulable`` takes only pods that
tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint.
Source: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go."""

from __future__ import annotations

from operator import attrgetter

from components.scheduler.framework import UNSCHEDULABLE_AND_UNRESOLVABLE, Status
from components.scheduler.podinfo import tolerates

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE = attrgetter("unschedulable")
_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable:
    """The NodeUnschedulable Filter plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Node", "Add"), ("Node", "UpdateNodeTaint")]

    def filter(self, state, pod, node) -> Status | None:
        if node.unschedulable and not any(tolerates(t, _TAINT) for t in pod.tolerations):
            return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None] | None:
        """:meth:`filter` for many nodes: None when none is unschedulable (or the pod
        tolerates the taint), else one rejection shared by the unschedulable ones."""
        if not any(map(_UNSCHEDULABLE, nodes)) or any(tolerates(t, _TAINT) for t in pod.tolerations):
            return None
        rejected = Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
        return [rejected if n.unschedulable else None for n in nodes]
