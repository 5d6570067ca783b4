#!/usr/bin/env python3
"""Container healthcheck probes for docker-compose, with no tools beyond python3.

Usage:
    controlplane-healthcheck http URL        healthy when GET URL answers 200 (e.g. the apiserver's /readyz)
    controlplane-healthcheck tcp HOST:PORT   healthy when a TCP connect succeeds (e.g. the etcd gRPC port)

Exit status 0 when healthy, 1 (with one line on stderr) when not, 2 on bad usage.
Timeout: 2 s per probe. The apiserver's /readyz is the readiness endpoint Kubernetes
defines (https://kubernetes.io/docs/reference/using-api/health-checks/).
"""

from __future__ import annotations

import socket
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 2.0


def probe_http(url: str) -> str | None:
    """GET ``url``; ``None`` when it answers 200, else the reason (a one-line string)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as resp:
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


def main(argv: list[str]) -> int:
    """Run one probe from ``argv`` (``[kind, target]``); returns the exit status."""
    probes = {"http": probe_http, "tcp": probe_tcp}
    if len(argv) != 2 or argv[0] not in probes:
        print("usage: controlplane-healthcheck http URL | tcp HOST:PORT", file=sys.stderr)
        return 2
    reason = probes[argv[0]](argv[1])
    if reason is not None:
        print(f"unhealthy: {argv[0]} {argv[1]}: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
