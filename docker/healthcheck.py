#!/usr/bin/env python3
"""Container healthcheck probes for docker-compose, with no tools beyond python3.

Usage:
    controlplane-healthcheck http URL        healthy when GET URL answers 200 (e.g. the apiserver's /readyz)
    controlplane-healthcheck tcp HOST:PORT   healthy when a TCP connect succeeds (e.g. the etcd gRPC port)

Before them, for an https:// URL: ``--cacert FILE`` (the CA that signed the server's certificate)
and ``--cert FILE --key FILE`` (a client certificate to present), as curl's options.

Exit status 0 when healthy, 1 (with one line on stderr) when not, 2 on bad usage.
Timeout: 2 s per probe. The apiserver's /readyz is the readiness endpoint Kubernetes
defines (https://kubernetes.io/docs/reference/using-api/health-checks/).
"""

from __future__ import annotations

import socket
import ssl
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 2.0


def probe_http(url: str, context: ssl.SSLContext | None = None) -> str | None:
    """GET ``url`` (over TLS with ``context``); ``None`` when it answers 200, else the reason (one line)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS, context=context) as resp:
            return None if resp.status == 200 else f"HTTP {resp.status}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except (urllib.error.URLError, OSError, ValueError) as e:
        return str(getattr(e, "reason", e))


def probe_tcp(address: str) -> str | None:
    """Connect to ``HOST:PORT``; ``None`` on success, else the reason (a one-line string)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return f"bad address {address!r}, want HOST:PORT"
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=TIMEOUT_SECONDS):
            return None
    except OSError as e:
        return str(e)


def tls_options(argv: list[str]) -> tuple[ssl.SSLContext | None, list[str]]:
    """``--cacert/--cert/--key FILE`` at the front of ``argv`` -> (client context or None, the rest).
    ValueError for an option without its value or a file that does not load."""
    opts: dict[str, str] = {}
    while argv and argv[0] in ("--cacert", "--cert", "--key"):
        if len(argv) < 2:
            raise ValueError(f"{argv[0]} needs a FILE")
        opts[argv[0]] = argv[1]
        argv = argv[2:]
    if not opts:
        return None, argv
    try:
        ctx = ssl.create_default_context(cafile=opts.get("--cacert"))
        if "--cert" in opts:
            ctx.load_cert_chain(opts["--cert"], opts.get("--key"))
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"TLS files: {e}") from None
    return ctx, argv


def main(argv: list[str]) -> int:
    """Run one probe from ``argv`` (``[--cacert F] [--cert F --key F] kind target``); returns the exit status."""
    usage = "usage: controlplane-healthcheck [--cacert F] [--cert F --key F] http URL | tcp HOST:PORT"
    try:
        context, argv = tls_options(argv)
    except ValueError as e:
        print(f"{usage}: {e}", file=sys.stderr)
        return 2
    probes = {"http": lambda url: probe_http(url, context), "tcp": probe_tcp}
    if len(argv) != 2 or argv[0] not in probes:
        print(usage, file=sys.stderr)
        return 2
    reason = probes[argv[0]](argv[1])
    if reason is not None:
        print(f"unhealthy: {argv[0]} {argv[1]}: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
