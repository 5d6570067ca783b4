"""SIGTERM to `python -m controlplane apiserver` while watches are open.

kube-apiserver's watch handlers return when the server signals it is shutting down
(``ServerShuttingDownCh`` in ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go``),
so each watch response ends normally: HTTP/1.1's terminating chunk, no reset.
``kubectl get -w`` then ends as well: its watch loop (``watchtools.UntilWithoutRetry`` in
``staging/src/k8s.io/kubectl/pkg/cmd/get/get.go``) returns "watch closed", an error that
``GetOptions.watch`` ignores (``intr.Run(...)``'s result is dropped and it returns nil), so
against a real apiserver kubectl prints nothing more and exits 0. Ours must behave the same.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import urllib.parse
import urllib.request

import pytest

from controlplane.storage import testing
from tests.integration.conftest import KUBECTL, LineReader, start_apiserver, stop, urlopen
from tests.support.tls import harness

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists(KUBECTL)),
                                 reason="needs /usr/bin/etcd and kubectl")]


@pytest.fixture(scope="module")
def etcd_url():
    etcd = testing.EtcdProcess()
    url = asyncio.run(etcd.start())
    yield url
    asyncio.run(etcd.stop())


@pytest.fixture
def apiserver(etcd_url):
    proc, out, url = start_apiserver(etcd_url)
    yield proc, out, url
    stop(proc)


def create_pod(url: str, name: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    req = urllib.request.Request(url + "/api/v1/namespaces/default/pods", data=json.dumps(pod).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    with urlopen(req, timeout=30) as r:
        assert r.status == 201


def test_sigterm_ends_kubectl_get_pods_watch_with_exit_0_and_no_message(apiserver, tmp_path):
    proc, out, url = apiserver
    create_pod(url, "watched")
    kubectl = subprocess.Popen([KUBECTL, "--server", url, "--cache-dir", str(tmp_path / "cache"),
                                "get", "pods", "-w"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "HOME": str(tmp_path)})
    try:
        lines = LineReader(kubectl, kubectl.stdout)
        lines.wait_for("watched", 60)  # the initial list was printed
        out.wait_for("event=watch.start resource=pods", 60)  # and its watch is open
        proc.send_signal(signal.SIGTERM)
        assert kubectl.wait(30) == 0
        assert kubectl.stderr.read() == b""
        assert [line.split()[0] for line in lines.lines] == ["NAME", "watched"]
    finally:
        if kubectl.poll() is None:
            kubectl.kill()
    assert proc.wait(30) == 0
    assert "event=apiserver.stopping watches=1" in out.wait_for("event=apiserver.stopping", 5)


def test_sigterm_ends_a_watch_stream_with_its_terminating_chunk(apiserver):
    proc, out, url = apiserver
    u = urllib.parse.urlparse(url)
    with socket.create_connection((u.hostname, u.port), timeout=30) as raw, \
            harness().ssl_context().wrap_socket(raw, server_hostname=u.hostname) as s:
        s.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\n"
                  b"Host: x\r\nAccept: application/json\r\n\r\n")
        out.wait_for("event=watch.start resource=configmaps", 60)
        proc.send_signal(signal.SIGTERM)
        data = b""
        while chunk := s.recv(65536):  # a reset raises ConnectionResetError and fails the test
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding: chunked" in head
    assert body.endswith(b"0\r\n\r\n")
    assert proc.wait(30) == 0
