"""``controlplane etcd``: the embedded etcd3-compatible server, with etcd's own flag names.

Example::

    controlplane etcd --listen-client-urls http://127.0.0.1:0 --data-dir /tmp/etcd1

With ``https://`` listen URLs it serves TLS (``--cert-file``, ``--key-file``; ``--client-cert-auth``
with ``--trusted-ca-file`` requires client certificates), as etcd does.

Logs ``event=etcd.ready listen=http://127.0.0.1:PORT`` once serving; SIGTERM/SIGINT stop it
gracefully (WAL flushed, snapshot written, exit 0). An unusable data dir, one in use by another
etcd (it is flock'ed, as etcd locks its WAL), or a bad flag value is a one-line error and exit
status 1.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys

import click

from controlplane import aio, apitime, sdnotify
from controlplane import log as cplog
from controlplane.service import parse_duration

from .core import MAX_REQUEST_BYTES, QUOTA_BACKEND_BYTES
from .wal import DataDirError


def _urls(value: str) -> list[str]:
    return [u.strip() for u in value.split(",") if u.strip()]


@click.command("etcd")
@click.option("--name", default="default", show_default=True, help="Human-readable name for this member.")
@click.option("--data-dir", default="", help="Path to the data directory ('' = memory only).")
@click.option("--listen-client-urls", default="http://127.0.0.1:2379", show_default=True,
              help="Comma list of URLs to serve clients on (port 0 = pick a free port).")
@click.option("--advertise-client-urls", default="", help="Client URLs reported to the cluster (default: listen URLs).")
@click.option("--listen-peer-urls", default="", help="Accepted for etcd compatibility; there are no peers.")
@click.option("--initial-advertise-peer-urls", default="http://localhost:2380", show_default=True,
              help="Peer URLs reported by member list.")
@click.option("--auto-compaction-mode", type=click.Choice(["periodic", "revision"]), default="revision",
              show_default=True, help="periodic: keep a duration of history; revision: keep N revisions.")
@click.option("--auto-compaction-retention", default="10000", show_default=True,
              help="periodic: duration (5m, 1h) or hours; revision: revision count; 0 = off.")
@click.option("--max-request-bytes", type=click.IntRange(min=1), default=MAX_REQUEST_BYTES, show_default=True,
              help="Maximum client request size in bytes.")
@click.option("--quota-backend-bytes", type=int, default=QUOTA_BACKEND_BYTES, show_default=True,
              help="Raise the NOSPACE alarm (writes answer 'database space exceeded') when the "
                   "backend would exceed this size; 0 = the default, negative = no quota.")
@click.option("--experimental-watch-progress-notify-interval", "progress_interval", default="10m",
              show_default=True, help="Interval of watch progress notifications (duration or seconds).")
@click.option("--snapshot-count", type=click.IntRange(min=1), default=10000, show_default=True,
              help="Revisions between snapshots of the data dir.")
@click.option("--grpc-keepalive-min-time", "keepalive_min_time", default="5s", show_default=True,
              metavar="DURATION", help="Minimum interval a client should wait before pinging the server "
                                       "(more frequent pings end the connection); 0 = no limit.")
@click.option("--grpc-keepalive-interval", "keepalive_interval", default="2h", show_default=True,
              metavar="DURATION", help="Idle time after which the server pings a client connection; 0 = never.")
@click.option("--grpc-keepalive-timeout", "keepalive_timeout", default="20s", show_default=True,
              metavar="DURATION", help="How long the server waits for activity after its ping before "
                                       "closing the connection.")
@click.option("--grpc-transport", type=click.Choice(["asyncio", "grpcio"]), default="asyncio",
              envvar="CONTROLPLANE_ETCD_GRPC_TRANSPORT", show_default=True,
              help="gRPC server: ours on the event loop (fast), or grpcio's grpc.aio.")
@click.option("--cert-file", default="", metavar="PATH", help="Client server TLS certificate (for https:// "
              "listen URLs).")
@click.option("--key-file", default="", metavar="PATH", help="Client server TLS key.")
@click.option("--trusted-ca-file", default="", metavar="PATH", help="CA verifying client certificates.")
@click.option("--client-cert-auth", is_flag=True, default=False,
              help="Require a client certificate signed by --trusted-ca-file (TLS connections).")
@click.option("--log-level", default=None, help="Log level (default $CONTROLPLANE_LOG_LEVEL or INFO).")
def command(name, data_dir, listen_client_urls, advertise_client_urls, listen_peer_urls,
            initial_advertise_peer_urls, auto_compaction_mode, auto_compaction_retention,
            max_request_bytes, quota_backend_bytes, progress_interval, snapshot_count, keepalive_min_time,
            keepalive_interval, keepalive_timeout, grpc_transport, cert_file, key_file, trusted_ca_file,
            client_cert_auth, log_level) -> None:
    """Embedded etcd3-compatible server (KV, Watch, Lease, Maintenance: Status/Alarm/Snapshot/Hash, Cluster.MemberList)."""
    try:
        interval = float(progress_interval) if progress_interval.isdigit() else apitime.parse_duration(progress_interval)
    except ValueError:
        interval = 0.0
    if not interval > 0:
        raise click.BadParameter(f"invalid duration {progress_interval!r} (want a positive duration)",
                                 param_hint="--experimental-watch-progress-notify-interval") from None
    keepalive = {f"grpc_keepalive_{k}": parse_duration(v, f"--grpc-keepalive-{k.replace('_', '-')}")
                 for k, v in (("min_time", keepalive_min_time), ("interval", keepalive_interval),
                              ("timeout", keepalive_timeout))}
    if keepalive["grpc_keepalive_interval"] > 0 and not keepalive["grpc_keepalive_timeout"] > 0:
        raise click.BadParameter("must be a positive duration when --grpc-keepalive-interval is set",
                                 param_hint="--grpc-keepalive-timeout")
    log = cplog.setup("etcd", log_level)
    try:
        code = aio.run(_main(
            listen=_urls(listen_client_urls), data_dir=data_dir, name=name,
            advertise=_urls(advertise_client_urls) or None,
            peer_urls=_urls(initial_advertise_peer_urls) or None,
            auto_compaction_mode=auto_compaction_mode,
            auto_compaction_retention=auto_compaction_retention,
            max_request_bytes=max_request_bytes, quota_backend_bytes=quota_backend_bytes,
            progress_notify_interval=interval, snapshot_count=snapshot_count, transport=grpc_transport,
            cert_file=cert_file, key_file=key_file, trusted_ca_file=trusted_ca_file,
            client_cert_auth=client_cert_auth, **keepalive))
    except (DataDirError, ValueError, OSError) as e:
        cplog.event(log, "etcd.failed", logging.ERROR, error=str(e))
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)


async def _main(**kwargs) -> int:
    from .server import serve

    server = await serve(**kwargs)
    sdnotify.notify()  # READY=1 to $NOTIFY_SOCKET, as etcd's notifySystemd once it serves
    # the recovered store lives as long as the process: keep it out of the cyclic GC's
    # generations, so collections stay short (no multi-ms pauses with 100k keys)
    gc.freeze()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0
