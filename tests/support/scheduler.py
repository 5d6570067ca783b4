"""Stand-ins for what the scheduler writes through, shared by its unit tests.

:class:`RecordingClient` takes the scheduler's API writes (the Binding POST, the status
patches of preemption's nominations and PodDisruptionConditions, the victims' DELETEs)
and records each as ``(verb, path, body)``: ``("POST", "pods/p/binding", body)``,
``("PATCH", "pods/p/status", patch)``, ``("DELETE", "pods/v", None)``.
:class:`RecordingEvents` is EventRecorder-shaped and keeps
``(object name, type, reason, message)``.
"""

from __future__ import annotations


class RecordingClient:
    """The RestClient methods the scheduler and preemption call, recording each call in
    ``calls``; every call succeeds."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def create_subresource(self, res, name, sub, body, ns=None):
        self.calls.append(("POST", f"{res.plural}/{name}/{sub}", body))
        return body

    async def patch(self, res, name, patch, ns=None, *, patch_type="merge", subresource=None):
        self.calls.append(("PATCH", f"{res.plural}/{name}" + (f"/{subresource}" if subresource else ""),
                           patch))
        return {}

    async def delete(self, res, name, ns=None, **kw):
        self.calls.append(("DELETE", f"{res.plural}/{name}", None))
        return {}


class RecordingEvents:
    """EventRecorder-shaped: ``events`` holds ``(object name, type, reason, message)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str]] = []

    def event(self, obj, type_, reason, message):
        self.events.append((obj["metadata"]["name"], type_, reason, message))
