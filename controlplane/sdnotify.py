"""Readiness told by the process itself: systemd's notify protocol (``sd_notify(3)``).

A service started with ``NOTIFY_SOCKET`` in its environment sends the datagram ``READY=1`` to
that ``AF_UNIX`` socket once it serves (a leading ``@`` names an abstract-namespace socket), as
kube-apiserver does when its secure serving has started and its post-start hooks have run
(``staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go``: ``systemd.SdNotify(true,
"READY=1\\n")``, which also unsets the variable) and etcd once it serves clients
(``server/etcdmain/etcd.go`` ``notifySystemd``). Under systemd that is ``Type=notify``; the
supervisor of ``controlplane up`` and of the pytest plugin's clusters listens on such a socket
per process (:class:`NotifySocket`) instead of polling the process's health endpoint.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys

ENV = "NOTIFY_SOCKET"


def _address(name: str) -> str:
    return "\0" + name[1:] if name.startswith("@") else name


def notify(state: str = "READY=1", unset_environment: bool = True) -> bool:
    """Send ``state`` (newline-separated ``KEY=VALUE`` lines) to ``$NOTIFY_SOCKET``; with
    ``unset_environment`` the variable is removed, so this process's children do not notify in
    its name. Returns whether a datagram was sent (False without the variable, or when the
    socket is gone: nobody is listening, which is never an error for the service)."""
    name = os.environ.pop(ENV, None) if unset_environment else os.environ.get(ENV)
    if not name or not sys.platform.startswith("linux") and name.startswith("@"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(state.encode() + b"\n", _address(name))
    except OSError:
        return False
    return True


class NotifySocket:
    """The supervisor's side: a datagram socket in the abstract namespace (Linux; elsewhere
    :func:`available` is False and callers poll instead). ``name`` is the ``NOTIFY_SOCKET``
    value to give the child; :meth:`wait_ready` returns once ``READY=1`` has arrived."""

    def __init__(self, name: str) -> None:
        self.name = "@" + name
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(_address(self.name))
        self._sock.setblocking(False)
        self.ready = False

    @staticmethod
    def available() -> bool:
        """Whether abstract-namespace sockets exist here (Linux)."""
        return sys.platform.startswith("linux")

    async def wait_ready(self) -> None:
        """Until a datagram with the line ``READY=1`` arrives (returns at once after that)."""
        loop = asyncio.get_running_loop()
        while not self.ready:
            data = await loop.sock_recv(self._sock, 4096)
            if b"READY=1" in data.split(b"\n"):
                self.ready = True

    def close(self) -> None:
        """Close the socket (the abstract name is freed with it: no file to remove)."""
        self._sock.close()
