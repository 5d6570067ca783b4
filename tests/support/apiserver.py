"""Helpers for apiserver tests that talk to it over HTTP."""

from __future__ import annotations

import uuid


async def new_ns(api) -> str:
    """Create a namespace with a random ``t-xxxxxxxx`` name; returns the name."""
    ns = "t-" + uuid.uuid4().hex[:8]
    r = await api.post("/api/v1/namespaces",
                       json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert r.status == 201
    return ns
