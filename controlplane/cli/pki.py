"""``controlplane pki``: write a cluster's certificates and kubeconfigs, as kubeadm's
``init phase certs all`` + ``init phase kubeconfig all`` (what ``controlplane up`` does before it
starts anything; the compose demo's first service).

    controlplane pki --dir /pki --server https://127.0.0.1:6443 --nodes node01,node02

Writes ``<dir>/pki/`` (``ca.crt``/``ca.key``, ``apiserver.crt``/``.key``, client pairs,
``sa.key``/``sa.pub``; keys 0600) and ``<dir>/kubeconfig`` (admin), ``controller-manager.conf``,
``scheduler.conf``, ``kubelet-<node>.conf`` (:func:`controlplane.pki.write_cluster`). Files that
exist are reused. Prints one line per kubeconfig; exit 1 with one line when the directory cannot
be written, 2 for a bad flag.
"""

from __future__ import annotations

import click

from controlplane import pki
from controlplane.client.config import check_url


@click.command("pki")
@click.option("--dir", "directory", default=".controlplane", show_default=True,
              help="where pki/ and the kubeconfigs are written")
@click.option("--server", default="https://127.0.0.1:6443", show_default=True,
              help="the apiserver URL the kubeconfigs name")
@click.option("--nodes", default="node01,node02", show_default=True,
              help="comma-separated node names: one kubelet identity each")
@click.option("--hollow/--no-hollow", default=False, help="also the hollow-node process's identity")
@click.option("--apiserver-cert-extra-sans", default="", metavar="NAMES",
              help="comma-separated extra DNS names / IPs for the apiserver's serving certificate")
@click.option("--etcd-tls/--no-etcd-tls", default=False, help="also etcd's CA, server and client certificates")
def command(directory: str, server: str, nodes: str, hollow: bool, apiserver_cert_extra_sans: str,
            etcd_tls: bool) -> None:
    """Write the cluster's certificates and one kubeconfig per component."""
    try:
        server = check_url(server)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--server") from None
    names = [n.strip() for n in nodes.split(",") if n.strip()]
    try:
        pki.write_cluster(directory, server, names, hollow=hollow, etcd_tls=etcd_tls,
                          extra_sans=[n.strip() for n in apiserver_cert_extra_sans.split(",") if n.strip()])
    except OSError as e:
        raise click.ClickException(f"cannot write {directory!r}: {e.strerror or e}") from None
    components = ["admin", "controller-manager", "scheduler", *(f"kubelet-{n}" for n in names),
                  *(["kubelet-hollow"] if hollow else [])]
    for c in components:
        click.echo(f"{c}: {pki.component_kubeconfig(directory, c)}")
