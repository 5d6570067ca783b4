"""What the scheduler's unit tests share on top of the fake API client
(:class:`controlplane.client.testing.FakeClient`): pods stored before the scheduler writes
them (a pod it patches or deletes exists in the apiserver), and the writes read back.
"""

from __future__ import annotations

from controlplane.api.resources import PODS
from controlplane.client.testing import FakeClient


def stored(c: FakeClient, p: dict) -> dict:
    """``p`` as the scheduler's informer would deliver it, stored in ``c`` first (once)."""
    md = p["metadata"]
    if (PODS, f"{md.get('namespace') or 'default'}/{md['name']}") not in c.objects:
        c.seed(PODS, p)
    return p


def deleted(c: FakeClient) -> list[str]:
    """Names of the pods deleted (the victims), sorted."""
    return sorted(a.name for a in c.actions("delete", "pods"))


def status_patches(c: FakeClient, name: str) -> list[dict]:
    """The patches sent to ``pods/<name>/status``, oldest first."""
    return [a.patch for a in c.actions("patch", "pods") if a.name == name and a.subresource == "status"]
