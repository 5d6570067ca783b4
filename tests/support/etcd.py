"""Helpers for etcd tests and benches: run ``controlplane etcd`` or a real etcd
(``/usr/bin/etcd``) as a subprocess on free ports, and wait for it to serve.

Used by ``tests/unit/test_etcd_*.py``, ``tests/etcd3_client/run_suite.py`` and
``bench/etcd.py``.
"""

from __future__ import annotations

import asyncio
import re
import socket
import sys


def free_port() -> int:
    """A TCP port on 127.0.0.1 free right now (bound to port 0, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A subprocess whose stderr is drained; ``endpoint`` is host:port once ready."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.endpoint = ""
        self._drain: asyncio.Task | None = None

    async def wait_ready(self, pattern: str, timeout: float = 15.0) -> re.Match:
        rx = re.compile(pattern)

        async def scan():
            while True:
                line = await self.proc.stderr.readline()
                if not line:
                    raise RuntimeError("process exited before ready:\n" + "".join(self.lines[-20:]))
                text = line.decode(errors="replace")
                self.lines.append(text)
                m = rx.search(text)
                if m:
                    return m

        m = await asyncio.wait_for(scan(), timeout)
        self._drain = asyncio.create_task(self._drain_rest())
        return m

    async def _drain_rest(self) -> None:
        while True:
            line = await self.proc.stderr.readline()
            if not line:
                return
            self.lines.append(line.decode(errors="replace"))

    async def stop(self, sig_kill: bool = False, timeout: float = 10.0) -> int:
        if self.proc.returncode is None:
            self.proc.kill() if sig_kill else self.proc.terminate()
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        if self._drain:
            await asyncio.wait_for(self._drain, timeout)
        return rc


async def start_embedded(*args: str) -> Proc:
    """Start ``controlplane etcd`` on a free port (extra etcd flags in ``args``) and
    wait for its ``event=etcd.ready`` log line (TimeoutError after 15 s)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controlplane", "etcd", "--listen-client-urls", "http://127.0.0.1:0", *args,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    p = Proc(proc)
    m = await p.wait_ready(r"event=etcd\.ready listen=http://([0-9.]+:\d+)")
    p.endpoint = m.group(1)
    return p


async def start_real(data_dir: str) -> Proc:
    """Start the real etcd (``/usr/bin/etcd``) on free client and peer ports with its
    data in ``data_dir``; wait until it serves clients (TimeoutError after 15 s)."""
    port, peer = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    proc = await asyncio.create_subprocess_exec(
        "/usr/bin/etcd", "--data-dir", data_dir, "--listen-client-urls", url, "--advertise-client-urls", url,
        "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-cluster", f"default=http://127.0.0.1:{peer}",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    p = Proc(proc)
    await p.wait_ready(r"ready to serve client requests|serving insecure client requests")
    p.endpoint = f"127.0.0.1:{port}"
    return p
