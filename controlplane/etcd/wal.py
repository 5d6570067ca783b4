"""Durability: the data dir, an append-only write-ahead log and snapshots.

Layout of ``--data-dir`` (our own format, not etcd's bbolt/raft files)::

    meta.json              {"format": "controlplane-etcd", "version": 1, "cluster_id": .., "member_id": .., "name": ..}
    snapshot               one JSON header line + protobuf blob (all retained key versions)
    wal-<gen>.log          records appended since the snapshot of generation <gen>

A WAL record is ``<u32 length><u32 crc32><u8 type><payload>`` (little endian; the CRC covers
type + payload). Types: ``R`` one revision (a ``RangeResponse``: header.revision + the new
versions/tombstones), ``G`` lease grant (``LeaseGrantRequest``), ``V`` lease revoke
(``LeaseRevokeRequest``), ``C`` compaction (``CompactionRequest``).

Like etcd's WAL (``server/storage/wal``), a torn record at the very end of the last file (a write
that was never acknowledged) is cut off on recovery; damage anywhere else is corruption and
start-up fails with :class:`DataDirError` rather than silently losing data.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Iterator

from aetcd.rpc import rpc_pb2

FORMAT = "controlplane-etcd"
VERSION = 1
WAL_MAGIC = b"CPETCD-WAL\x00\x01"

REC_REVISION = ord("R")
REC_GRANT = ord("G")
REC_REVOKE = ord("V")
REC_COMPACT = ord("C")
_MESSAGES = {
    REC_REVISION: rpc_pb2.RangeResponse,
    REC_GRANT: rpc_pb2.LeaseGrantRequest,
    REC_REVOKE: rpc_pb2.LeaseRevokeRequest,
    REC_COMPACT: rpc_pb2.CompactionRequest,
}


class DataDirError(Exception):
    """The data dir cannot be used (corrupt, foreign, newer format); message is one line."""


def encode(rtype: int, msg) -> bytes:
    """One WAL record for protobuf message ``msg``."""
    body = bytes((rtype,)) + msg.SerializeToString()
    return struct.pack("<II", len(body) - 1, zlib.crc32(body)) + body


class DataDir:
    """An opened data dir: :meth:`open` validates/creates it, :meth:`recover` yields its history.

    Attributes after :meth:`open`: ``meta`` (dict), ``snapshot`` (dict header or None) and
    ``snapshot_kvs`` (bytes), ``gen`` (current WAL generation). Raises :class:`DataDirError`.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.meta: dict = {}
        self.snapshot: dict | None = None
        self.snapshot_blob = b""
        self.gen = 0
        self._fd: int | None = None

    # ------------------------------------------------------------------ open
    def open(self, name: str, cluster_id: int, member_id: int) -> None:
        """Create a fresh data dir or validate an existing one."""
        p = self.path
        if os.path.exists(p) and not os.path.isdir(p):
            raise DataDirError(f"data dir {p} is not a directory")
        os.makedirs(p, exist_ok=True)
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
        try:
            with open(path, "rb") as f:
                data = f.read()
            line, _, blob = data.partition(b"\n")
            hdr = json.loads(line)
            if hdr.get("version", 0) > VERSION:
                raise DataDirError(f"data dir {self.path}: snapshot format version {hdr.get('version')} "
                                   f"is newer than this server's {VERSION}")
            if len(blob) != hdr["size"] or zlib.crc32(blob) != hdr["crc"]:
                raise ValueError("checksum mismatch")
        except DataDirError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataDirError(f"data dir {self.path}: corrupt snapshot ({e})") from None
        self.snapshot = hdr
        self.snapshot_blob = blob

    # ------------------------------------------------------------------ recovery
    def records(self) -> Iterator[tuple[int, object]]:
        """WAL records after the snapshot, in order, as ``(type, message)``; truncates a torn tail."""
        gens = getattr(self, "_replay_gens", [])
        for i, gen in enumerate(gens):
            last = i == len(gens) - 1
            yield from self._read_wal(gen, last)
        self._open_wal(self.gen, create=not os.path.exists(self._wal_path(self.gen)))

    def _read_wal(self, gen: int, last: bool) -> Iterator[tuple[int, object]]:
        path = self._wal_path(gen)
        with open(path, "rb") as f:
            data = f.read()
        if not data.startswith(WAL_MAGIC):
            if last and len(data) < len(WAL_MAGIC) and WAL_MAGIC.startswith(data):
                _truncate(path, 0)
                return
            raise DataDirError(f"data dir {self.path}: {os.path.basename(path)} is not a WAL file")
        pos = len(WAL_MAGIC)
        n = len(data)
        while pos < n:
            torn = None
            if pos + 9 > n:
                torn = "short header"
            else:
                length, crc = struct.unpack_from("<II", data, pos)
                end = pos + 8 + 1 + length
                if end > n:
                    torn = "short record"
                elif zlib.crc32(data[pos + 8:end]) != crc:
                    torn = "checksum mismatch"
            if torn is not None:
                if last and (torn != "checksum mismatch" or end == n):
                    _truncate(path, pos)
                    self.truncated = (os.path.basename(path), pos, torn)
                    return
                raise DataDirError(f"data dir {self.path}: corrupt WAL {os.path.basename(path)} "
                                   f"at offset {pos} ({torn})")
            rtype = data[pos + 8]
            cls = _MESSAGES.get(rtype)
            if cls is None:
                raise DataDirError(f"data dir {self.path}: unknown WAL record type {rtype} "
                                   f"in {os.path.basename(path)} (newer format?)")
            msg = cls()
            try:
                msg.ParseFromString(data[pos + 9:end])
            except Exception as e:  # DecodeError
                raise DataDirError(f"data dir {self.path}: undecodable WAL record at offset {pos} ({e})") from None
            yield rtype, msg
            pos = end

    # ------------------------------------------------------------------ writing
    def _open_wal(self, gen: int, create: bool) -> None:
        path = self._wal_path(gen)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if create or os.fstat(fd).st_size == 0:
            os.write(fd, WAL_MAGIC)
            os.fsync(fd)
            _fsync_dir(self.path)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self.gen = gen

    def write_sync(self, data: bytes) -> None:
        """Append encoded records and fdatasync (runs in a worker thread; one caller at a time)."""
        fd = self._fd
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fdatasync(fd)

    def rotate(self) -> int:
        """Start the next WAL generation; returns it. The snapshot written next names it."""
        self._open_wal(self.gen + 1, create=True)
        return self.gen

    def write_snapshot(self, header: dict, blob: bytes) -> None:
        """Atomically replace the snapshot, then drop WAL files older than ``header['wal_gen']``."""
        header = dict(header, version=VERSION, size=len(blob), crc=zlib.crc32(blob))
        _atomic_write(os.path.join(self.path, "snapshot"), json.dumps(header).encode() + b"\n" + blob)
        for g in self._wal_gens():
            if g < header["wal_gen"]:
                os.unlink(self._wal_path(g))

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


def _atomic_write(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _truncate(path: str, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())
