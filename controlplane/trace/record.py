"""The step record: one line of the numbered, timed trace.

JSON shape (as sent on ``/debug/controlplane/trace``)::

    {"step": 3, "component": "apiserver", "action": "stored in etcd (txn create-if-absent)",
     "object": {"kind": "Pod", "namespace": "default", "name": "web-1", "uid": "..."},
     "owners": ["<uid of the controller owner>"], "resourceVersion": "42",
     "time": 1764464523.123456, "detail": "201 Created", "data": {}}

``data`` is optional structured detail (default ``{}``); the scheduler's step 9 puts
its per-node filter verdicts and scores there (see ``controlplane explain``). ``user`` (left
out when empty) is who did the step as the apiserver authenticated it — the user of the
request behind an apiserver step, the identity that posted a component's records; the same
name as the ``user.username`` of the request's audit event (``controlplane trace --who``).

``time`` is wall-clock seconds since the epoch (float). Step numbers and their
meaning follow seed 000's list (client -> apiserver -> etcd -> controller-manager
-> scheduler -> kubelet -> apiserver -> etcd).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

#: step number -> short title, as in seed 000 (the 13 steps of pod creation).
STEPS: dict[int, str] = {
    1: "components list-watch the apiserver",
    2: "client submits the object to the apiserver",
    3: "apiserver validates and writes it to etcd",
    4: "etcd sends the create event to the apiserver",
    5: "apiserver sends the event to the controller-manager",
    6: "controller-manager creates replicas",
    7: "apiserver writes the pod to etcd",
    8: "etcd sends the pod event to the apiserver",
    9: "scheduler filters, scores and picks a node",
    10: "scheduler binds; apiserver writes nodeName to etcd",
    11: "etcd sends the update event; apiserver shows the binding",
    12: "kubelet starts the pod (sandbox, images, containers)",
    13: "apiserver writes the pod status to etcd",
}


@dataclass
class StepRecord:
    """One step of the flow, recorded by the process where it happened."""

    step: int
    component: str
    action: str
    object: dict[str, str] = field(default_factory=dict)
    owners: list[str] = field(default_factory=list)
    resourceVersion: str = ""
    time: float = 0.0
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    user: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape; ``data`` is shared, not copied (callers encode it at once)."""
        d = {"step": self.step, "component": self.component, "action": self.action,
             "object": dict(self.object), "owners": list(self.owners),
             "resourceVersion": self.resourceVersion, "time": self.time,
             "detail": self.detail, "data": self.data}
        if self.user:
            d["user"] = self.user
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "StepRecord":
        """Build from the JSON shape; raises ValueError on a malformed record."""
        try:
            return cls(
                step=int(d["step"]),
                component=str(d["component"]),
                action=str(d["action"]),
                object={k: str(v) for k, v in (d.get("object") or {}).items()},
                owners=[str(o) for o in (d.get("owners") or [])],
                resourceVersion=str(d.get("resourceVersion") or ""),
                time=float(d.get("time") or time.time()),
                detail=str(d.get("detail") or ""),
                data=dict(d.get("data") or {}),
                user=str(d.get("user") or ""),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"malformed step record: {e}") from None

    @property
    def uid(self) -> str:
        return self.object.get("uid", "")


def object_ref(obj: dict[str, Any], kind: str | None = None) -> dict[str, str]:
    """``{"kind", "namespace", "name", "uid"}`` of a Kubernetes object dict."""
    md = obj.get("metadata") or {}
    return {
        "kind": kind or obj.get("kind", ""),
        "namespace": md.get("namespace", "") or "",
        "name": md.get("name", "") or "",
        "uid": md.get("uid", "") or "",
    }


def controller_owners(obj: dict[str, Any]) -> list[str]:
    """uids of the object's ownerReferences (controller first)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    refs = sorted(refs, key=lambda r: not r.get("controller"))
    return [r["uid"] for r in refs if r.get("uid")]


def make_record(step: int, component: str, action: str, obj: dict[str, Any] | None = None,
                detail: str = "", kind: str | None = None,
                resource_version: str | None = None, data: dict[str, Any] | None = None) -> StepRecord:
    """A :class:`StepRecord` for ``obj`` (a Kubernetes object dict), stamped now;
    ``data`` is optional structured detail (a JSON-serialisable dict)."""
    obj = obj or {}
    rv = resource_version if resource_version is not None else \
        (obj.get("metadata") or {}).get("resourceVersion", "")
    return StepRecord(step=step, component=component, action=action,
                      object=object_ref(obj, kind), owners=controller_owners(obj),
                      resourceVersion=str(rv or ""), time=time.time(), detail=detail,
                      data=dict(data or {}))
