"""Reading the one workload manifest ``controlplane demo`` (and a scenario step) applies."""

from __future__ import annotations

from typing import Any

import click

from controlplane import yamlfile

__all__ = ["DemoError", "load_manifest"]


class DemoError(click.ClickException):
    """A one-line failure of the demo (exit 1)."""


def load_manifest(path: str, fix_pasted: bool = False) -> dict[str, Any]:
    """The single workload object in ``path``; raises DemoError (one line) on a missing,
    binary, malformed or too deeply nested file (:mod:`controlplane.yamlfile`), on
    characters pasted from a web page (no-break spaces, full-width colons, tabs: named
    with line, column and fix; replaced with a warning on stderr when ``fix_pasted``) or
    a kind the demo does not trace."""
    try:
        docs = [d for d in yamlfile.load_file(path, fix=fix_pasted,
                                              warn=lambda w: click.echo(f"warning: {w}", err=True)) if d]
    except yamlfile.YAMLFileError as e:
        raise DemoError(f"{e} (or pass --fix-pasted)" if e.pasted else str(e)) from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise DemoError(f"{path}: expected exactly one object")
    obj = docs[0]
    if obj.get("kind") not in ("Deployment", "ReplicaSet", "ReplicationController", "Pod"):
        raise DemoError(f"{path}: kind {obj.get('kind')!r} is not a workload the demo traces "
                        f"(Deployment, ReplicaSet, ReplicationController, Pod)")
    md = obj.get("metadata")
    if not isinstance(md, dict) or not isinstance(md.get("name"), str) or not md["name"]:
        raise DemoError(f"{path}: metadata.name is required")
    if not isinstance(md.get("namespace", ""), str):
        raise DemoError(f"{path}: metadata.namespace must be a string")
    return obj
