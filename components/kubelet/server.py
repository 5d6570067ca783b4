"""The kubelet's HTTP endpoints (``pkg/kubelet/server/server.go``), plain HTTP as Kubernetes serves them:

* ``--healthz-port`` (10248, on ``--healthz-bind-address`` 127.0.0.1): ``/healthz`` (``ok``;
  ``?verbose`` lists ``ping`` and ``syncloop``);
* ``--read-only-port`` (10255, on ``--address`` 0.0.0.0): ``/metrics`` (:mod:`.metrics`, the
  RestClient's and the build info), ``/healthz``, and ``/pods``: the ``PodList`` of the pods bound to
  this process's nodes as the kubelet last saw them (``server.go`` ``getPods``).

``0`` disables a port. The authenticated ``--port`` 10250 (logs, exec, ``/stats``) is not served.
"""

from __future__ import annotations

from typing import Any, Callable

from aiohttp import web

from controlplane.api import codec
from controlplane.metrics import Endpoint, HealthChecks, make_app, serve


def health_checks(running: Callable[[], bool]) -> HealthChecks:
    """``ping`` and ``syncloop`` (``running()``: the pod workers are up)."""
    h = HealthChecks()
    h.add("syncloop", running)
    return h


async def serve_kubelet(health: HealthChecks, pods: Callable[[], list[dict[str, Any]]], *,
                        healthz_address: str = "127.0.0.1", healthz_port: int = 0,
                        address: str = "0.0.0.0", read_only_port: int = 0) -> list[Endpoint]:
    """Start the healthz and read-only endpoints (``pods()``: the pods to list on ``/pods``);
    returns them (``url`` None for a disabled or taken port)."""
    async def list_pods(request: web.Request) -> web.Response:
        body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods()}
        return web.Response(body=codec.dumps(body), content_type="application/json")

    healthz = web.Application()
    healthz.router.add_get("/healthz", health.handle)
    return [await serve("kubelet-healthz", healthz_address, healthz_port, healthz),
            await serve("kubelet", address, read_only_port, make_app(health, routes=[("/pods", list_pods)]))]
