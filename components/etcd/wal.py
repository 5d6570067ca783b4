"""Durability: the data dir, an append-only write-ahead log and snapshots.

Layout of ``--data-dir`` (our own format, not etcd's bbolt/raft files)::

    .lock                  flock'ed by the server using the data dir (etcd locks its WAL files)
    meta.json              {"format": "controlplane-etcd", "version": 1, "cluster_id": .., "member_id": .., "name": .., "term": ..}
    snapshot               one JSON header line + protobuf blob (all retained key versions)
    wal-<gen>.log          records appended since the snapshot of generation <gen>; each file is
                           preallocated to SEGMENT_BYTES (etcd ``wal.SegmentSizeBytes``), the unused
                           tail is zeros; a full segment continues in the next generation

A WAL record is ``<u32 length><u32 crc32><u8 type><payload>`` (little endian; the CRC covers
type + payload). Types: ``R`` one revision (a ``RangeResponse``: header.revision + the new
versions/tombstones), ``G`` lease grant (``LeaseGrantRequest``), ``V`` lease revoke
(``LeaseRevokeRequest``), ``C`` compaction (``CompactionRequest``), ``A`` an alarm raised or
disarmed (``AlarmRequest``: etcd keeps its alarms in the backend, so they survive a restart).

Like etcd's WAL (``server/storage/wal``), a torn record at the very end of the last file (a write
that was never acknowledged: only zeros follow it) is cut off on recovery; damage anywhere else is
corruption and start-up fails with :class:`DataDirError` rather than silently losing data.
Recovery reads the files with ``pread``, never past their size (a mapped sparse segment on a
full tmpfs faults with SIGBUS). A write that fails (ENOSPC, EIO) is cut off again at once
(:meth:`DataDir.write_sync`), so a record answered with an error can never reappear.

Like etcd (``client/pkg/fileutil`` ``TryLockFile`` on the WAL in ``wal.Open``), the server holds
an exclusive ``flock`` on ``.lock`` while it uses the dir: a second server fails at once.

Why preallocate: appending to a file makes every ``fdatasync`` also journal the new file size
(about 0.8 ms here); overwriting preallocated blocks with ``pwrite`` does not (0.1-0.4 ms). etcd
does the same (``fileutil.Preallocate`` in ``wal.cut``).

The snapshot is written by :func:`write_snapshot_stream` from a *capture* (:class:`SnapshotCapture`)
taken in one event-loop step, so serialising a big store runs in a worker thread.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import struct
import time
import zlib
from typing import Any, Callable, Iterable, Iterator, TypeAlias

from aetcd.rpc import kv_pb2, rpc_pb2

from controlplane import log as cplog

log = logging.getLogger("etcd")

KeyValue: TypeAlias = kv_pb2.KeyValue

FORMAT = "controlplane-etcd"
VERSION = 1
WAL_MAGIC = b"CPETCD-WAL\x00\x01"

#: bytes preallocated per WAL file (etcd wal.SegmentSizeBytes)
SEGMENT_BYTES = 64 * 1024 * 1024
#: bytes read at a time during recovery
READ_CHUNK = 1 << 20
#: etcd ``fileutil.ErrLocked``
ERR_LOCKED = "fileutil: file already locked"
#: the snapshot header line is padded to this many bytes so it can be rewritten after streaming
SNAPSHOT_HEADER_BYTES = 4096

REC_REVISION = ord("R")
REC_GRANT = ord("G")
REC_REVOKE = ord("V")
REC_COMPACT = ord("C")
REC_ALARM = ord("A")
_MESSAGES = {
    REC_ALARM: rpc_pb2.AlarmRequest,
    REC_REVISION: rpc_pb2.RangeResponse,
    REC_GRANT: rpc_pb2.LeaseGrantRequest,
    REC_REVOKE: rpc_pb2.LeaseRevokeRequest,
    REC_COMPACT: rpc_pb2.CompactionRequest,
}


class DataDirError(Exception):
    """The data dir cannot be used (corrupt, foreign, newer format); message is one line."""


def encode(rtype: int, msg) -> bytes:
    """One WAL record for protobuf message ``msg``."""
    return frame(rtype, msg.SerializeToString())


def frame(rtype: int, payload: bytes) -> bytes:
    """One WAL record: ``<u32 len(payload)><u32 crc32(type+payload)><u8 type><payload>``."""
    body = bytes((rtype,)) + payload
    return struct.pack("<II", len(payload), zlib.crc32(body)) + body


def varint(n: int) -> bytes:
    """Protobuf base-128 varint of a non-negative int."""
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_revision(rev: int, kvs) -> bytes:
    """The ``R`` record of one revision, byte-identical to ``encode(REC_REVISION, RangeResponse(
    header=ResponseHeader(revision=rev), kvs=kvs))`` but without building that message (hot path)."""
    hdr = b"\x18" + varint(rev)  # ResponseHeader.revision = field 3, varint
    parts = [b"\x0a", varint(len(hdr)), hdr]  # RangeResponse.header = field 1
    for kv in kvs:
        b = kv.SerializeToString()
        parts += (b"\x12", varint(len(b)), b)  # RangeResponse.kvs = field 2
    return frame(REC_REVISION, b"".join(parts))


class DataDir:
    """An opened data dir: :meth:`open` validates/creates it, :meth:`recover` yields its history.

    Attributes after :meth:`open`: ``meta`` (dict), ``snapshot`` (dict header or None; its
    versions come from :meth:`snapshot_versions`), ``gen`` (current WAL generation). Raises
    :class:`DataDirError`.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        #: ``on_fsync(seconds)`` after each WAL fdatasync (etcd_disk_wal_fsync_duration_seconds), in the WAL thread
        self.on_fsync: Callable[[float], None] | None = None
        self.meta: dict = {}
        self.snapshot: dict | None = None
        self._snapshot_data_at = 0
        self.gen = 0
        self._fd: int | None = None
        self._lock_fd: int | None = None
        #: why the WAL tail could not be reset after a failed write (then it may hold that write)
        self.damaged: str | None = None

    # ------------------------------------------------------------------ open
    def open(self, name: str, cluster_id: int, member_id: int) -> None:
        """Create a fresh data dir or validate an existing one."""
        p = self.path
        if os.path.exists(p) and not os.path.isdir(p):
            raise DataDirError(f"data dir {p} is not a directory")
        os.makedirs(p, exist_ok=True)
        self._lock()
        try:
            self._open(p, name, cluster_id, member_id)
        except BaseException:
            self.close()
            raise

    def _open(self, p: str, name: str, cluster_id: int, member_id: int) -> None:
        meta_path = os.path.join(p, "meta.json")
        entries = [e for e in os.listdir(p) if not e.startswith(".")]
        if not os.path.exists(meta_path):
            if "member" in entries:
                raise DataDirError(f"data dir {p} holds a real etcd's data (member/); "
                                   f"use another --data-dir for the embedded server")
            if entries:
                raise DataDirError(f"data dir {p} is not empty and is not a controlplane etcd data dir")
            self.meta = {"format": FORMAT, "version": VERSION, "name": name,
                         "cluster_id": cluster_id, "member_id": member_id}
            _atomic_write(meta_path, json.dumps(self.meta).encode())
            self.gen = 1
            self._open_wal(self.gen, create=True)
            return
        try:
            with open(meta_path, "rb") as f:
                meta = json.loads(f.read())
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as e:
            raise DataDirError(f"data dir {p}: unreadable meta.json ({e})") from None
        if meta.get("format") != FORMAT:
            raise DataDirError(f"data dir {p} is not a controlplane etcd data dir (format {meta.get('format')!r})")
        if not isinstance(meta.get("version"), int) or meta["version"] > VERSION:
            raise DataDirError(f"data dir {p} has format version {meta.get('version')}, "
                               f"newer than this server's {VERSION}")
        self.meta = meta
        snap = os.path.join(p, "snapshot")
        if os.path.exists(snap):
            self._read_snapshot(snap)
        gens = self._wal_gens()
        start = self.snapshot["wal_gen"] if self.snapshot else 1
        self._replay_gens = [g for g in gens if g >= start]
        self.gen = max(gens + [start])

    def _lock(self) -> None:
        """Take the exclusive lock of the dir (held until :meth:`close` or the process ends)."""
        fd = os.open(os.path.join(self.path, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise DataDirError(f"data dir {self.path} is in use by another etcd "
                                   f"({ERR_LOCKED})") from None
            raise
        self._lock_fd = fd

    def unlock(self) -> None:
        """Release the dir's lock as the kernel does when the process dies (tests simulate a
        kill -9 in-process with it; the WAL stays open and untouched)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def next_term(self) -> int:
        """The raft term of this start: the last one + 1, saved in ``meta.json`` (etcd's term
        grows at every election, and a restarted single member elects itself: a fresh data dir
        starts at term 2, as etcd's). Raises OSError if meta.json cannot be written."""
        self.meta["term"] = int(self.meta.get("term", 1)) + 1
        _atomic_write(os.path.join(self.path, "meta.json"), json.dumps(self.meta).encode())
        return self.meta["term"]

    def _wal_gens(self) -> list[int]:
        gens = []
        for e in os.listdir(self.path):
            if e.startswith("wal-") and e.endswith(".log"):
                try:
                    gens.append(int(e[4:-4]))
                except ValueError:
                    raise DataDirError(f"data dir {self.path}: unexpected file {e}") from None
        return sorted(gens)

    def _wal_path(self, gen: int) -> str:
        return os.path.join(self.path, f"wal-{gen:016d}.log")

    def _read_snapshot(self, path: str) -> None:
        """Read and check the snapshot header; verify the blob's size and CRC by streaming it."""
        try:
            with open(path, "rb") as f:
                line = f.readline()
                hdr = json.loads(line)
                if hdr.get("version", 0) > VERSION:
                    raise DataDirError(f"data dir {self.path}: snapshot format version {hdr.get('version')} "
                                       f"is newer than this server's {VERSION}")
                size = crc = 0
                while chunk := f.read(1 << 20):
                    size += len(chunk)
                    crc = zlib.crc32(chunk, crc)
            if size != hdr["size"] or crc != hdr["crc"]:
                raise ValueError("checksum mismatch")
        except DataDirError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataDirError(f"data dir {self.path}: corrupt snapshot ({e})") from None
        self.snapshot = hdr
        self._snapshot_data_at = len(line)

    def snapshot_versions(self) -> Iterator:
        """The snapshot's KeyValues, parsed one at a time from the file (memory: one chunk, and
        each version its own small message). Raises DataDirError on a malformed blob."""
        path = os.path.join(self.path, "snapshot")
        with open(path, "rb") as f:
            f.seek(self._snapshot_data_at)
            buf = b""
            pos = 0
            while True:
                chunk = f.read(1 << 20)
                buf = buf[pos:] + chunk
                pos = 0
                n = len(buf)
                while pos < n:
                    # one RangeResponse.kvs entry: tag 0x12, varint length, KeyValue bytes
                    if buf[pos] != 0x12:
                        raise DataDirError(f"data dir {self.path}: corrupt snapshot (unexpected field)")
                    length = shift = 0
                    i = pos + 1
                    while i < n and buf[i] & 0x80:
                        length |= (buf[i] & 0x7F) << shift
                        shift += 7
                        i += 1
                    if i >= n:
                        break
                    length |= buf[i] << shift
                    end = i + 1 + length
                    if end > n:
                        break
                    yield KeyValue.FromString(buf[i + 1:end])
                    pos = end
                if not chunk:
                    if pos < len(buf):
                        raise DataDirError(f"data dir {self.path}: corrupt snapshot (truncated)")
                    return

    # ------------------------------------------------------------------ recovery
    def records(self) -> Iterator[tuple[int, Any]]:
        """WAL records after the snapshot, in order, as ``(type, message)``; cuts a torn tail.

        When exhausted, the newest WAL file is open for appending after its last good record.
        """
        gens = getattr(self, "_replay_gens", [])
        end = None
        for i, gen in enumerate(gens):
            last = i == len(gens) - 1
            end = yield from self._read_wal(gen, last)
        if gens and gens[-1] == self.gen and end is not None:
            self._open_wal(self.gen, create=False, offset=end)
        else:
            self._open_wal(self.gen, create=True)

    def _read_wal(self, gen: int, last: bool):
        """Yield the records of one WAL file; return the offset after the last good record."""
        path = self._wal_path(gen)
        fd = os.open(path, os.O_RDONLY)
        try:
            f = _WalFile(fd, os.fstat(fd).st_size)
            return (yield from self._records_in(f, os.path.basename(path), last))
        finally:
            os.close(fd)

    def _records_in(self, f: "_WalFile", name: str, last: bool):
        head = f.get(0, len(WAL_MAGIC))
        if head != WAL_MAGIC:
            head = head.rstrip(b"\0")
            if last and WAL_MAGIC.startswith(head) and f.zero_from(len(head)):
                return None  # created but its first write never became durable: start it afresh
            raise DataDirError(f"data dir {self.path}: {name} is not a WAL file")
        pos = len(WAL_MAGIC)
        n = f.size
        while pos < n:
            torn = None
            end = n
            body = b""
            if pos + 9 > n:
                if f.zero_from(pos):  # zero-filled tail shorter than a header
                    return pos
                torn = "short header"
            else:
                hdr = f.get(pos, 9)
                length, crc = struct.unpack_from("<II", hdr)
                if length == 0 and crc == 0 and hdr[8] == 0:
                    # the preallocated zero tail; anything non-zero after it is a torn or stray write
                    if f.zero_from(pos):
                        return pos
                    torn = "data after the end of the log"
                else:
                    end = pos + 8 + 1 + length
                    if end > n:
                        torn = "short record"
                        end = n
                    else:
                        body = f.get(pos + 8, 1 + length)
                        if len(body) != 1 + length:
                            torn, end = "short record", n
                        elif zlib.crc32(body) != crc:
                            torn = "checksum mismatch"
            if torn is not None:
                # torn = the unacknowledged last write: last file, and nothing but zeros after it
                if last and (torn == "data after the end of the log" or f.zero_from(end)):
                    self.truncated = (name, pos, torn)
                    return pos
                raise DataDirError(f"data dir {self.path}: corrupt WAL {name} at offset {pos} ({torn})")
            rtype = body[0]
            cls = _MESSAGES.get(rtype)
            if cls is None:
                raise DataDirError(f"data dir {self.path}: unknown WAL record type {rtype} "
                                   f"in {name} (newer format?)")
            msg = cls()
            try:
                msg.ParseFromString(body[1:])
            except Exception as e:  # DecodeError
                raise DataDirError(f"data dir {self.path}: undecodable WAL record at offset {pos} ({e})") from None
            yield rtype, msg
            pos = end
        return pos

    # ------------------------------------------------------------------ writing
    def _open_wal(self, gen: int, create: bool, offset: int = 0) -> None:
        """Open WAL file ``gen`` for writing at ``offset`` (``create``: start it with the magic).

        Bytes from the write offset on are zeroed (a cut torn tail) and the file is preallocated to
        SEGMENT_BYTES, all made durable before the first record is written.
        """
        path = self._wal_path(gen)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if create:
                offset = len(WAL_MAGIC)
                os.ftruncate(fd, 0)
                os.pwrite(fd, WAL_MAGIC, 0)
            else:
                os.ftruncate(fd, offset)  # drop a torn tail; preallocation below re-zeroes it
            _preallocate(fd, SEGMENT_BYTES)
            os.fsync(fd)
            if create:
                _fsync_dir(self.path)
        except OSError:
            os.close(fd)
            if create:  # leave no half-made segment behind (recovery would have to skip it)
                try:
                    os.unlink(path)
                except OSError:
                    pass
            raise
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self._off = offset
        self.gen = gen

    def write_sync(self, data: bytes) -> None:
        """Write encoded records after the last one and fdatasync; ``data`` is whole records.

        Runs in the WAL writer thread (one caller at a time). A full segment is continued in the
        next WAL generation (cut first, like etcd ``wal.cut``). Raises OSError; whatever the
        failed write left is cut off again (:meth:`_reset_tail`), so the log ends with the last
        durable record and the next write goes there.
        """
        if self._off + len(data) > SEGMENT_BYTES and self._off > len(WAL_MAGIC):
            self._open_wal(self.gen + 1, create=True)
        fd = self._fd
        assert fd is not None, "write before the WAL is open"
        off = self._off
        view = memoryview(data)
        try:
            while view:
                n = os.pwrite(fd, view, off)
                off += n
                view = view[n:]
            t0 = time.monotonic()
            os.fdatasync(fd)
            if self.on_fsync is not None:
                self.on_fsync(time.monotonic() - t0)
        except OSError:
            self._reset_tail()
            raise
        self._off = off

    def _reset_tail(self) -> None:
        """After a failed write: truncate the file to the last durable record (dropping pages a
        later writeback could still persist) and re-extend it with zeros, durably. On failure
        ``damaged`` says why (the failed write may then survive on disk)."""
        fd = self._fd
        assert fd is not None, "reset before the WAL is open"
        try:
            os.ftruncate(fd, self._off)
            _preallocate(fd, SEGMENT_BYTES)
            os.fsync(fd)
        except OSError as e:
            self.damaged = str(e)

    def rotate(self) -> int:
        """Start the next WAL generation; returns it. The snapshot written next names it.

        Call it from the WAL writer thread (or with no write in flight).
        """
        self._open_wal(self.gen + 1, create=True)
        return self.gen

    def write_snapshot_stream(self, header: dict, chunks: Iterable[bytes]) -> int:
        """Atomically replace the snapshot with the concatenated ``chunks``, then drop WAL files
        older than ``header['wal_gen']``. Streams (memory stays one chunk); returns the blob size.

        The header line is padded to SNAPSHOT_HEADER_BYTES and rewritten once size and CRC are known.
        """
        path = os.path.join(self.path, "snapshot")
        tmp = path + ".tmp"
        size = crc = 0
        try:
            with open(tmp, "wb") as f:
                f.write(b" " * (SNAPSHOT_HEADER_BYTES - 1) + b"\n")
                for chunk in chunks:
                    f.write(chunk)
                    size += len(chunk)
                    crc = zlib.crc32(chunk, crc)
                line = json.dumps(dict(header, version=VERSION, size=size, crc=crc)).encode()
                if len(line) >= SNAPSHOT_HEADER_BYTES:
                    raise DataDirError(f"snapshot header too long ({len(line)} bytes)")
                f.seek(0)
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            _unlink_quietly(tmp)  # e.g. ENOSPC: give the space back
            raise
        os.replace(tmp, path)
        _fsync_dir(self.path)
        for g in self._wal_gens():
            if g < header["wal_gen"]:
                os.unlink(self._wal_path(g))
        return size

    def close(self) -> None:
        """Sync and close the WAL, release the lock. Never raises (the WAL was synced at every
        acknowledged write; a failing fsync here is logged)."""
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as e:
                cplog.event(log, "etcd.wal.close_failed", logging.ERROR, error=str(e))
            os.close(self._fd)
            self._fd = None
        self.unlock()


class SnapshotCapture:
    """A consistent view of a :class:`~.mvcc.Store` at revision ``rev``, taken in one loop step.

    Taking it copies only the key list and the key -> history mapping (C-speed, no per-version
    work); :meth:`chunks` later serialises, in a worker thread, every version with
    ``mod_revision <= rev``. Histories only grow at the end with newer revisions, or lose old
    versions to a compaction — and a compaction after the capture is in the WAL generation that
    recovery replays on top of the snapshot — so the result is the store at ``rev``.
    """

    def __init__(self, store, rev: int | None = None) -> None:
        self.rev = store.rev if rev is None else rev
        self.compact_rev = store.compact_rev
        self.keys = list(store.keys)
        self.hist = dict(store.hist)

    def versions(self) -> Iterator:
        """Every captured KeyValue (key order, then revision order)."""
        rev, hist = self.rev, self.hist
        for key in self.keys:
            for kv in tuple(hist[key]):
                if kv.mod_revision <= rev:
                    yield kv

    def chunks(self, batch: int = 2000) -> Iterator[bytes]:
        """The RangeResponse encoding (``kvs`` = field 2) of every captured version, in pieces."""
        rev, hist = self.rev, self.hist
        parts: list[bytes] = []
        for i, key in enumerate(self.keys):
            for kv in tuple(hist[key]):  # tuple(): one atomic copy while the loop appends
                if kv.mod_revision <= rev:
                    b = kv.SerializeToString()
                    parts += (b"\x12", varint(len(b)), b)
            if i % batch == batch - 1:
                yield b"".join(parts)
                parts = []
        if parts:
            yield b"".join(parts)


class _WalFile:
    """One WAL file read with ``pread`` through a window of READ_CHUNK bytes, never past ``size``."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size
        self._buf = b""
        self._at = 0

    def get(self, pos: int, n: int) -> bytes:
        """Bytes ``[pos, pos + n)``, fewer at the end of the file."""
        end = min(pos + n, self.size)
        if pos < self._at or end > self._at + len(self._buf):
            self._buf = os.pread(self.fd, max(end - pos, READ_CHUNK), pos)
            self._at = pos
        return self._buf[pos - self._at:end - self._at]

    def zero_from(self, pos: int) -> bool:
        """True if the file holds only zero bytes from ``pos`` on."""
        while pos < self.size:
            chunk = os.pread(self.fd, min(READ_CHUNK, self.size - pos), pos)
            if not chunk:
                return True
            if chunk.count(0) != len(chunk):
                return False
            pos += len(chunk)
        return True


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _preallocate(fd: int, size: int) -> None:
    """Reserve ``size`` bytes of blocks (etcd ``fileutil.Preallocate``); zeros where not written."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:  # no fallocate, or no room: extend the file instead (a write may then hit ENOSPC)
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            cplog.event(log, "etcd.wal.preallocate_failed", logging.WARNING, bytes=size, error=str(e))
        if os.fstat(fd).st_size < size:
            os.ftruncate(fd, size)


def _atomic_write(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink_quietly(tmp)
        raise
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
