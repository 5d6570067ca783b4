"""The server core: validates and applies requests, makes them durable, feeds watchers.

This is the embedded counterpart of etcd's ``server/etcdserver/apply.go`` + the raft/WAL
commit path, without raft (one member):

* a request is validated completely first (``api/v3rpc/key.go`` checks, txn path
  checks), then applied to the :class:`~.mvcc.Store` in one event-loop step — so a Txn is one
  revision and no other request interleaves, and every later write is validated against it;
* with a data dir the write is *pending* until durable: its revision becomes a WAL record; a
  single flusher task writes all records gathered so far and fdatasyncs them in a worker thread
  (*group commit*), then publishes the group — ``store.committed`` (what Range, HashKV,
  backend snapshots and response headers see) and the watch hub move to its last revision — and
  releases the waiting requests. So nothing is visible or acknowledged before it is durable;
  a response computed from pending state (a read-only Txn) is held back the same way;
  when the previous group carried several writes (many concurrent writers), the flusher first
  waits a short *commit window* so the next group gathers more of them — PostgreSQL's
  ``commit_delay`` / ``commit_siblings``; a lone writer is never delayed;
* a failed WAL write rolls back every pending change, newest first (:meth:`Store.undo`, lease
  books), and fails its waiters: the revisions are handed out again, never having been shown.
  ENOSPC raises etcd's NOSPACE alarm (puts, txns with puts and lease grants answer "database
  space exceeded" until ``etcdctl alarm disarm``), as does a write beyond
  ``--quota-backend-bytes``; any other error (EIO) stops writes until a restart — etcd exits then;
* compactions are applied once their record is durable;
* without a data dir everything is committed at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import hashlib
import logging
import time
import zlib
from collections import deque
from typing import TypeAlias

from aetcd.rpc import kv_pb2, rpc_pb2

from controlplane import log as cplog

from . import bolt, errors, wal
from .lease import Lessor
from .mvcc import Change, Store, WriteTxn, in_range
from .watch import WatchHub

log = logging.getLogger("etcd")

RequestOp: TypeAlias = rpc_pb2.RequestOp
Compare: TypeAlias = rpc_pb2.Compare

#: etcd default --max-txn-ops
MAX_TXN_OPS = 128
#: etcd default --max-request-bytes (1.5 MiB)
MAX_REQUEST_BYTES = 1536 * 1024
#: etcd default --quota-backend-bytes (2 GiB)
QUOTA_BACKEND_BYTES = 2 * 1024 ** 3
#: bytes a lease grant counts against the quota (etcd quota.go leaseOverhead)
LEASE_COST = 64
#: revisions between snapshots (etcd --snapshot-count is 100000 raft entries; ours are cheaper to keep short)
SNAPSHOT_COUNT = 10000
#: seconds the flusher waits before a group commit while writers are concurrent (see Core)
COMMIT_WINDOW = 0.002
#: ... once the last group commit carried at least this many writes (PostgreSQL commit_siblings)
COMMIT_SIBLINGS = 4


def _id64(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:8], "big") or 1


class Core:
    """One etcd member's state and write path.

    ``name`` is the member name, ``client_urls`` the advertised client URLs, ``data_dir`` the
    data directory or None for memory only. ``commit_window`` (seconds, 0 = off): after a group
    commit that carried COMMIT_SIBLINGS or more writes, the next one waits this long to gather more (each
    fdatasync and WAL-thread hand-off then serves dozens of writes under load; 64 concurrent
    Puts: ~2 -> ~25 writes per fdatasync, +50% puts/s). Raises :class:`~.wal.DataDirError` from
    :meth:`recover` when the data dir is unusable.
    """

    def __init__(self, name: str = "default", data_dir: str | None = None,
                 client_urls: list[str] | None = None,
                 max_request_bytes: int = MAX_REQUEST_BYTES,
                 quota_backend_bytes: int = QUOTA_BACKEND_BYTES,
                 max_txn_ops: int = MAX_TXN_OPS,
                 snapshot_count: int = SNAPSHOT_COUNT,
                 commit_window: float = COMMIT_WINDOW) -> None:
        self.name = name
        self.commit_window = commit_window
        self.client_urls = client_urls or []
        self.max_request_bytes = max_request_bytes
        #: etcd: 0 means the default, a negative value no quota
        self.quota_backend_bytes = quota_backend_bytes or QUOTA_BACKEND_BYTES
        self.max_txn_ops = max_txn_ops
        self.snapshot_count = snapshot_count
        self.cluster_id = _id64("cluster", name)
        self.member_id = _id64("member", name)
        self.raft_term = 2
        #: raft-index analogue: records applied in memory / records durable in the WAL
        self.applied_index = self.durable_index = 1
        self.store = Store()
        self.lessor = Lessor()
        self.hub = WatchHub(self.store, self.header, max_request_bytes=max_request_bytes)
        self.datadir = wal.DataDir(data_dir) if data_dir else None
        self.store.deferred_commit = self.datadir is not None
        #: WAL records applied but not yet handed to the WAL thread, and per record
        #: (revision or None, undo or None, commit or None)
        self._buf: list[bytes] = []
        self._entries: list[tuple] = []
        #: (record index, future): released once that index is durable
        self._waiters: deque[tuple[int, asyncio.Future]] = deque()
        self._flusher: asyncio.Task | None = None
        #: writes carried by the last group commit (>= COMMIT_SIBLINGS: writers are concurrent, use the window)
        self._last_group = 0
        self._since_snapshot = 0
        self._broken: str | None = None
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="etcd-wal")
        self._snap_executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="etcd-snap")
        self._snap_task: asyncio.Task | None = None
        #: the newest compaction revision logged (applied once durable)
        self._compacting = 0
        #: the last WAL write failed (logged once until one succeeds)
        self._wal_failing = False
        #: active alarms, (member id, AlarmType) in activation order (kept in the WAL and snapshot)
        self.alarms: dict[tuple[int, int], None] = {}
        #: group commits so far and the writes they carried (logged at stop)
        self.stats_groups = self.stats_writes = 0

    # ------------------------------------------------------------------ headers
    def header(self, rev: int | None = None) -> rpc_pb2.ResponseHeader:
        """ResponseHeader at ``rev`` (default: the newest durable revision, what reads see)."""
        return rpc_pb2.ResponseHeader(cluster_id=self.cluster_id, member_id=self.member_id,
                                      revision=self.store.committed if rev is None else rev,
                                      raft_term=self.raft_term)

    # ------------------------------------------------------------------ recovery
    def recover(self) -> None:
        """Open the data dir and rebuild state from snapshot + WAL. No-op in memory mode."""
        dd = self.datadir
        if dd is None:
            return
        dd.open(self.name, self.cluster_id, self.member_id)
        try:
            self._recover(dd)
        except BaseException:
            dd.close()
            raise

    def _recover(self, dd: wal.DataDir) -> None:
        self.cluster_id = int(dd.meta.get("cluster_id", self.cluster_id))
        self.member_id = int(dd.meta.get("member_id", self.member_id))
        store, lessor = self.store, self.lessor
        if dd.snapshot is not None:
            self.alarms = {(m, a): None for m, a in dd.snapshot.get("alarms", [])}
            store.load(dd.snapshot["rev"], dd.snapshot["compact_rev"], dd.snapshot_versions())
            for lease_id, ttl in dd.snapshot.get("leases", []):
                lessor.grant(lease_id, ttl)
            for key in store.keys:
                kv = store.hist[key][-1]
                if kv.version and kv.lease in lessor.leases:
                    lessor.leases[kv.lease].keys.add(key)
        n = 0
        for rtype, msg in dd.records():
            n += 1
            if rtype == wal.REC_REVISION:
                if msg.header.revision > store.rev:
                    lessor.apply_changes(store.replay(msg.header.revision, msg.kvs))
            elif rtype == wal.REC_GRANT:
                if msg.ID not in lessor.leases:
                    lessor.grant(msg.ID, msg.TTL)
            elif rtype == wal.REC_REVOKE:
                lessor.remove(msg.ID)
            elif rtype == wal.REC_COMPACT:
                if store.compact_rev < msg.revision <= store.rev:
                    store.compact(msg.revision)
            elif rtype == wal.REC_ALARM:
                if msg.action == rpc_pb2.AlarmRequest.ACTIVATE:
                    self.alarms.setdefault((msg.memberID, msg.alarm), None)
                else:
                    self.alarms.pop((msg.memberID, msg.alarm), None)
        self.hub.notified_rev = store.rev
        # the raft index never goes back: the snapshot's index + one per WAL record replayed
        snap_index = int(dd.snapshot.get("applied_index", dd.snapshot["rev"])) if dd.snapshot else 1
        self.applied_index = self.durable_index = max(store.rev, snap_index + n)
        try:
            self.raft_term = dd.next_term()
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # a full disk: serve reads, refuse writes (NOSPACE) until space exists and the
            # alarm is disarmed; the term of this start stays unsaved
            self.raft_term = int(dd.meta["term"])
            cplog.event(log, "etcd.term.unsaved", logging.ERROR, error=str(e))
            self._activate_alarm(rpc_pb2.NOSPACE, persist=False)
        truncated = getattr(dd, "truncated", None)
        if truncated:
            cplog.event(log, "etcd.wal.torn_tail_truncated", logging.WARNING, file=truncated[0],
                        offset=truncated[1], reason=truncated[2])
        for m, a in self.alarms:
            cplog.event(log, "etcd.alarm.active", logging.WARNING, member=f"{m:x}", alarm=rpc_pb2.AlarmType.Name(a))
        cplog.event(log, "etcd.recovered", data_dir=dd.path, revision=store.rev,
                    compact_revision=store.compact_rev,
                    keys=sum(1 for h in store.hist.values() if h[-1].create_revision),
                    leases=len(lessor.leases), wal_records=n)

    # ------------------------------------------------------------------ commit path
    def _record(self, data: bytes, undo=None, commit=None, revision=None) -> None:
        """Log one applied change: WAL record ``data``; ``undo()`` reverts it in memory should its
        WAL write fail; ``commit()`` runs once it is durable (in record order); ``revision`` is
        the ``(rev, changes)`` it created, published to reads and watchers once durable.
        Without a data dir everything is committed at once."""
        self.applied_index += 1
        if self.datadir is None:
            self.durable_index = self.applied_index
            if commit is not None:
                commit()
            if revision is not None:
                self.hub.notify([revision])
            return
        self._buf.append(data)
        self._entries.append((revision, undo, commit))

    def _record_changes(self, changes: list[Change]) -> None:
        if not changes:
            return
        rev = self.store.rev
        self.lessor.apply_changes(changes)
        if self.datadir is None:
            self._record(b"", revision=(rev, changes))
            return
        self._record(wal.encode_revision(rev, [kv for kv, _ in changes]), revision=(rev, changes))

    def durable(self):
        """An awaitable that completes once everything applied so far is on disk, or None if it
        already is. It raises :class:`~.errors.EtcdError` (NO_SPACE after ENOSPC, else
        UNAVAILABLE) if that WAL write fails — the writes are then rolled back, never visible."""
        if self.applied_index <= self.durable_index:
            return None
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._waiters.append((self.applied_index, fut))
        if self._flusher is None:
            self._flusher = loop.create_task(self._flush_loop())
        return fut

    async def settled(self) -> None:
        """Wait until what is applied now is durable or rolled back (never raises): for reads
        that have no revision to read at, e.g. the lease books (LeaseTimeToLive, LeaseLeases)."""
        fut = self.durable()
        if fut is not None:
            with contextlib.suppress(errors.EtcdError):
                await fut

    async def _flush_loop(self) -> None:
        """Group commit: write + fdatasync everything buffered in the WAL thread while the loop
        keeps applying (and buffering) the next writes; then publish that group's revisions
        (store.committed, watchers) and release its waiters."""
        loop = asyncio.get_running_loop()
        dd = self.datadir
        assert dd is not None, "the group commit runs only with a data dir"
        try:
            while self._buf:
                if self._last_group >= COMMIT_SIBLINGS and self.commit_window > 0:
                    await asyncio.sleep(self.commit_window)
                data = b"".join(self._buf)
                self._buf.clear()
                entries, self._entries = self._entries, []
                upto = self.durable_index + len(entries)
                self._last_group = len(entries)
                try:
                    # in the WAL thread even for a lone write: an fdatasync on the loop (tried)
                    # stalls reads and watch delivery whenever the disk is slow (watch p99 x5)
                    await loop.run_in_executor(self._executor, dd.write_sync, data)
                except OSError as e:
                    self._wal_failed(e, entries)  # may log the NOSPACE alarm: the loop goes on
                    continue
                self.durable_index = upto
                self._wal_failing = False
                revisions = []
                for revision, _, commit in entries:
                    if revision is not None:
                        revisions.append(revision)
                    if commit is not None:
                        commit()
                if revisions:
                    self.store.committed = revisions[-1][0]
                    self.hub.notify(revisions)
                waiters = self._waiters
                released = 0
                while waiters and waiters[0][0] <= upto:
                    f = waiters.popleft()[1]
                    if not f.done():
                        f.set_result(None)
                    released += 1
                self._since_snapshot += len(revisions)
                self.stats_groups += 1
                self.stats_writes += released
                if self._since_snapshot >= self.snapshot_count and self._snap_task is None:
                    self._snap_task = loop.create_task(self._background_snapshot())
        finally:
            self._flusher = None

    def _wal_failed(self, e: OSError, entries: list) -> None:
        """A WAL write failed: roll back every change not yet durable (this group and those
        buffered behind it, newest first), fail their waiters, and raise the NOSPACE alarm on
        ENOSPC / EDQUOT (writes then answer "database space exceeded" until it is disarmed);
        any other error, or a WAL whose tail could not be reset, stops writes until a restart."""
        pending = entries + self._entries
        self._entries = []
        self._buf.clear()
        for revision, undo, _ in reversed(pending):
            if revision is not None:
                self.store.undo(*revision)
                self.lessor.unapply_changes(revision[1])
            if undo is not None:
                undo()
        self.applied_index = self.durable_index
        assert self.datadir is not None, "only a data dir's WAL writes fail"
        nospace = e.errno in (errno.ENOSPC, errno.EDQUOT) and not self.datadir.damaged
        if nospace:  # a fresh exception per failure: futures append to its traceback
            err = errors.EtcdError(errors.NO_SPACE.code, errors.NO_SPACE.message)
        else:
            self._broken = f"WAL write failed: {e}"
            err = errors.EtcdError(errors.SC.UNAVAILABLE, f"etcdserver: {self._broken}")
        if not self._wal_failing:  # once per run of failures (a full disk fails every retry)
            cplog.event(log, "etcd.wal.failed", logging.ERROR, error=str(e), rolled_back=len(pending),
                        revision=self.store.rev, writes_stopped=not nospace)
        self._wal_failing = True
        while self._waiters:
            f = self._waiters.popleft()[1]
            if not f.done():
                f.set_exception(err)
                f.exception()  # a waiter whose caller went away must not log "never retrieved"
        if nospace:
            self._activate_alarm(rpc_pb2.NOSPACE)  # its record is the flusher's next group

    async def _background_snapshot(self) -> None:
        try:
            await self.snapshot()
        except (OSError, wal.DataDirError, errors.EtcdError) as e:  # the WAL still has everything
            cplog.event(log, "etcd.snapshot.failed", logging.ERROR, error=str(e))
        finally:
            self._snap_task = None

    async def flush(self) -> None:
        """Wait until every applied write is durable. Raises EtcdError if its WAL write fails."""
        fut = self.durable()
        if fut is not None:
            await fut
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def snapshot(self) -> None:
        """Write a snapshot of the whole state and drop the WAL files it covers.

        In one loop step: capture the store (:class:`~.wal.SnapshotCapture`) and queue the WAL
        rotation behind any write in flight (so every record applied after the capture lands in
        the new WAL generation). Serialising and writing the capture then runs in the snapshot
        thread while the server keeps serving and committing — once everything captured is
        durable: if that WAL write fails (the captured revisions are rolled back), no snapshot
        is written. Raises OSError / DataDirError / EtcdError.
        """
        dd = self.datadir
        if dd is None:
            return
        self._since_snapshot = 0
        loop = asyncio.get_running_loop()
        capture = wal.SnapshotCapture(self.store)
        applied_index = self.applied_index
        leases = [[l.id, l.ttl] for l in self.lessor.leases.values()]
        alarms = [list(k) for k in self.alarms]
        captured = self.durable()
        rotated = loop.run_in_executor(self._executor, dd.rotate)  # queued now, same step as the capture
        gen = await rotated
        if captured is not None:
            await captured
        header = {"rev": capture.rev, "compact_rev": capture.compact_rev, "wal_gen": gen, "leases": leases,
                  "applied_index": applied_index, "alarms": alarms}
        t0 = time.monotonic()
        size = await loop.run_in_executor(self._snap_executor, dd.write_snapshot_stream, header, capture.chunks())
        cplog.event(log, "etcd.snapshot", revision=capture.rev, bytes=size, wal_gen=gen,
                    ms=round((time.monotonic() - t0) * 1000, 1))

    async def backend_snapshot(self) -> bytes:
        """The store as an etcd backend database (bbolt) + its SHA-256, for Maintenance.Snapshot.

        Captured in one loop step (:class:`~.wal.SnapshotCapture`), built in the snapshot thread.
        """
        capture = wal.SnapshotCapture(self.store, self.store.committed)
        leases = [(l.id, l.ttl) for l in self.lessor.leases.values()]
        index = self.durable_index

        def build() -> bytes:
            return bolt.with_checksum(bolt.build(capture.versions(), capture.rev, capture.compact_rev,
                                                 leases, index))

        return await asyncio.get_running_loop().run_in_executor(self._snap_executor, build)

    async def close(self) -> None:
        """Flush, snapshot and close the data dir (graceful stop)."""
        self.hub.close_all()
        if self.datadir is not None:
            if self._broken is None:
                try:
                    await self.flush()
                    if self._snap_task is not None:
                        await asyncio.shield(self._snap_task)
                    await self.snapshot()
                except (OSError, wal.DataDirError, errors.EtcdError) as e:  # the WAL has every acknowledged write
                    cplog.event(log, "etcd.snapshot.failed", logging.ERROR, error=str(e))
            self.datadir.close()
        self._executor.shutdown(wait=True)
        self._snap_executor.shutdown(wait=True)

    # ------------------------------------------------------------------ validation
    def _check_size(self, r) -> None:
        if r.ByteSize() > self.max_request_bytes:
            raise errors.REQUEST_TOO_LARGE

    def _check_writable(self) -> None:
        """Writes stop after a WAL failure other than ENOSPC (as etcd, which exits then)."""
        if self._broken:
            raise errors.EtcdError(errors.SC.UNAVAILABLE, f"etcdserver: {self._broken}")

    def _check_quota(self, cost: int) -> None:
        """etcd's capped applier + quota alarmer (``etcdserver/quota.go``, ``api/v3rpc/quota.go``):
        NO_SPACE while a NOSPACE alarm is active; a write of ``cost`` bytes that would take the
        database size to ``--quota-backend-bytes`` (negative: no quota) raises the alarm."""
        if any(a == rpc_pb2.NOSPACE for _, a in self.alarms):
            raise errors.NO_SPACE
        if 0 <= self.quota_backend_bytes <= self.store.size + cost:
            self._activate_alarm(rpc_pb2.NOSPACE)
            raise errors.NO_SPACE

    def _activate_alarm(self, alarm: int, persist: bool = True) -> None:
        """Raise ``alarm`` for this member (etcd ``AlarmStore.Activate``; logged once)."""
        key = (self.member_id, alarm)
        if key not in self.alarms:
            self.alarms[key] = None
            cplog.event(log, "etcd.alarm.activated", logging.WARNING, member=f"{self.member_id:x}",
                        alarm=rpc_pb2.AlarmType.Name(alarm))
            if persist:
                self._persist_alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.ACTIVATE,
                                                         memberID=self.member_id, alarm=alarm))

    def _persist_alarm(self, r: rpc_pb2.AlarmRequest) -> None:
        """Log an alarm change in the WAL, best effort: the alarm holds in memory whether or not
        the record becomes durable (with a full disk it may not: then the next start finds the
        disk full again). No undo: a failed WAL group leaves the alarms as they are."""
        if self.datadir is None:
            return
        self._record(wal.encode(wal.REC_ALARM, r))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # it goes out with the next write
        self.durable()

    def _check_txn_shape(self, r: rpc_pb2.TxnRequest) -> None:
        """etcd ``checkTxnRequest`` + ``checkIntervals`` (api/v3rpc/key.go)."""
        if len(r.compare) > self.max_txn_ops or len(r.success) > self.max_txn_ops \
                or len(r.failure) > self.max_txn_ops:
            raise errors.TOO_MANY_OPS
        for ops in (r.success, r.failure):
            for op in ops:
                which = op.WhichOneof("request")
                if which == "request_txn":
                    self._check_txn_shape(op.request_txn)
                elif which is not None and not getattr(op, which).key:
                    raise errors.EMPTY_KEY
        for ops in (r.success, r.failure):
            _check_intervals(ops)

    def _txn_path(self, r: rpc_pb2.TxnRequest, path: list[bool]) -> None:
        """Evaluate the compares of the txn and its nested txns (pre-apply view) and validate the ops taken."""
        ok = all(self._compare(c) for c in r.compare)
        path.append(ok)
        for op in (r.success if ok else r.failure):
            which = op.WhichOneof("request")
            if which == "request_txn":
                self._txn_path(op.request_txn, path)
            elif which == "request_put":
                self._check_put(op.request_put)
            elif which == "request_range":
                self.store.check_rev(op.request_range.revision, latest=True)

    def _check_put(self, p: rpc_pb2.PutRequest) -> None:
        if p.ignore_value and p.value:
            raise errors.VALUE_PROVIDED
        if p.ignore_lease and p.lease:
            raise errors.LEASE_PROVIDED
        if (p.ignore_value or p.ignore_lease) and self.store.get_at(p.key, self.store.rev) is None:
            raise errors.KEY_NOT_FOUND
        if p.lease and p.lease not in self.lessor.leases:
            raise errors.LEASE_NOT_FOUND

    def _compare(self, c: Compare) -> bool:
        """etcd ``applyCompare``: every key in the range must satisfy the compare."""
        kvs = list(self.store.iter_live(c.key, c.range_end))
        if not kvs:
            if c.target == Compare.VALUE:
                return False
            kvs = [kv_pb2.KeyValue()]
        return all(_compare_kv(c, kv) for kv in kvs)

    # ------------------------------------------------------------------ KV
    def range(self, r: rpc_pb2.RangeRequest) -> rpc_pb2.RangeResponse:
        """KV.Range. Raises EMPTY_KEY, COMPACTED, FUTURE_REV."""
        resp = self.store.range(r)
        resp.header.CopyFrom(self.header())
        return resp

    def put(self, r: rpc_pb2.PutRequest) -> rpc_pb2.PutResponse:
        """KV.Put (one revision). Raises EMPTY_KEY, REQUEST_TOO_LARGE, NO_SPACE, KEY_NOT_FOUND, LEASE_NOT_FOUND, ..."""
        if not r.key:
            raise errors.EMPTY_KEY
        self._check_size(r)
        self._check_writable()
        self._check_quota(r.ByteSize())
        self._check_put(r)
        txn = self.store.begin()
        resp = self._put(txn, r)
        self._record_changes(self.store.end(txn))
        resp.header.CopyFrom(self.header(self.store.rev))
        return resp

    def _put(self, txn: WriteTxn, r: rpc_pb2.PutRequest) -> rpc_pb2.PutResponse:
        value, lease = r.value, r.lease
        if r.ignore_value or r.ignore_lease:
            cur = self.store.get_at(r.key, self.store.rev)
            assert cur is not None  # _check_put raised KEY_NOT_FOUND for a key absent before the request
            if r.ignore_value:
                value = cur.value
            if r.ignore_lease:
                lease = cur.lease
        prev = txn.put(r.key, value, lease)
        resp = rpc_pb2.PutResponse()
        if r.prev_kv and prev is not None:
            resp.prev_kv.CopyFrom(prev)
        return resp

    def delete_range(self, r: rpc_pb2.DeleteRangeRequest) -> rpc_pb2.DeleteRangeResponse:
        """KV.DeleteRange (one revision for all keys; none if nothing was deleted)."""
        if not r.key:
            raise errors.EMPTY_KEY
        self._check_size(r)
        self._check_writable()
        txn = self.store.begin()
        resp = self._delete(txn, r)
        self._record_changes(self.store.end(txn))
        resp.header.CopyFrom(self.header(self.store.rev))
        return resp

    def _delete(self, txn: WriteTxn, r: rpc_pb2.DeleteRangeRequest) -> rpc_pb2.DeleteRangeResponse:
        deleted = txn.delete_range(r.key, r.range_end)
        resp = rpc_pb2.DeleteRangeResponse(deleted=len(deleted))
        if r.prev_kv:
            resp.prev_kvs.extend(deleted)
        return resp

    def txn(self, r: rpc_pb2.TxnRequest) -> rpc_pb2.TxnResponse:
        """KV.Txn: compares, then the success or failure ops, all in ONE revision."""
        self._check_size(r)
        self._check_txn_shape(r)
        self._check_writable()
        path: list[bool] = []
        self._txn_path(r, path)
        if any(op.WhichOneof("request") == "request_put" for op in (r.success if path[0] else r.failure)):
            self._check_quota(r.ByteSize())
        txn = self.store.begin()
        resp = self._apply_txn(txn, r, iter(path))
        self._record_changes(self.store.end(txn))
        resp.header.CopyFrom(self.header(self.store.rev))
        return resp

    def _apply_txn(self, txn: WriteTxn, r: rpc_pb2.TxnRequest, path) -> rpc_pb2.TxnResponse:
        """Apply the ops of the taken branch. Nested headers carry only a revision, as etcd 3.4's
        ``applyTxn`` leaves them: a range/put/delete reports the txn's revision as of that op (the
        new one once something changed), a nested txn's header is left empty."""
        ok = next(path)
        resp = rpc_pb2.TxnResponse(succeeded=ok)
        for op in (r.success if ok else r.failure):
            which = op.WhichOneof("request")
            out = resp.responses.add()
            if which == "request_range":
                rr = self.store.range(op.request_range, latest=True)
                rr.header.revision = txn.rev if txn.changes else txn.rev - 1
                out.response_range.CopyFrom(rr)
            elif which == "request_put":
                pr = self._put(txn, op.request_put)
                pr.header.revision = txn.rev
                out.response_put.CopyFrom(pr)
            elif which == "request_delete_range":
                dr = self._delete(txn, op.request_delete_range)
                dr.header.revision = txn.rev if txn.changes else txn.rev - 1
                out.response_delete_range.CopyFrom(dr)
            elif which == "request_txn":
                out.response_txn.CopyFrom(self._apply_txn(txn, op.request_txn, path))
        return resp

    def compact(self, r: rpc_pb2.CompactionRequest) -> rpc_pb2.CompactionResponse:
        """KV.Compact, applied once its WAL record is durable. Raises COMPACTED (rev <= compacted,
        or <= a compaction still being written) or FUTURE_REV."""
        rev = r.revision
        self._check_writable()
        if rev <= max(self.store.compact_rev, self._compacting):
            raise errors.COMPACTED
        if rev > self.store.rev:
            raise errors.FUTURE_REV
        self._compacting = rev

        def undo() -> None:
            self._compacting = self.store.compact_rev

        def commit() -> None:
            self.store.compact(rev)
            cplog.event(log, "etcd.compacted", revision=rev)

        self._record(wal.encode(wal.REC_COMPACT, rpc_pb2.CompactionRequest(revision=rev)), undo, commit)
        return rpc_pb2.CompactionResponse(header=self.header(self.store.rev))

    # ------------------------------------------------------------------ maintenance
    def alarm(self, r: rpc_pb2.AlarmRequest) -> rpc_pb2.AlarmResponse:
        """Maintenance.Alarm (etcd ``api/v3alarm`` AlarmStore): GET lists the alarms of type
        ``r.alarm`` (NONE = all), ACTIVATE / DEACTIVATE add / remove (memberID 0 is kept as 0,
        as etcd does) and answer the alarm changed. An active NOSPACE makes puts, txns with
        puts and lease grants fail with "database space exceeded" until disarmed. Changes are
        logged in the WAL (best effort, see :meth:`_persist_alarm`): alarms survive a restart."""
        resp = rpc_pb2.AlarmResponse(header=self.header())
        key = (r.memberID, r.alarm)
        if r.action == rpc_pb2.AlarmRequest.GET:
            resp.alarms.extend(rpc_pb2.AlarmMember(memberID=m, alarm=a) for m, a in self.alarms
                               if r.alarm == rpc_pb2.NONE or a == r.alarm)
        elif r.action == rpc_pb2.AlarmRequest.ACTIVATE:
            if r.alarm != rpc_pb2.NONE:
                if key not in self.alarms:
                    self.alarms[key] = None
                    self._persist_alarm(r)
                resp.alarms.add(memberID=r.memberID, alarm=r.alarm)
                cplog.event(log, "etcd.alarm.activated", member=f"{r.memberID:x}",
                            alarm=rpc_pb2.AlarmType.Name(r.alarm))
        elif key in self.alarms:
            del self.alarms[key]
            self._persist_alarm(r)
            resp.alarms.add(memberID=r.memberID, alarm=r.alarm)
            cplog.event(log, "etcd.alarm.deactivated", member=f"{r.memberID:x}",
                        alarm=rpc_pb2.AlarmType.Name(r.alarm))
        return resp

    def hash_kv(self, revision: int = 0) -> tuple[int, int]:
        """(CRC-32 of every retained version with mod_revision <= ``revision`` (0 = current),
        compact revision) for Maintenance.Hash / HashKV. Our own hash — equal stores hash equal,
        but the value cannot match a real etcd's (that hashes its bbolt file). Raises COMPACTED /
        FUTURE_REV for a bad ``revision``."""
        rev = self.store.check_rev(revision)
        crc = 0
        for kv in self.store.all_versions():
            if kv.mod_revision <= rev:
                crc = zlib.crc32(kv.SerializeToString(), crc)
        return crc, self.store.compact_rev

    # ------------------------------------------------------------------ leases
    def lease_grant(self, r: rpc_pb2.LeaseGrantRequest) -> rpc_pb2.LeaseGrantResponse:
        """Lease.LeaseGrant. Raises LEASE_EXIST, LEASE_TTL_TOO_LARGE, NO_SPACE (NOSPACE alarm)."""
        self._check_writable()
        self._check_quota(LEASE_COST)
        ttl = self.lessor.check_grant(r.ID, r.TTL)
        lease_id = r.ID or self.lessor.new_id()
        self.lessor.grant(lease_id, ttl)
        self._record(wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=lease_id, TTL=ttl)),
                     lambda: self.lessor.remove(lease_id))
        return rpc_pb2.LeaseGrantResponse(header=self.header(self.store.rev), ID=lease_id, TTL=ttl)

    def lease_revoke(self, lease_id: int) -> rpc_pb2.LeaseRevokeResponse:
        """Lease.LeaseRevoke (also expiry): deletes the attached keys in one revision. Raises LEASE_NOT_FOUND."""
        self._check_writable()
        lease = self.lessor.get(lease_id)
        txn = self.store.begin()
        for key in sorted(lease.keys):
            kv = self.store.get_at(key, self.store.rev)
            if kv is not None and kv.lease == lease_id:
                txn.delete_range(key, b"")
        self._record_changes(self.store.end(txn))
        self.lessor.remove(lease_id)

        def undo() -> None:
            self.lessor.leases[lease_id] = lease

        self._record(wal.encode(wal.REC_REVOKE, rpc_pb2.LeaseRevokeRequest(ID=lease_id)), undo)
        return rpc_pb2.LeaseRevokeResponse(header=self.header(self.store.rev))

    async def lease_renew(self, lease_id: int) -> int:
        """Lease.LeaseKeepAlive for one request: the granted TTL in seconds, or 0 for a lease
        that is unknown or expired (etcd answers TTL 0 and no error, ``v3rpc/lease.go``). A grant
        or revoke still waiting for its WAL group is settled first, so a keep-alive never renews a
        grant that is then rolled back, nor answers 0 for a revoke that is rolled back."""
        await self.settled()
        return self.lessor.renew(lease_id)

    def lease_ttl(self, r: rpc_pb2.LeaseTimeToLiveRequest) -> rpc_pb2.LeaseTimeToLiveResponse:
        """Lease.LeaseTimeToLive; an unknown lease answers TTL -1 like etcd."""
        lease = self.lessor.leases.get(r.ID)
        if lease is None:
            return rpc_pb2.LeaseTimeToLiveResponse(header=self.header(), ID=r.ID, TTL=-1)
        resp = rpc_pb2.LeaseTimeToLiveResponse(header=self.header(), ID=r.ID, TTL=lease.remaining(),
                                               grantedTTL=lease.ttl)
        if r.keys:
            resp.keys.extend(sorted(lease.keys))
        return resp

    def expire_leases(self) -> int:
        """Revoke every expired lease; returns how many (none while writes are stopped)."""
        if self._broken:
            return 0
        ids = self.lessor.expired()
        for lease_id in ids:
            self.lease_revoke(lease_id)
            if not self._wal_failing:  # else retried every tick until the WAL takes it: log once
                cplog.event(log, "etcd.lease.expired", lease=f"{lease_id:x}")
        return len(ids)


def _compare_kv(c: Compare, kv: kv_pb2.KeyValue) -> bool:
    t = c.target
    if t == Compare.VALUE:
        a, b = kv.value, c.value
    elif t == Compare.VERSION:
        a, b = kv.version, c.version
    elif t == Compare.CREATE:
        a, b = kv.create_revision, c.create_revision
    elif t == Compare.MOD:
        a, b = kv.mod_revision, c.mod_revision
    else:
        a, b = kv.lease, c.lease
    res = c.result
    if res == Compare.EQUAL:
        return a == b
    if res == Compare.NOT_EQUAL:
        return a != b
    if res == Compare.GREATER:
        return a > b
    return a < b


def _check_intervals(ops) -> tuple[set[bytes], list[tuple[bytes, bytes]]]:
    """Puts and delete ranges of one op list; raises DUPLICATE_KEY on overlap (etcd ``checkIntervals``)."""
    dels = [(op.request_delete_range.key, op.request_delete_range.range_end)
            for op in ops if op.WhichOneof("request") == "request_delete_range"]
    puts: set[bytes] = set()
    for op in ops:
        which = op.WhichOneof("request")
        if which == "request_put":
            k = op.request_put.key
            if k in puts:
                raise errors.DUPLICATE_KEY
            puts.add(k)
        elif which == "request_txn":
            t = op.request_txn
            then_puts, then_dels = _check_intervals(t.success)
            else_puts, else_dels = _check_intervals(t.failure)
            for k in then_puts | else_puts:
                if k in puts:
                    raise errors.DUPLICATE_KEY
            puts |= then_puts | else_puts
            dels.extend(then_dels)
            dels.extend(else_dels)
    for k in puts:
        for start, end in dels:
            if in_range(k, start, end):
                raise errors.DUPLICATE_KEY
    return puts, dels
