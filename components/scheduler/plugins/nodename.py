"""NodeName (Filter): a pod that names a node (``spec.nodeName``) fits only there.
Source: pkg/scheduler/framework/plugins/nodename/node_name.go."""

from __future__ import annotations

from components.scheduler.framework import SKIP, UNSCHEDULABLE_AND_UNRESOLVABLE, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    """The NodeName PreFilter/Filter plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Node", "Add")]

    def pre_filter(self, state, pod, snapshot) -> Status | None:
        return None if pod.node_name else Status(SKIP)

    def filter(self, state, pod, node) -> Status | None:
        if pod.node_name and pod.node_name != node.name:
            return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes (it has no side effects)."""
        f = self.filter
        return [f(state, pod, n) for n in nodes]
