"""The multi-version key-value store behind the embedded etcd (etcd ``server/mvcc``).

Model (etcd ``mvcc/kvstore.go``, ``mvcc/key_index.go``):

* one global revision; the empty store is at revision 1, so the first write is revision 2;
  a write transaction (a Put, a multi-key DeleteRange, a Txn) creates exactly ONE revision,
  and only if it changed something;
* every key keeps its history as a list of ``KeyValue`` messages ordered by ``mod_revision``:
  a live version has ``version >= 1``; a deletion is a *tombstone* (``version == 0``, only
  ``key`` and ``mod_revision`` set — the shape etcd puts in a DELETE event);
* ``keys`` is the sorted index of every key with history (``bisect``), so a prefix range costs
  ``O(log n + k)``;
* ``log`` lists, per revision since the compaction point, the changes ``(kv, prev_kv)``; watch
  replay reads it;
* ``rev`` is the newest *applied* revision, ``committed`` the newest *durable* one (with a data
  dir the server applies a write at once, so later writes are validated against it, but publishes
  it only once its WAL record is on disk): reads (:meth:`Store.range`, :meth:`Store.check_rev`)
  see ``committed`` unless asked for ``latest``; :meth:`Store.undo` removes a newest revision
  whose WAL write failed;
* :meth:`Store.compact` drops history older than the compaction revision but keeps, per key,
  the newest version at or below it if it is live (so reads at the compaction revision still
  work); a tombstone at or below it goes, with its watch event, as etcd's ``keyIndex.keep`` /
  ``kvstore_compaction.go`` do once the compaction is applied (``physical=true``).

Everything here is synchronous and never awaits: a write and the work that must be atomic with
it (lease bookkeeping, WAL append, watch fan-out) run in one event-loop step.
"""

from __future__ import annotations

import bisect
from typing import Iterable, TypeAlias

from aetcd.rpc import kv_pb2, rpc_pb2

from . import errors

KeyValue: TypeAlias = kv_pb2.KeyValue
#: one change of a revision: (new kv or tombstone, previous live kv or None)
Change = tuple[KeyValue, "KeyValue | None"]

_SORT_KEYS = {
    rpc_pb2.RangeRequest.KEY: lambda kv: kv.key,
    rpc_pb2.RangeRequest.VERSION: lambda kv: kv.version,
    rpc_pb2.RangeRequest.CREATE: lambda kv: kv.create_revision,
    rpc_pb2.RangeRequest.MOD: lambda kv: kv.mod_revision,
    rpc_pb2.RangeRequest.VALUE: lambda kv: kv.value,
}


def in_range(key: bytes, start: bytes, end: bytes) -> bool:
    """True if ``key`` is in etcd's interval ``[start, end)``.

    ``end == b""`` means the single key ``start``; ``end == b"\\0"`` means every key >= start
    (etcd ``mkGteRange``).
    """
    if not end:
        return key == start
    if end == b"\0":
        return key >= start
    return start <= key < end


class WriteTxn:
    """An open write transaction: every change it makes carries revision ``rev``.

    Obtained from :meth:`Store.begin`; closed by :meth:`Store.end`.
    """

    __slots__ = ("store", "rev", "changes")

    def __init__(self, store: "Store") -> None:
        self.store = store
        self.rev = store.rev + 1
        self.changes: list[Change] = []

    def put(self, key: bytes, value: bytes, lease: int) -> KeyValue | None:
        """Write ``key``; returns the previous live version (or None). Source: etcd ``mvcc.storeTxnWrite.put``."""
        st = self.store
        hist = st.hist.get(key)
        prev = None
        if hist is None:
            hist = st.hist[key] = []
            bisect.insort(st.keys, key)
        elif hist[-1].version:
            prev = hist[-1]
        if prev is not None:
            kv = KeyValue(key=key, value=value, lease=lease, create_revision=prev.create_revision,
                          mod_revision=self.rev, version=prev.version + 1)
        else:
            kv = KeyValue(key=key, value=value, lease=lease, create_revision=self.rev,
                          mod_revision=self.rev, version=1)
        if hist and hist[-1].mod_revision == self.rev:
            hist[-1] = kv  # same key twice in one revision (only possible via nested txn paths)
        else:
            hist.append(kv)
        st.size += len(key) + len(value) + 32
        self.changes.append((kv, prev))
        return prev

    def delete_range(self, key: bytes, range_end: bytes) -> list[KeyValue]:
        """Delete every live key in the range; returns the deleted versions (prev_kvs)."""
        st = self.store
        deleted = [kv for kv in st.iter_live(key, range_end)]
        for prev in deleted:
            tomb = KeyValue(key=prev.key, mod_revision=self.rev)
            st.hist[prev.key].append(tomb)
            st.size += len(prev.key) + 16
            self.changes.append((tomb, prev))
        return deleted


class Store:
    """The in-memory MVCC store. See the module docstring for the model.

    Attributes: ``rev`` (newest applied revision), ``committed`` (newest durable revision, what
    reads see; ``<= rev``), ``compact_rev`` (0 until the first compaction),
    ``keys`` (sorted), ``hist`` (key -> list of versions), ``log`` (list of ``(rev, changes)``),
    ``size`` (approximate bytes, for the quota and ``Status.dbSize``).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """The empty store: revision 1, no keys, no history."""
        self.rev = 1
        self.committed = 1
        #: False: :meth:`end` publishes its revision at once; True: the owner raises ``committed``
        #: itself once the revision is durable (the server with a data dir)
        self.deferred_commit = False
        self.compact_rev = 0
        self.keys: list[bytes] = []
        self.hist: dict[bytes, list[KeyValue]] = {}
        self.log: list[tuple[int, list[Change]]] = []
        self.size = 0

    # ------------------------------------------------------------------ reads
    def _key_slice(self, key: bytes, range_end: bytes) -> list[bytes]:
        if not range_end:
            return [key] if key in self.hist else []
        lo = bisect.bisect_left(self.keys, key)
        if range_end == b"\0":
            return self.keys[lo:]
        hi = bisect.bisect_left(self.keys, range_end, lo)
        return self.keys[lo:hi]

    def check_rev(self, rev: int, latest: bool = False) -> int:
        """Validate a read revision (0 = current: ``committed``, or ``rev`` if ``latest``);
        raises COMPACTED / FUTURE_REV like etcd (a revision not yet durable is a future one)."""
        current = self.rev if latest else self.committed
        if rev <= 0:
            return current
        if rev > current:
            raise errors.FUTURE_REV
        if rev < self.compact_rev:
            raise errors.COMPACTED
        return rev

    def get_at(self, key: bytes, rev: int) -> KeyValue | None:
        """The live version of ``key`` at ``rev`` (already validated), or None."""
        hist = self.hist.get(key)
        if not hist:
            return None
        kv = hist[-1]
        if kv.mod_revision > rev:
            i = bisect.bisect_right(hist, rev, key=_mod_rev) - 1
            if i < 0:
                return None
            kv = hist[i]
        return kv if kv.version else None

    def iter_live(self, key: bytes, range_end: bytes, rev: int = 0) -> Iterable[KeyValue]:
        """Live versions at ``rev`` (0 = current) of the keys in ``[key, range_end)``, key order."""
        hist = self.hist
        if rev <= 0 or rev >= self.rev:
            for k in self._key_slice(key, range_end):
                kv = hist[k][-1]
                if kv.version:
                    yield kv
        else:
            for k in self._key_slice(key, range_end):
                kv = self.get_at(k, rev)
                if kv is not None:
                    yield kv

    def range(self, r: rpc_pb2.RangeRequest, latest: bool = False) -> rpc_pb2.RangeResponse:
        """Answer a RangeRequest at ``committed`` (``latest``: at ``rev``, for a range inside a
        write txn) — header left for the caller. Source: etcd ``etcdserver/apply.go`` Range.

        Raises errors.EMPTY_KEY, COMPACTED, FUTURE_REV.
        """
        if not r.key:
            raise errors.EMPTY_KEY
        rev = self.check_rev(r.revision, latest)
        resp = rpc_pb2.RangeResponse()
        kvs = list(self.iter_live(r.key, r.range_end, rev))
        resp.count = len(kvs)
        if r.count_only:
            return resp
        if r.min_mod_revision:
            kvs = [kv for kv in kvs if kv.mod_revision >= r.min_mod_revision]
        if r.max_mod_revision:
            kvs = [kv for kv in kvs if kv.mod_revision <= r.max_mod_revision]
        if r.min_create_revision:
            kvs = [kv for kv in kvs if kv.create_revision >= r.min_create_revision]
        if r.max_create_revision:
            kvs = [kv for kv in kvs if kv.create_revision <= r.max_create_revision]
        order = r.sort_order
        if r.sort_target != rpc_pb2.RangeRequest.KEY and order == rpc_pb2.RangeRequest.NONE:
            order = rpc_pb2.RangeRequest.ASCEND
        if order != rpc_pb2.RangeRequest.NONE:
            kvs.sort(key=_SORT_KEYS[r.sort_target], reverse=order == rpc_pb2.RangeRequest.DESCEND)
        if r.limit > 0 and len(kvs) > r.limit:
            kvs = kvs[: r.limit]
            resp.more = True
        if r.keys_only:
            resp.kvs.extend(KeyValue(key=kv.key, create_revision=kv.create_revision,
                                     mod_revision=kv.mod_revision, version=kv.version,
                                     lease=kv.lease) for kv in kvs)
        else:
            resp.kvs.extend(kvs)
        return resp

    # ------------------------------------------------------------------ writes
    def begin(self) -> WriteTxn:
        """Open a write transaction at revision ``rev + 1``."""
        return WriteTxn(self)

    def end(self, txn: WriteTxn) -> list[Change]:
        """Close ``txn``: if it changed anything, the store moves to its revision and logs it."""
        if txn.changes:
            self.rev = txn.rev
            if not self.deferred_commit:
                self.committed = txn.rev
            self.log.append((txn.rev, txn.changes))
        return txn.changes

    def undo(self, rev: int, changes: list[Change]) -> None:
        """Remove the newest revision ``rev`` (== ``rev``; its ``changes`` as :meth:`end` returned
        them) — its WAL write failed, so it was never visible. Undo newest first."""
        if rev != self.rev:
            raise ValueError(f"undo of revision {rev}, but the newest is {self.rev}")
        for kv, _ in changes:
            self.size -= len(kv.key) + len(kv.value) + 32 if kv.version else len(kv.key) + 16
        hist_of = self.hist
        for key in {kv.key for kv, _ in changes}:
            hist = hist_of[key]
            while hist and hist[-1].mod_revision >= rev:
                hist.pop()
            if not hist:
                del hist_of[key]
                del self.keys[bisect.bisect_left(self.keys, key)]
        if self.log and self.log[-1][0] == rev:
            self.log.pop()
        self.rev = rev - 1
        self.committed = min(self.committed, self.rev)

    def replay(self, rev: int, kvs: Iterable[KeyValue]) -> list[Change]:
        """Re-apply one logged revision (WAL recovery): ``kvs`` are the new versions/tombstones."""
        changes: list[Change] = []
        for kv in kvs:
            hist = self.hist.get(kv.key)
            if hist is None:
                hist = self.hist[kv.key] = []
                bisect.insort(self.keys, kv.key)
            prev = hist[-1] if hist and hist[-1].version else None
            hist.append(kv)
            self.size += len(kv.key) + len(kv.value) + 32
            changes.append((kv, prev))
        if changes:
            self.rev = self.committed = rev
            self.log.append((rev, changes))
        return changes

    def events_since(self, start: int, upto: int) -> Iterable[tuple[int, list[Change]]]:
        """Logged revisions ``start <= rev <= upto`` in order (caller checked ``start >= compact_rev``)."""
        i = bisect.bisect_left(self.log, start, key=_log_rev)
        log = self.log
        while i < len(log) and log[i][0] <= upto:
            yield log[i]
            i += 1

    def compact(self, rev: int) -> None:
        """Compact history below ``rev`` (etcd ``mvcc.store.Compact``).

        Raises COMPACTED if ``rev <= compact_rev``, FUTURE_REV if ``rev > self.rev``.
        Per key: versions with ``mod_revision > rev`` stay; of the others only the newest stays,
        and only if it is live (etcd ``keyIndex.keep`` removes a tombstone even at exactly
        ``rev``). A key with nothing left leaves the index.
        """
        if rev <= self.compact_rev:
            raise errors.COMPACTED
        if rev > self.rev:
            raise errors.FUTURE_REV
        self.compact_rev = rev
        dead: list[bytes] = []
        size = 0
        for key, hist in self.hist.items():
            if hist[0].mod_revision < rev:
                i = bisect.bisect_right(hist, rev, key=_mod_rev)  # first index with mod > rev
                newest = hist[i - 1]  # the newest version at or below rev
                del hist[: i - 1 if newest.version else i]
                if not hist:
                    dead.append(key)
                    continue
            for kv in hist:
                size += len(kv.key) + len(kv.value) + 32
        for key in dead:
            del self.hist[key]
        if dead:
            self.keys = sorted(self.hist)
        self.size = size
        cut = bisect.bisect_left(self.log, rev, key=_log_rev)
        del self.log[:cut]
        if self.log and self.log[0][0] == rev:
            # the versions before `rev` are gone, so events AT rev lose their prev_kv, and its
            # deletions (tombstones) are gone too (as in etcd)
            r0, changes = self.log[0]
            kept = [(kv, prev if prev is None or prev.mod_revision >= rev else None)
                    for kv, prev in changes if kv.version]
            if kept:
                self.log[0] = (r0, kept)
            else:
                del self.log[0]

    # ------------------------------------------------------------------ snapshot
    def all_versions(self) -> Iterable[KeyValue]:
        """Every retained version, key order then revision order (for snapshots)."""
        for key in self.keys:
            yield from self.hist[key]

    def load(self, rev: int, compact_rev: int, versions: Iterable[KeyValue]) -> None:
        """Rebuild from a snapshot: ``versions`` as produced by :meth:`all_versions`."""
        deferred = self.deferred_commit
        self._reset()
        self.deferred_commit = deferred
        by_rev: dict[int, list[Change]] = {}
        for kv in versions:
            hist = self.hist.setdefault(kv.key, [])
            prev = hist[-1] if hist and hist[-1].version else None
            hist.append(kv)
            self.size += len(kv.key) + len(kv.value) + 32
            if kv.mod_revision >= compact_rev:
                by_rev.setdefault(kv.mod_revision, []).append((kv, prev))
        self.keys = sorted(self.hist)
        self.log = sorted(by_rev.items())
        self.rev = self.committed = rev
        self.compact_rev = compact_rev


def _mod_rev(kv: KeyValue) -> int:
    return kv.mod_revision


def _log_rev(entry: tuple[int, list[Change]]) -> int:
    return entry[0]
