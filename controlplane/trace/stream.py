"""Reading step records from the apiserver's ``/debug/controlplane/trace``.

``GET /debug/controlplane/trace?since=T`` answers ``{"records": [...]}``;
with ``&follow=true`` it streams JSON lines: the records since ``T`` first,
then each new record as it is stored. ``T`` is seconds since the epoch.
"""

from __future__ import annotations

from typing import AsyncIterator

from controlplane.client.rest import RestClient, iter_json_lines
from controlplane.trace.emitter import PATH
from controlplane.trace.record import StepRecord


async def fetch(client: RestClient, since: float = 0.0) -> list[StepRecord]:
    """The records stored since ``since``, oldest first."""
    body = await client.request("GET", PATH, params={"since": f"{since:.6f}"})
    return [StepRecord.from_dict(d) for d in (body or {}).get("records") or []]


async def follow(client: RestClient, since: float = 0.0) -> AsyncIterator[StepRecord]:
    """Yield records since ``since``, then live ones, until the stream ends.

    Raises :class:`controlplane.client.rest.ApiError` if the apiserver refuses,
    :class:`~controlplane.client.rest.RequestTimeout` if it does not answer within the client's
    timeout (the records themselves may then take as long as they like).
    """
    resp = await client.open_stream(PATH, {"since": f"{since:.6f}", "follow": "true"})
    async with resp:
        async for d in iter_json_lines(resp):
            yield StepRecord.from_dict(d)
