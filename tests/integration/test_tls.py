"""TLS end to end, with real processes:

* ``controlplane up --etcd-tls``: the apiserver serves HTTPS with ``<data-dir>/pki``, kubectl works
  with ``--kubeconfig <data-dir>/kubeconfig`` and no ``--insecure-skip-tls-verify``, every
  component has its own kubeconfig naming its identity (kubeadm's), a request that does not trust
  the cluster CA fails verification, and the embedded etcd it started serves TLS with
  client-certificate auth;
* the embedded etcd with ``--client-cert-auth`` refuses a client without a certificate and serves
  one with a certificate of its CA;
* a real etcd (``/usr/bin/etcd``) with client-certificate TLS as the apiserver's backend.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from controlplane import pki
from controlplane.client.config import load_kubeconfig
from controlplane.lifeline import child_kwargs
from controlplane.storage.errors import Unavailable
from controlplane.storage.etcd import EtcdClient, EtcdTLS
from tests.integration.conftest import (
    KUBECTL,
    ROOT,
    LineReader,
    free_port,
    spawn,
    stop,
    urlopen,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tls-up")
    data_dir = str(tmp / "cp")
    proc = subprocess.Popen([sys.executable, "-m", "controlplane", "up", "--data-dir", data_dir, "--port", str(free_port()),
                             "--etcd-port", str(free_port()), "--etcd-tls", "--hollow-nodes", "2",
                             "--apiserver-cert-extra-sans", "api.example.test",
                             # the tests read each component's command line from /proc: an exec'd
                             # process shows its own (a forked one the fork server's; the argv it
                             # is given is the same)
                             "--no-fork-server"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            **child_kwargs(env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"}))
    out = LineReader(proc, proc.stdout)
    try:
        out.wait_for("control plane is up", 120)
        yield {"dir": data_dir, "kubeconfig": os.path.join(data_dir, "kubeconfig"), "out": out,
               "cache": str(tmp / "kube-cache")}
    finally:
        stop(proc)


def kubectl(up, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run([KUBECTL, "--kubeconfig", up["kubeconfig"], "--cache-dir", up["cache"], *args],
                          capture_output=True, text=True, timeout=90, env=env)


def test_kubectl_with_the_admin_kubeconfig_over_https(up):
    server = load_kubeconfig(up["kubeconfig"]).host
    assert server.startswith("https://127.0.0.1:")
    r = kubectl(up, "get", "nodes", "-o", "name")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["node/hollow-0", "node/hollow-1", "node/node01", "node/node02"]
    r = kubectl(up, "create", "deployment", "web", "--image", "nginx", "--replicas", "2")
    assert r.returncode == 0, r.stderr
    r = kubectl(up, "wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("conf,user,groups", [
    ("kubeconfig", "kubernetes-admin", ("system:masters",)),
    ("controller-manager.conf", "system:kube-controller-manager", ()),
    ("scheduler.conf", "system:kube-scheduler", ()),
    ("kubelet-node01.conf", "system:node:node01", ("system:nodes",)),
    ("kubelet-node02.conf", "system:node:node02", ("system:nodes",)),
    ("kubelet-hollow.conf", "system:hollow-nodes", ("system:nodes",)),
], ids=["admin", "controller-manager", "scheduler", "node01", "node02", "hollow"])
def test_every_component_has_its_own_identity(up, conf, user, groups):
    cfg = load_kubeconfig(os.path.join(up["dir"], conf))
    assert cfg.ca_data == open(os.path.join(up["dir"], "pki", "ca.crt"), "rb").read()
    assert cfg.cert_data is not None and pki.subject(cfg.cert_data) == (user, groups)


def test_components_are_started_with_their_kubeconfigs(up):
    pids = {}
    for line in up["out"].lines:
        m = re.search(r"started (\S+)\s+pid (\d+)", line)
        if m:
            pids[m.group(1)] = int(m.group(2))
    for name, conf in (("controller-manager", "controller-manager.conf"), ("scheduler", "scheduler.conf"),
                       ("kubelet-node01", "kubelet-node01.conf"), ("kubelet-hollow", "kubelet-hollow.conf")):
        argv = open(f"/proc/{pids[name]}/cmdline", "rb").read().split(b"\0")
        assert os.path.join(up["dir"], conf).encode() in argv, (name, argv)


def test_the_cluster_ca_is_published_as_kube_root_ca(up):
    ca = open(os.path.join(up["dir"], "pki", "ca.crt")).read()
    r = kubectl(up, "wait", "--for=create", "configmap/kube-root-ca.crt", "-n", "default", "--timeout=60s")
    assert r.returncode == 0, r.stderr
    r = kubectl(up, "get", "configmap", "kube-root-ca.crt", "-n", "default", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["data"]["ca.crt"] == ca


def test_service_account_tokens_are_signed_with_sa_key(up):
    r = kubectl(up, "create", "token", "default")
    assert r.returncode == 0, r.stderr
    header, payload, signature = r.stdout.strip().split(".")
    pub = load_pem_public_key(open(os.path.join(up["dir"], "pki", "sa.pub"), "rb").read())
    sig = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["alg"] == "ES256"
    assert isinstance(pub, ec.EllipticCurvePublicKey)  # up's sa.key is EC P-256, as kubeadm's default
    # a JWS ES256 signature is r || s, 32 bytes each (RFC 7518 section 3.4); cryptography wants DER
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    pub.verify(der, f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))


def test_serving_certificate_names(up):
    cert = open(os.path.join(up["dir"], "pki", "apiserver.crt"), "rb").read()
    assert {"127.0.0.1", "localhost", "kubernetes.default.svc.cluster.local", "10.96.0.1",
            "api.example.test"} <= pki.alt_names(cert)


def test_a_client_without_the_ca_fails_verification(up):
    server = load_kubeconfig(up["kubeconfig"]).host
    with pytest.raises(urllib.error.URLError) as e:
        urllib.request.urlopen(server + "/readyz", timeout=10, context=ssl.create_default_context())
    assert isinstance(e.value.reason, ssl.SSLCertVerificationError)
    ctx = ssl.create_default_context(cafile=os.path.join(up["dir"], "pki", "ca.crt"))
    with urllib.request.urlopen(server + "/readyz", timeout=10, context=ctx) as r:  # the CA alone suffices here
        assert r.status == 200


def test_the_embedded_etcd_of_up_serves_tls(up):
    argv = [a.decode() for a in open(f"/proc/{_pid(up, 'etcd')}/cmdline", "rb").read().split(b"\0")]
    url = argv[argv.index("--listen-client-urls") + 1]
    assert url.startswith("https://127.0.0.1:") and "--client-cert-auth" in argv
    d = os.path.join(up["dir"], "pki")
    assert asyncio.run(_status(url, EtcdTLS(os.path.join(d, "etcd", "ca.crt"),
                                            os.path.join(d, "apiserver-etcd-client.crt"),
                                            os.path.join(d, "apiserver-etcd-client.key"))))
    assert not asyncio.run(_status(url, EtcdTLS(os.path.join(d, "etcd", "ca.crt"))))


def _pid(up, name: str) -> int:
    for line in up["out"].lines:
        m = re.search(rf"started {re.escape(name)}\s+pid (\d+)", line)
        if m:
            return int(m.group(1))
    raise AssertionError(name)


async def _status(url: str, tls: EtcdTLS) -> bool:
    """Whether etcd at ``url`` answers a Status call with these credentials."""
    client = EtcdClient(url, timeout=3, tls=tls)
    try:
        await client.status(timeout=3)
        return True
    except Unavailable:
        return False
    finally:
        await client.close()


@pytest.fixture(scope="module")
def etcd_pki(tmp_path_factory) -> pki.PKI:
    p = pki.PKI(str(tmp_path_factory.mktemp("etcd-pki")))
    p.etcd_server()
    p.etcd_client()
    return p


def etcd_tls(p: pki.PKI, client: bool = True) -> EtcdTLS:
    if not client:
        return EtcdTLS(p.path("etcd/ca"))
    return EtcdTLS(p.path("etcd/ca"), p.path("apiserver-etcd-client"), p.path("apiserver-etcd-client", "key"))


@pytest.mark.parametrize("transport", ["asyncio", "grpcio"])
def test_embedded_etcd_client_cert_auth_refuses_a_client_without_a_certificate(etcd_pki, transport):
    p = etcd_pki
    proc, out = spawn("etcd", "--listen-client-urls", "https://127.0.0.1:0", "--data-dir", "",
                      "--grpc-transport", transport, "--cert-file", p.path("etcd/server"),
                      "--key-file", p.path("etcd/server", "key"), "--trusted-ca-file", p.path("etcd/ca"),
                      "--client-cert-auth")
    try:
        url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        assert url.startswith("https://")
        assert asyncio.run(_status(url, etcd_tls(p)))
        assert not asyncio.run(_status(url, etcd_tls(p, client=False)))
        other = pki.PKI(os.path.join(p.dir, "other"))
        other.etcd_client()
        stranger = EtcdTLS(p.path("etcd/ca"), other.path("apiserver-etcd-client"),
                           other.path("apiserver-etcd-client", "key"))
        assert not asyncio.run(_status(url, stranger))
    finally:
        stop(proc)


def test_embedded_etcd_https_needs_a_certificate():
    proc, out = spawn("etcd", "--listen-client-urls", "https://127.0.0.1:0", "--data-dir", "")
    assert proc.wait(30) == 1
    assert any("https:// in --listen-client-urls needs --cert-file and --key-file" in line for line in out.lines)


def test_real_etcd_with_client_certificates_as_the_backend(real_etcd_binary, etcd_pki, tmp_path):
    p = etcd_pki
    cport, pport = free_port(), free_port()
    url = f"https://127.0.0.1:{cport}"
    etcd = subprocess.Popen([real_etcd_binary, "--name", "tls", "--data-dir", str(tmp_path / "etcd"),
                             "--listen-client-urls", url, "--advertise-client-urls", url,
                             "--listen-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{pport}",
                             "--initial-cluster", f"tls=http://127.0.0.1:{pport}",
                             "--cert-file", p.path("etcd/server"), "--key-file", p.path("etcd/server", "key"),
                             "--trusted-ca-file", p.path("etcd/ca"), "--client-cert-auth"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        LineReader(etcd, etcd.stdout).wait_for("ready to serve client requests", 30)
        assert not asyncio.run(_status(url, etcd_tls(p, client=False)))
        api, _, server = _apiserver_on(url, p)
        try:
            req = urllib.request.Request(server + "/api/v1/namespaces/default/configmaps", method="POST",
                                         data=json.dumps({"metadata": {"name": "over-tls"}}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urlopen(req, timeout=30) as r:
                assert r.status == 201
            with urlopen(server + "/api/v1/namespaces/default/configmaps/over-tls", timeout=30) as r:
                assert json.loads(r.read())["metadata"]["name"] == "over-tls"
        finally:
            stop(api)
    finally:
        stop(etcd)


def _apiserver_on(url: str, p: pki.PKI):
    proc, out = spawn("apiserver", "--etcd-servers", url, "--port", "0", "--etcd-cafile", p.path("etcd/ca"),
                      "--etcd-certfile", p.path("apiserver-etcd-client"),
                      "--etcd-keyfile", p.path("apiserver-etcd-client", "key"))
    server = re.search(r"url=(\S+)", out.wait_for("event=apiserver.ready", 60)).group(1)
    return proc, out, server


def test_apiserver_self_signed_without_tls_flags(tmp_path):
    etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
    try:
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        cert_dir = str(tmp_path / "certs")
        api, out = _self_signed(etcd_url, cert_dir)
        try:
            server = re.search(r"url=(\S+)", out.wait_for("event=apiserver.ready", 60)).group(1)
            assert server.startswith("https://")
            ctx = ssl.create_default_context(cafile=os.path.join(cert_dir, "apiserver-ca.crt"))
            with urllib.request.urlopen(server + "/readyz", timeout=10, context=ctx) as r:
                assert r.status == 200
        finally:
            stop(api)
    finally:
        stop(etcd)


def _self_signed(etcd_url: str, cert_dir: str):
    """An apiserver without TLS flags (:func:`spawn` would add the session's: started directly)."""
    proc = subprocess.Popen([sys.executable, "-m", "controlplane", "apiserver", "--etcd-servers", etcd_url,
                             "--port", "0", "--cert-dir", cert_dir], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, **child_kwargs())
    return proc, LineReader(proc, proc.stdout)


def test_insecure_http_serves_plain_http_on_loopback_with_a_warning():
    etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
    try:
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        api, _, server = start_apiserver_plain(etcd_url)
        try:
            assert server.startswith("http://127.0.0.1:")
            with urllib.request.urlopen(server + "/readyz", timeout=10) as r:
                assert r.status == 200
        finally:
            stop(api)
    finally:
        stop(etcd)


def start_apiserver_plain(etcd_url: str):
    proc, out = spawn("apiserver", "--etcd-servers", etcd_url, "--port", "0", "--insecure-http")
    warning = out.wait_for("event=apiserver.insecure_http", 60)
    assert "WARNING" in warning
    server = re.search(r"url=(\S+)", out.wait_for("event=apiserver.ready", 60)).group(1)
    return proc, out, server

