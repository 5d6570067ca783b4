"""``python -m components.scheduler`` = ``controlplane scheduler``."""

from components.scheduler.cli import command

if __name__ == "__main__":
    command(auto_envvar_prefix="CONTROLPLANE_SCHEDULER")
