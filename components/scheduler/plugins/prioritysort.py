"""PrioritySort (QueueSort): higher ``spec.priority`` first, then earlier arrival.
Source: pkg/scheduler/framework/plugins/queuesort/priority_sort.go."""

from __future__ import annotations

from typing import Any

NAME = "PrioritySort"


class PrioritySort:
    """``less(a, b)`` on QueuedPodInfo-like objects with ``.pod_info.priority`` and
    ``.timestamp`` (seconds)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def less(self, a: Any, b: Any) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)
