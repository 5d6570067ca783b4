"""The fault suite's machinery: a ``controlplane up`` cluster whose children are
killed with SIGKILL, an informer-like watcher that keeps every event it saw, a
writer of ConfigMaps that remembers which writes were acknowledged, and the
checks run at the end of every scenario.

Processes and their pids come from the supervisor's own output
(``controlplane: started NAME pid N``, ``NAME killed by signal 9``); waits are
on that output or on watch events, each with a deadline, never on sleeps.
``FIGURES`` collects one record per scenario for the terminal summary
(``tests/faults/conftest.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import aiohttp

from controlplane.lifeline import child_kwargs
from tests.integration.conftest import ROOT, LineReader, free_port

FIGURES: list[dict] = []
"""One dict per scenario: name, kills, phases, converged, lost, duplicates, missed, ..."""

NAMESPACE = "default"
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=10)
RETRYABLE = (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError, OSError)


class Output(LineReader):
    """A :class:`LineReader` that can also wait for the next matching line after a mark."""

    def mark(self) -> int:
        """The number of lines read so far (a position for :meth:`wait_next`)."""
        return len(self.lines)

    def wait_next(self, text: str | re.Pattern, since: int, timeout: float = 60.0) -> tuple[int, str]:
        """Block until a line at index >= ``since`` contains ``text`` (a string or a compiled
        regex); return (index, line). TimeoutError after ``timeout`` s, RuntimeError when the
        process ends first."""
        match = text.search if isinstance(text, re.Pattern) else (lambda line: text in line)
        deadline = time.monotonic() + timeout
        i = since
        while True:
            while i < len(self.lines):
                if match(self.lines[i]):
                    return i, self.lines[i]
                i += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{text!r} not seen in {timeout}s; last lines:\n" +
                                   "\n".join(self.lines[-20:]))
            try:
                if self._q.get(timeout=left) is None:
                    self._q.put(None)  # keep the end marker for the next waiter
                    if i >= len(self.lines):
                        raise RuntimeError(f"process exited ({self.proc.wait()}) before {text!r}; "
                                           "last lines:\n" + "\n".join(self.lines[-20:]))
            except queue.Empty:
                pass


def spawn_output(argv: list[str], **kw) -> tuple[subprocess.Popen, Output]:
    """``argv`` in its own session with stdout+stderr read by an :class:`Output`."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True, cwd=ROOT, **child_kwargs(), **kw)
    return p, Output(p, p.stdout)


def stop_process(p: subprocess.Popen, timeout: float = 30) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


STARTED = re.compile(r"controlplane: started (\S+)\s+pid (\d+)")


@dataclass
class RealEtcd:
    """The real etcd (``/usr/bin/etcd``) on fixed ports, restartable on the same data dir."""

    binary: str
    data_dir: str
    port: int = field(default_factory=free_port)
    peer_port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.proc, out = spawn_output([
            self.binary, "--name", "faults", "--data-dir", self.data_dir,
            "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"faults={peer}"])
        out.wait_for("ready to serve client requests", 30)

    def kill_and_restart(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.start()

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)


class Cluster:
    """A running ``controlplane up`` (nodes node01, node02 and ``hollow`` hollow nodes)."""

    def __init__(self, tmp: str, *, hollow: int = 4, real_etcd: RealEtcd | None = None) -> None:
        self.data_dir = os.path.join(tmp, "cp")
        self.real_etcd = real_etcd
        argv = [sys.executable, "-m", "controlplane", "up", "--data-dir", self.data_dir,
                "--port", str(free_port()), "--etcd-port", str(free_port()),
                "--nodes", "node01,node02", "--hollow-nodes", str(hollow)]
        if real_etcd:
            argv += ["--etcd-servers", real_etcd.url]
        self.proc, self.out = spawn_output(argv)
        self.out.wait_for("control plane is up", 120)
        kc = os.path.join(self.data_dir, "kubeconfig")
        self.server = next(l for l in open(kc) if "server:" in l).split("server:")[1].strip()
        self.kubeconfig = kc
        self.kills: dict[str, int] = {}

    def ssl_context(self):
        """The admin's TLS context (the cluster CA, the admin's client certificate)."""
        from controlplane.client.config import load_kubeconfig
        return load_kubeconfig(self.kubeconfig).ssl_context()

    def pid(self, service: str) -> int:
        """The pid the supervisor last reported for ``service`` (e.g. ``kubelet-node01``)."""
        pids = [int(m.group(2)) for m in map(STARTED.search, list(self.out.lines))
                if m and m.group(1) == service]
        if not pids:
            raise LookupError(f"no pid seen for {service}")
        return pids[-1]

    def kill(self, service: str) -> None:
        """SIGKILL one child (or the real etcd when the cluster uses one) and wait until it
        runs again: the supervisor reports the death and starts a new process. Blocking."""
        self.kills[service] = self.kills.get(service, 0) + 1
        if service == "etcd" and self.real_etcd:
            self.real_etcd.kill_and_restart()
            return
        pid = self.pid(service)
        mark = self.out.mark()
        os.kill(pid, signal.SIGKILL)
        self.out.wait_next(f"controlplane: {service} killed by signal 9", mark, 30)
        _, line = self.out.wait_next(re.compile(rf"controlplane: started {re.escape(service)}\s"),
                                     mark, 60)
        assert int(STARTED.search(line).group(2)) != pid

    def stop(self) -> None:
        stop_process(self.proc)


# -- HTTP -----------------------------------------------------------------------------------------
class Api:
    """Requests to the apiserver; ``write`` retries until a 2xx while the server is down."""

    def __init__(self, session: aiohttp.ClientSession, server: str) -> None:
        self.s = session
        self.server = server

    async def request(self, method: str, path: str, body: dict | None = None,
                      content_type: str = "application/json", params: dict | None = None) -> tuple[int, dict]:
        """One attempt: (status, JSON body). Raises the RETRYABLE errors."""
        data = json.dumps(body) if body is not None else None
        async with self.s.request(method, self.server + path, data=data, params=params,
                                  headers={"Content-Type": content_type},
                                  timeout=HTTP_TIMEOUT) as r:
            text = await r.text()
            try:
                return r.status, json.loads(text) if text else {}
            except ValueError:
                return r.status, {"raw": text}

    async def write(self, method: str, path: str, body: dict | None = None,
                    content_type: str = "application/json", ok: tuple[int, ...] = (),
                    timeout: float = 60) -> tuple[int, dict]:
        """Retry until a 2xx (or a status in ``ok``, e.g. 409 for a create retried after a
        lost answer); AssertionError on another 4xx or after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                status, obj = await self.request(method, path, body, content_type)
                if 200 <= status < 300 or status in ok:
                    return status, obj
                if 400 <= status < 500 and status != 429:
                    raise AssertionError(f"{method} {path}: {status} {obj}")
                last = (status, obj)
            except RETRYABLE as e:
                last = e
            await asyncio.sleep(0.1)  # retry backoff while a process restarts
        raise AssertionError(f"{method} {path}: no 2xx in {timeout}s (last: {last!r})")

    async def list(self, path: str, timeout: float = 60) -> dict:
        """A consistent list (resourceVersion unset), retried while the server is down."""
        _, obj = await self.write("GET", path, timeout=timeout)
        return obj


# -- watching -------------------------------------------------------------------------------------
class Changes:
    """Wakes waiters whenever a watcher applied an event."""

    def __init__(self) -> None:
        self._ev = asyncio.Event()

    def notify(self) -> None:
        self._ev.set()
        self._ev = asyncio.Event()

    async def next(self, timeout: float) -> bool:
        """True when the next change arrives within ``timeout`` s."""
        try:
            await asyncio.wait_for(self._ev.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def wait_until(self, pred: Callable[[], bool], timeout: float) -> bool:
        """True as soon as ``pred()`` holds (checked after every change); False after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._ev.wait(), left)
            except asyncio.TimeoutError:
                return pred()
        return True


def rv_of(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


class Watcher:
    """List then watch ``path`` as an informer does: resume from the last resourceVersion seen
    (events and BOOKMARKs) after a disconnect, relist on 410. ``log`` keeps everything:
    ``("list", rv, {name: obj})`` and ``("event", type, obj)`` entries in arrival order."""

    def __init__(self, api: Api, path: str, changes: Changes) -> None:
        self.api = api
        self.path = path
        self.changes = changes
        self.log: list[tuple] = []
        self.state: dict[str, dict] = {}
        self.rv: int | None = None
        self.relists = 0
        self.rewatches = 0
        self.out_of_order: list[str] = []
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self.task:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass

    async def _relist(self) -> None:
        obj = await self.api.list(self.path, timeout=3600)
        self.rv = int(obj["metadata"]["resourceVersion"])
        self.state.clear()  # in place: callers keep a reference to the state
        self.state.update({o["metadata"]["name"]: o for o in obj.get("items") or []})
        self.log.append(("list", self.rv, dict(self.state)))
        self.relists += 1
        self.changes.notify()

    async def _run(self) -> None:
        while True:
            if self.rv is None:
                await self._relist()
            try:
                await self._watch_once()
            except RETRYABLE:
                await asyncio.sleep(0.1)  # reconnect backoff while the apiserver restarts
            self.rewatches += 1

    async def _watch_once(self) -> None:
        params = {"watch": "true", "resourceVersion": str(self.rv), "allowWatchBookmarks": "true",
                  "timeoutSeconds": "60"}
        async with self.api.s.get(self.api.server + self.path, params=params,
                                  timeout=aiohttp.ClientTimeout(total=None, sock_read=75)) as r:
            if r.status == 410:
                self.rv = None
                return
            if r.status != 200:
                await r.read()
                await asyncio.sleep(0.1)  # the apiserver is starting: retry backoff
                return
            async for line in r.content:
                if not line.strip():
                    continue
                ev = json.loads(line)
                typ, obj = ev["type"], ev["object"]
                if typ == "ERROR":
                    if obj.get("code") == 410:
                        self.rv = None
                    return
                rv = rv_of(obj)
                if typ == "BOOKMARK":
                    self.rv = max(self.rv or 0, rv)
                    continue
                if self.rv is not None and rv <= self.rv:
                    self.out_of_order.append(f"{typ} {obj['metadata']['name']} rv {rv} after {self.rv}")
                self.rv = rv
                name = obj["metadata"]["name"]
                if typ == "DELETED":
                    self.state.pop(name, None)
                else:
                    self.state[name] = obj
                self.log.append(("event", typ, obj))
                self.changes.notify()

    def replay(self, upto: int) -> dict[str, int] | None:
        """The state (name -> resourceVersion) this watcher knew at revision ``upto``, rebuilt
        from its log; None if it relisted after ``upto`` (the log cannot tell)."""
        state: dict[str, int] | None = None
        for entry in self.log:
            if entry[0] == "list":
                if entry[1] > upto:
                    return None
                state = {n: rv_of(o) for n, o in entry[2].items()}
                continue
            _, typ, obj = entry
            if rv_of(obj) > upto:
                break
            assert state is not None
            if typ == "DELETED":
                state.pop(obj["metadata"]["name"], None)
            else:
                state[obj["metadata"]["name"]] = rv_of(obj)
        return state


# -- acknowledged writes --------------------------------------------------------------------------
class ConfigMapWriter:
    """Creates ConfigMaps ``<prefix>-N`` all through a run (and deletes every 5th acknowledged
    one), remembering what was acknowledged with a 2xx. A write without an answer or with a
    5xx may or may not have been applied (etcd died mid-request), so only 2xx are checked."""

    def __init__(self, api: Api, prefix: str) -> None:
        self.api = api
        self.prefix = prefix
        self.acked: dict[str, str] = {}       # name -> uid of a 2xx create
        self.deleted: dict[str, str] = {}     # name -> uid of a 2xx delete
        self.delete_uncertain: set[str] = set()  # no answer or 5xx: may or may not be gone
        self.unanswered = 0
        self.refused = 0
        self.task: asyncio.Task | None = None
        self._stop = asyncio.Event()

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Finish the write in flight (so its answer is recorded), then stop."""
        self._stop.set()
        if self.task:
            await self.task

    async def _run(self) -> None:
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        i = 0
        while not self._stop.is_set():
            i += 1
            name = f"{self.prefix}-{i:05d}"
            try:
                status, obj = await self.api.request("POST", path, {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "labels": {"faults": self.prefix}}, "data": {"i": str(i)}})
            except RETRYABLE:
                self.unanswered += 1
                status, obj = 0, {}
            if 200 <= status < 300:
                self.acked[name] = obj["metadata"]["uid"]
                if len(self.acked) % 5 == 0:
                    try:
                        st, _ = await self.api.request("DELETE", f"{path}/{name}")
                        if 200 <= st < 300:
                            self.deleted[name] = self.acked[name]
                        else:  # e.g. 500 "etcd unavailable": the txn may have been applied
                            self.delete_uncertain.add(name)
                    except RETRYABLE:
                        self.delete_uncertain.add(name)
            elif status:
                self.refused += 1
            try:  # the write rate (20/s), not a synchronisation
                await asyncio.wait_for(self._stop.wait(), 0.05)
            except asyncio.TimeoutError:
                pass

    def check(self, items: list[dict]) -> list[str]:
        """Lost writes against a final list: acknowledged creates missing (or replaced by another
        uid) and acknowledged deletes still present."""
        present = {o["metadata"]["name"]: o["metadata"]["uid"] for o in items}
        lost = []
        for name, uid in self.acked.items():
            if name in self.deleted:
                if present.get(name) == uid:
                    lost.append(f"{name}: deleted (2xx) but still present")
            elif name not in self.delete_uncertain and present.get(name) != uid:
                lost.append(f"{name}: created (2xx, uid {uid}) but "
                            f"{'missing' if name not in present else 'uid ' + present[name]}")
        return lost
