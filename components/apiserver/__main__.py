"""``python -m components.apiserver`` = ``controlplane apiserver``."""

from components.apiserver.cli import command

if __name__ == "__main__":
    command(auto_envvar_prefix="CONTROLPLANE_APISERVER")
