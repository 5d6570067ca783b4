"""``controlplane/client/config.py`` (client-go's ``rest.Config`` from a kubeconfig, as ``clientcmd``
reads it) and the TLS contexts on both ends: a :class:`RestClient` over HTTPS to the apiserver's
listener (:func:`components.apiserver.serving.listen` with :func:`components.apiserver.tls.server_context`),
the peer certificate the authentication filter will read, verification failures."""

from __future__ import annotations

import base64
import os
import ssl

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner

from components.apiserver import serving, tls
from controlplane import pki
from controlplane.client.config import ClientConfig, load_config, load_kubeconfig
from controlplane.client.rest import RestClient, resolve_server


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> pki.PKI:
    p = pki.PKI(str(tmp_path_factory.mktemp("pki")))
    p.ca()
    p.apiserver()
    p.admin()
    p.kubelet("node01")
    return p


KUBECONFIG = """apiVersion: v1
kind: Config
current-context: second
clusters:
- name: one
  cluster: {{server: "https://one.example:6443", certificate-authority-data: "{ca}"}}
- name: two
  cluster:
    server: https://two.example:7443/
    certificate-authority: certs/ca.crt
    insecure-skip-tls-verify: true
    tls-server-name: kubernetes.default
users:
- name: a
  user: {{client-certificate-data: "{cert}", client-key-data: "{key}"}}
- name: b
  user: {{client-certificate: certs/b.crt, client-key: /abs/b.key, token: tok-123, tokenFile: token}}
contexts:
- name: first
  context: {{cluster: one, user: a}}
- name: second
  context: {{cluster: two, user: b, namespace: team}}
"""


@pytest.fixture
def kubeconfig(tmp_path, certs) -> str:
    path = tmp_path / "kc"
    admin = certs.admin()
    path.write_text(KUBECONFIG.format(ca=b64(certs.ca().cert), cert=b64(admin.cert), key=b64(admin.key)))
    return str(path)


def test_current_context_cluster_and_user_fields(kubeconfig, tmp_path):
    cfg = load_kubeconfig(kubeconfig)
    assert cfg == ClientConfig(
        host="https://two.example:7443", ca_file=str(tmp_path / "certs" / "ca.crt"), insecure=True,
        server_name="kubernetes.default", cert_file=str(tmp_path / "certs" / "b.crt"), key_file="/abs/b.key",
        bearer_token="tok-123", bearer_token_file=str(tmp_path / "token"), namespace="team")


def test_named_context_with_embedded_data(kubeconfig, certs):
    cfg = load_kubeconfig(kubeconfig, context="first")
    assert (cfg.host, cfg.ca_data, cfg.cert_data, cfg.key_data, cfg.insecure, cfg.namespace) == (
        "https://one.example:6443", certs.ca().cert, certs.admin().cert, certs.admin().key, False, "")


@pytest.mark.parametrize("text,message", [
    ("clusters: []\ncontexts: []\n", "is malformed"),
    ("clusters: [{name: c, cluster: {server: 'ftp://x'}}]\n", "invalid apiserver URL"),
    ("clusters: [{name: c, cluster: {server: 'https://x:1', certificate-authority-data: '%%%'}}]\n",
     "certificate-authority-data is not valid base64"),
    ("clusters: [oops\n", "kubeconfig"),
], ids=["no-cluster", "bad-server", "bad-base64", "bad-yaml"])
def test_malformed_kubeconfigs_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "kc"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        load_kubeconfig(str(path))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_unknown_context_is_an_error(kubeconfig):
    with pytest.raises(ValueError, match="context 'nope' not found"):
        load_kubeconfig(kubeconfig, context="nope")


def test_master_overrides_the_server_and_keeps_the_credentials(kubeconfig, certs):
    cfg = load_config("https://127.0.0.1:9443", kubeconfig)
    assert cfg.host == "https://127.0.0.1:9443" and cfg.bearer_token == "tok-123"
    assert resolve_server("127.0.0.1:1", kubeconfig) == "http://127.0.0.1:1"


def test_kubeconfig_from_the_environment(kubeconfig, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kubeconfig + os.pathsep + "/nonexistent")
    assert load_config(None, None).host == "https://two.example:7443"


def test_master_with_an_unreadable_kubeconfig_is_master_alone(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("clusters: [oops\n")
    assert load_config("http://127.0.0.1:1", str(bad)) == ClientConfig(host="http://127.0.0.1:1")


def test_no_kubeconfig_at_all(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_config(None, None) == ClientConfig(host="http://127.0.0.1:6443")


def test_token_file_is_read_and_sent(tmp_path):
    (tmp_path / "t").write_text("secret-token\n")
    cfg = ClientConfig(host="https://h:1", bearer_token_file=str(tmp_path / "t"))
    assert cfg.headers() == {"Authorization": "Bearer secret-token"}
    assert ClientConfig(host="http://h:1").headers() == {}


def test_ssl_contexts(certs):
    assert ClientConfig(host="http://h:1").ssl_context() is None
    ctx = ClientConfig(host="https://h:1", ca_data=certs.ca().cert).ssl_context()
    assert ctx is not None and ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    insecure = ClientConfig(host="https://h:1", insecure=True).ssl_context()
    assert insecure is not None and insecure.verify_mode == ssl.CERT_NONE
    with pytest.raises(ValueError, match="needs its key"):
        ClientConfig(host="https://h:1", cert_data=certs.admin().cert).ssl_context()
    with pytest.raises(ValueError, match="client certificate/key"):
        ClientConfig(host="https://h:1", cert_data=certs.admin().cert, key_data=certs.kubelet("node01").key).ssl_context()
    with pytest.raises(ValueError, match="cannot read"):
        ClientConfig(host="https://h:1", cert_file="/nonexistent.crt", key_file="/nonexistent.key").ssl_context()


async def whoami(request: web.Request) -> web.Response:
    cert = tls.peer_certificate(request)
    return web.json_response({"user": pki.subject(cert)[0] if cert else None,
                              "auth": request.headers.get("Authorization", "")})


@pytest.fixture
async def https_server(certs):
    app = web.Application(middlewares=[serving.track_requests])
    app.router.add_get("/whoami", whoami)
    ctx = tls.server_context(certs.path("apiserver"), certs.path("apiserver", "key"), certs.ca_file)
    listener = await serving.listen(app, "127.0.0.1", 0, ssl_context=ctx)
    yield f"https://127.0.0.1:{listener.port}"
    await listener.stop()


async def test_client_certificate_reaches_the_handler(https_server, certs):
    admin = certs.admin()
    cfg = ClientConfig(host=https_server, ca_data=certs.ca().cert, cert_data=admin.cert, key_data=admin.key)
    async with RestClient(cfg, "test") as client:
        assert await client.request("GET", "/whoami") == {"user": "kubernetes-admin", "auth": ""}


async def test_no_client_certificate_is_allowed(https_server, certs):
    cfg = ClientConfig(host=https_server, ca_file=certs.ca_file, bearer_token="abc")
    async with RestClient(cfg, "test") as client:
        assert await client.request("GET", "/whoami") == {"user": None, "auth": "Bearer abc"}


@pytest.mark.parametrize("server_name,ok", [("kubernetes.default.svc", True), ("wrong.example", False)],
                         ids=["a-san", "not-a-san"])
async def test_server_name_is_the_name_checked(https_server, certs, server_name, ok):
    cfg = ClientConfig(host=https_server, ca_data=certs.ca().cert, server_name=server_name)
    async with RestClient(cfg, "test") as client:
        if ok:
            assert (await client.request("GET", "/whoami"))["user"] is None
        else:
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await client.request("GET", "/whoami")


async def test_without_the_ca_verification_fails(https_server):
    async with RestClient(https_server, "test") as client:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await client.request("GET", "/whoami")
    async with RestClient(ClientConfig(host=https_server, insecure=True), "test") as client:
        assert (await client.request("GET", "/whoami"))["user"] is None


async def test_a_certificate_from_another_ca_ends_the_handshake(https_server, certs, tmp_path):
    other = pki.PKI(str(tmp_path / "other"))
    stranger = other.admin()
    cfg = ClientConfig(host=https_server, ca_data=certs.ca().cert, cert_data=stranger.cert, key_data=stranger.key)
    async with RestClient(cfg, "test") as client:
        with pytest.raises((aiohttp.ClientError, OSError)):
            await client.request("GET", "/whoami")


def test_self_signed_certificate_is_created_once(tmp_path):
    cert, key = tls.self_signed(str(tmp_path / "certs"), "127.0.0.1")
    first = open(cert, "rb").read()
    assert tls.self_signed(str(tmp_path / "certs"), "127.0.0.1") == (cert, key)
    assert open(cert, "rb").read() == first
    names = pki.alt_names(first)
    assert {"127.0.0.1", "localhost", "kubernetes.default.svc", "10.96.0.1"} <= names
    ctx = tls.server_context(cert, key)
    assert ctx.verify_mode == ssl.CERT_NONE  # no --client-ca-file: no client certificate asked for


def test_insecure_http_is_refused_off_loopback():
    from components.apiserver.cli import command
    r = CliRunner().invoke(command, ["--insecure-http", "--bind-address", "0.0.0.0"])
    assert r.exit_code == 2
    assert "--insecure-http serves without TLS and is only allowed on a loopback --bind-address" in r.output


@pytest.mark.parametrize("args,message", [
    (["--tls-cert-file", "/x.crt"], "--tls-cert-file and --tls-private-key-file go together"),
    (["--tls-cert-file", "/nonexistent.crt", "--tls-private-key-file", "/nonexistent.key"], "--tls-cert-file"),
    (["--etcd-certfile", "/x.crt"], "--etcd-certfile and --etcd-keyfile go together"),
    (["--etcd-servers", "https://127.0.0.1:1", "--etcd-cafile", "/nonexistent"], "--etcd-cafile"),
], ids=["cert-without-key", "unreadable-cert", "etcd-cert-without-key", "unreadable-etcd-ca"])
def test_bad_tls_flags_are_usage_errors(args, message, tmp_path):
    from components.apiserver.cli import command
    r = CliRunner().invoke(command, [*args, "--cert-dir", str(tmp_path / "certs")])
    assert r.exit_code == 2 and message in r.output, r.output
