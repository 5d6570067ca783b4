"""Regenerate ``openapi_field_paths_v1_32.json``: every field path (five levels deep) of each
served built-in kind, as Kubernetes v1.32's OpenAPI (``api/openapi-spec/v3/*.json`` in
kubernetes/kubernetes) declares them, read from the kubernetes Python client 32.0.1 models
(generated from that OpenAPI). Not imported by the tests.

    pip download kubernetes==32.0.1 six --no-deps -d /tmp/k32
    (cd /tmp/k32 && for w in *.whl; do python -m zipfile -e "$w" x; done)
    python tests/data/openapi_field_paths.py /tmp/k32/x > tests/data/openapi_field_paths_v1_32.json
"""

from __future__ import annotations

import json
import re
import sys
import types

#: served resource (``<group/>version/plural``) → its model class
ROOTS = {"v1/pods": "V1Pod", "v1/nodes": "V1Node", "v1/namespaces": "V1Namespace", "v1/services": "V1Service",
         "v1/endpoints": "V1Endpoints", "v1/configmaps": "V1ConfigMap", "v1/secrets": "V1Secret",
         "v1/serviceaccounts": "V1ServiceAccount", "v1/events": "CoreV1Event",
         "events.k8s.io/v1/events": "EventsV1Event", "v1/replicationcontrollers": "V1ReplicationController",
         "apps/v1/deployments": "V1Deployment", "apps/v1/replicasets": "V1ReplicaSet",
         "apps/v1/daemonsets": "V1DaemonSet", "apps/v1/statefulsets": "V1StatefulSet",
         "coordination.k8s.io/v1/leases": "V1Lease"}
DEPTH = 5


def main(root: str) -> None:
    sys.path.insert(0, root)
    for name in ("kubernetes", "kubernetes.client"):  # the models only, not the package's imports
        m = types.ModuleType(name)
        m.__path__ = [f"{root}/{name.replace('.', '/')}"]
        sys.modules[name] = m
    import kubernetes.client.models as models

    def paths(cls_name: str, prefix: str, depth: int, out: list[str]) -> None:
        cls = getattr(models, cls_name)
        for py, typ in cls.openapi_types.items():
            path = f"{prefix}.{cls.attribute_map[py]}" if prefix else cls.attribute_map[py]
            out.append(path)
            ref = re.search(r"(V1\w+|CoreV1\w+|EventsV1\w+)", typ)
            if ref and depth < DEPTH:
                paths(ref.group(1), path, depth + 1, out)

    kinds = {}
    for resource, cls_name in ROOTS.items():
        found: list[str] = []
        paths(cls_name, "", 1, found)
        kinds[resource] = sorted(set(found))
    doc = {"source": "kubernetes/kubernetes api/openapi-spec/v3 (v1.32), as the kubernetes Python client 32.0.1 "
                     "models carry it: every field path of each served kind, five levels deep", "kinds": kinds}
    json.dump(doc, sys.stdout, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
