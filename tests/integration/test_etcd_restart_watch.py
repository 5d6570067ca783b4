"""kill -9 the etcd under a running apiserver, restart it on the same data dir: the watch caches
must resume (issue 9, item 1).

For each backend (our etcd, the real etcd 3.4): an HTTP watch on ConfigMaps is open across the
restart; objects written before and after must all reach it in order, a list from the watch cache
(``resourceVersion=0``) and a new watch from ``resourceVersion=0`` must see the new writes, and
no event may be skipped (the watch's event log equals the final list; every BOOKMARK is at a
revision whose events were all delivered before it).
"""

from __future__ import annotations

import http.client
import json
import queue
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlparse

import pytest

from tests.integration.conftest import LineReader, free_port, spawn, start_apiserver, stop, urlopen
from tests.support.tls import harness

pytestmark = pytest.mark.integration

NS = "default"
CM = f"/api/v1/namespaces/{NS}/configmaps"


class Etcd:
    """One etcd on a fixed client port and data dir, restartable after kill -9."""

    def __init__(self, backend: str, data_dir: str, binary: str | None = None) -> None:
        self.backend, self.data_dir, self.binary = backend, data_dir, binary
        self.port, self.peer = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        if self.backend == "embedded":
            self.proc, out = spawn("etcd", "--data-dir", self.data_dir, "--listen-client-urls", self.url)
            out.wait_for("event=etcd.ready", 60)
            return
        peer = f"http://127.0.0.1:{self.peer}"
        self.proc = subprocess.Popen(
            [self.binary, "--name", "t", "--data-dir", self.data_dir, "--listen-client-urls", self.url,
             "--advertise-client-urls", self.url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", f"t={peer}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        LineReader(self.proc, self.proc.stdout).wait_for("ready to serve client requests", 30)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(20)


class Watch:
    """An HTTP watch read on a thread: every event line lands in ``events`` and ``q``."""

    def __init__(self, server: str, path: str) -> None:
        u = urlparse(server)
        self.conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=120, context=harness().ssl_context())
        self.conn.request("GET", path)
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200, self.resp.read()
        self.events: list[dict] = []
        self.q: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.resp:
                ev = json.loads(line)
                self.events.append(ev)
                self.q.put(ev)
        except Exception as e:  # connection closed by the test
            self.q.put(e)
        self.q.put(None)

    def wait_for_names(self, names: set[str], timeout: float = 60) -> None:
        """Block until ADDED events for every name in ``names`` were read."""
        deadline = time.monotonic() + timeout
        seen = {e["object"]["metadata"]["name"] for e in self.events if e["type"] == "ADDED"}
        while not names <= seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"watch never saw {sorted(names - seen)}")
            try:
                ev = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if ev is None or isinstance(ev, Exception):
                raise AssertionError(f"watch ended: {ev!r}; events {self.events[-5:]}")
            if ev["type"] == "ADDED":
                seen.add(ev["object"]["metadata"]["name"])

    def close(self) -> None:
        """Hang up (the reader thread wakes up; the apiserver sees the watch end)."""
        if self.conn.sock is not None:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.resp.close()
        self.conn.close()


def request(server: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(server + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def create(server: str, name: str, timeout: float = 60) -> None:
    """POST one ConfigMap; while etcd is coming back a 5xx is retried (409 = an earlier try landed)."""
    deadline = time.monotonic() + timeout
    backoff = 0.05
    while True:
        code, body = request(server, "POST", CM, {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": name}, "data": {"k": name}})
        if code in (201, 409):
            return
        assert code >= 500, (code, body)
        if time.monotonic() > deadline:
            raise TimeoutError(f"create {name}: still {code} {body}")
        time.sleep(backoff)  # back-off between retries of a refused write, not synchronisation
        backoff = min(backoff * 2, 1.0)


@pytest.fixture(params=["embedded", pytest.param("real-etcd", marks=pytest.mark.realetcd)])
def etcd(request, tmp_path):
    binary = request.getfixturevalue("real_etcd_binary") if request.param == "real-etcd" else None
    e = Etcd(request.param, str(tmp_path / "etcd"), binary)
    e.start()
    yield e
    if e.proc is not None:
        stop(e.proc)


def test_watch_cache_resumes_after_etcd_kill9(etcd):
    api, _, server = start_apiserver(etcd.url)
    watch = None
    try:
        code, lst = request(server, "GET", CM)
        assert code == 200
        rv0 = lst["metadata"]["resourceVersion"]
        watch = Watch(server, f"{CM}?watch=true&resourceVersion={rv0}&allowWatchBookmarks=true")
        before = {f"before-{i}" for i in range(5)}
        for n in sorted(before):
            create(server, n)
        watch.wait_for_names(before)

        etcd.kill9()
        etcd.start()

        after = {f"after-{i}" for i in range(5)}
        for n in sorted(after):
            create(server, n)
        watch.wait_for_names(after)  # the cache receives writes again: the old watch sees them

        # a list from the watch cache and a new watch from the cache see the new writes
        code, cached = request(server, "GET", f"{CM}?resourceVersion=0")
        assert code == 200
        assert {o["metadata"]["name"] for o in cached["items"]} == before | after
        fresh = Watch(server, f"{CM}?watch=true&resourceVersion=0")
        try:
            fresh.wait_for_names(before | after)
        finally:
            fresh.close()

        # no event skipped: the watch's log is the final list, in revision order, and every
        # BOOKMARK comes after all events at or below its revision
        code, final = request(server, "GET", CM)
        expect = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in final["items"]}
        adds = [e for e in watch.events if e["type"] == "ADDED"]
        assert {e["object"]["metadata"]["name"]: e["object"]["metadata"]["resourceVersion"]
                for e in adds} == expect
        assert len(adds) == len(expect) and not [e for e in watch.events if e["type"] == "ERROR"]
        top = int(rv0)
        for e in watch.events:
            rv = int(e["object"]["metadata"]["resourceVersion"])
            if e["type"] == "BOOKMARK":
                assert rv >= top
                top = rv
            else:
                assert rv > top, f"event at {rv} after a bookmark at {top}: skipped by a resume from it"
                top = rv
        # a watch resumed from the last bookmark before the new writes replays all of them
        marks = [int(e["object"]["metadata"]["resourceVersion"]) for e in watch.events
                 if e["type"] == "BOOKMARK"]
        first_after = min(int(expect[n]) for n in after)
        resume = max([m for m in marks if m < first_after] or [int(rv0)])
        w2 = Watch(server, f"{CM}?watch=true&resourceVersion={resume}")
        try:
            w2.wait_for_names({n for n, rv in expect.items() if int(rv) > resume})
        finally:
            w2.close()
    finally:
        if watch is not None:
            watch.close()
        stop(api)
