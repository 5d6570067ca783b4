"""``controlplane dashboard``: the live dashboard against any running cluster.

    controlplane dashboard --kubeconfig .controlplane/kubeconfig [--port 8080]

Serves :mod:`controlplane.dashboard.server` on 127.0.0.1 (``--port``, the next free
one when it is taken; 0: any free port) and prints ``dashboard: http://127.0.0.1:PORT/``;
runs until Ctrl-C or SIGTERM. ``controlplane up`` serves the same page itself
(``--dashboard-port``).
"""

from __future__ import annotations

import asyncio

import click

from controlplane.dashboard.server import serve_first_free
from controlplane.service import client_options, config_or_exit, run_until_signalled


@click.command("dashboard")
@client_options
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="port on 127.0.0.1 (the next free one if taken; 0: any free port)")
def command(kubeconfig: str | None, master: str | None, port: int) -> None:
    """Serve the live dashboard (nodes, pods, the 13 steps as a sequence diagram)."""
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host

    async def main() -> None:
        try:
            dash, runner, bound = await serve_first_free(client_config, port)
        except OSError as e:
            raise click.ClickException(str(e)) from None
        click.echo(f"dashboard: http://127.0.0.1:{bound}/  (apiserver {server}; Ctrl-C stops it)")
        try:
            await asyncio.Event().wait()
        finally:
            await dash.stop()
            await runner.cleanup()

    run_until_signalled(main)
