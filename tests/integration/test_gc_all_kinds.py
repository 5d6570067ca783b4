"""The garbage collector on every kind, with the real kubectl against ``controlplane up``: a
ConfigMap owned by a Deployment goes with it (background), ``--cascade=foreground`` and
``--cascade=orphan`` on a ConfigMap owner finish (nothing stuck with a finalizer), and a custom
resource of a CRD applied after the controller-manager started owns a ConfigMap
(pkg/controller/garbagecollector/: discovery-driven monitors)."""

from __future__ import annotations

import json
import os

import pytest

from tests.integration.conftest import KUBECTL, Cluster, start_up, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.path.exists(KUBECTL), reason="needs kubectl")]

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("gc-kinds"))
    proc, out, data_dir = start_up(tmp)
    kc = os.path.join(data_dir, "kubeconfig")
    server = next(line for line in open(kc) if "server:" in line).split("server:")[1].strip()
    c = Cluster(data_dir, kc, server, proc, out, os.path.join(tmp, "kube-cache"), "embedded")
    yield c
    stop(proc)


def uid_of(c: Cluster, *what: str) -> str:
    return c.get_json(*what)["metadata"]["uid"]


def owned_cm(name: str, owner_kind: str, owner_api: str, owner: str, uid: str, block: bool = True) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "ownerReferences": [{"apiVersion": owner_api, "kind": owner_kind, "name": owner,
                                           "uid": uid, "blockOwnerDeletion": block}]},
        "data": {"k": "v"}})


def gone(c: Cluster, *what: str) -> None:
    c.kubectl("wait", "--for=delete", *what, "--timeout=90s", timeout=120)


def test_configmap_owned_by_deployment_background(up: Cluster):
    up.kubectl("create", "deployment", "gcweb", "--image=nginx", "--replicas=1")
    uid = uid_of(up, "deployment", "gcweb")
    up.kubectl("apply", "-f", "-", input=owned_cm("gcweb-cfg", "Deployment", "apps/v1", "gcweb", uid, False))
    up.kubectl("delete", "deployment", "gcweb")          # background, kubectl's default
    gone(up, "configmap/gcweb-cfg")
    assert up.kubectl("get", "cm", "gcweb-cfg", check=False).returncode != 0


@pytest.mark.parametrize("cascade", ["foreground", "orphan"])
def test_configmap_owner_cascade_finishes(up: Cluster, cascade: str):
    owner = f"owner-{cascade}"
    up.kubectl("create", "configmap", owner, "--from-literal=a=b")
    uid = uid_of(up, "cm", owner)
    for i in range(2):
        up.kubectl("apply", "-f", "-", input=owned_cm(f"{owner}-dep{i}", "ConfigMap", "v1", owner, uid))
    # kubectl waits for the owner to be gone: a finalizer left behind would hang it
    up.kubectl("delete", "cm", owner, f"--cascade={cascade}", "--timeout=90s", timeout=120)
    assert up.kubectl("get", "cm", owner, check=False).returncode != 0
    if cascade == "foreground":
        gone(up, f"configmap/{owner}-dep0", f"configmap/{owner}-dep1")
    else:
        for i in range(2):
            dep = up.get_json("cm", f"{owner}-dep{i}")
            assert not dep["metadata"].get("ownerReferences")
            assert not dep["metadata"].get("finalizers")


def test_custom_resource_owns_configmap(up: Cluster):
    up.kubectl("apply", "-f", "-", input=CRD)
    up.kubectl("wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=60s")
    up.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "spec": {"x": 1}}))
    uid = uid_of(up, "gadget", "g1")
    up.kubectl("apply", "-f", "-", input=owned_cm("g1-cfg", "Gadget", "example.com/v1", "g1", uid))
    up.kubectl("delete", "gadget", "g1", "--cascade=foreground", "--timeout=120s", timeout=150)
    gone(up, "configmap/g1-cfg")
