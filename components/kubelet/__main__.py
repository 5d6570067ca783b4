"""``python -m components.kubelet`` — same as ``controlplane kubelet``."""

from components.kubelet.cli import command

if __name__ == "__main__":
    command(auto_envvar_prefix="CONTROLPLANE_KUBELET")
