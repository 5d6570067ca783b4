"""Scale-out (issue 14 item 6): several apiservers on one etcd, and a 3-member real etcd.

* Two apiserver processes on distinct ports over one etcd, as kube-apiserver replicas: a write
  through one is in a consistent list (``resourceVersion`` unset: a quorum read) from the other
  at once, and a watch on the other from the resourceVersion the first issued delivers it;
  Services created concurrently through both never get the same ClusterIP or node port (the
  claims in etcd, :mod:`components.apiserver.servicealloc`), in ranges small enough that
  random picks would collide without them.
* ``controlplane up --apiservers 2 --etcd real --etcd-members 3`` (the pytest plugin's cluster,
  the same supervisor; marked ``realetcd``): both replicas hold a ``kube-apiserver-*`` Lease;
  one killed with SIGKILL leaves kubectl working and is restarted; then one etcd member is
  killed (and not restarted), the cluster keeps writing and a watch open across the loss
  delivers every write.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from controlplane.testing.cluster import ClusterHandle, ClusterSpec
from tests.integration.conftest import KUBECTL, spawn, stop, urlopen

pytestmark = pytest.mark.integration

CM = "/api/v1/namespaces/default/configmaps"


def call(server: str, method: str, path: str, body: dict | None = None, context=None) -> dict:
    """One JSON request (the session's CA and admin certificate unless ``context``)."""
    req = urllib.request.Request(server + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    opened = urlopen(req, timeout=30) if context is None else urllib.request.urlopen(req, timeout=30,
                                                                                       context=context)
    with opened as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def replicas():
    """An in-memory etcd and two apiservers on it, small service ranges: (url A, url B)."""
    etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
    procs = [etcd]
    try:
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        ranges = ("--service-cluster-ip-range", "10.0.0.0/27", "--service-node-port-range", "30000-30031")
        started = [spawn("apiserver", "--etcd-servers", etcd_url, "--port", "0", *ranges) for _ in range(2)]
        procs += [p for p, _ in started]  # both start at once; then each one's ready line
        urls = [re.search(r"url=(\S+)", o.wait_for("event=apiserver.ready", 60)).group(1) for _, o in started]
        yield tuple(urls)
    finally:
        for p in reversed(procs):
            stop(p)


def test_write_through_one_replica_is_in_a_consistent_list_and_a_watch_on_the_other(replicas):
    a, b = replicas
    created = call(a, "POST", CM, {"metadata": {"name": "through-a"}, "data": {"k": "v"}})
    rv = created["metadata"]["resourceVersion"]
    listed = call(b, "GET", CM)  # resourceVersion unset: consistent
    assert "through-a" in {i["metadata"]["name"] for i in listed["items"]}
    assert int(listed["metadata"]["resourceVersion"]) >= int(rv)
    # a watch on B from just before A's write: B's cache waits for the revision, then sends it
    got: list[dict] = []
    before = str(int(rv) - 1)
    with urlopen(urllib.request.Request(f"{b}{CM}?watch=1&resourceVersion={before}&timeoutSeconds=10"),
                 timeout=30) as r:
        for line in r:
            ev = json.loads(line)
            got.append(ev)
            if ev["object"]["metadata"].get("name") == "through-a":
                break
    assert got[-1]["type"] == "ADDED" and got[-1]["object"]["metadata"]["resourceVersion"] == rv
    # and B's write is in A's consistent list the same way
    call(b, "POST", CM, {"metadata": {"name": "through-b"}})
    assert "through-b" in {i["metadata"]["name"] for i in call(a, "GET", CM)["items"]}


def test_service_ips_and_node_ports_allocated_through_both_replicas_never_collide(replicas):
    def create(i: int) -> dict:
        server = replicas[i % 2]
        return call(server, "POST", "/api/v1/namespaces/default/services", {
            "metadata": {"name": f"svc-{i}"},
            "spec": {"type": "NodePort", "ports": [{"port": 80}], "selector": {"app": "x"}}})
    # 10.0.0.0/27 hands out 29 addresses and 30000-30031 32 ports: 28 random picks at once from
    # two processes that knew nothing of each other's picks would collide with near certainty
    with concurrent.futures.ThreadPoolExecutor(28) as pool:
        svcs = list(pool.map(create, range(28)))
    ips = [s["spec"]["clusterIP"] for s in svcs]
    ports = [s["spec"]["ports"][0]["nodePort"] for s in svcs]
    assert len(set(ips)) == 28 and len(set(ports)) == 28
    # a given address another replica handed out is refused there
    taken = ips[0]
    with pytest.raises(urllib.error.HTTPError) as e:
        call(replicas[1], "POST", "/api/v1/namespaces/default/services", {
            "metadata": {"name": "dup"}, "spec": {"clusterIP": taken, "ports": [{"port": 80}]}})
    assert e.value.code == 422 and "already allocated" in e.value.read().decode()


def kubectl(h: ClusterHandle, tmp: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", h.kubeconfig, "--cache-dir", os.path.join(tmp, "kc"), *args],
                          capture_output=True, text=True, timeout=timeout)


def pid_of(h: ClusterHandle, name: str) -> int:
    svc = next(s for s in h._cluster.services if s.name == name)
    assert svc.proc is not None
    return svc.proc.pid


@pytest.mark.realetcd
def test_two_replicas_on_three_real_etcd_members_each_lose_one_and_the_cluster_keeps_working(
        tmp_path, real_etcd_binary):
    h = ClusterHandle(str(tmp_path / "cp"), ClusterSpec(nodes=("n1",), apiservers=2, etcd="real", etcd_members=3))
    h.start()
    try:
        leases = json.loads(kubectl(h, str(tmp_path), "get", "leases", "-n", "kube-system", "-o", "json",
                                    "-l", "apiserver.kubernetes.io/identity=kube-apiserver").stdout)["items"]
        assert len(leases) == 2
        # one apiserver replica killed: every new connection goes to the other; the supervisor
        # starts it again
        killed = pid_of(h, "apiserver-0")
        os.kill(killed, signal.SIGKILL)
        for i in range(3):  # each kubectl is a new connection, to whichever replica is listening
            r = kubectl(h, str(tmp_path), "create", "configmap", f"replica-gone-{i}")
            assert r.returncode == 0, r.stderr
        # one etcd member killed and left dead: the cluster runs on two of three; a watch open
        # across the loss gets every later write (the watch cache re-watches another member from
        # its last revision)
        seen: list[str] = []
        opened = threading.Event()
        want = {f"member-gone-{i}" for i in range(5)}

        def watch() -> None:
            req = urllib.request.Request(f"{h.server}{CM}?watch=1&timeoutSeconds=60")
            with urllib.request.urlopen(req, context=h.ssl_context(), timeout=90) as r:
                opened.set()
                for line in r:
                    seen.append(json.loads(line)["object"]["metadata"]["name"])
                    if want <= set(seen):
                        return
        t = threading.Thread(target=watch, daemon=True)
        t.start()
        assert opened.wait(30)
        member = next(s for s in h._cluster.services if s.name == "etcd-0")
        member.stopping = True  # the supervisor does not restart it
        os.kill(pid_of(h, "etcd-0"), signal.SIGKILL)
        for name in sorted(want):
            deadline = time.monotonic() + 30
            while True:  # a write in flight as a leader dies may time out (etcd's own answer): again
                try:
                    call(h.server, "POST", CM, {"metadata": {"name": name}}, h.ssl_context())
                    break
                except urllib.error.HTTPError as e:
                    if e.code == 409:  # the timed-out attempt was applied after all
                        break
                    assert e.code in (500, 503, 504) and time.monotonic() < deadline, e.read()
        t.join(60)
        assert want <= set(seen), sorted(want - set(seen))
        listed = kubectl(h, str(tmp_path), "get", "configmaps", "-o", "name").stdout
        assert all(f"configmap/{n}" in listed for n in want | {"replica-gone-2"})
        deadline = time.monotonic() + 30
        while not any(line.startswith("started apiserver-0") and str(killed) not in line for line in h._lines):
            assert time.monotonic() < deadline, h._lines[-5:]
            time.sleep(0.1)  # the supervisor's restart line (no event to wait on from here)
    finally:
        h.stop()
