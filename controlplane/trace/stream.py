"""Reading step records from the apiserver's ``/debug/controlplane/trace``.

``GET /debug/controlplane/trace?since=T`` answers ``{"records": [...]}``;
with ``&follow=true`` it streams JSON lines: the records since ``T`` first,
then each new record as it is stored. ``T`` is seconds since the epoch.
"""

from __future__ import annotations

from typing import AsyncIterator

import aiohttp

from controlplane.client.rest import RestClient, iter_json_lines, raise_for_status
from controlplane.trace.emitter import PATH
from controlplane.trace.record import StepRecord


async def fetch(client: RestClient, since: float = 0.0) -> list[StepRecord]:
    """The records stored since ``since``, oldest first."""
    body = await client.request("GET", PATH, params={"since": f"{since:.6f}"})
    return [StepRecord.from_dict(d) for d in (body or {}).get("records") or []]


async def follow(client: RestClient, since: float = 0.0) -> AsyncIterator[StepRecord]:
    """Yield records since ``since``, then live ones, until the stream ends.

    Raises :class:`controlplane.client.rest.ApiError` if the apiserver refuses.
    """
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    async with client.session.get(client.server + PATH,
                                  params={"since": f"{since:.6f}", "follow": "true"},
                                  timeout=timeout) as resp:
        if resp.status >= 300:
            raise_for_status(resp.status, await resp.text())
        async for d in iter_json_lines(resp):
            yield StepRecord.from_dict(d)
