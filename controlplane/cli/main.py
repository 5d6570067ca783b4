"""The ``controlplane`` command: one entry point for every service and tool.

Each subcommand lives in its own module and is imported only when invoked, so
``controlplane etcd`` does not load the scheduler and vice versa. A subcommand
is a ``click.Command`` named ``command`` in the module given below.

    controlplane etcd                 embedded etcd3-compatible server
    controlplane apiserver            Kubernetes API server (HTTP, talks to etcd)
    controlplane controller-manager   the controllers (workloads, GC, namespaces, nodes, endpoints...)
    controlplane scheduler            the scheduler (filter, score, bind)
    controlplane kubelet              one node (or many hollow nodes) on a simulated runtime
    controlplane up                   all of the above as separate OS processes
    controlplane demo                 the 13-step pod creation flow, traced live
    controlplane trace                print the step records kept by the apiserver
    controlplane explain pod NAME     the scheduler's per-node verdicts and scores for a pod
    controlplane dashboard            the live dashboard (nodes, pods, the flow as a sequence diagram)
"""

from __future__ import annotations

import importlib

import click

from controlplane import memprofile

#: subcommand name -> ("module:attribute" of its click command, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "up": ("controlplane.cli.up:command",
           "Start etcd, apiserver, controller-manager, scheduler and kubelets."),
    "demo": ("controlplane.cli.demo:command",
             "Run seed 000's 13-step pod creation flow and print each step live."),
    "trace": ("controlplane.cli.trace:command",
              "Print the numbered, timed records of the 13-step flow."),
    "explain": ("controlplane.cli.explain:command",
                "Show the scheduler's per-node filter verdicts and scores for a pod."),
    "pki": ("controlplane.cli.pki:command",
            "Write the cluster's certificates and one kubeconfig per component."),
    "dashboard": ("controlplane.cli.dashboard:command",
                  "Serve the live dashboard (nodes, pods, the 13 steps as a sequence diagram)."),
    "etcd": ("components.etcd.cli:command", "Run the embedded etcd3-compatible server."),
    "apiserver": ("components.apiserver.cli:command", "Run the Kubernetes API server."),
    "controller-manager": ("components.controller_manager.cli:command",
                           "Run the controllers: workloads, GC, namespaces, nodes, endpoints..."),
    "scheduler": ("components.scheduler.cli:command", "Run the scheduler (filter, score, bind)."),
    "kubelet": ("components.kubelet.cli:command",
                "Run a kubelet (one node, or many hollow nodes) on a simulated runtime."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        memprofile.maybe_start(name)  # opt-in heap snapshots (bench/memory.py)
        module = importlib.import_module(module_name)
        command: click.Command = getattr(module, attr)
        return command


    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # List subcommands from the table, without importing them.
        with formatter.section("Commands"):
            formatter.write_dl([(n, h) for n, (_, h) in SUBCOMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="controlplane")
def cli() -> None:
    """An event-driven emulator of the Kubernetes control plane."""


def main() -> None:
    """Console-script entry point (``controlplane``).

    Every option of every subcommand can also be set by environment variable
    ``CONTROLPLANE_<SUBCOMMAND>_<OPTION>`` (e.g. ``CONTROLPLANE_APISERVER_ETCD_SERVERS``).
    """
    cli(auto_envvar_prefix="CONTROLPLANE")


if __name__ == "__main__":
    main()
