"""DefaultTolerationSeconds (``plugin/pkg/admission/defaulttolerationseconds/admission.go``):
a pod that does not tolerate the ``node.kubernetes.io/not-ready`` / ``unreachable``
NoExecute taints gets a toleration of each for :data:`DEFAULT_TOLERATION_SECONDS` (300 s,
``--default-not-ready-toleration-seconds`` / ``--default-unreachable-toleration-seconds``).
Mutating; pod creates and updates."""

from __future__ import annotations

import copy
from typing import Any

from components.apiserver.admission import CREATE, POD_ONLY, UPDATE, Attributes, Plugin

DEFAULT_TOLERATION_SECONDS = 300
DEFAULT_TOLERATIONS: tuple[dict[str, Any], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": DEFAULT_TOLERATION_SECONDS},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": DEFAULT_TOLERATION_SECONDS},
)


def tolerates(tolerations: list[Any], key: str) -> bool:
    """Whether a pod already tolerates the NoExecute taint ``key``: a toleration of that key
    (or every key, operator Exists) with effect NoExecute or any effect."""
    for t in tolerations:
        if not isinstance(t, dict):
            continue
        if t.get("operator") == "Exists" and not t.get("key") and t.get("effect") in (None, "", "NoExecute"):
            return True
        if t.get("key") == key and t.get("effect") in (None, "", "NoExecute"):
            return True
    return False


def add_default_tolerations(spec: dict[str, Any]) -> None:
    """Append the missing default tolerations to ``spec.tolerations`` (in place)."""
    tol = spec.get("tolerations")
    if not isinstance(tol, list):
        tol = []
    for d in DEFAULT_TOLERATIONS:
        if not tolerates(tol, d["key"]):
            tol.append(copy.deepcopy(d))
    spec["tolerations"] = tol


class DefaultTolerationSeconds(Plugin):
    """The ``DefaultTolerationSeconds`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "DefaultTolerationSeconds"
    operations = frozenset({CREATE, UPDATE})
    mutating = True
    #: pods only (``defaulttolerationseconds/admission.go`` Admit: returns for a resource
    #: other than ``pods`` or any subresource)
    admit_resources = POD_ONLY

    async def admit(self, a: Attributes) -> None:
        if not a.is_pod() or a.object is None or not isinstance(a.object.get("spec"), dict):
            return
        add_default_tolerations(a.object["spec"])
