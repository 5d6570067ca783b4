"""``controlplane controller-manager``: run the controllers against an apiserver.

    controlplane controller-manager --master http://127.0.0.1:6443 --controllers '*'
    controlplane controller-manager --kubeconfig ~/.kube/config --controllers '*,-garbagecollector'

Controllers: deployment, replicaset, replicationcontroller, garbagecollector,
namespace. An unknown controller or a bad URL is a one-line error with exit 2.
"""

from __future__ import annotations

import click

from controlplane.cli.common import client_options, run_until_signalled, server_or_exit
from controlplane.client.rest import RestClient, wait_ready
from controlplane.log import event, setup


@click.command(name="controller-manager")
@client_options
@click.option("--controllers", default="*", show_default=True,
              help="Comma list: '*' for all, NAME to enable, -NAME to disable "
                   "(deployment, replicaset, replicationcontroller, garbagecollector, namespace).")
def command(kubeconfig: str | None, master: str | None, controllers: str) -> None:
    """Run the Deployment, ReplicaSet, ReplicationController, garbage-collector and
    namespace controllers (kube-controller-manager)."""
    from .manager import ControllerManager, select_controllers
    server = server_or_exit(master, kubeconfig)
    try:
        names = select_controllers(controllers)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    log = setup("controller-manager")

    async def main() -> None:
        client = RestClient(server, "controller-manager")
        try:
            await wait_ready(client)
            mgr = ControllerManager(client, names)
            event(log, "controller-manager.starting", server=server, controllers=",".join(names))
            await mgr.run()
        finally:
            await client.close()

    run_until_signalled(main)
