"""Write the store as an etcd backend database: a bbolt file, as ``Maintenance.Snapshot`` streams it.

So ``etcdctl snapshot save`` against the embedded server gives a file that ``etcdctl snapshot
status`` reads and ``etcdctl snapshot restore`` turns into a real etcd's data dir.

bbolt on-disk format (go.etcd.io/bbolt ``page.go``, ``meta``, ``bucket.go``), pages of PAGE_SIZE:

* page 0 and 1: meta (magic 0xED0CDAED, version 2, page size, root bucket page, freelist page,
  page high-water mark, txid, FNV-64a checksum of the fields before it);
* page 2: the (empty) freelist;
* then the root bucket's B+tree (one entry per bucket, value = ``{root pgid u64, sequence u64}``)
  and each bucket's B+tree: leaf pages of ``{flags u32, pos u32, ksize u32, vsize u32}`` elements
  followed by the keys/values (``pos`` is relative to the element), branch pages of
  ``{pos u32, ksize u32, pgid u64}``; a node bigger than a page spills into ``overflow`` pages.

etcd's layout (``mvcc/kvstore.go``, ``mvcc/revision.go``, ``lease/lessor.go``): bucket ``key`` maps
a revision ``<main u64 BE>_<sub u64 BE>`` (plus ``t`` for a deletion) to the marshalled
``mvccpb.KeyValue``; ``lease`` maps the lease ID (u64 BE) to ``leasepb.Lease{ID, TTL}``; ``meta``
holds ``consistent_index`` and, after a compaction, ``finishedCompactRev``/``scheduledCompactRev``.
The stream ends with the SHA-256 of the file, as etcd's ``v3rpc/maintenance.go`` Snapshot sends it.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Iterable

from .wal import varint

PAGE_SIZE = 4096
MAGIC = 0xED0CDAED
VERSION = 2
_BRANCH, _LEAF, _META, _FREELIST = 0x01, 0x02, 0x04, 0x10
_BUCKET_LEAF = 0x01
_HEADER = 16  # page header: id u64, flags u16, count u16, overflow u32
#: etcd's buckets (mvcc/backend + auth + membership), all present in a real etcd's db
BUCKETS = [b"alarm", b"auth", b"authRoles", b"authUsers", b"cluster", b"key", b"lease",
           b"members", b"members_removed", b"meta"]


def revision_key(main: int, sub: int, tombstone: bool = False) -> bytes:
    """etcd ``revToBytes`` (+ ``markTombstone``): 17 or 18 bytes."""
    return struct.pack(">Q", main) + b"_" + struct.pack(">Q", sub) + (b"t" if tombstone else b"")


def _fnv64a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _varint(n: int) -> bytes:
    """Protobuf varint of an int64 (negatives as their two's complement, as protobuf encodes them)."""
    return varint(n & 0xFFFFFFFFFFFFFFFF)


class _Writer:
    def __init__(self) -> None:
        self.pages: list[bytes] = []  # page-aligned blobs, in id order, from page 3 on
        self.next_id = 3

    def _add(self, flags: int, count: int, body: bytes) -> int:
        pid = self.next_id
        size = _HEADER + len(body)
        npages = max(1, -(-size // PAGE_SIZE))
        blob = struct.pack("<QHHI", pid, flags, count, npages - 1) + body
        self.pages.append(blob + b"\0" * (npages * PAGE_SIZE - len(blob)))
        self.next_id += npages
        return pid

    def _leaf(self, items: list[tuple[bytes, bytes, int]]) -> int:
        n = len(items)
        elems: list[bytes] = []
        data: list[bytes] = []
        off = n * 16
        for i, (k, v, flags) in enumerate(items):
            elems.append(struct.pack("<IIII", flags, off - i * 16, len(k), len(v)))
            data += (k, v)
            off += len(k) + len(v)
        return self._add(_LEAF, n, b"".join(elems) + b"".join(data))

    def _branch(self, children: list[tuple[bytes, int]]) -> int:
        n = len(children)
        elems: list[bytes] = []
        data: list[bytes] = []
        off = n * 16
        for i, (k, pid) in enumerate(children):
            elems.append(struct.pack("<IIQ", off - i * 16, len(k), pid))
            data.append(k)
            off += len(k)
        return self._add(_BRANCH, n, b"".join(elems) + b"".join(data))

    def tree(self, items: list[tuple[bytes, bytes, int]]) -> int:
        """Write a B+tree of sorted ``(key, value, flags)``; returns its root page id."""
        leaves: list[tuple[bytes, int]] = []
        group: list[tuple[bytes, bytes, int]] = []
        size = _HEADER
        for it in items:
            need = 16 + len(it[0]) + len(it[1])
            if group and (size + need > PAGE_SIZE or len(group) >= 0xFFFF):
                leaves.append((group[0][0], self._leaf(group)))
                group, size = [], _HEADER
            group.append(it)
            size += need
        if group or not leaves:
            leaves.append((group[0][0] if group else b"", self._leaf(group)))
        level = leaves
        while len(level) > 1:
            nxt, chunk = [], 200
            for i in range(0, len(level), chunk):
                part = level[i:i + chunk]
                nxt.append((part[0][0], self._branch(part)))
            level = nxt
        return level[0][1]


def _meta(pid: int, root: int, hwm: int, txid: int) -> bytes:
    body = struct.pack("<IIIIQQQQQ", MAGIC, VERSION, PAGE_SIZE, 0, root, 0, 2, hwm, txid)
    body += struct.pack("<Q", _fnv64a(body))
    page = struct.pack("<QHHI", pid, _META, 0, 0) + body
    return page + b"\0" * (PAGE_SIZE - len(page))


def build(versions: Iterable, rev: int, compact_rev: int, leases: list[tuple[int, int]],
          consistent_index: int) -> bytes:
    """The bbolt file of a store: ``versions`` are KeyValue messages (any order; tombstones have
    version 0), ``leases`` ``(id, ttl)``. Returns the file bytes (a multiple of PAGE_SIZE)."""
    subs: dict[int, int] = {}
    keyed = []
    for kv in sorted(versions, key=lambda kv: (kv.mod_revision, kv.key)):
        sub = subs.get(kv.mod_revision, 0)
        subs[kv.mod_revision] = sub + 1
        keyed.append((revision_key(kv.mod_revision, sub, not kv.version), kv.SerializeToString(), 0))
    lease_items = sorted((struct.pack(">Q", lid & 0xFFFFFFFFFFFFFFFF),
                          b"\x08" + _varint(lid) + b"\x10" + _varint(ttl), 0) for lid, ttl in leases)
    meta_items = [(b"consistent_index", struct.pack(">Q", consistent_index), 0)]
    if compact_rev:
        meta_items += [(b"finishedCompactRev", revision_key(compact_rev, 0), 0),
                       (b"scheduledCompactRev", revision_key(compact_rev, 0), 0)]
    contents = {b"key": keyed, b"lease": lease_items, b"meta": sorted(meta_items)}
    w = _Writer()
    roots = [(name, struct.pack("<QQ", w.tree(contents.get(name, [])), 0), _BUCKET_LEAF) for name in BUCKETS]
    root = w.tree(roots)
    freelist = struct.pack("<QHHI", 2, _FREELIST, 0, 0)
    return b"".join([_meta(0, root, w.next_id, 2), _meta(1, root, w.next_id, 3),
                     freelist + b"\0" * (PAGE_SIZE - len(freelist)), *w.pages])


def with_checksum(db: bytes) -> bytes:
    """``db`` followed by its SHA-256, the shape of etcd's Snapshot stream (``etcdctl snapshot
    restore`` verifies it: a file size of ``n * 512 + 32``)."""
    return db + hashlib.sha256(db).digest()
