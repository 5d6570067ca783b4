"""What every service's command line shares: how to reach the apiserver, and
how to run until SIGTERM/SIGINT.

Flags follow the kube-* binaries: ``--kubeconfig PATH`` and ``--master URL``
(``--master`` wins). Each is also read from the environment
(``CONTROLPLANE_<SUBCOMMAND>_KUBECONFIG`` / ``..._MASTER``, or ``KUBECONFIG``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Awaitable, Callable

import click

from controlplane.client.rest import resolve_server


def client_options(fn: Callable) -> Callable:
    """Add ``--kubeconfig`` and ``--master`` to a click command."""
    fn = click.option("--master", default=None, metavar="URL",
                      help="apiserver URL (overrides the kubeconfig), e.g. http://127.0.0.1:6443")(fn)
    fn = click.option("--kubeconfig", default=None, metavar="PATH",
                      help="kubeconfig naming the apiserver (default: $KUBECONFIG, else "
                           "./.controlplane/kubeconfig if present, else http://127.0.0.1:6443)")(fn)
    return fn


def server_or_exit(master: str | None, kubeconfig: str | None) -> str:
    """The apiserver URL, or a one-line error and exit 2."""
    try:
        return resolve_server(master, kubeconfig)
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def run_until_signalled(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main()`` in a fresh event loop; SIGTERM/SIGINT cancel it cleanly.

    Exit status 0 on a signal or normal return; 1 with a one-line message on an
    error that escaped ``main`` (never a traceback).
    """
    async def runner() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        await main()

    try:
        asyncio.run(runner())
    except (asyncio.CancelledError, KeyboardInterrupt):
        pass
    except click.ClickException:
        raise
    except BrokenPipeError:
        # the reader went away (``controlplane trace | head``): not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    except Exception as e:  # one line, no traceback
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
