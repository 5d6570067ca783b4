"""How a client reaches and authenticates to the apiserver: client-go's ``rest.Config`` built
from a kubeconfig, as ``clientcmd`` does.

:class:`ClientConfig` holds what ``rest.Config`` / ``rest.TLSClientConfig`` hold
(``staging/src/k8s.io/client-go/rest/config.go``): ``host``, the CA (``ca_data`` / ``ca_file``),
the client certificate and key (``cert_data`` / ``cert_file``, ``key_data`` / ``key_file``), a
bearer token (``bearer_token`` / ``bearer_token_file``), ``insecure`` (skip verification) and
``server_name`` (the name checked in the serving certificate instead of the URL's host).

:func:`load_kubeconfig` reads a kubeconfig as ``clientcmd.DirectClientConfig`` does
(``client-go/tools/clientcmd/client_config.go``): the current context (or the one named), its
cluster and user; paths in it are relative to the kubeconfig's own directory (``ResolvePaths``);
``*-data`` fields are base64. :func:`load_config` is ``clientcmd.BuildConfigFromFlags(masterURL,
kubeconfigPath)``: ``--master`` overrides the cluster's server, everything else (CA, credentials)
still comes from the kubeconfig (``--kubeconfig``, then ``$KUBECONFIG``, then
``./.controlplane/kubeconfig``); without any kubeconfig (or with one that cannot be read while
``--master`` is given), ``--master`` alone (or ``http://127.0.0.1:6443``) with no credentials.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import ssl
import tempfile
import time
from typing import Any
from urllib.parse import urlparse

from controlplane import yamlfile
from controlplane.pki import read_bytes

#: where ``controlplane up`` (run in the working directory) writes its kubeconfig
DEFAULT_UP_KUBECONFIG = os.path.join(".controlplane", "kubeconfig")
DEFAULT_SERVER = "http://127.0.0.1:6443"
#: seconds a token read from ``tokenFile`` is kept before the file is read again
#: (client-go's ``cachingTokenSource`` re-reads the file every minute)
TOKEN_FILE_TTL = 60.0


@dataclasses.dataclass
class ClientConfig:
    """``rest.Config``: where the apiserver is and how to trust and authenticate to it.

    ``host`` is ``http(s)://host[:port]`` (no trailing slash). Byte fields are PEM; ``*_file``
    fields are paths, used when the matching ``*_data`` field is empty (client-go: data wins).
    Raises nothing itself; :meth:`ssl_context` raises ValueError (one line) for unreadable or
    mismatched certificate files."""

    host: str = DEFAULT_SERVER
    ca_data: bytes | None = None
    ca_file: str | None = None
    cert_data: bytes | None = None
    cert_file: str | None = None
    key_data: bytes | None = None
    key_file: str | None = None
    bearer_token: str | None = None
    bearer_token_file: str | None = None
    insecure: bool = False
    server_name: str | None = None
    #: the kubeconfig's context namespace ("" when none)
    namespace: str = ""
    _token_cache: tuple[float, str] | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def is_tls(self) -> bool:
        return self.host.startswith("https://")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS client context for :attr:`host` (None for ``http://``): verification against
        the CA (only it, as client-go's ``TLSConfigFor`` sets ``RootCAs`` to the given CA's pool —
        which also spares loading the system's trust store, ~65 ms of CPU per context; the
        system's trust store when none is given; none at all with ``insecure``),
        TLS 1.2 or newer (client-go's default ``MinVersion``), and the client certificate and key
        when set. Raises ValueError naming the file or field that cannot be loaded."""
        if not self.is_tls:
            return None
        try:
            if self.insecure:
                ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif self.ca_data:  # the given CA replaces the system's roots, as client-go's RootCAs
                ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=self.ca_data.decode())
            elif self.ca_file:
                ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
            else:
                ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        except (OSError, ssl.SSLError, UnicodeDecodeError) as e:
            raise ValueError(f"certificate authority {self.ca_file or '(data)'}: {e}") from None
        cert = self.cert_data or read_bytes(self.cert_file)
        key = self.key_data or read_bytes(self.key_file)
        if bool(cert) != bool(key):
            raise ValueError("a client certificate needs its key (and a key its certificate)")
        if cert and key:
            load_cert_chain(ctx, cert, key)
        return ctx

    def token(self) -> str | None:
        """The bearer token: ``bearer_token``, else the contents of ``bearer_token_file`` (stripped,
        read again after :data:`TOKEN_FILE_TTL` seconds), else None."""
        if self.bearer_token:
            return self.bearer_token
        if not self.bearer_token_file:
            return None
        now = time.monotonic()
        if self._token_cache is None or now - self._token_cache[0] > TOKEN_FILE_TTL:
            try:
                with open(self.bearer_token_file) as f:
                    self._token_cache = (now, f.read().strip())
            except OSError as e:
                raise ValueError(f"tokenFile {self.bearer_token_file!r}: {e.strerror or e}") from None
        return self._token_cache[1] or None

    def headers(self) -> dict[str, str]:
        """The headers every request carries: ``Authorization: Bearer <token>`` when there is one."""
        tok = self.token()
        return {"Authorization": f"Bearer {tok}"} if tok else {}

    def with_host(self, host: str) -> "ClientConfig":
        """A copy aimed at another server (``--master``)."""
        return dataclasses.replace(self, host=host.rstrip("/"), _token_cache=None)


def load_cert_chain(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``ctx.load_cert_chain`` from PEM bytes: Python's ssl reads only files, so both go to a
    private temporary file (0600, removed at once). Raises ValueError when they do not load
    or do not match."""
    fd, path = tempfile.mkstemp(prefix="controlplane-cert-", suffix=".pem")
    try:
        os.write(fd, cert.rstrip(b"\n") + b"\n" + key)
        os.close(fd)
        fd = -1
        ctx.load_cert_chain(path)
    except ssl.SSLError as e:
        raise ValueError(f"client certificate/key: {e}") from None
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(path)


def check_url(url: str) -> str:
    """``url`` without a trailing slash; ValueError (one line) unless it is ``http(s)://host[:port]``."""
    u = urlparse(url)
    try:
        port_ok = u.port is not None or ":" not in u.netloc
    except ValueError:
        port_ok = False
    if u.scheme not in ("http", "https") or not u.hostname or not port_ok:
        raise ValueError(f"invalid apiserver URL {url!r}: expected http(s)://host:port")
    return url.rstrip("/")


def master_url(master: str) -> str:
    """``--master`` as a URL: ``host:port`` gets ``http://`` (client-go's DefaultServerURL for a
    bare host). ValueError for a path without a scheme."""
    if "://" not in master and "/" in master:
        raise ValueError(f"invalid apiserver URL {master!r}: expected http(s)://host:port")
    return check_url(master if "://" in master else f"http://{master}")


def _b64(value: Any, field: str, path: str) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except ValueError:
        raise ValueError(f"kubeconfig {path!r}: {field} is not valid base64") from None


def load_kubeconfig(path: str, context: str | None = None) -> ClientConfig:
    """The :class:`ClientConfig` of ``context`` (default: ``current-context``, else the first
    context) in the kubeconfig at ``path``.

    Fields read (``clientcmdapi``): cluster ``server``, ``certificate-authority(-data)``,
    ``insecure-skip-tls-verify``, ``tls-server-name``; user ``client-certificate(-data)``,
    ``client-key(-data)``, ``token``, ``tokenFile``; context ``namespace``. Relative paths are
    resolved against the kubeconfig's directory. Raises ValueError with a one-line message when
    the file is missing or malformed."""
    try:
        docs = yamlfile.load_file(path)
        cfg = (docs[0] if docs else None) or {}
        ctx_name = context or cfg.get("current-context")
        contexts = cfg.get("contexts") or []
        ctx = next((c["context"] for c in contexts if c.get("name") == ctx_name),
                   None if context else (contexts[0]["context"] if contexts else {}))
        if ctx is None:
            raise ValueError(f"kubeconfig {path!r}: context {context!r} not found")
        ctx = ctx or {}
        clusters = cfg.get("clusters") or []
        cluster: dict[str, Any] | None = next(
            (c["cluster"] for c in clusters if c.get("name") == ctx.get("cluster")),
            clusters[0]["cluster"] if clusters else None)
        if cluster is None:
            raise TypeError("no cluster")
        users = cfg.get("users") or []
        user: dict[str, Any] = next((u.get("user") or {} for u in users if u.get("name") == ctx.get("user")), {})
        server = check_url(str(cluster["server"]))
    except yamlfile.YAMLFileError as e:
        raise ValueError(f"kubeconfig {path!r}: {e}") from None
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise ValueError(f"kubeconfig {path!r} is malformed: {e}") from None
    base = os.path.dirname(os.path.abspath(path))

    def resolve(p: Any) -> str | None:
        return os.path.join(base, str(p)) if p else None

    return ClientConfig(
        host=server,
        ca_data=_b64(cluster.get("certificate-authority-data"), "certificate-authority-data", path),
        ca_file=resolve(cluster.get("certificate-authority")),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        server_name=cluster.get("tls-server-name") or None,
        cert_data=_b64(user.get("client-certificate-data"), "client-certificate-data", path),
        cert_file=resolve(user.get("client-certificate")),
        key_data=_b64(user.get("client-key-data"), "client-key-data", path),
        key_file=resolve(user.get("client-key")),
        bearer_token=user.get("token") or None,
        bearer_token_file=resolve(user.get("tokenFile")),
        namespace=str(ctx.get("namespace") or ""),
    )


def kubeconfig_path(kubeconfig: str | None) -> str | None:
    """The kubeconfig to read: ``--kubeconfig``, else ``$KUBECONFIG`` (its first entry), else
    ``./.controlplane/kubeconfig`` when it exists, else None."""
    if kubeconfig:
        return kubeconfig
    env = os.environ.get("KUBECONFIG")
    if env:
        return env.split(os.pathsep)[0]
    return DEFAULT_UP_KUBECONFIG if os.path.exists(DEFAULT_UP_KUBECONFIG) else None


def load_config(master: str | None, kubeconfig: str | None, context: str | None = None) -> ClientConfig:
    """``clientcmd.BuildConfigFromFlags``: the kubeconfig's config (see :func:`kubeconfig_path`)
    with ``master`` as its host when given; with neither, ``http://127.0.0.1:6443`` and no
    credentials. Raises ValueError (one line) for a bad URL or kubeconfig."""
    path = kubeconfig_path(kubeconfig)
    if path is None:
        return ClientConfig(host=master_url(master) if master else DEFAULT_SERVER)
    if not master:
        return load_kubeconfig(path, context)
    host = master_url(master)
    try:  # --master wins: a kubeconfig that cannot be read only takes the credentials away
        return load_kubeconfig(path, context).with_host(host)
    except ValueError:
        return ClientConfig(host=host)
