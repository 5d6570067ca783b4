"""The audit log backend (``plugin/pkg/audit/log`` + ``plugin/pkg/audit/buffered``, with the
rotation of ``gopkg.in/natefinch/lumberjack.v2`` that kube-apiserver's ``--audit-log-max*`` flags
configure).

:class:`LogBackend` takes each event already encoded as one JSON line
(:meth:`LogBackend.process`: an append to a list, no I/O on the request path) and a task writes
what has gathered every ``flush_interval`` seconds (or at once past ``batch_bytes``) with one
``write``, as the batch backend's buffer flushed by its own goroutine. ``path`` ``-`` is standard
output. Rotation (``max_size_mb`` > 0): when the file would pass the size, it is renamed to
``<name>-<UTC time 2006-01-02T15-04-05.000><ext>`` and a new one started; then backups beyond
``max_backups`` (0 keeps them all) and older than ``max_age_days`` (0 keeps them) are removed —
lumberjack's rules.
"""

from __future__ import annotations

import asyncio
import datetime
import glob
import logging
import os
import sys
import time
from typing import BinaryIO

from controlplane.log import event

log = logging.getLogger("apiserver.audit")


class LogBackend:
    """JSON lines to ``path`` (module docstring). ``start()`` on the loop, ``await stop()`` flushes."""

    def __init__(self, path: str, *, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0,
                 flush_interval: float = 0.05, batch_bytes: int = 1 << 20) -> None:
        self.path = path
        self.max_bytes = max_size_mb * 1024 * 1024
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self.flush_interval = flush_interval
        self.batch_bytes = batch_bytes
        self._lines: list[bytes] = []
        self._pending = 0
        self._file: BinaryIO | None = None
        self._size = 0
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self.dropped = 0

    def open(self) -> None:
        """Open (create) the log now, so a bad ``--audit-log-path`` fails at start. Raises OSError."""
        if self.path == "-":
            self._file = sys.stdout.buffer
            return
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        self._file = open(self.path, "ab")
        self._size = self._file.tell()

    def start(self) -> None:
        """Open the log (if not yet) and start the writer task on the running loop, which writes
        the queued lines every ``flush_interval`` (50 ms) or once ``batch_bytes`` are pending (kube-apiserver's
        buffered backend, ``--audit-log-mode=batch``)."""
        if self._file is None:
            self.open()
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="audit-log")

    def process(self, line: bytes) -> None:
        """Queue one encoded event (a line ending in ``\\n``)."""
        self._lines.append(line)
        self._pending += len(line)
        if self._pending >= self.batch_bytes and self._wake is not None:
            self._wake.set()

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.flush_interval)  # the batch's timer
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            self.flush()

    def flush(self) -> None:
        """Write what is queued (and rotate when due)."""
        if not self._lines or self._file is None:
            return
        data = b"".join(self._lines)
        self._lines.clear()
        self._pending = 0
        try:
            if self.max_bytes and self.path != "-" and self._size and self._size + len(data) > self.max_bytes:
                self._rotate()
            self._file.write(data)
            self._file.flush()
            self._size += len(data)
        except OSError as e:
            self.dropped += data.count(b"\n")
            event(log, "audit.write_failed", logging.ERROR, path=self.path, error=str(e)[:160])

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        base, ext = os.path.splitext(self.path)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H-%M-%S.%f")[:-3]
        os.replace(self.path, f"{base}-{stamp}{ext}")
        self._file = open(self.path, "ab")
        self._size = 0
        backups = sorted(glob.glob(glob.escape(base) + "-*" + glob.escape(ext)), reverse=True)  # newest first
        remove: list[str] = []
        if self.max_backups:
            remove += backups[self.max_backups:]
            backups = backups[:self.max_backups]
        if self.max_age_days:
            cutoff = time.time() - self.max_age_days * 86400
            remove += [b for b in backups if os.path.getmtime(b) < cutoff]
        for b in remove:
            try:
                os.remove(b)
            except OSError:
                pass

    async def stop(self) -> None:
        """Stop the writer task, write what is still queued, close the file (not stdout, ``-``)."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        self.flush()
        if self._file is not None and self.path != "-":
            self._file.close()
            self._file = None
