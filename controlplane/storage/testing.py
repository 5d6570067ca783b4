"""Test helper: run a throwaway real etcd (``/usr/bin/etcd``) on free ports.

Usage::

    async with EtcdProcess() as url:      # url = "http://127.0.0.1:PORT"
        store = Store(url)

The data dir is a temporary directory removed at exit. Readiness is awaited by
polling Maintenance.Status with a timeout (no fixed sleeps); raises RuntimeError
if etcd does not come up within ``ready_timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time

from controlplane.storage.etcd import EtcdClient

ETCD_BINARY = os.environ.get("CONTROLPLANE_TEST_ETCD", "/usr/bin/etcd")


def free_port() -> int:
    """A TCP port free right now on 127.0.0.1 (bind port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def available() -> bool:
    """Whether the etcd binary exists."""
    return os.path.exists(ETCD_BINARY)


class EtcdProcess:
    """A real etcd subprocess; ``start()``/``stop()`` or ``async with``."""

    def __init__(self, ready_timeout: float = 20.0) -> None:
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self._dir = ""

    async def start(self) -> str:
        self._dir = tempfile.mkdtemp(prefix="cp-etcd-")
        for _ in range(5):
            cport, pport = free_port(), free_port()
            self.url = f"http://127.0.0.1:{cport}"
            self.proc = subprocess.Popen(
                [ETCD_BINARY, "--data-dir", os.path.join(self._dir, "d"), "--name", "test",
                 "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                 "--listen-peer-urls", f"http://127.0.0.1:{pport}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{pport}",
                 "--initial-cluster", f"test=http://127.0.0.1:{pport}",
                 "--log-level", "error", "--logger", "zap"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if await self._wait_ready():
                return self.url
            self._kill()
            shutil.rmtree(os.path.join(self._dir, "d"), ignore_errors=True)
        raise RuntimeError("etcd did not become ready")

    async def _wait_ready(self) -> bool:
        client = EtcdClient(self.url, timeout=1.0)
        deadline = time.monotonic() + self.ready_timeout
        try:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    return False
                try:
                    await client.status(timeout=1.0)
                    return True
                except Exception:
                    await asyncio.sleep(0.05)  # polling interval, not synchronisation
            return False
        finally:
            await client.close()

    def _kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    async def stop(self) -> None:
        self._kill()
        shutil.rmtree(self._dir, ignore_errors=True)

    async def __aenter__(self) -> str:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
