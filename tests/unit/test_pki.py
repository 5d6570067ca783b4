"""``controlplane/pki.py``: kubeadm's certificate layout — the CA, the apiserver's SANs, client
certificates as CN = user / O = groups, the service-account key pair, reuse on the next start,
0600 keys — and the kubeconfig writer."""

from __future__ import annotations

import os
import stat

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from cryptography.x509.oid import ExtendedKeyUsageOID

from controlplane import pki
from controlplane.client.config import load_kubeconfig


@pytest.fixture
def p(tmp_path) -> pki.PKI:
    return pki.PKI(str(tmp_path / "pki"))


def test_ca_is_a_ca_named_kubernetes(p):
    ca = p.ca().certificate
    assert pki.subject(ca) == ("kubernetes", ())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.issuer == ca.subject


def test_apiserver_serving_certificate_names(p):
    cert = p.apiserver(hostname="myhost", extra_sans=("api.example.com", "192.0.2.7")).certificate
    assert pki.alt_names(cert) == {
        "127.0.0.1", "::1", "localhost", "myhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local", "10.96.0.1", "api.example.com", "192.0.2.7"}
    assert pki.subject(cert)[0] == "kube-apiserver"
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.issuer == p.ca().certificate.subject
    p.ca().certificate.public_key().verify(  # type: ignore[union-attr]
        cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))


def test_first_service_ip_is_the_kubernetes_service_address():
    assert pki.first_service_ip("10.96.0.0/12") == "10.96.0.1"
    assert pki.first_service_ip("172.20.0.0/16") == "172.20.0.1"


@pytest.mark.parametrize("method,args,want", [
    ("admin", (), ("kubernetes-admin", ("system:masters",))),
    ("controller_manager", (), ("system:kube-controller-manager", ())),
    ("scheduler", (), ("system:kube-scheduler", ())),
    ("kubelet", ("node01",), ("system:node:node01", ("system:nodes",))),
], ids=["admin", "controller-manager", "scheduler", "kubelet"])
def test_client_certificates_name_user_and_groups(p, method, args, want):
    cert = getattr(p, method)(*args).certificate
    assert pki.subject(cert) == want
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)


def test_client_certificate_with_several_groups(p):
    cert = p.client("multi", "alice", ("dev", "ops")).certificate
    assert pki.subject(cert) == ("alice", ("dev", "ops"))


def test_files_are_created_once_and_reused(p):
    first = (p.ca(), p.apiserver(hostname="h"), p.admin(), p.kubelet("n1"))
    again = pki.PKI(p.dir)
    assert (again.ca(), again.apiserver(hostname="h"), again.admin(), again.kubelet("n1")) == first


def test_apiserver_certificate_is_reissued_for_a_new_san(p):
    old = p.apiserver(hostname="h")
    new = p.apiserver(hostname="h", extra_sans=("extra.example.com",))
    assert new != old and "extra.example.com" in pki.alt_names(new.cert)
    assert p.apiserver(hostname="h") == new  # a subset of what it names: kept


def test_keys_are_0600_and_certificates_0644(p):
    p.admin()
    key_path, pub_path = p.service_account_keys()
    for name in ("ca.key", "admin.key", "sa.key"):
        assert stat.S_IMODE(os.stat(os.path.join(p.dir, name)).st_mode) == 0o600, name
    for name in ("ca.crt", "admin.crt", "sa.pub"):
        assert stat.S_IMODE(os.stat(os.path.join(p.dir, name)).st_mode) == 0o644, name
    assert stat.S_IMODE(os.stat(p.dir).st_mode) == 0o700


def test_service_account_key_pair_is_ec_p256_and_matches(p):
    key_path, pub_path = p.service_account_keys()
    key = load_pem_private_key(open(key_path, "rb").read(), None)
    pub = load_pem_public_key(open(pub_path, "rb").read())
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    assert pub.public_numbers() == key.public_key().public_numbers()  # type: ignore[union-attr]
    before = open(key_path, "rb").read()
    assert p.service_account_keys() == (key_path, pub_path)
    assert open(key_path, "rb").read() == before  # reused, not regenerated


def test_etcd_certificates_have_their_own_ca(p):
    server = p.etcd_server(hostname="h").certificate
    client = p.etcd_client().certificate
    assert server.issuer == client.issuer == p.etcd_ca().certificate.subject != p.ca().certificate.subject
    assert {"127.0.0.1", "localhost", "h"} <= pki.alt_names(server)


def test_kubeconfig_embeds_ca_and_client_certificate(p, tmp_path):
    path = pki.write_kubeconfig(str(tmp_path / "kc"), pki.kubeconfig(
        "https://127.0.0.1:6443", user="kubernetes-admin", ca=p.ca().cert, client=p.admin()))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    doc = yaml.safe_load(open(path))
    assert doc["current-context"] == "kubernetes-admin@controlplane"
    assert doc["contexts"][0]["context"] == {"cluster": "controlplane", "user": "kubernetes-admin",
                                             "namespace": "default"}
    cfg = load_kubeconfig(path)
    assert (cfg.host, cfg.ca_data, cfg.cert_data, cfg.key_data) == (
        "https://127.0.0.1:6443", p.ca().cert, p.admin().cert, p.admin().key)


def test_kubeconfig_by_file_paths(tmp_path):
    text = pki.kubeconfig("https://h:1", user="u", ca_file="/x/ca.crt", cert_file="/x/u.crt", key_file="/x/u.key",
                          namespace=None)
    doc = yaml.safe_load(text)
    assert doc["clusters"][0]["cluster"] == {"server": "https://h:1", "certificate-authority": "/x/ca.crt"}
    assert doc["users"][0]["user"] == {"client-certificate": "/x/u.crt", "client-key": "/x/u.key"}
    assert "namespace" not in doc["contexts"][0]["context"]


def test_write_cluster_writes_one_kubeconfig_per_identity(tmp_path):
    p = pki.write_cluster(str(tmp_path), "https://127.0.0.1:7443", ["n1"], hollow=True)
    users = {}
    for component in ("admin", "controller-manager", "scheduler", "kubelet-n1", "kubelet-hollow"):
        cfg = load_kubeconfig(pki.component_kubeconfig(str(tmp_path), component))
        assert cfg.host == "https://127.0.0.1:7443" and cfg.ca_data == p.ca().cert
        users[component] = pki.subject(cfg.cert_data or b"")
    assert users == {"admin": ("kubernetes-admin", ("system:masters",)),
                     "controller-manager": ("system:kube-controller-manager", ()),
                     "scheduler": ("system:kube-scheduler", ()),
                     "kubelet-n1": ("system:node:n1", ("system:nodes",)),
                     "kubelet-hollow": ("system:hollow-nodes", ("system:nodes",))}
    assert os.path.exists(p.path("sa", "key")) and not os.path.exists(p.path("etcd/ca"))


def test_pki_command_writes_and_reuses(tmp_path):
    from click.testing import CliRunner

    from controlplane.cli.pki import command
    r = CliRunner().invoke(command, ["--dir", str(tmp_path), "--nodes", "a", "--etcd-tls"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == f"admin: {tmp_path}/kubeconfig"
    ca = (tmp_path / "pki" / "ca.crt").read_bytes()
    assert (tmp_path / "pki" / "etcd" / "server.crt").exists()
    assert CliRunner().invoke(command, ["--dir", str(tmp_path), "--nodes", "a"]).exit_code == 0
    assert (tmp_path / "pki" / "ca.crt").read_bytes() == ca
    bad = CliRunner().invoke(command, ["--dir", str(tmp_path), "--server", "ftp://x"])
    assert bad.exit_code == 2 and "invalid apiserver URL" in bad.output


@pytest.mark.parametrize("kwargs,message", [
    ({"client_cert_auth": True}, "--client-cert-auth needs --trusted-ca-file"),
    ({"trusted_ca_file": "/nonexistent"}, "--trusted-ca-file '/nonexistent'"),
], ids=["client-auth-without-ca", "unreadable-ca"])
def test_etcd_server_tls_flag_errors(p, kwargs, message):
    from components.etcd.transport import server_tls_context
    p.etcd_server()
    with pytest.raises(ValueError, match=message):
        server_tls_context(p.path("etcd/server"), p.path("etcd/server", "key"), **kwargs)


def test_server_contexts_request_or_require_client_certificates(p):
    import ssl
    p.apiserver()
    cert, key = p.path("apiserver"), p.path("apiserver", "key")
    assert pki.server_context(cert, key).verify_mode == ssl.CERT_NONE
    assert pki.server_context(cert, key, p.ca_file).verify_mode == ssl.CERT_OPTIONAL
    assert pki.server_context(cert, key, p.ca_file, require_client_cert=True).verify_mode == ssl.CERT_REQUIRED


def test_service_account_rsa_pair_of_an_older_data_dir_is_kept(p):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pki.write_file(p.path("sa", "key"), pki.key_pem(key), 0o600)
    pki.write_file(p.path("sa", "pub"), key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), 0o644)
    before = open(p.path("sa", "key"), "rb").read()
    p.service_account_keys()
    assert open(p.path("sa", "key"), "rb").read() == before
