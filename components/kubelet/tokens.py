"""Projected service-account tokens: the kubelet's token manager (``pkg/kubelet/token/token_manager.go``).

A pod whose volumes project a ``serviceAccountToken`` (the ``kube-api-access-*`` volume the
ServiceAccount admission plugin adds) gets, when its sandbox is set up (the volume "mount",
before its containers start), one TokenRequest per such source: ``POST
serviceaccounts/<spec.serviceAccountName>/token`` with the source's ``expirationSeconds``
(the admission plugin's 3607 s), its ``audience`` (none: the API audiences) and a
``boundObjectRef`` to the pod (``v1`` Pod, name and uid). Tokens are kept per (account, pod,
audiences, expiration), as the manager's cache, and re-requested at 80 % of their life
(``requiresRefresh``: less than 20 % of the TTL left, measured to ``status.expirationTimestamp``):
one timer per pod on the event loop, no task while waiting. A pod's tokens and timer are
dropped when the pod goes away.

Cost: one POST per pod start and one per 48 minutes per running pod, each a signature in the
apiserver (ES256 with ``controlplane up``'s EC ``sa.key``; with an RSA key RS256, about 2 ms of its
CPU: a third more apiserver CPU for a burst of pod starts).
So ``--service-account-tokens=auto`` (the default) requests tokens for a kubelet running one
node and none for hollow nodes (``--hollow-nodes``: benchmarks with thousands of pods);
``request`` / ``off`` choose explicitly. A failed request (the account missing,
the apiserver refusing) is logged, a ``FailedMount`` Warning event on the pod unless the
account is missing (404: this emulator admits pods whose account does not exist yet), and
retried at the next sync; unlike the real kubelet it does not hold the containers back (nothing in the simulated
containers reads the token).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from controlplane import apitime
from controlplane.api import resources as R
from controlplane.log import event

log = logging.getLogger("kubelet.tokens")

#: ``requiresRefresh``: refresh when less than this share of the TTL remains
REFRESH_REMAINING = 0.2


def token_sources(pod: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(volume name, serviceAccountToken projection)`` of every projected token source of ``pod``."""
    out = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(v, dict):
            continue
        for s in ((v.get("projected") or {}).get("sources") or []):
            if isinstance(s, dict) and isinstance(s.get("serviceAccountToken"), dict):
                out.append((str(v.get("name") or ""), s["serviceAccountToken"]))
    return out


def token_request(pod: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """The TokenRequest the kubelet sends for ``source`` of ``pod``."""
    md = pod.get("metadata") or {}
    spec: dict[str, Any] = {"expirationSeconds": int(source.get("expirationSeconds") or 3600),
                            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": md.get("name", ""),
                                               "uid": md.get("uid", "")}}
    if source.get("audience"):
        spec["audiences"] = [source["audience"]]
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {}, "spec": spec}


class TokenManager:
    """Requests and refreshes the projected tokens of the pods of one kubelet process.

    ``client``: a RestClient-like object (``create_subresource``); ``recorder(pod, message)``:
    records the FailedMount warning; ``clock``: epoch seconds."""

    def __init__(self, client: Any, recorder: Callable[[dict[str, Any], str], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.recorder = recorder
        self.clock = clock
        #: (namespace, account, pod uid, audiences, expiration) → (token, issued, expires)
        self.tokens: dict[tuple[Any, ...], tuple[str, float, float]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._pods: dict[str, dict[str, Any]] = {}
        self.requests = 0

    def _key(self, pod: dict[str, Any], tr: dict[str, Any]) -> tuple[Any, ...]:
        md, spec = pod.get("metadata") or {}, tr["spec"]
        return (md.get("namespace"), (pod.get("spec") or {}).get("serviceAccountName") or "default",
                md.get("uid"), tuple(spec.get("audiences") or ()), spec["expirationSeconds"])

    def requires_refresh(self, issued: float, expires: float) -> bool:
        """``requiresRefresh``: less than 20 % of the TTL left (or older than 24 h)."""
        now = self.clock()
        return expires - now < REFRESH_REMAINING * (expires - issued) or now - issued > 24 * 3600

    async def mount(self, pod: dict[str, Any]) -> int:
        """Have a fresh token for each projected source of ``pod``; returns how many were
        requested now. Failures are recorded (FailedMount) and left for the next sync."""
        sources = token_sources(pod)
        if not sources:
            return 0
        md = pod.get("metadata") or {}
        uid = str(md.get("uid") or "")
        self._pods[uid] = pod
        sa = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        requested = 0
        next_refresh: float | None = None
        for volume, source in sources:
            tr = token_request(pod, source)
            key = self._key(pod, tr)
            have = self.tokens.get(key)
            if have is None or self.requires_refresh(have[1], have[2]):
                try:
                    out = await self.client.create_subresource(R.get("serviceaccounts"), sa, "token", tr,
                                                               namespace=md.get("namespace"))
                except Exception as e:  # the apiserver's refusal: an event, retried at the next sync
                    event(log, "token.failed", logging.WARNING, pod=f"{md.get('namespace')}/{md.get('name')}",
                          error=str(e)[:200])
                    if self.recorder is not None and getattr(e, "code", None) != 404:
                        self.recorder(pod, f'MountVolume.SetUp failed for volume "{volume}" : failed to fetch '
                                           f"token: {getattr(e, 'message', None) or str(e)[:200]}")
                    continue
                self.requests += 1
                requested += 1
                status = out.get("status") or {}
                expires = apitime.time_or_none(status.get("expirationTimestamp")) or \
                    self.clock() + tr["spec"]["expirationSeconds"]
                have = (str(status.get("token") or ""), self.clock(), expires)
                if uid in self._pods:  # not forgotten while the request was in flight
                    self.tokens[key] = have
            due = have[1] + (1 - REFRESH_REMAINING) * (have[2] - have[1])
            next_refresh = due if next_refresh is None else min(next_refresh, due)
        if next_refresh is not None and uid in self._pods and (requested or uid not in self._timers):
            self._schedule(uid, next_refresh)
        return requested

    def _schedule(self, uid: str, at: float) -> None:
        old = self._timers.pop(uid, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[uid] = loop.call_later(max(0.0, at - self.clock()), self._refresh, uid)

    def _refresh(self, uid: str) -> None:
        self._timers.pop(uid, None)
        pod = self._pods.get(uid)
        if pod is not None:
            task = asyncio.get_running_loop().create_task(self.mount(pod), name=f"token-refresh-{uid}")
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def token_for(self, pod: dict[str, Any]) -> str | None:
        """The current token of ``pod``'s first projected source (what its volume holds)."""
        sources = token_sources(pod)
        if not sources:
            return None
        have = self.tokens.get(self._key(pod, token_request(pod, sources[0][1])))
        return have[0] if have else None

    def forget(self, uid: str) -> None:
        """The pod is gone: drop its tokens and its refresh timer."""
        self._pods.pop(uid, None)
        t = self._timers.pop(uid, None)
        if t is not None:
            t.cancel()
        for k in [k for k in self.tokens if k[2] == uid]:
            del self.tokens[k]

    def close(self) -> None:
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
