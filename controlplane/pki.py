"""The cluster's certificates and keys, as kubeadm's ``init phase certs`` and ``kubeconfig`` lay them out.

``cmd/kubeadm/app/phases/certs`` (``certlist.go``) and ``cmd/kubeadm/app/phases/kubeconfig``:

- ``ca.crt`` / ``ca.key`` — the cluster CA, CN ``kubernetes`` (``KubeadmCertRootCA``), 10 years;
- ``apiserver.crt`` / ``apiserver.key`` — the serving certificate, CN ``kube-apiserver``, SANs
  (``pkiutil.GetAPIServerAltNames``): the host name, ``kubernetes``, ``kubernetes.default``,
  ``kubernetes.default.svc``, ``kubernetes.default.svc.cluster.local``, the first IP of the Service
  range (``10.96.0.1`` for ``10.96.0.0/12``, what the apiserver's ``servicealloc`` gives the
  ``kubernetes`` Service), ``127.0.0.1``, ``::1``, ``localhost`` and any extra names / IPs;
- client certificates (``ExtKeyUsageClientAuth``): CN = user name, O = groups — ``kubernetes-admin``
  in ``system:masters`` (``admin.conf``), ``system:kube-controller-manager``,
  ``system:kube-scheduler``, ``system:node:<name>`` in ``system:nodes`` (``kubelet.conf``);
- ``sa.key`` / ``sa.pub`` — the service-account token signing key pair (``KubeadmCertServiceAccount``), of the
  cluster's key type as kubeadm's ``CreateServiceAccountKeyAndPublicKeyFiles(dir, EncryptionAlgorithmType())``:
  EC P-256, so tokens are ES256 (an existing RSA pair is kept and used);
- for etcd (``--etcd-tls``): ``etcd/ca.crt``, ``etcd/server.crt`` and ``apiserver-etcd-client.crt``.

Keys are EC P-256 (kubeadm's ``EncryptionAlgorithmECDSAP256``; one key and certificate take about
0.07 ms, 1,000 about 70 ms on this machine, so per-node certificates are cheap to create). Every file
is created once per directory and reused on the next start; private keys are written 0600,
certificates 0644, each atomically (a temporary file renamed into place), so processes that start
at the same time never read half a file.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from typing import Callable, Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: CN of the cluster CA (kubeadm: ``kubernetes``)
CA_NAME = "kubernetes"
#: the admin user of ``<data-dir>/kubeconfig`` (kubeadm's ``admin.conf``)
ADMIN_USER = "kubernetes-admin"
MASTERS_GROUP = "system:masters"
NODES_GROUP = "system:nodes"
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
SCHEDULER_USER = "system:kube-scheduler"
#: DNS names of the in-cluster ``kubernetes`` Service (``GetAPIServerAltNames``)
SERVICE_DNS_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                     "kubernetes.default.svc.cluster.local")
#: the first address of the default ``--service-cluster-ip-range`` 10.96.0.0/12
DEFAULT_SERVICE_IP = "10.96.0.1"

CA_DAYS = 3650
CERT_DAYS = 365


def node_user(node: str) -> str:
    """The Node authorizer's user name of a kubelet: ``system:node:<node>``."""
    return f"system:node:{node}"


def first_service_ip(service_cidr: str) -> str:
    """The ``kubernetes`` Service's ClusterIP: the first host of the range
    (``10.96.0.0/12`` → ``10.96.0.1``; kube-apiserver's ``ServiceIPRange`` + 1). ValueError on a bad CIDR."""
    net = ipaddress.ip_network(service_cidr, strict=False)
    return str(net.network_address + 1)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def new_key() -> ec.EllipticCurvePrivateKey:
    """A fresh EC P-256 private key."""
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    """PEM ``PRIVATE KEY`` (PKCS#8, unencrypted) of ``key``."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _name(cn: str, groups: Iterable[str] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _sans(names: Iterable[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    seen: set[str] = set()
    for n in names:
        if not n or n in seen:
            continue
        seen.add(n)
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return out


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, both PEM bytes."""

    cert: bytes
    key: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert)


def _key_usage(ca: bool) -> x509.KeyUsage:
    """digitalSignature + keyEncipherment, and for a CA keyCertSign + cRLSign (kubeadm's ``pkiutil``)."""
    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def new_ca(cn: str = CA_NAME, days: int = CA_DAYS) -> KeyPair:
    """A self-signed CA certificate (``BasicConstraints CA:TRUE``, keyCertSign + cRLSign)."""
    key = new_key()
    now = _now()
    name = _name(cn)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_key_usage(ca=True), critical=True)
            .add_extension(ski, critical=False)
            .sign(key, hashes.SHA256()))
    return KeyPair(cert_pem(cert), key_pem(key))


def issue(ca: KeyPair, cn: str, groups: Iterable[str] = (), *, server_names: Iterable[str] = (),
          client: bool = True, server: bool = False, days: int = CERT_DAYS) -> KeyPair:
    """A certificate signed by ``ca``: subject CN ``cn`` and one O per group (the x509
    authenticator's user and groups, ``staging/src/k8s.io/apiserver/pkg/authentication/request/x509``
    ``CommonNameUserConversion``), SANs ``server_names`` (IPs and DNS names), extended key usage
    clientAuth and/or serverAuth."""
    ca_cert = ca.certificate
    ca_key = serialization.load_pem_private_key(ca.key, None)
    key = new_key()
    now = _now()
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])
    b = (x509.CertificateBuilder().subject_name(_name(cn, groups)).issuer_name(ca_cert.subject)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5))
         .not_valid_after(now + datetime.timedelta(days=days))
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(_key_usage(ca=False), critical=True)
         .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()), critical=False))  # type: ignore[arg-type]
    sans = _sans(server_names)
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = b.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    return KeyPair(cert_pem(cert), key_pem(key))


def subject(cert: bytes | x509.Certificate) -> tuple[str, tuple[str, ...]]:
    """``(CN, (O, ...))`` of a PEM certificate: the user and groups it names."""
    c = x509.load_pem_x509_certificate(cert) if isinstance(cert, bytes) else cert
    cn = [a.value for a in c.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = [a.value for a in c.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return (str(cn[0]) if cn else ""), tuple(str(o) for o in orgs)


def alt_names(cert: bytes | x509.Certificate) -> set[str]:
    """Every SAN of a certificate as text (IPs in their compressed form)."""
    c = x509.load_pem_x509_certificate(cert) if isinstance(cert, bytes) else cert
    try:
        ext = c.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(v) for v in ext.get_values_for_type(x509.DNSName)} | \
        {str(v) for v in ext.get_values_for_type(x509.IPAddress)}


def serving_names(hostname: str | None = None, service_ip: str = DEFAULT_SERVICE_IP,
                  extra: Iterable[str] = ()) -> list[str]:
    """The apiserver serving certificate's SANs (``GetAPIServerAltNames``): loopback names, the
    host name, the ``kubernetes`` Service's DNS names and ClusterIP, then ``extra``."""
    host = hostname if hostname is not None else socket.gethostname()
    return ["127.0.0.1", "::1", "localhost", host, *SERVICE_DNS_NAMES, service_ip, *extra]


def write_file(path: str, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` atomically with permission ``mode`` (the directory is created 0700)."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_bytes(path: str | None, what: str = "") -> bytes | None:
    """The contents of ``path`` (None for an empty path). ValueError ``"<what> '<path>': <reason>"``
    (``what`` defaults to "cannot read") when it cannot be read."""
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"{what or 'cannot read'} {path!r}: {e.strerror or e}") from None


def server_context(cert_file: str, key_file: str, ca_file: str | None = None, *, require_client_cert: bool = False,
                   alpn: tuple[str, ...] = ("http/1.1",),
                   flags: tuple[str, str, str] = ("--tls-cert-file", "--tls-private-key-file",
                                                  "--client-ca-file")) -> ssl.SSLContext:
    """A serving ``SSLContext``: TLS 1.2+ (Kubernetes' and etcd's default minimum), the certificate
    chain and key, ``alpn`` protocols, and with ``ca_file`` client certificates verified against
    it — requested (``CERT_OPTIONAL``, kube-apiserver's ``tls.RequestClientCert``) or, with
    ``require_client_cert``, required (``CERT_REQUIRED``, etcd's ``--client-cert-auth``).
    ValueError naming the flag (``flags``: certificate, key, CA) whose file does not load."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"{flags[0]} {cert_file!r} / {flags[1]} {key_file!r}: {e}") from None
    if ca_file:
        try:
            ctx.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"{flags[2]} {ca_file!r}: {e}") from None
        ctx.verify_mode = ssl.CERT_REQUIRED if require_client_cert else ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(list(alpn))
    return ctx


def read_pair(cert_path: str, key_path: str) -> KeyPair | None:
    """The pair stored at these paths, or None when either file is missing."""
    try:
        with open(cert_path, "rb") as c, open(key_path, "rb") as k:
            return KeyPair(c.read(), k.read())
    except FileNotFoundError:
        return None


def write_pair(cert_path: str, key_path: str, pair: KeyPair) -> None:
    """Store ``pair``: the key first (0600), then the certificate (0644), so a reader that finds
    the certificate finds its key."""
    write_file(key_path, pair.key, 0o600)
    write_file(cert_path, pair.cert, 0o644)


class PKI:
    """The certificates of one cluster under ``directory`` (``<data-dir>/pki``), created on first
    use and reused afterwards (as kubeadm's phases skip files that exist). Every method returns a
    :class:`KeyPair` and the paths are ``<directory>/<name>.crt`` / ``.key``."""

    def __init__(self, directory: str) -> None:
        self.dir = os.path.abspath(directory)

    def path(self, name: str, ext: str = "crt") -> str:
        return os.path.join(self.dir, f"{name}.{ext}")

    def pair(self, name: str) -> KeyPair | None:
        return read_pair(self.path(name), self.path(name, "key"))

    def _ensure(self, name: str, make: Callable[[], KeyPair]) -> KeyPair:
        got = self.pair(name)
        if got is None:
            got = make()
            write_pair(self.path(name), self.path(name, "key"), got)
        return got

    @property
    def ca_file(self) -> str:
        return self.path("ca")

    def ca(self) -> KeyPair:
        """``ca.crt`` / ``ca.key``: the cluster CA (CN ``kubernetes``)."""
        return self._ensure("ca", new_ca)

    def apiserver(self, hostname: str | None = None, service_ip: str = DEFAULT_SERVICE_IP,
                  extra_sans: Iterable[str] = ()) -> KeyPair:
        """``apiserver.crt`` / ``apiserver.key``: CN ``kube-apiserver``, SANs :func:`serving_names`.
        An existing certificate missing one of the wanted SANs (a new ``--apiserver-cert-extra-sans``)
        is issued again."""
        names = serving_names(hostname, service_ip, extra_sans)
        got = self.pair("apiserver")
        want = {str(ipaddress.ip_address(n)) if _is_ip(n) else n for n in names if n}
        if got is not None and want <= alt_names(got.cert):
            return got
        ca = self.ca()
        pair = issue(ca, "kube-apiserver", server_names=names, client=False, server=True)
        write_pair(self.path("apiserver"), self.path("apiserver", "key"), pair)
        return pair

    def client(self, name: str, user: str, groups: Iterable[str] = ()) -> KeyPair:
        """``<name>.crt`` / ``.key``: a client certificate for ``user`` in ``groups``."""
        groups = tuple(groups)
        return self._ensure(name, lambda: issue(self.ca(), user, groups))

    def admin(self) -> KeyPair:
        """``admin``: ``kubernetes-admin`` in ``system:masters``."""
        return self.client("admin", ADMIN_USER, (MASTERS_GROUP,))

    def controller_manager(self) -> KeyPair:
        return self.client("controller-manager", CONTROLLER_MANAGER_USER)

    def scheduler(self) -> KeyPair:
        return self.client("scheduler", SCHEDULER_USER)

    def kubelet(self, node: str) -> KeyPair:
        """``kubelet-<node>``: ``system:node:<node>`` in ``system:nodes``."""
        return self.client(f"kubelet-{node}", node_user(node), (NODES_GROUP,))

    def service_account_keys(self) -> tuple[str, str]:
        """``sa.key`` (EC P-256, PKCS#8, 0600) and ``sa.pub`` (PEM SubjectPublicKeyInfo): the paths,
        for ``--service-account-signing-key-file`` / ``--service-account-key-file``. The cluster's key
        type, as kubeadm makes the pair with its ``EncryptionAlgorithm`` (``ECDSA-P256`` here): an
        RSA 2048 pair took 50-200 ms to generate and its load check ~60 ms of every apiserver start,
        and each ES256 token signature costs a fraction of an RS256 one. Existing files (an RSA pair
        of an older data dir) are reused."""
        key_path, pub_path = self.path("sa", "key"), self.path("sa", "pub")
        if not (os.path.exists(key_path) and os.path.exists(pub_path)):
            key = new_key()
            write_file(key_path, key_pem(key), 0o600)
            write_file(pub_path, key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), 0o644)
        return key_path, pub_path

    # -- etcd (kubeadm's etcd/ca, etcd/server, apiserver-etcd-client)
    def etcd_ca(self) -> KeyPair:
        return self._ensure(os.path.join("etcd", "ca"), lambda: new_ca("etcd-ca"))

    def etcd_server(self, hostname: str | None = None) -> KeyPair:
        host = hostname if hostname is not None else socket.gethostname()
        return self._ensure(os.path.join("etcd", "server"), lambda: issue(
            self.etcd_ca(), host, server_names=["localhost", host, "127.0.0.1", "::1"], server=True))

    def etcd_client(self) -> KeyPair:
        """``apiserver-etcd-client``: the apiserver's client certificate for etcd (O ``system:masters``)."""
        return self._ensure("apiserver-etcd-client", lambda: issue(
            self.etcd_ca(), "kube-apiserver-etcd-client", (MASTERS_GROUP,)))


def _is_ip(s: str) -> bool:
    try:
        ipaddress.ip_address(s)
        return True
    except ValueError:
        return False


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(server: str, *, user: str, ca: bytes | None = None, client: KeyPair | None = None,
               ca_file: str | None = None, cert_file: str | None = None, key_file: str | None = None,
               token: str | None = None, cluster: str = "controlplane", namespace: str | None = "default") -> str:
    """A kubeconfig (YAML text) with one cluster, one user and one current context
    (``clientcmdapi.Config``; kubeadm's ``kubeconfig`` phase ``CreateWithCerts``): the CA and the
    client certificate embedded as ``certificate-authority-data`` / ``client-certificate-data`` /
    ``client-key-data`` when given as bytes, or by path (``certificate-authority`` /
    ``client-certificate`` / ``client-key``), or a bearer ``token``."""
    import yaml

    cl: dict[str, object] = {"server": server}
    if ca is not None:
        cl["certificate-authority-data"] = _b64(ca)
    elif ca_file:
        cl["certificate-authority"] = ca_file
    u: dict[str, object] = {}
    if client is not None:
        u["client-certificate-data"] = _b64(client.cert)
        u["client-key-data"] = _b64(client.key)
    if cert_file:
        u["client-certificate"] = cert_file
    if key_file:
        u["client-key"] = key_file
    if token:
        u["token"] = token
    ctx: dict[str, object] = {"cluster": cluster, "user": user}
    if namespace:
        ctx["namespace"] = namespace
    context = f"{user}@{cluster}"
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": cluster, "cluster": cl}],
           "users": [{"name": user, "user": u}],
           "contexts": [{"name": context, "context": ctx}],
           "current-context": context, "preferences": {}}
    return str(yaml.safe_dump(doc, sort_keys=False))


#: the identity of the one kubelet process running every hollow node: its nodes share one
#: client, one connection pool and one pods informer (as kubemark's hollow nodes share one
#: kubeconfig), so one certificate serves them (group ``system:nodes``). Not ``system:node:<name>``:
#: the Node authorizer and NodeRestriction would hold it to a single node. (A certificate per node
#: is cheap — 1,000 EC P-256 certificates take about 70 ms here — but would need a client per node.)
HOLLOW_USER = "system:hollow-nodes"


def component_kubeconfig(directory: str, component: str) -> str:
    """Path of a component's kubeconfig in ``directory`` (kubeadm's names): ``kubeconfig`` for
    ``admin`` (kubeadm's ``admin.conf``; what the user passes to kubectl), else
    ``<component>.conf`` — ``controller-manager.conf``, ``scheduler.conf``, ``kubelet-<node>.conf``,
    ``kubelet-hollow.conf``."""
    return os.path.join(directory, "kubeconfig" if component == "admin" else f"{component}.conf")


def write_cluster(directory: str, server: str, nodes: Iterable[str] = (), *, hollow: bool = False,
                  extra_sans: Iterable[str] = (), etcd_tls: bool = False,
                  service_ip: str = DEFAULT_SERVICE_IP) -> PKI:
    """Create (or reuse) a cluster's certificates in ``<directory>/pki`` — CA, apiserver serving
    pair (``extra_sans`` added), service-account keys, etcd's with ``etcd_tls`` — and write one
    kubeconfig per identity (:func:`component_kubeconfig`) for ``server``, each with the CA and its
    client certificate embedded: the admin, the controller-manager, the scheduler, a kubelet per
    node and, with ``hollow``, the hollow-node process (:data:`HOLLOW_USER`). Returns the
    :class:`PKI`. OSError when the files cannot be written."""
    p = PKI(os.path.join(directory, "pki"))
    ca = p.ca()
    p.apiserver(service_ip=service_ip, extra_sans=extra_sans)
    p.service_account_keys()
    if etcd_tls:
        p.etcd_server()
        p.etcd_client()
    identities = [("admin", ADMIN_USER, p.admin()),
                  ("controller-manager", CONTROLLER_MANAGER_USER, p.controller_manager()),
                  ("scheduler", SCHEDULER_USER, p.scheduler())]
    identities += [(f"kubelet-{n}", node_user(n), p.kubelet(n)) for n in nodes]
    if hollow:
        identities.append(("kubelet-hollow", HOLLOW_USER, p.client("kubelet-hollow", HOLLOW_USER, (NODES_GROUP,))))
    for component, user, pair in identities:
        write_kubeconfig(component_kubeconfig(directory, component),
                         kubeconfig(server, user=user, ca=ca.cert, client=pair))
    return p


def write_kubeconfig(path: str, text: str) -> str:
    """Write a kubeconfig's ``text`` (:func:`kubeconfig`) to ``path``, 0600 as it holds a private
    key; returns ``path``."""
    write_file(path, text.encode(), 0o600)
    return path
