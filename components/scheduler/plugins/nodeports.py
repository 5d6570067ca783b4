"""NodePorts (Filter): the pod's host ports must be free on the node. Ports conflict
when protocol and port are equal and either host IP is 0.0.0.0 or both are equal.
Source: pkg/scheduler/framework/plugins/nodeports/node_ports.go, framework/types.go HostPortInfo."""

from __future__ import annotations

from components.scheduler.framework import SKIP, UNSCHEDULABLE, Status

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_ANY = "0.0.0.0"


def conflicts(used: dict[tuple[str, str, int], int], want: tuple[str, str, int]) -> bool:
    """Whether host port ``want`` (ip, protocol, port) collides with a used one."""
    ip, proto, port = want
    for uip, uproto, uport in used:
        if uport == port and uproto == proto and (ip == _ANY or uip == _ANY or ip == uip):
            return True
    return False


class NodePorts:
    """The NodePorts PreFilter/Filter plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("Node", "Add")]

    def pre_filter(self, state, pod, snapshot) -> Status | None:
        return None if pod.host_ports else Status(SKIP)  # no host ports: nothing to check

    def filter(self, state, pod, node) -> Status | None:
        if not pod.host_ports or not node.used_ports:
            return None
        for p in pod.host_ports:
            if conflicts(node.used_ports, p):
                return Status(UNSCHEDULABLE, ERR_REASON)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes (it has no side effects)."""
        f = self.filter
        return [f(state, pod, n) for n in nodes]
