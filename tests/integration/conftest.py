"""Fixtures that start real processes: etcd (ours or the real one), the whole
control plane through ``controlplane up``, and the real ``/usr/bin/kubectl``
with its own cache dir. Readiness is read from the processes' own output (no
sleeps).

Every apiserver serves HTTPS: those started here (:func:`spawn`, :func:`start_apiserver`) with the
session's certificates (:mod:`tests.support.tls`), ``controlplane up`` with its own. ``$KUBECONFIG``
names the session's admin kubeconfig for the whole run, so a component started with ``--master URL``
and ``kubectl --server URL`` trust the CA and authenticate with the admin's client certificate
(client-go keeps the kubeconfig's credentials when ``--master`` / ``--server`` replace its server)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from controlplane.lifeline import child_kwargs
from tests.support.tls import harness

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "controlplane", "examples")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LineReader:
    """Collects a process's output lines on a thread; ``wait_for`` blocks until
    a line contains a string (or the process exits, or the timeout passes)."""

    def __init__(self, proc: subprocess.Popen, stream) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        self._t = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._t.start()

    def _pump(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            self._q.put(line)
        self._q.put(None)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        for line in self.lines:
            if text in line:
                return line
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{text!r} not seen in {timeout}s; last lines:\n" +
                                   "\n".join(self.lines[-20:]))
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"process exited ({self.proc.wait()}) before {text!r}; last lines:\n"
                                   + "\n".join(self.lines[-20:]))
            if text in line:
                return line


@pytest.fixture(scope="session", autouse=True)
def tls_kubeconfig() -> Iterator[str]:
    """``$KUBECONFIG`` = the session's admin kubeconfig while the integration tests run."""
    old = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = harness().kubeconfig
    try:
        yield harness().kubeconfig
    finally:
        if old is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = old


def urlopen(req, timeout: float | None = None, client_cert: bool = True):
    """``urllib.request.urlopen`` trusting the session CA (and, with ``client_cert``, as the admin)."""
    import urllib.request
    kw = {} if timeout is None else {"timeout": timeout}
    return urllib.request.urlopen(req, context=harness().ssl_context(client_cert), **kw)


def spawn(*args: str) -> tuple[subprocess.Popen, LineReader]:
    """``python -m controlplane ARGS`` in its own session, its log lines read by a :class:`LineReader`.
    An ``apiserver`` gets the session's TLS flags unless ``args`` choose (``--tls-cert-file``,
    ``--insecure-http``)."""
    if args and args[0] == "apiserver" and not {"--tls-cert-file", "--insecure-http"} & set(args):
        args = (*args, *harness().apiserver_args())
    # a controller-manager allocates node CIDRs as `controlplane up` configures it (the kubelets wait
    # for their node's spec.podCIDR); a test's own flags win over the environment
    env = {**os.environ, "CONTROLPLANE_CONTROLLER_MANAGER_ALLOCATE_NODE_CIDRS": "true",
           "CONTROLPLANE_CONTROLLER_MANAGER_CLUSTER_CIDR": "10.64.0.0/11"}
    # its own session (a test's signals reach it alone), ended with this process however that
    # ends (a killed pytest leaves no cluster behind): controlplane.lifeline
    p = subprocess.Popen([sys.executable, "-m", "controlplane", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, **child_kwargs(env=env))
    return p, LineReader(p, p.stdout)


def start_apiserver(etcd_url: str, timeout: float = 60, *extra: str, args: tuple[str, ...] = ()
                    ) -> tuple[subprocess.Popen, LineReader, str]:
    """An apiserver process on a free port over ``etcd_url`` (``extra`` / ``args``: more flags):
    (process, its log reader, its URL), once it logs ``apiserver.ready`` (RuntimeError if it exits
    first, TimeoutError after ``timeout`` s)."""
    args = (*extra, *args)
    proc, out = spawn("apiserver", "--etcd-servers", etcd_url, "--port", "0", *args)
    url = re.search(r"url=(\S+)", out.wait_for("event=apiserver.ready", timeout)).group(1)
    return proc, out, url


def start_etcd_and_apiserver(procs: list[subprocess.Popen]) -> str:
    """An in-memory etcd and an apiserver on it (appended to ``procs``, for the caller to stop):
    the apiserver's URL."""
    etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
    procs.append(etcd)
    etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
    api, _, server = start_apiserver(etcd_url)
    procs.append(api)
    return server


def start_control_plane(procs: list[subprocess.Popen], *controller_manager_args: str) -> tuple[str, LineReader]:
    """:func:`start_etcd_and_apiserver`, then a controller-manager (with ``controller_manager_args``)
    once synced and a scheduler once started (all appended to ``procs``): the apiserver's URL and
    the controller-manager's log reader."""
    server = start_etcd_and_apiserver(procs)
    cm, cm_out = spawn("controller-manager", "--master", server, *controller_manager_args)
    procs.append(cm)
    sched, out = spawn("scheduler", "--master", server)
    procs.append(sched)
    cm_out.wait_for("controller-manager.synced", 30)
    out.wait_for("scheduler.started", 30)
    return server, cm_out


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


@contextlib.contextmanager
def apiserver_on_test_etcd(d: Path, *args: str) -> Iterator[dict]:
    """``python -m controlplane apiserver`` (with flags ``args``) on a test etcd
    (:class:`controlplane.storage.testing.EtcdProcess`) and a kubeconfig for it in ``d`` (namespace
    ``default``, the session's admin). Yields ``{"url", "kubeconfig", "dir", "proc"}``; both processes
    are stopped on exit."""
    from controlplane.storage import testing
    etcd = testing.EtcdProcess()
    etcd_url = asyncio.run(etcd.start())
    proc, _, url = start_apiserver(etcd_url, args=args)
    try:
        kubeconfig = d / "kubeconfig"
        kubeconfig.write_text(harness().kubeconfig_text(url))
        yield {"url": url, "kubeconfig": str(kubeconfig), "dir": d, "proc": proc}
    finally:
        stop(proc)
        asyncio.run(etcd.stop())


def kubectl_on(c: dict, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """The real kubectl on an :func:`apiserver_on_test_etcd` server ``c`` (its kubeconfig, a
    cache dir and HOME of its own); ``input``: stdin (``-f -``)."""
    env = {**os.environ, "HOME": str(c["dir"])}
    return subprocess.run([KUBECTL, "--kubeconfig", c["kubeconfig"], "--cache-dir", str(c["dir"] / "kubectl-cache"),
                           *args], capture_output=True, text=True, timeout=60, env=env, input=input)


def kubectl_ok(c: dict, *args: str, input: str | None = None) -> str:
    """:func:`kubectl_on`'s stdout; fails the test (with kubectl's stderr) on a non-zero exit."""
    r = kubectl_on(c, *args, input=input)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="session")
def real_etcd_binary() -> str:
    path = shutil.which("etcd")
    if not path:
        if os.environ.get("CONTROLPLANE_REQUIRE_REAL_ETCD"):
            pytest.fail("etcd binary not found (apt-get install -y etcd-server)")
        pytest.skip("real etcd not installed (apt-get install -y etcd-server)")
    return path


@dataclass
class Cluster:
    """A running ``controlplane up`` and how to reach it."""

    data_dir: str
    kubeconfig: str
    server: str
    proc: subprocess.Popen
    out: LineReader
    cache_dir: str
    backend: str
    extra: list = field(default_factory=list)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 90) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", self.cache_dir,
                            *args], input=input, capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n"
                                 f"{p.stdout}\n{p.stderr}")
        return p

    def controlplane(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "controlplane", *args], capture_output=True,
                              text=True, timeout=timeout)

    def get_json(self, *args: str) -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


def start_real_etcd(binary: str, data_dir: str) -> tuple[subprocess.Popen, str]:
    cport, pport = free_port(), free_port()
    url = f"http://127.0.0.1:{cport}"
    proc = subprocess.Popen([binary, "--name", "ci", "--data-dir", data_dir,
                             "--listen-client-urls", url, "--advertise-client-urls", url,
                             "--listen-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-cluster", f"ci=http://127.0.0.1:{pport}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = LineReader(proc, proc.stdout)
    out.wait_for("ready to serve client requests", 30)
    return proc, url


def start_up(tmp: str, etcd_servers: str | None = None, *extra: str) -> tuple[subprocess.Popen, LineReader, str]:
    data_dir = os.path.join(tmp, "cp")
    args = [sys.executable, "-m", "controlplane", "up", "--data-dir", data_dir,
            "--port", str(free_port()), "--etcd-port", str(free_port()), *extra]
    if etcd_servers:
        args += ["--etcd-servers", etcd_servers]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, **child_kwargs())
    out = LineReader(proc, proc.stdout)
    out.wait_for("control plane is up", 90)
    return proc, out, data_dir


def up_cluster(tmp: str) -> Cluster:
    """``controlplane up`` (embedded etcd) under ``tmp`` as a :class:`Cluster` (kubectl's cache in
    ``tmp/kube-cache``); the caller stops it with ``stop(c.proc)``."""
    proc, out, data_dir = start_up(tmp)
    kc = os.path.join(data_dir, "kubeconfig")
    server = next(line for line in open(kc) if "server:" in line).split("server:")[1].strip()
    return Cluster(data_dir, kc, server, proc, out, os.path.join(tmp, "kube-cache"), "embedded")


@pytest.fixture(scope="module", params=["embedded", "real-etcd"])
def cluster(request, tmp_path_factory) -> Cluster:
    tmp = str(tmp_path_factory.mktemp(f"cluster-{request.param}"))
    extra = []
    etcd_url = None
    if request.param == "real-etcd":
        binary = request.getfixturevalue("real_etcd_binary")
        eproc, etcd_url = start_real_etcd(binary, os.path.join(tmp, "etcd"))
        extra.append(eproc)
    proc, out, data_dir = start_up(tmp, etcd_url)
    kc = os.path.join(data_dir, "kubeconfig")
    server = next(l for l in open(kc) if "server:" in l).split("server:")[1].strip()
    c = Cluster(data_dir, kc, server, proc, out, os.path.join(tmp, "kube-cache"), request.param, extra)
    yield c
    stop(proc)
    for p in extra:
        stop(p)


@dataclass
class NodeCluster:
    """etcd (in memory), an apiserver, a controller-manager that notices a silent node fast
    (grace 4 s, monitor period 500 ms) and a scheduler, all real processes. ``kubelet(name)``
    starts a kubelet renewing its Lease every 0.5 s and waits for its node; ``kubectl(*args)``
    runs the real kubectl against the apiserver and raises AssertionError on a non-zero exit."""

    server: str
    controller_manager: LineReader
    cache: str
    procs: list = field(default_factory=list)

    def kubelet(self, node: str) -> subprocess.Popen:
        k, out = spawn("kubelet", "--master", self.server, "--node-name", node, "--lease-renew-seconds", "0.5")
        self.procs.append(k)
        out.wait_for("kubelet.nodes_registered", 30)
        return k

    def kubectl(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--server", self.server, "--cache-dir", self.cache, *args], input=input,
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}")
        return p


@contextlib.contextmanager
def running_node_cluster(cache: str) -> Iterator[NodeCluster]:
    """A :class:`NodeCluster` (kubectl's cache dir ``cache``); every process is stopped on exit (a
    SIGSTOP'd one resumed first)."""
    procs: list[subprocess.Popen] = []
    try:
        server, cm_out = start_control_plane(procs, "--node-monitor-grace-period", "4s",
                                             "--node-monitor-period", "500ms")
        yield NodeCluster(server, cm_out, cache, procs)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
            stop(p)


@pytest.fixture()
def node_cluster(tmp_path):
    """A fresh :class:`NodeCluster` per test (:func:`running_node_cluster`)."""
    with running_node_cluster(str(tmp_path / "kc")) as c:
        yield c
