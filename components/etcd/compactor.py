"""Auto-compaction, as etcd's ``--auto-compaction-mode`` / ``--auto-compaction-retention``
(etcd ``server/etcdserver/api/v3compactor``).

* ``periodic``: keep about ``retention`` of history. Retention is a duration (``90s``, ``5m``,
  ``1h30m``) or a bare integer meaning hours, as in etcd. Every retention/10 the current revision
  is sampled; the store is compacted to the newest sample at least ``retention`` old.
* ``revision``: keep the last ``retention`` revisions; checked every ``interval`` seconds
  (etcd: 5 minutes; ours defaults to 5 seconds so memory stays bounded under load).

Our default is ``revision`` with retention 10000 (etcd's default is no auto-compaction; the
Kubernetes apiserver also compacts every 5 minutes on its own).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque

from controlplane import apitime
from controlplane import log as cplog

from . import errors

log = logging.getLogger("etcd")



def parse_retention(mode: str, retention: str) -> float:
    """Retention in seconds (periodic) or revisions (revision); 0 disables. Raises ValueError."""
    text = str(retention).strip()
    if mode == "revision":
        if not text.isdigit():
            raise ValueError(f"invalid --auto-compaction-retention {text!r} for mode revision (want an integer)")
        return float(int(text))
    if mode != "periodic":
        raise ValueError(f"invalid --auto-compaction-mode {mode!r} (want periodic or revision)")
    if text.isdigit():
        return int(text) * 3600.0
    try:
        seconds = apitime.parse_duration(text)
    except apitime.DurationError as e:
        raise ValueError(f"invalid --auto-compaction-retention {text!r} (want a duration like 5m or 1h, "
                         f"or hours): {e}") from None
    if seconds < 0:
        raise ValueError(f"invalid --auto-compaction-retention {text!r} (want a duration like 5m or 1h, "
                         "or hours): negative")
    return seconds


async def run(core, mode: str, retention: float, interval: float = 5.0) -> None:
    """Compact ``core`` forever according to ``mode``/``retention`` (see module doc)."""
    if retention <= 0:
        return
    samples: deque[tuple[float, int]] = deque()
    tick = min(retention, 3600.0) / 10 if mode == "periodic" else interval
    while True:
        await asyncio.sleep(tick)
        store = core.store
        if mode == "periodic":
            now = time.monotonic()
            samples.append((now, store.committed))
            target = 0
            while samples and samples[0][0] <= now - retention:
                target = samples.popleft()[1]
        else:
            target = store.committed - int(retention)
        if target > store.compact_rev and target <= store.committed:
            try:
                core.compact(_Req(target))
            except errors.EtcdError:
                continue
            fut = core.durable()
            try:
                if fut is not None:
                    await fut
            except errors.EtcdError:  # its WAL write failed: it never happened, try again later
                continue
            cplog.event(log, "etcd.auto_compaction", mode=mode, revision=target)


class _Req:
    def __init__(self, revision: int) -> None:
        self.revision = revision
