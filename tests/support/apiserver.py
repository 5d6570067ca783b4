"""Helpers for apiserver tests that talk to it over HTTP."""

from __future__ import annotations

import asyncio
import json
import uuid


async def new_ns(api) -> str:
    """Create a namespace with a random ``t-xxxxxxxx`` name; returns the name."""
    ns = "t-" + uuid.uuid4().hex[:8]
    r = await api.post("/api/v1/namespaces",
                       json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert r.status == 201
    return ns


async def read_events(resp, n: int, timeout: float = 10.0, *, strict: bool = False) -> list[dict]:
    """The next ``n`` watch events (decoded JSON lines) of the streaming response ``resp``;
    fewer when the stream ends first (``strict``: an ended stream fails the test). Raises
    TimeoutError after ``timeout`` seconds."""
    out: list[dict] = []

    async def go() -> None:
        while len(out) < n:
            line = await resp.content.readline()
            if not line:
                assert not strict, "stream ended"
                return
            out.append(json.loads(line))
    await asyncio.wait_for(go(), timeout)
    return out


async def watch_until(api, path: str, predicate, timeout: float = 10.0) -> dict:
    """Watch the collection ``path`` (a query may follow, e.g. ``fieldSelector``) from its
    current state (the synthetic ADDED events of a watch without resourceVersion, as
    ``kubectl wait`` does) until an event's object satisfies ``predicate``; returns that object.
    Raises TimeoutError after ``timeout`` seconds, AssertionError if the stream ends."""
    sep = "&" if "?" in path else "?"
    resp = await api.get(f"{path}{sep}watch=1&timeoutSeconds={int(timeout) + 5}")
    try:
        async with asyncio.timeout(timeout):
            while True:
                [ev] = await read_events(resp, 1, timeout, strict=True)
                if ev.get("type") != "BOOKMARK" and predicate(ev["object"]):
                    return ev["object"]
    finally:
        resp.close()
