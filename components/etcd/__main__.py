"""``python -m components.etcd`` = ``controlplane etcd``."""

from components.etcd.cli import command

if __name__ == "__main__":
    command(auto_envvar_prefix="CONTROLPLANE_ETCD")
