"""``python -m components.controller_manager`` = ``controlplane controller-manager``."""

from components.controller_manager.cli import command

if __name__ == "__main__":
    command(auto_envvar_prefix="CONTROLPLANE_CONTROLLER_MANAGER")
