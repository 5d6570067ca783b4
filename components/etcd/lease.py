"""Leases: TTL'd handles that keys attach to (etcd ``server/lease/lessor.go``).

The :class:`Lessor` only keeps the books (TTLs, deadlines, attached keys); revoking a lease —
deleting its keys in one revision — is done by the server, which owns the write path.
Deadlines use the monotonic clock; after a restart every lease gets a fresh full TTL, as etcd
does when a leader is elected (``lessor.Promote``).
"""

from __future__ import annotations

import random
import time

from . import errors

#: etcd ``lease.MaxLeaseTTL`` (seconds)
MAX_LEASE_TTL = 9_000_000_000
#: etcd's minimum TTL with default election settings: 3/2 * election timeout (1 s), rounded up
MIN_LEASE_TTL = 2


class Lease:
    """One lease: ``id``, ``ttl`` (seconds, granted), ``deadline`` (monotonic seconds), ``keys``."""

    __slots__ = ("id", "ttl", "deadline", "keys")

    def __init__(self, lease_id: int, ttl: int) -> None:
        self.id = lease_id
        self.ttl = ttl
        self.deadline = time.monotonic() + ttl
        self.keys: set[bytes] = set()

    def remaining(self) -> int:
        """Whole seconds left (etcd truncates), never below 0."""
        return max(0, int(self.deadline - time.monotonic()))


class Lessor:
    """All leases by id. Raises :mod:`errors` LEASE_* on bad requests."""

    def __init__(self) -> None:
        self.leases: dict[int, Lease] = {}

    def new_id(self) -> int:
        """A fresh positive 63-bit id not in use (etcd draws from its id generator)."""
        while True:
            lease_id = random.getrandbits(63)
            if lease_id and lease_id not in self.leases:
                return lease_id

    def check_grant(self, lease_id: int, ttl: int) -> int:
        """Validate a grant; returns the effective TTL (raised to the minimum like etcd)."""
        if ttl > MAX_LEASE_TTL:
            raise errors.LEASE_TTL_TOO_LARGE
        if lease_id in self.leases:
            raise errors.LEASE_EXIST
        return max(ttl, MIN_LEASE_TTL)

    def grant(self, lease_id: int, ttl: int) -> Lease:
        """Create (or, during recovery, recreate) a lease with a full TTL."""
        lease = self.leases[lease_id] = Lease(lease_id, ttl)
        return lease

    def get(self, lease_id: int) -> Lease:
        """The lease, or raise LEASE_NOT_FOUND."""
        lease = self.leases.get(lease_id)
        if lease is None:
            raise errors.LEASE_NOT_FOUND
        return lease

    def renew(self, lease_id: int) -> int:
        """KeepAlive: reset the deadline; returns the TTL, or 0 if the lease is gone (etcd answers TTL 0)."""
        lease = self.leases.get(lease_id)
        if lease is None or lease.deadline <= time.monotonic():
            return 0
        lease.deadline = time.monotonic() + lease.ttl
        return lease.ttl

    def remove(self, lease_id: int) -> None:
        self.leases.pop(lease_id, None)

    def apply_changes(self, changes) -> None:
        """Keep key attachments in step with a revision's changes ``[(kv, prev_kv), ...]``."""
        leases = self.leases
        for kv, prev in changes:
            if prev is not None and prev.lease:
                lease = leases.get(prev.lease)
                if lease is not None:
                    lease.keys.discard(prev.key)
            if kv.version and kv.lease:
                lease = leases.get(kv.lease)
                if lease is not None:
                    lease.keys.add(kv.key)

    def unapply_changes(self, changes) -> None:
        """Undo :meth:`apply_changes` of a revision that was rolled back (its WAL write failed)."""
        leases = self.leases
        for kv, prev in reversed(changes):
            if kv.version and kv.lease:
                lease = leases.get(kv.lease)
                if lease is not None:
                    lease.keys.discard(kv.key)
            if prev is not None and prev.lease:
                lease = leases.get(prev.lease)
                if lease is not None:
                    lease.keys.add(prev.key)

    def expired(self) -> list[int]:
        """Ids of leases whose deadline has passed."""
        now = time.monotonic()
        return [l.id for l in self.leases.values() if l.deadline <= now]
