"""``controlplane apiserver``: run the API server (HTTPS) against etcd.

    controlplane apiserver --etcd-servers http://127.0.0.1:2379 --bind-address 127.0.0.1 --secure-port 6443 \
        --tls-cert-file pki/apiserver.crt --tls-private-key-file pki/apiserver.key --client-ca-file pki/ca.crt

``--secure-port 0`` picks a free port (``--port`` is the same flag, as the old name); the ready line
is ``event=apiserver.ready url=https://HOST:PORT``. Without ``--tls-cert-file`` a self-signed
certificate is created in ``--cert-dir`` (kube-apiserver's ``MaybeDefaultWithSelfSignedCerts``).
``--insecure-http`` serves plain HTTP instead, on a loopback address only (logged at WARNING).
SIGTERM/SIGINT stop it gracefully. A malformed ``--etcd-servers`` URL is a one-line error, exit 2.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import ssl
import sys
from typing import Any

import click

from components.apiserver.authentication import flags as authn_flags
from components.apiserver.servicealloc import parse_port_range
from components.apiserver.tls import DEFAULT_CERT_DIR, self_signed, server_context
from controlplane import aio, sdnotify
from controlplane.log import event, setup
from controlplane.pki import first_service_ip
from controlplane.service import Seconds, gc_options, tracing_options
from controlplane.storage.etcd import EtcdTLS, parse_endpoints


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP or ``localhost``) only reaches this host."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def serving_tls(bind_address: str, cert_file: str, key_file: str, client_ca_file: str, cert_dir: str,
                insecure_http: bool, service_cidr: str) -> ssl.SSLContext | None:
    """The serving context from the flags (None with ``--insecure-http``, refused — one line, exit 2 —
    on a bind address that is not loopback, and logged at WARNING). Without ``--tls-cert-file``,
    the self-signed certificate of ``--cert-dir``. click.UsageError for files that do not load."""
    if insecure_http:
        if not is_loopback(bind_address):
            click.echo(f"error: --insecure-http serves without TLS and is only allowed on a loopback "
                       f"--bind-address, not {bind_address!r}", err=True)
            sys.exit(2)
        event(setup("apiserver"), "apiserver.insecure_http", logging.WARNING,
              warning="serving plain HTTP without TLS: anyone on this host can read and forge requests")
        return None
    if bool(cert_file) != bool(key_file):
        raise click.UsageError("--tls-cert-file and --tls-private-key-file go together")
    try:
        if not cert_file:
            cert_file, key_file = self_signed(cert_dir, bind_address, first_service_ip(service_cidr))
        return server_context(cert_file, key_file, client_ca_file or None)
    except OSError as e:
        raise click.UsageError(f"--cert-dir {cert_dir!r}: {e.strerror or e}") from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def audit_from_flags(policy_file: str, log_path: str, max_size_mb: int = 0, max_backups: int = 0,
                     max_age_days: int = 0) -> Any:
    """The :class:`~components.apiserver.audit.Auditor` of the ``--audit-*`` flags: events only with
    both a policy and a log path (kube-apiserver logs nothing without either). A policy that
    does not load or a log that cannot be opened: click.UsageError (one line, exit 2)."""
    from components.apiserver.audit import Auditor, LogBackend, load_policy
    from components.apiserver.audit.policy import PolicyError
    if not policy_file or not log_path:
        return Auditor()
    try:
        policy = load_policy(policy_file)
    except PolicyError as e:
        raise click.UsageError(f"--audit-policy-file: {e}") from None
    backend = LogBackend(log_path, max_size_mb=max_size_mb, max_backups=max_backups, max_age_days=max_age_days)
    try:
        backend.open()
    except OSError as e:
        raise click.UsageError(f"--audit-log-path {log_path!r}: {e.strerror or e}") from None
    return Auditor(policy, backend)


async def serve(etcd_servers: str, bind_address: str, port: int, bookmark_interval: float,
                compaction_interval: float, service_cluster_ip_range: str = "10.96.0.0/12",
                service_node_port_range: str = "30000-32767", min_request_timeout: float = 1800.0,
                max_requests_inflight: int = 400, max_mutating_requests_inflight: int = 200,
                enable_priority_and_fairness: bool = True, admission_plugins: list[str] | None = None,
                ssl_context: ssl.SSLContext | None = None, etcd_tls: EtcdTLS | None = None,
                authentication: Any = None, authorization_modes: list[str] | None = None,
                audit: Any = None,
                permit_port_sharing: bool = False, gc_sweep_interval: float = 600.0) -> None:
    """Run until SIGTERM/SIGINT. Logs ``apiserver.ready`` with the URL once listening: HTTPS with
    ``ssl_context`` (:func:`components.apiserver.tls.server_context`), else plain HTTP.
    ``gc_sweep_interval``: seconds between full GC sweeps once the watch caches are filled
    (:class:`controlplane.gcpolicy.GCFreezer`; 0: CPython's default collector).

    On SIGTERM, as kube-apiserver's graceful termination: stop accepting connections, end
    every watch stream cleanly (the chunked stream's terminating chunk: clients see the
    watch end, not a reset), let in-flight requests finish (2 s at most), then exit 0."""
    from components.apiserver import serving
    from components.apiserver.server import APIServer
    log = setup("apiserver")
    # one log line per request/event: skip the caller lookup and thread/process fields that
    # our formatter never prints (the logging HOWTO's "Optimization" section)
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    server = APIServer(etcd_servers, bookmark_interval=bookmark_interval,
                       compaction_interval=compaction_interval, gc_sweep_interval=gc_sweep_interval,
                       service_cluster_ip_range=service_cluster_ip_range,
                       service_node_port_range=service_node_port_range,
                       min_request_timeout=min_request_timeout,
                       max_requests_inflight=max_requests_inflight,
                       max_mutating_requests_inflight=max_mutating_requests_inflight,
                       enable_priority_and_fairness=enable_priority_and_fairness,
                       admission_plugins=admission_plugins, etcd_tls=etcd_tls, authentication=authentication,
                       authorization_modes=authorization_modes, audit=audit)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    starting = asyncio.create_task(server.start())
    done, _ = await asyncio.wait({starting, asyncio.create_task(stop.wait())},
                                 return_when=asyncio.FIRST_COMPLETED)
    if starting not in done:
        starting.cancel()
        await server.store.close()
        return
    starting.result()
    listener = await serving.listen(server.app, bind_address, port, ssl_context=ssl_context,
                                    reuse_port=permit_port_sharing)
    actual = listener.port
    try:
        await server.ensure_kubernetes_service(bind_address if bind_address not in ("0.0.0.0", "::") else "127.0.0.1",
                                               actual)
    except Exception as e:  # never keeps the apiserver from serving
        event(log, "apiserver.kubernetes_service_error", logging.WARNING, error=str(e)[:200])
    host = f"[{bind_address}]" if ":" in bind_address else bind_address
    event(log, "apiserver.ready", url=f"{'https' if ssl_context else 'http'}://{host}:{actual}")
    sdnotify.notify()  # READY=1 to $NOTIFY_SOCKET, as genericapiserver.go's SdNotify once serving
    await stop.wait()
    event(log, "apiserver.stopping", watches=server.watch.active)
    await listener.stop()
    await server.stop()
    event(log, "apiserver.stopped")


@click.command(name="apiserver")
@tracing_options("apiserver", config_file=True)
@click.option("--etcd-servers", default="http://127.0.0.1:2379", show_default=True,
              help="etcd client URLs (http://HOST:PORT), comma-separated: the members of one etcd "
                   "cluster, balanced and failed over between.")
@click.option("--bind-address", default="127.0.0.1", show_default=True)
@click.option("--secure-port", "--port", "port", default=6443, show_default=True, type=click.IntRange(0, 65535),
              help="HTTPS port (0 = pick a free one); --port is the same flag.")
@click.option("--permit-port-sharing", is_flag=True, default=False,
              help="bind the secure port with SO_REUSEPORT, so several apiservers share it and the "
                   "kernel spreads connections between them (kube-apiserver's flag)")
@click.option("--tls-cert-file", default="", metavar="PATH",
              help="serving certificate (PEM, the chain after it); without it a self-signed one in --cert-dir")
@click.option("--tls-private-key-file", default="", metavar="PATH", help="key of --tls-cert-file")
@click.option("--client-ca-file", default="", metavar="PATH",
              help="CA bundle verifying client certificates (requested, not required)")
@click.option("--cert-dir", default=DEFAULT_CERT_DIR, show_default=True, metavar="DIR",
              help="where the self-signed certificate is kept when --tls-cert-file is not given")
@click.option("--insecure-http", is_flag=True, default=False,
              help="serve plain HTTP (no TLS) instead; only on a loopback --bind-address")
@click.option("--etcd-cafile", default="", metavar="PATH", help="CA verifying etcd's serving certificate")
@click.option("--etcd-certfile", default="", metavar="PATH", help="client certificate for etcd (https://)")
@click.option("--etcd-keyfile", default="", metavar="PATH", help="key of --etcd-certfile")
@click.option("--bookmark-interval", default=60.0, show_default=True,
              type=Seconds(min=0, min_open=True),
              help="Seconds between watch BOOKMARK events (kube-apiserver's cacher: about a minute).")
@click.option("--compaction-interval", default=300.0, show_default=True, type=Seconds(min=0),
              help="Seconds between etcd compactions (0 disables them, as --etcd-compaction-interval=0).")
@click.option("--min-request-timeout", default=1800, show_default=True, type=click.IntRange(min=0),
              help="Seconds a watch lasts at least when the client sets no timeoutSeconds; each "
                   "watch picks a random duration between this and twice it (kube-apiserver's flag).")
@click.option("--service-cluster-ip-range", default="10.96.0.0/12", show_default=True,
              help="CIDR from which Service cluster IPs are allocated.")
@click.option("--service-node-port-range", default="30000-32767", show_default=True,
              help="Port range for NodePort Services.")
@click.option("--max-requests-inflight", default=400, show_default=True, type=click.IntRange(0),
              help="Non-mutating requests in flight (with priority and fairness: its share of the seats).")
@click.option("--max-mutating-requests-inflight", default=200, show_default=True, type=click.IntRange(0),
              help="Mutating requests in flight (with priority and fairness: its share of the seats).")
@click.option("--enable-priority-and-fairness", default=True, show_default=True, type=click.BOOL,
              help="API Priority and Fairness instead of the two in-flight limits.")
@click.option("--enable-admission-plugins", default="", help="Admission plugins to enable besides the default "
              "ones (comma-separated; every plugin served is on by default).")
@click.option("--disable-admission-plugins", default="", help="Default admission plugins to turn off "
              "(comma-separated: NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, "
              "DefaultTolerationSeconds, RuntimeClass, ResourceQuota; NodeRestriction is off unless enabled).")
@click.option("--authorization-mode", default="AlwaysAllow", show_default=True,
              help="Ordered comma-separated authorization modes: AlwaysAllow, AlwaysDeny, Node, RBAC "
                   "(kube-apiserver's flag; e.g. Node,RBAC).")
@click.option("--audit-policy-file", default="", metavar="PATH",
              help="audit.k8s.io/v1 Policy: which requests are logged at which level (none without it)")
@click.option("--audit-log-path", default="", metavar="PATH",
              help="where audit events go as JSON lines ('-' = standard output; none without it)")
@click.option("--audit-log-maxsize", default=0, show_default=True, type=click.IntRange(0),
              help="megabytes of audit log before it is rotated (0: never)")
@click.option("--audit-log-maxbackup", default=0, show_default=True, type=click.IntRange(0),
              help="rotated audit logs kept (0: all)")
@click.option("--audit-log-maxage", default=0, show_default=True, type=click.IntRange(0),
              help="days a rotated audit log is kept (0: no limit)")
@click.option("--audit-log-format", default="json", show_default=True, type=click.Choice(["json"]),
              help="format of the audit log lines (kube-apiserver's 'legacy' text format is not served)")
@gc_options
@authn_flags.options
def command(etcd_servers: str, bind_address: str, port: int, bookmark_interval: float,
            compaction_interval: float, min_request_timeout: int, service_cluster_ip_range: str,
            service_node_port_range: str, max_requests_inflight: int, max_mutating_requests_inflight: int,
            enable_priority_and_fairness: bool, enable_admission_plugins: str, disable_admission_plugins: str,
            tls_cert_file: str, tls_private_key_file: str, client_ca_file: str, cert_dir: str,
            insecure_http: bool, etcd_cafile: str, etcd_certfile: str, etcd_keyfile: str, authorization_mode: str,
            audit_policy_file: str, audit_log_path: str, audit_log_maxsize: int, audit_log_maxbackup: int,
            audit_log_maxage: int, audit_log_format: str, permit_port_sharing: bool, gc_sweep_interval: float,
            **authn: Any) -> None:
    """Kubernetes API server (HTTPS) backed by etcd."""
    authentication = authn_flags.from_flags(authn)
    audit = audit_from_flags(audit_policy_file, audit_log_path, audit_log_maxsize, audit_log_maxbackup,
                             audit_log_maxage)
    from components.apiserver.admission import enabled_plugins
    from components.apiserver.authorization.union import parse_modes
    try:
        modes = parse_modes(authorization_mode)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--authorization-mode")
    try:
        plugins = enabled_plugins(enable_admission_plugins.split(","), disable_admission_plugins.split(","))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--enable-admission-plugins / --disable-admission-plugins")
    try:
        parse_endpoints(etcd_servers)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--etcd-servers")
    try:
        net = ipaddress.ip_network(service_cluster_ip_range, strict=False)
        if net.num_addresses < 8:
            raise ValueError("the range must hold at least 8 addresses")
    except ValueError as e:
        raise click.BadParameter(f"{service_cluster_ip_range!r}: {e}", param_hint="--service-cluster-ip-range")
    try:
        parse_port_range(service_node_port_range)
    except ValueError:
        raise click.BadParameter(f"{service_node_port_range!r}: expected FROM-TO, e.g. 30000-32767",
                                 param_hint="--service-node-port-range")
    ssl_context = serving_tls(bind_address, tls_cert_file, tls_private_key_file, client_ca_file, cert_dir,
                              insecure_http, service_cluster_ip_range)
    if bool(etcd_certfile) != bool(etcd_keyfile):
        raise click.UsageError("--etcd-certfile and --etcd-keyfile go together")
    etcd_tls = EtcdTLS(etcd_cafile, etcd_certfile, etcd_keyfile)
    try:
        if any(u.strip().startswith("https://") for u in etcd_servers.split(",")):
            etcd_tls.credentials()  # unreadable files: one line now, not a retry loop later
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    try:
        if max_requests_inflight + max_mutating_requests_inflight <= 0 and enable_priority_and_fairness:
            raise click.BadParameter("with priority and fairness they must add up to something positive",
                                     param_hint="--max-requests-inflight / --max-mutating-requests-inflight")
        aio.run(serve(etcd_servers, bind_address, port, bookmark_interval, compaction_interval,
                   service_cluster_ip_range, service_node_port_range, float(min_request_timeout),
                   max_requests_inflight, max_mutating_requests_inflight, enable_priority_and_fairness,
                   plugins, ssl_context=ssl_context, etcd_tls=etcd_tls, authentication=authentication,
                   authorization_modes=modes, audit=audit, permit_port_sharing=permit_port_sharing,
                   gc_sweep_interval=gc_sweep_interval))
    except OSError as e:
        raise click.ClickException(f"cannot listen on {bind_address}:{port}: {e.strerror or e}")
