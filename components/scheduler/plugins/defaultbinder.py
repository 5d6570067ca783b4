"""DefaultBinder (Bind): POST ``pods/NAME/binding`` with a v1 Binding naming the node.
Source: pkg/scheduler/framework/plugins/defaultbinder/default_binder.go."""

from __future__ import annotations

from components.scheduler.framework import ERROR, Status
from controlplane.api.resources import PODS

NAME = "DefaultBinder"


def binding_body(pod, node_name: str) -> dict:
    """The v1 Binding for ``pod`` (a PodInfo) onto ``node_name``."""
    return {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace,
                         **({"uid": pod.uid} if pod.uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


class DefaultBinder:
    """``handle.client`` is a RestClient (or anything with ``create_subresource``)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        self.handle = handle

    async def bind(self, state, pod, node_name: str) -> Status:
        try:
            await self.handle.client.create_subresource(PODS, pod.name, "binding",
                                                        binding_body(pod, node_name), pod.namespace)
        except Exception as e:  # ApiError or transport failure: the cycle retries
            return Status(ERROR, f"binding rejected: {e}")
        return Status()
