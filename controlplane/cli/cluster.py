"""Running a whole control plane as separate OS processes.

:class:`LocalCluster` starts, in order, etcd (ours, unless external etcd URLs
are given), the apiserver, the controller-manager, the scheduler and one kubelet
per node, each as ``python -m controlplane <service> ...`` — the same command
lines a user types — with its log in ``<data-dir>/logs/<name>.log``. It waits
for each to be ready, writes ``<data-dir>/kubeconfig``, restarts a process that
dies (and says so), and stops everything in reverse order.

Transport and identities are kubeadm's (``cmd/kubeadm/app/phases/certs``, ``kubeconfig``): the
certificates live in ``<data-dir>/pki`` (:class:`controlplane.pki.PKI`, created on the first
start and reused), the apiserver serves HTTPS with them and requests client certificates signed
by ``pki/ca.crt``, and every client has a kubeconfig of its own in the data dir with the CA and
its client certificate embedded: ``kubeconfig`` (``kubernetes-admin``, ``system:masters``: the
user's, kubeadm's ``admin.conf``), ``controller-manager.conf``, ``scheduler.conf``,
``kubelet-<node>.conf`` (``system:node:<node>``) and ``kubelet-hollow.conf`` for the process
of hollow nodes (see :data:`controlplane.pki.HOLLOW_USER`); :func:`controlplane.pki.write_cluster`. etcd listens on loopback in plain HTTP unless
``etcd_tls`` (then ``pki/etcd/``: server certificate, client-certificate auth, and the
apiserver's ``apiserver-etcd-client`` certificate).

The children end with the supervisor however it ends (``kill -9`` too): each is
started with :func:`controlplane.lifeline.child_kwargs` (SIGTERM on the parent's
death, PR_SET_PDEATHSIG on Linux) and inherits the open ``<data-dir>/.lock`` whose
flock the supervisor holds, so the lock stays taken until the last of them has
exited and no second cluster can start on the same files before.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import json
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, TextIO

import aiohttp
import yaml

from controlplane import pki, sdnotify
from controlplane.cli.defaults import DEFAULT_AUTHORIZATION_MODE, DEFAULT_POD_NETWORK_CIDR, DEFAULT_SERVICE_CIDR
from controlplane.cli.zygote import Zygote, ZygoteProcess
from controlplane.client.config import load_kubeconfig
from controlplane.clusterconfig import ClusterConfig, controller_enabled
from controlplane.lifeline import child_kwargs


def short_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux ``/proc``; elsewhere
    ``kill(pid, 0)``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass(frozen=True)
class MetricsEndpoint:
    """Where one process serves its metrics: ``job`` (the Prometheus job: ``etcd``, ``apiserver``,
    ``kube-scheduler``, ``kube-controller-manager``, ``kubelet``), ``service`` (the supervised
    process), ``url`` (``http://127.0.0.1:PORT``, ``/metrics`` below it) and ``health`` (its health
    URL)."""

    job: str
    service: str
    url: str
    health: str


#: Kubernetes' default ports of the components' plain-HTTP endpoints (the kubelet's healthz and
#: read-only ports; kube-scheduler's and kube-controller-manager's deprecated insecure ports)
DEFAULT_PORTS = {"scheduler": 10251, "controller-manager": 10252, "kubelet-healthz": 10248,
                 "kubelet-read-only": 10255}


@dataclass
class Service:
    """One supervised process: its name, argv (after ``controlplane``; or the whole command
    line in ``exe`` + ``args`` for another program, the real etcd) and state."""

    name: str
    args: list[str]
    exe: list[str] | None = None
    proc: asyncio.subprocess.Process | ZygoteProcess | None = None
    restarts: int = 0
    log_path: str = ""
    log_offset: int = 0  # the log's size when the process was last started
    stopping: bool = False
    watcher: asyncio.Task[None] | None = field(default=None, repr=False)


#: ``controlplane up``'s audit policy (``<data-dir>/audit-policy.yaml``, written once): every
#: request at Metadata (who, what, when, the answer) but the noise — health checks, metrics,
#: the trace endpoint, leases (the heartbeats and leader elections) and events —; RequestReceived
#: omitted (each request is one line, at its end); secrets, tokens and reviews never beyond Metadata
DEFAULT_AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version*", "/metrics", "/debug/*", "/openapi/*"]
- level: None
  resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
- level: None
  resources: [{group: "", resources: ["events"]}, {group: "events.k8s.io", resources: ["events"]}]
- level: Metadata
  resources: [{group: "", resources: ["secrets", "configmaps", "serviceaccounts/token"]},
              {group: "authentication.k8s.io"}, {group: "authorization.k8s.io"}]
- level: Metadata
"""

#: the etcd ``controlplane up`` can start: ours (``controlplane etcd``) or Debian's etcd-server
ETCD_KINDS = ("embedded", "real")
#: the real etcd's binary (Debian's ``etcd-server`` package)
REAL_ETCD = "/usr/bin/etcd"


def is_apiserver(name: str) -> bool:
    """Whether a supervised service is an apiserver replica (``apiserver``, ``apiserver-N``)."""
    return name == "apiserver" or name.startswith("apiserver-")


def is_etcd(name: str) -> bool:
    """Whether a supervised service is an etcd member (``etcd``, ``etcd-N``)."""
    return name == "etcd" or name.startswith("etcd-")


def notifies(name: str) -> bool:
    """Whether a supervised service sends ``READY=1`` to ``$NOTIFY_SOCKET`` once it serves
    (:mod:`controlplane.sdnotify`): every etcd member and every apiserver replica of ours
    (a program of another, Debian's etcd, is waited on by polling)."""
    return is_etcd(name) or is_apiserver(name)





class LocalCluster:
    """A control plane of separate processes.

    ``etcd_servers``: external etcd URLs (comma list) — then no etcd is started.
    ``apiserver_port`` / ``etcd_port``: 0 picks free ports. ``nodes``: node
    names, one kubelet process each. ``say`` prints a line for the user.
    ``etcd_tls``: the embedded etcd serves TLS with client-certificate auth (kubeadm's default;
    ours stays plain HTTP on loopback unless asked). ``apiserver_cert_extra_sans``: more names
    and IPs in the apiserver's serving certificate (kubeadm's ``--apiserver-cert-extra-sans``).
    ``tracing_endpoint``: an OTLP/HTTP collector (``host:port``) every process but etcd sends its
    OpenTelemetry spans to, sampling ``tracing_sampling_rate_per_million`` new roots per million.
    ``parallel``: start every process at once (the apiserver waits for etcd, the
    others for the apiserver, see :func:`controlplane.client.rest.wait_ready`) and wait on watches for the nodes
    to be Ready and the ``default`` ServiceAccount to exist — the pytest plugin's
    fast start; ``controlplane up`` starts them one after another.
    Raises RuntimeError (one-line message) when a service cannot start.
    """

    def __init__(self, data_dir: str, *, etcd_servers: str | None = None,
                 apiserver_port: int = 6443, etcd_port: int = 2379,
                 nodes: tuple[str, ...] = ("node01", "node02"),
                 node_labels: dict[str, str] | None = None, hollow_nodes: int = 0,
                 kubelet_args: tuple[str, ...] = (),
                 say: Callable[[str], None] = print, restart: bool = True,
                 parallel: bool = False, config: ClusterConfig | None = None,
                 tracing_endpoint: str | None = None, tracing_sampling_rate_per_million: int = 1_000_000,
                 authorization_mode: str | None = DEFAULT_AUTHORIZATION_MODE,
                 etcd_tls: bool = False, apiserver_cert_extra_sans: tuple[str, ...] = (),
                 audit: bool = True, audit_policy_file: str | None = None,
                 apiservers: int = 1, etcd: str = "embedded", etcd_members: int = 1,
                 zygote: Zygote | None = None, pod_network_cidr: str = DEFAULT_POD_NETWORK_CIDR) -> None:
        self.data_dir = os.path.abspath(data_dir)
        #: ``--cluster-cidr`` of the node IPAM controller
        self.pod_network_cidr = pod_network_cidr
        self.etcd_servers = etcd_servers
        if apiservers < 1:
            raise RuntimeError(f"--apiservers {apiservers}: at least one apiserver is needed")
        if etcd not in ETCD_KINDS:
            raise RuntimeError(f"--etcd {etcd!r}: expected one of {', '.join(ETCD_KINDS)}")
        if etcd_members < 1 or (etcd == "embedded" and etcd_members != 1):
            raise RuntimeError(f"--etcd-members {etcd_members}: the embedded etcd is one member; "
                               f"use --etcd real for a cluster of several")
        if etcd == "real" and not etcd_servers and not os.path.exists(REAL_ETCD):
            raise RuntimeError(f"--etcd real: {REAL_ETCD} not found (apt-get install etcd-server)")
        if etcd == "real" and etcd_tls:
            raise RuntimeError("--etcd-tls is for the embedded etcd; the real etcd members serve plain HTTP on loopback")
        #: apiserver replicas, all on ``apiserver_port`` (SO_REUSEPORT) when more than one
        self.apiservers = apiservers
        #: which etcd ``up`` starts (``embedded``: ours; ``real``: Debian's /usr/bin/etcd) and how
        #: many members (a cluster of ``etcd_members`` with ``--initial-cluster``)
        self.etcd_kind, self.etcd_members = etcd, etcd_members
        self.apiserver_port = apiserver_port or free_port()
        self.etcd_port = etcd_port or free_port()
        #: (client port, peer port) of every etcd member; the first client port is ``etcd_port``
        self.etcd_ports = [(self.etcd_port, free_port())] + [(free_port(), free_port())
                                                              for _ in range(etcd_members - 1)]
        #: the declarative cluster config (``--config``); it replaces nodes / hollow_nodes
        self.config = config
        self.nodes = config.node_names if config else nodes
        self.node_labels = node_labels or {}
        self.hollow_nodes = config.hollow_node_count if config else hollow_nodes
        self.kubelet_args = list(kubelet_args)
        self.say = say
        self.restart = restart
        self.parallel = parallel
        #: ``--tracing-endpoint`` / ``--tracing-sampling-rate-per-million`` given to every process
        #: but etcd (OpenTelemetry, controlplane/otel.py); None: no tracing
        self.tracing = [] if not tracing_endpoint else [
            "--tracing-endpoint", tracing_endpoint,
            "--tracing-sampling-rate-per-million", str(tracing_sampling_rate_per_million)]
        #: the apiserver's ``--authorization-mode`` (None: its default, AlwaysAllow); with
        #: ``Node`` the NodeRestriction admission plugin is enabled too, as kubeadm does
        self.authorization_mode = authorization_mode
        self.services: list[Service] = []
        self.server = f"https://127.0.0.1:{self.apiserver_port}"
        self.kubeconfig = os.path.join(self.data_dir, "kubeconfig")
        self.pki = pki.PKI(os.path.join(self.data_dir, "pki"))
        self.etcd_tls = etcd_tls
        self.apiserver_cert_extra_sans = apiserver_cert_extra_sans
        #: the apiserver's audit log, ``<data-dir>/logs/audit.log`` (off: None), by
        #: ``audit_policy_file`` or :data:`DEFAULT_AUDIT_POLICY` written to ``<data-dir>/audit-policy.yaml``
        self.audit_log = os.path.join(self.data_dir, "logs", "audit.log") if audit else None
        self.audit_policy_file = audit_policy_file
        #: fork every process from this zygote (:mod:`controlplane.cli.zygote`: the imports done
        #: once) instead of starting ``python -m controlplane`` for each; None: exec each
        self.zygote = zygote
        self._ssl: Any = None  # the admin's ssl.SSLContext, once the PKI exists
        self._failed: asyncio.Queue[str] = asyncio.Queue()
        self._lock: TextIO | None = None  # the open, flocked <data-dir>/.lock
        #: every process's metrics endpoint (filled as the services are built)
        self.endpoints: list[MetricsEndpoint] = []
        self._given: set[int] = set()
        #: the services that tell their readiness (``sd_notify``), by name: the socket they send
        #: ``READY=1`` to (:mod:`controlplane.sdnotify`)
        self._notify: dict[str, sdnotify.NotifySocket] = {}

    # -- lifecycle -------------------------------------------------------------
    def _lock_data_dir(self) -> None:
        """Hold an exclusive lock on ``<data-dir>/.lock`` for this cluster's life,
        so a second cluster cannot share (and corrupt) the same etcd data and
        kubeconfig. The children inherit the locked file (flock locks belong to
        the open file, shared across fork), so the lock outlives a killed
        supervisor until its last child has exited. Raises RuntimeError naming
        the holder's pid."""
        path = os.path.join(self.data_dir, ".lock")
        f = open(path, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "?"
            f.close()
            if holder.isdigit() and not pid_alive(int(holder)):
                raise RuntimeError(f"data dir {short_path(self.data_dir)} is in use by the services of "
                                   f"controlplane pid {holder}, which has exited; they are stopping, "
                                   f"try again in a few seconds") from None
            raise RuntimeError(f"data dir {short_path(self.data_dir)} is in use by another "
                               f"controlplane (pid {holder}); stop it or pick another --data-dir") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        self._lock = f

    def _preflight(self) -> None:
        """Refuse ports that are taken before anything starts."""
        for client, _ in self.etcd_ports[1:] if not self.etcd_servers else []:
            if port_in_use(client):
                raise RuntimeError(f"port {client} is in use (etcd member): try again")
        if not self.etcd_servers and port_in_use(self.etcd_port):
            raise RuntimeError(f"port {self.etcd_port} is in use: is another etcd running? "
                               f"Pass --etcd-servers to use it, or --etcd-port")
        if port_in_use(self.apiserver_port):
            raise RuntimeError(f"port {self.apiserver_port} is in use: is another apiserver "
                               f"running? Use --port to pick another")

    async def start(self) -> None:
        """Start every service in order and wait until the nodes are Ready.

        Raises RuntimeError (one line) if the data dir is locked, a port is
        taken, or a service exits or is not ready in time.
        """
        try:
            os.makedirs(os.path.join(self.data_dir, "logs"), exist_ok=True)
        except OSError as e:
            raise RuntimeError(f"cannot use data dir {self.data_dir!r}: {e.strerror or e}") from None
        self._lock_data_dir()
        self._preflight()
        self._write_pki()
        if self.parallel:
            await self._start_parallel()
            return
        etcd_url = self.etcd_servers
        if not etcd_url:
            etcd_url = self._etcd_urls
            for svc in self._etcd_services():
                await self._spawn(svc)
            for svc, (client, _) in zip(self._etcd_group(), self.etcd_ports):
                await self._wait_notified(svc.name, functools.partial(self._wait_tcp, client, svc.name))
        for svc in self._apiserver_services(etcd_url):
            await self._spawn(svc)
        await self._wait_apiservers()
        for svc in self._client_services():
            await self._spawn(svc)
        await self._wait_nodes_ready()
        if self._runs("persistentvolume-binder"):
            await self._watch_default_storage_class()

    async def _start_parallel(self) -> None:
        """Every process at once: etcd, the apiserver (which retries etcd from 20 ms on) and
        the clients of the apiserver (which wait for it themselves). Then the apiserver's /readyz, and watches until every node is Ready and
        the ``default`` ServiceAccount of ``default`` exists (the serviceaccount controller's
        work, ``pkg/controller/serviceaccount/serviceaccounts_controller.go``). A service that
        exits meanwhile ends the wait with RuntimeError naming it and its last log line."""
        etcd_url = self.etcd_servers
        if not etcd_url:
            etcd_url = self._etcd_urls
            for svc in self._etcd_services():
                await self._spawn(svc)
        for svc in self._apiserver_services(etcd_url):
            await self._spawn(svc)
        for svc in self._client_services():
            await self._spawn(svc)

        async def usable() -> None:
            await self._wait_apiservers(max_delay=0.02)
            waits = [self._watch_nodes_ready()]
            if self._runs("serviceaccount"):
                waits.append(self._watch_default_service_account())
            if self._runs("persistentvolume-binder"):
                waits.append(self._watch_default_storage_class())
            await asyncio.gather(*waits)
        ready = asyncio.ensure_future(usable())
        failed = asyncio.ensure_future(self._failed.get())
        try:
            done, _ = await asyncio.wait({ready, failed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (ready, failed):
                if not t.done():
                    t.cancel()
        if failed in done:
            name = failed.result()
            self._failed.put_nowait(name)  # supervise() restarts it later, as in sequential mode
            svc = next(s for s in self.services if s.name == name)
            rc = svc.proc.returncode if svc.proc else None
            raise RuntimeError(f"{name} exited with status {rc} while starting: {self._last_log_line(name)}")
        ready.result()

    @property
    def _etcd_url(self) -> str:
        return f"{'https' if self.etcd_tls else 'http'}://127.0.0.1:{self.etcd_port}"

    @property
    def _etcd_urls(self) -> str:
        """Every member's client URL, comma-separated (the apiserver's ``--etcd-servers``)."""
        scheme = "https" if self.etcd_tls else "http"
        return ",".join(f"{scheme}://127.0.0.1:{client}" for client, _ in self.etcd_ports)

    def _etcd_group(self) -> list[Service]:
        return [s for s in self.services if is_etcd(s.name)]

    def _etcd_services(self) -> list[Service]:
        """The etcd processes: ours (one), or ``etcd_members`` real etcd members named
        ``etcd`` (one) or ``etcd-0`` … forming one cluster (``--initial-cluster`` of every peer
        URL, ``--initial-cluster-state new``; a restarted member rejoins from its data dir)."""
        if self.etcd_kind == "embedded":
            return [self._etcd_service()]
        names = ["etcd"] if self.etcd_members == 1 else [f"etcd-{i}" for i in range(self.etcd_members)]
        peers = ",".join(f"{n}=http://127.0.0.1:{peer}" for n, (_, peer) in zip(names, self.etcd_ports))
        out = []
        for name, (client, peer) in zip(names, self.etcd_ports):
            url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
            out.append(Service(name, ["--name", name, "--data-dir", os.path.join(self.data_dir, "real-etcd", name),
                                      "--listen-client-urls", url, "--advertise-client-urls", url,
                                      "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                                      "--initial-cluster", peers, "--initial-cluster-state", "new",
                                      "--initial-cluster-token", "controlplane"],
                               exe=[REAL_ETCD]))
        return out

    def _etcd_service(self) -> Service:
        args = ["etcd", "--name", "controlplane",
                "--listen-client-urls", self._etcd_url, "--advertise-client-urls", self._etcd_url,
                "--data-dir", os.path.join(self.data_dir, "etcd")]
        if self.etcd_tls:  # kubeadm's etcd static pod: etcd/server.crt, client-cert auth on etcd/ca.crt
            server = os.path.join("etcd", "server")
            args += ["--cert-file", self.pki.path(server), "--key-file", self.pki.path(server, "key"),
                     "--trusted-ca-file", self.pki.path(os.path.join("etcd", "ca")), "--client-cert-auth"]
        return Service("etcd", args)

    def _apiserver_services(self, etcd_url: str) -> list[Service]:
        """``apiservers`` replicas: ``apiserver`` alone, else ``apiserver-0`` … each with its own
        watch caches, all on the one port with ``--permit-port-sharing`` (SO_REUSEPORT: the
        kernel spreads new connections over them); replica ``i``'s audit log is
        ``<data-dir>/logs/audit-apiserver-<i>.log``."""
        one = self._apiserver_service(etcd_url)
        if self.apiservers == 1:
            return [one]
        out = []
        for i in range(self.apiservers):
            args = [*one.args, "--permit-port-sharing"]
            if self.audit_log is not None:  # each replica writes its own audit log, as kube-apiserver's do
                at = args.index("--audit-log-path") + 1
                args[at] = os.path.join(os.path.dirname(self.audit_log), f"audit-apiserver-{i}.log")
            out.append(Service(f"apiserver-{i}", args))
        return out

    async def _wait_apiservers(self, max_delay: float = 0.5) -> None:
        """Until every apiserver replica said it is ready: ``READY=1`` on its notify socket, else
        (no socket) its ``apiserver.ready`` log line — one replica's /readyz says nothing of the
        others behind the shared port — or, for a single apiserver, /readyz polled."""
        replicas = [s for s in self.services if is_apiserver(s.name)]
        if len(replicas) == 1:
            await self._wait_notified(replicas[0].name, lambda: self._wait_http(
                self.server + "/readyz", "apiserver", max_delay=max_delay))
            return
        for svc in replicas:
            await self._wait_notified(svc.name, functools.partial(
                self._wait_until, self._logged(svc, "event=apiserver.ready"), svc.name, svc.name, max_delay=max_delay))

    def _logged(self, svc: Service, text: str) -> Callable[[], Awaitable[bool]]:
        """A check: whether ``svc``'s log has had a line with ``text`` since its last start."""
        start = svc.log_offset

        async def check() -> bool:
            try:
                with open(svc.log_path, "rb") as f:
                    f.seek(start)
                    return text.encode() in f.read()
            except OSError:
                return False
        return check

    def _apiserver_service(self, etcd_url: str) -> Service:
        p = self.pki
        args = ["apiserver", "--etcd-servers", etcd_url, "--bind-address", "127.0.0.1",
                "--secure-port", str(self.apiserver_port),
                "--tls-cert-file", p.path("apiserver"), "--tls-private-key-file", p.path("apiserver", "key"),
                "--client-ca-file", p.ca_file,
                # kubeadm's sa.key / sa.pub: service-account tokens outlive an apiserver restart
                "--service-account-key-file", p.path("sa", "pub"),
                "--service-account-signing-key-file", p.path("sa", "key"), *self.tracing]
        if self.etcd_tls and not self.etcd_servers:
            args += ["--etcd-cafile", p.path(os.path.join("etcd", "ca")),
                     "--etcd-certfile", p.path("apiserver-etcd-client"),
                     "--etcd-keyfile", p.path("apiserver-etcd-client", "key")]
        if self.audit_log is not None:
            policy = self.audit_policy_file or os.path.join(self.data_dir, "audit-policy.yaml")
            if not self.audit_policy_file and not os.path.exists(policy):
                with open(policy, "w") as f:  # written once: an edited policy is kept
                    f.write(DEFAULT_AUDIT_POLICY)
            args += ["--audit-policy-file", policy, "--audit-log-path", self.audit_log,
                     "--audit-log-maxsize", "100", "--audit-log-maxbackup", "2"]
        enable = list(self.config.enable_admission_plugins) if self.config is not None else []
        if self.authorization_mode:
            args += ["--authorization-mode", self.authorization_mode]
            if "Node" in self.authorization_mode.split(",") and "NodeRestriction" not in enable:
                enable.append("NodeRestriction")
        if enable:
            args += ["--enable-admission-plugins", ",".join(enable)]
        if self.config is not None and self.config.disable_admission_plugins:
            args += ["--disable-admission-plugins", ",".join(self.config.disable_admission_plugins)]
        return Service("apiserver", args)

    def _port(self, default: int) -> int:
        """Kubernetes' ``default`` port when it is free and not given to another process of this
        cluster (never in parallel mode: test clusters run side by side), else a free port."""
        port = default
        if self.parallel or port in self._given or port_in_use(port):
            port = free_port()
            while port in self._given:
                port = free_port()
        self._given.add(port)
        return port

    def kubeconfig_of(self, component: str) -> str:
        """Path of a component's kubeconfig (kubeadm's names): ``controller-manager.conf``,
        ``scheduler.conf``, ``kubelet-<node>.conf``, ``kubelet-hollow.conf``."""
        return pki.component_kubeconfig(self.data_dir, component)

    def _client_services(self) -> list[Service]:
        """The controller-manager, the scheduler and the kubelets, in start order, each with its
        own kubeconfig (its identity; every hollow-node process shares ``kubelet-hollow``) and its
        own metrics / health port on 127.0.0.1 (recorded in :attr:`endpoints`)."""
        def kc(service: str) -> list[str]:
            identity = "kubelet-hollow" if service.startswith("kubelet-hollow") else service
            return ["--kubeconfig", self.kubeconfig_of(identity), *self.tracing]
        if not self.etcd_servers:
            for svc, url in zip(self._etcd_group(), self._etcd_urls.split(",")):
                self.endpoints.append(MetricsEndpoint("etcd", svc.name, url, url + "/health"))
        # replicas sharing the port answer one by one, whichever the kernel picks for a connection
        self.endpoints.append(MetricsEndpoint("apiserver", "apiserver" if self.apiservers == 1
                                              else f"apiserver-0..{self.apiservers - 1}",
                                              self.server, self.server + "/readyz"))
        cfg = self.config
        cm_args = ["--controllers", ",".join(cfg.controllers)] if cfg and cfg.controllers is not None else []
        out = []
        cm_args = [*cm_args, "--root-ca-file", self.pki.ca_file,  # published as kube-root-ca.crt
                   # node IPAM as kubeadm configures it (every node's spec.podCIDR)
                   "--allocate-node-cidrs=true", "--cluster-cidr", self.pod_network_cidr,
                   "--service-cluster-ip-range", DEFAULT_SERVICE_CIDR]
        for name, job, extra in (("controller-manager", "kube-controller-manager", cm_args),
                                 ("scheduler", "kube-scheduler", self._scheduler_config_args())):
            port = self._port(DEFAULT_PORTS[name])
            url = f"http://127.0.0.1:{port}"
            self.endpoints.append(MetricsEndpoint(job, name, url, url + "/healthz"))
            out.append(Service(name, [name, *kc(name), *extra, "--address", "127.0.0.1", "--port", str(port)]))
        # (service name, the kubelet's node arguments)
        kubelets: list[tuple[str, list[str]]]
        if cfg is not None:
            kubelets = [(f"kubelet-{spec.name}", ["--node-name", spec.name, *spec.kubelet_args()])
                        for spec in cfg.nodes]
            kubelets += [(f"kubelet-hollow-{pool.name.rstrip('-.') or 'pool'}",
                          ["--hollow-nodes", str(pool.count), "--node-name-prefix", pool.name,
                           "--node-index", str(pool.first_index), *pool.kubelet_args()])
                         for pool in cfg.hollow_pools]
        else:
            kubelets = [(f"kubelet-{node}", ["--node-name", node,
                                             "--root-dir", os.path.join(self.data_dir, "kubelet", node),
                                             *(["--node-labels", self.node_labels[node]]
                                               if node in self.node_labels else [])]) for node in self.nodes]
            if self.hollow_nodes:
                kubelets.append(("kubelet-hollow", ["--hollow-nodes", str(self.hollow_nodes),
                                                    "--node-name-prefix", "hollow-",
                                                    "--root-dir", os.path.join(self.data_dir, "kubelet", "hollow")]))
        for name, node_args in kubelets:
            healthz, read_only = self._port(DEFAULT_PORTS["kubelet-healthz"]), \
                self._port(DEFAULT_PORTS["kubelet-read-only"])
            url = f"http://127.0.0.1:{read_only}"
            self.endpoints.append(MetricsEndpoint("kubelet", name, url, f"http://127.0.0.1:{healthz}/healthz"))
            out.append(Service(name, ["kubelet", *kc(name), *node_args, "--healthz-port", str(healthz),
                                      "--read-only-port", str(read_only), "--address", "127.0.0.1",
                                      *self.kubelet_args]))
        return out

    def _scheduler_config_args(self) -> list[str]:
        """``--config FILE`` when the cluster config carries a KubeSchedulerConfiguration: written
        to ``<data-dir>/scheduler-config.yaml`` for the scheduler to read."""
        if self.config is None or self.config.scheduler_config is None:
            return []
        path = os.path.join(self.data_dir, "scheduler-config.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(self.config.scheduler_config, f, sort_keys=False)
        return ["--config", path]

    async def stop(self) -> None:
        """Stop in reverse dependency order — kubelets, scheduler and
        controller-manager first, then the apiserver, then etcd — each stage
        with SIGTERM, SIGKILL after 10 s. Releases the data-dir lock."""
        stages = [[s for s in self.services if not is_apiserver(s.name) and not is_etcd(s.name)],
                  [s for s in self.services if is_apiserver(s.name)],
                  [s for s in self.services if is_etcd(s.name)]]
        for svc in self.services:
            svc.stopping = True
        for stage in stages:
            for svc in stage:
                if svc.proc and svc.proc.returncode is None:
                    try:
                        svc.proc.send_signal(signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            for svc in stage:
                if svc.proc and svc.proc.returncode is None:
                    try:
                        await asyncio.wait_for(svc.proc.wait(), 10)
                    except asyncio.TimeoutError:
                        svc.proc.kill()
                        await svc.proc.wait()
                if svc.watcher:
                    svc.watcher.cancel()
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        for sock in self._notify.values():
            sock.close()
        self._notify.clear()

    @property
    def started(self) -> bool:
        return any(s.proc is not None for s in self.services)

    async def supervise(self) -> None:
        """Run until cancelled, restarting (and reporting) processes that die."""
        while True:
            name = await self._failed.get()
            svc = next(s for s in self.services if s.name == name)
            if not self.restart or svc.stopping:
                continue
            svc.restarts += 1
            delay = min(2 ** min(svc.restarts, 5) * 0.25, 10)
            self.say(f"restarting {name} in {delay:.1f}s (restart #{svc.restarts})")
            await asyncio.sleep(delay)  # restart backoff
            await self._launch(svc)

    # -- helpers ---------------------------------------------------------------
    async def _spawn(self, svc: Service) -> None:
        svc.log_path = os.path.join(self.data_dir, "logs", f"{svc.name}.log")
        self.services.append(svc)
        if notifies(svc.name) and svc.exe is None and sdnotify.NotifySocket.available():
            self._notify[svc.name] = sdnotify.NotifySocket(f"controlplane-{os.getpid()}-{id(self):x}-{svc.name}")
        await self._launch(svc)

    async def _launch(self, svc: Service) -> None:
        logf = open(svc.log_path, "ab")
        svc.log_offset = logf.tell()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop(sdnotify.ENV, None)
        if svc.name in self._notify:
            self._notify[svc.name].ready = False
            env[sdnotify.ENV] = self._notify[svc.name].name
        keep = (self._lock.fileno(),) if self._lock is not None else ()
        try:
            if svc.exe is not None:  # another program (Debian's etcd): exec'd, never forked from the zygote
                svc.proc = await asyncio.create_subprocess_exec(
                    *svc.exe, *svc.args,
                    stdin=asyncio.subprocess.DEVNULL, stdout=logf, stderr=logf,
                    start_new_session=True, **child_kwargs(pass_fds=keep, env=env))
            elif self.zygote is not None:
                svc.proc = self.zygote.spawn(svc.args, log_fd=logf.fileno(), env=env, keep_fds=keep)
            else:
                svc.proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "controlplane", *svc.args,
                    stdin=asyncio.subprocess.DEVNULL, stdout=logf, stderr=logf,
                    start_new_session=True, **child_kwargs(pass_fds=keep, env=env))
        finally:
            logf.close()
        self.say(f"started {svc.name:<19} pid {svc.proc.pid:<7} log {short_path(svc.log_path)}")
        svc.watcher = asyncio.create_task(self._watch_exit(svc))

    async def _watch_exit(self, svc: Service) -> None:
        assert svc.proc is not None
        rc = await svc.proc.wait()
        if svc.stopping:
            return
        how = f"killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        self.say(f"{svc.name} {how} (see {short_path(svc.log_path)})")
        self._failed.put_nowait(svc.name)

    def _last_log_line(self, name: str) -> str:
        svc = next((s for s in self.services if s.name == name), None)
        if svc is None:
            return ""
        try:
            with open(svc.log_path, "rb") as f:
                lines = f.read().decode(errors="replace").strip().splitlines()
            return lines[-1] if lines else ""
        except OSError:
            return ""

    async def _wait_until(self, check: Callable[[], Awaitable[bool]], what: str, name: str,
                          timeout: float = 60, max_delay: float = 0.5) -> None:
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            if await check():
                return
            svc = next((s for s in self.services if s.name == name), None)
            if svc and svc.proc and svc.proc.returncode is not None:
                raise RuntimeError(f"{name} exited with status {svc.proc.returncode} while "
                                   f"starting: {self._last_log_line(name)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} not ready after {timeout:.0f}s "
                                   f"(see {short_path(svc.log_path) if svc else 'logs'})")
            await asyncio.sleep(min(delay, max_delay))  # readiness polling backoff
            delay = min(delay * 1.5, max_delay)

    async def _wait_notified(self, name: str, poll: Callable[[], Awaitable[None]], timeout: float = 60) -> None:
        """Until service ``name`` says it is ready (``READY=1`` on its notify socket); ``poll``
        (e.g. its health endpoint polled) where it has no socket. RuntimeError (one line) when it
        exits first or stays silent ``timeout`` seconds."""
        sock = self._notify.get(name)
        svc = next((s for s in self.services if s.name == name), None)
        if sock is None or svc is None or svc.proc is None:
            await poll()
            return
        ready = asyncio.ensure_future(sock.wait_ready())
        exited = asyncio.ensure_future(svc.proc.wait())
        try:
            done, _ = await asyncio.wait({ready, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (ready, exited):
                if not t.done():
                    t.cancel()
        if ready in done:
            return
        if exited in done:
            raise RuntimeError(f"{name} exited with status {exited.result()} while starting: "
                               f"{self._last_log_line(name)}")
        raise RuntimeError(f"{name} not ready after {timeout:.0f}s (see {short_path(svc.log_path)})")

    async def _wait_tcp(self, port: int, name: str, max_delay: float = 0.5) -> None:
        async def check() -> bool:
            return port_in_use(port)
        await self._wait_until(check, name, name, max_delay=max_delay)

    async def _wait_http(self, url: str, name: str, max_delay: float = 0.5) -> None:
        async def check() -> bool:
            try:
                async with self._session() as s, \
                        s.get(url, timeout=aiohttp.ClientTimeout(total=2)) as r:
                    return r.status == 200
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                return False
        await self._wait_until(check, name, name, max_delay=max_delay)

    @property
    def node_names(self) -> list[str]:
        """Every node this cluster runs: the named ones, then ``hollow-0..N-1``."""
        if self.config is not None:
            return [*self.nodes, *(f"{p.name}{i}" for p in self.config.hollow_pools for i in range(p.count))]
        return [*self.nodes, *(f"hollow-{i}" for i in range(self.hollow_nodes))]

    async def _wait_nodes_ready(self) -> None:
        want = set(self.node_names)

        async def check() -> bool:
            try:
                async with self._session() as s, s.get(
                        self.server + "/api/v1/nodes",
                        params={"resourceVersion": "0"},
                        timeout=aiohttp.ClientTimeout(total=2)) as r:
                    if r.status != 200:
                        return False
                    items = (await r.json()).get("items") or []
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
                return False
            ready = {n["metadata"]["name"] for n in items
                     if any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in (n.get("status") or {}).get("conditions") or [])}
            return want <= ready
        first = next((s.name for s in self.services if s.name.startswith("kubelet-")), "kubelet-hollow")
        # polled every 50 ms at most: the nodes turn Ready a second or so after their kubelets start
        await self._wait_until(check, f"{len(want)} nodes", first,
                               timeout=60 + len(want) / 20, max_delay=0.05)

    async def _watch_until(self, path: str, done: Callable[[dict[str, dict[str, Any]]], bool], what: str,
                           timeout: float) -> None:
        """Watch ``path`` (a list URL path, query included) from "most recent" — the initial
        ADDED events carry the current objects (``staging/src/k8s.io/apiserver/pkg/storage/
        cacher/cacher.go``, unset resourceVersion) — until ``done(objects by name)``.
        Reconnects when the stream ends; RuntimeError after ``timeout`` s."""
        objects: dict[str, dict[str, Any]] = {}
        sep = "&" if "?" in path else "?"

        async def watch() -> None:
            async with self._session() as s:
                while True:
                    objects.clear()
                    async with s.get(f"{self.server}{path}{sep}watch=1",
                                     timeout=aiohttp.ClientTimeout(total=None, sock_read=None)) as r:
                        if r.status != 200:
                            raise RuntimeError(f"watching {what}: apiserver answered {r.status}")
                        async for line in r.content:
                            if not line.strip():
                                continue
                            ev = json.loads(line)
                            obj = ev.get("object") or {}
                            name = (obj.get("metadata") or {}).get("name")
                            if not name:
                                continue
                            if ev.get("type") == "DELETED":
                                objects.pop(name, None)
                            elif ev.get("type") in ("ADDED", "MODIFIED"):
                                objects[name] = obj
                            if done(objects):
                                return
        try:
            await asyncio.wait_for(watch(), timeout)
        except asyncio.TimeoutError:
            raise RuntimeError(f"{what} not ready after {timeout:.0f}s (see {short_path(self.data_dir)}/logs)") \
                from None

    async def _watch_nodes_ready(self) -> None:
        want = set(self.node_names)

        def done(nodes: dict[str, dict[str, Any]]) -> bool:
            ready = {name for name, n in nodes.items()
                     if any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in (n.get("status") or {}).get("conditions") or [])}
            return want <= ready
        await self._watch_until("/api/v1/nodes", done, f"{len(want)} nodes", timeout=60 + len(want) / 20)

    def _runs(self, controller: str) -> bool:
        """Whether the controller-manager is started with ``controller`` on (the cluster config's
        ``controllerManager.controllers``)."""
        return controller_enabled(self.config.controllers if self.config else None, controller)

    async def _watch_default_service_account(self) -> None:
        await self._watch_until("/api/v1/namespaces/default/serviceaccounts", lambda sas: "default" in sas,
                                "the default ServiceAccount", timeout=60)

    async def _watch_default_storage_class(self) -> None:
        """Until a StorageClass is marked default (the controller-manager's PV controller writes
        ``standard`` at start), so a claim created right after start gets it."""
        def done(classes: dict[str, dict[str, Any]]) -> bool:
            return any(((c.get("metadata") or {}).get("annotations") or {}).get(
                "storageclass.kubernetes.io/is-default-class") == "true" for c in classes.values())
        await self._watch_until("/apis/storage.k8s.io/v1/storageclasses", done, "the default StorageClass",
                                timeout=60)

    def _write_pki(self) -> None:
        """Create (or reuse) the certificates in ``<data-dir>/pki`` and write every kubeconfig,
        each with the CA and its client certificate embedded; the admin's is ``kubeconfig``
        (namespace ``default``). RuntimeError (one line) when the files cannot be written."""
        try:
            pki.write_cluster(self.data_dir, self.server, self.nodes, hollow=bool(self.hollow_nodes),
                              extra_sans=self.apiserver_cert_extra_sans,
                              etcd_tls=self.etcd_tls and not self.etcd_servers)
        except OSError as e:
            raise RuntimeError(f"cannot write the certificates in {short_path(self.pki.dir)}: "
                               f"{e.strerror or e}") from None
        self._ssl = load_kubeconfig(self.kubeconfig).ssl_context()

    def _session(self) -> aiohttp.ClientSession:
        """An aiohttp session speaking to the apiserver as the admin (its CA and certificate)."""
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self._ssl if self._ssl else True))
