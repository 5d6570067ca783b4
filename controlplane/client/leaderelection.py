"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Candidates race to hold one Lease (e.g. ``kube-system/kube-scheduler``). Its spec is
the LeaderElectionRecord::

    {"holderIdentity": "host_3f2a...", "leaseDurationSeconds": 15,
     "acquireTime": "2026-11-30T01:02:03.123456Z", "renewTime": "2026-11-30T01:02:05.123456Z",
     "leaseTransitions": 2}

Rules (``staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go``
tryAcquireOrRenew, acquire, renew, release; ``resourcelock/leaselock.go``):

* no Lease → create it holding it (409 AlreadyExists: someone else won, retry);
* another holder whose record has not changed for ``lease_duration`` seconds *as seen
  by this candidate's own clock* (observedTime, not the renewTime written by the
  holder) has expired → take it over: new acquireTime, leaseTransitions + 1;
* the holder renews by writing renewTime every ``retry_period``; every write is an
  update carrying the read resourceVersion, so of two racing writers one gets 409
  Conflict and retries next period;
* a leader that cannot renew within ``renew_deadline`` stops leading;
* with ``release_on_cancel`` the leader clears holderIdentity when it stops (so a
  successor need not wait for expiry), as client-go's ReleaseOnCancel.

Times: seconds (floats). Defaults are kube-scheduler's: 15 s lease, 10 s renew
deadline, 2 s retry period (``pkg/scheduler/apis/config/v1/defaults.go``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
import uuid
from typing import Any, Callable, Coroutine

from controlplane import apitime
from controlplane.api.resources import LEASES
from controlplane.client.rest import ApiError
from controlplane.log import event

log = logging.getLogger("leaderelection")

JITTER_FACTOR = 1.2


def default_identity() -> str:
    """``<hostname>_<uuid>``, as kube-scheduler's ``--leader-elect`` identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Elects one leader among candidates sharing ``namespace/name``.

    ``client``: a :class:`controlplane.client.rest.RestClient` (or anything with
    ``get``/``create``/``update`` raising :class:`ApiError`); ``identity``: this
    candidate's holderIdentity. Durations in seconds; ``lease_duration >
    renew_deadline > retry_period * JITTER_FACTOR`` is required (ValueError otherwise),
    as client-go's NewLeaderElector. ``clock``: monotonic seconds (tests).
    """

    def __init__(self, client: Any, namespace: str, name: str, identity: str | None = None, *,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, release_on_cancel: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if retry_period <= 0:
            raise ValueError("retryPeriod must be greater than zero")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.clock = clock
        self.rng = rng or random.Random()
        self.observed_record: dict[str, Any] = {}
        self.observed_time = 0.0
        self._observed_rv = ""
        self.is_leader = asyncio.Event()
        self.lost = asyncio.Event()

    # -- one attempt -----------------------------------------------------------------
    def _record(self, acquire_time: str, transitions: int) -> dict[str, Any]:
        now = apitime.now_micro()
        return {"holderIdentity": self.identity,
                "leaseDurationSeconds": int(round(self.lease_duration)),
                "acquireTime": acquire_time or now, "renewTime": now,
                "leaseTransitions": transitions}

    def healthy(self, timeout: float = 20.0) -> bool:
        """The ``leaderElection`` health check (client-go's ``HealthzAdaptor.Check``): false only
        while this candidate leads but has not renewed its Lease for ``lease_duration + timeout``
        seconds (a leader stuck renewing); ``timeout`` is kube-scheduler's and
        kube-controller-manager's 20 s."""
        if not self.is_leader.is_set():
            return True
        return self.clock() <= self.observed_time + self.lease_duration + timeout

    def get_leader(self) -> str:
        """The holderIdentity last observed ("" if none)."""
        return self.observed_record.get("holderIdentity") or ""

    async def try_acquire_or_renew(self) -> bool:
        """One round: create, renew or take over the Lease. True when this candidate
        holds it afterwards. API errors other than NotFound/Conflict/AlreadyExists are
        logged and count as a failed round."""
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except ApiError as e:
            if e.code != 404:
                event(log, "leaderelection.get_failed", logging.WARNING, lease=self._key(), error=str(e)[:200])
                return False
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": self._record("", 0)}
            try:
                created = await self.client.create(LEASES, body, self.namespace)
            except ApiError as e2:
                event(log, "leaderelection.create_failed", lease=self._key(), error=str(e2)[:200])
                return False
            self._observe(created)
            return True
        except Exception as e:  # connection trouble: a failed round
            event(log, "leaderelection.get_failed", logging.WARNING, lease=self._key(), error=str(e)[:200])
            return False
        spec = lease.get("spec") or {}
        if self._comparable(spec) != self._comparable(self.observed_record):
            self._observe(lease)
        holder = spec.get("holderIdentity") or ""
        now = self.clock()
        if holder and holder != self.identity and \
                self.observed_time + float(spec.get("leaseDurationSeconds") or self.lease_duration) > now:
            return False  # held by someone else, not expired
        if holder == self.identity:
            rec = self._record(spec.get("acquireTime") or "", int(spec.get("leaseTransitions") or 0))
        else:
            rec = self._record("", int(spec.get("leaseTransitions") or 0) + 1)
        lease = dict(lease)
        lease["spec"] = {**spec, **rec}
        try:
            updated = await self.client.update(LEASES, lease)
        except ApiError as e:
            event(log, "leaderelection.update_failed", lease=self._key(), code=e.code, error=e.reason)
            return False
        except Exception as e:
            event(log, "leaderelection.update_failed", logging.WARNING, lease=self._key(), error=str(e)[:200])
            return False
        if holder != self.identity:
            event(log, "leaderelection.took_over", lease=self._key(), previous=holder or "-",
                  transitions=rec["leaseTransitions"])
        self._observe(updated)
        return True

    @staticmethod
    def _comparable(spec: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(spec.get(k) for k in ("holderIdentity", "leaseDurationSeconds", "acquireTime",
                                           "renewTime", "leaseTransitions"))

    def _observe(self, lease: dict[str, Any]) -> None:
        self.observed_record = dict(lease.get("spec") or {})
        self.observed_time = self.clock()
        self._observed_rv = (lease.get("metadata") or {}).get("resourceVersion") or ""

    def _key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _jittered(self, period: float) -> float:
        return period * (1 + self.rng.random() * (JITTER_FACTOR - 1))

    # -- loops -----------------------------------------------------------------------
    async def acquire(self) -> None:
        """Try every retry period (jittered) until this candidate holds the Lease."""
        event(log, "leaderelection.attempting", lease=self._key(), identity=self.identity)
        while True:
            if await self.try_acquire_or_renew():
                event(log, "leaderelection.acquired", lease=self._key(), identity=self.identity)
                return
            leader = self.get_leader()
            event(log, "leaderelection.waiting", logging.DEBUG, lease=self._key(), leader=leader or "-")
            await asyncio.sleep(self._jittered(self.retry_period))  # retry period, not synchronisation

    async def renew(self) -> None:
        """Renew every retry period; return when a renewal did not succeed within
        renew_deadline (leadership lost)."""
        while True:
            deadline = self.clock() + self.renew_deadline
            ok = False
            while self.clock() < deadline:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a
                # cancel that lands as the inner call finishes, hanging shutdown
                try:
                    async with asyncio.timeout(max(0.01, deadline - self.clock())):
                        ok = await self.try_acquire_or_renew()
                except TimeoutError:
                    ok = False
                if ok:
                    break
                await asyncio.sleep(self.retry_period)  # retry period, not synchronisation
            if not ok:
                event(log, "leaderelection.lost", logging.WARNING, lease=self._key(), identity=self.identity)
                return
            await asyncio.sleep(self.retry_period)  # renew period, not synchronisation

    async def release(self) -> bool:
        """Give the Lease up if held: holderIdentity "" and a 1 s lease (client-go
        release). True when released. Bounded by ``renew_deadline`` seconds, so stopping
        never hangs on an unreachable apiserver (the Lease then simply expires)."""
        if self.get_leader() != self.identity:
            return False
        try:
            async with asyncio.timeout(self.renew_deadline):
                lease = await self.client.get(LEASES, self.name, self.namespace)
                spec = lease.get("spec") or {}
                if spec.get("holderIdentity") != self.identity:
                    return False
                now = apitime.now_micro()
                lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1,
                                 "acquireTime": now, "renewTime": now}
                await self.client.update(LEASES, lease)
        except Exception as e:
            event(log, "leaderelection.release_failed", logging.WARNING, lease=self._key(), error=str(e)[:200])
            return False
        event(log, "leaderelection.released", lease=self._key(), identity=self.identity)
        self.observed_record = {}
        return True

    async def run(self, on_started_leading: Callable[[], Coroutine[Any, Any, None]],
                  on_stopped_leading: Callable[[], Any] | None = None) -> None:
        """Acquire, then run ``on_started_leading()`` (a coroutine function) while
        renewing. Returns when leadership is lost (the leading task is cancelled) or
        when ``on_started_leading`` returns; ``on_stopped_leading()`` is then called
        (as client-go, also when cancelled before leading). Cancelling ``run`` releases
        the Lease when ``release_on_cancel``."""
        leading: asyncio.Task[None] | None = None
        renewing: asyncio.Task[None] | None = None
        try:
            await self.acquire()
            self.is_leader.set()
            leading = asyncio.create_task(on_started_leading())
            renewing = asyncio.create_task(self.renew())
            await asyncio.wait({leading, renewing}, return_when=asyncio.FIRST_COMPLETED)
            if renewing.done():
                self.lost.set()
            failure = leading.exception() if leading.done() else None
            if failure is not None:
                raise failure
        finally:
            for t in (leading, renewing):
                if t is not None and not t.done():
                    t.cancel()
            await asyncio.gather(*[t for t in (leading, renewing) if t is not None],
                                 return_exceptions=True)
            self.is_leader.clear()
            if self.release_on_cancel and not self.lost.is_set():
                await asyncio.shield(self.release())
            if on_stopped_leading is not None:
                r = on_stopped_leading()
                if asyncio.iscoroutine(r):
                    await r
