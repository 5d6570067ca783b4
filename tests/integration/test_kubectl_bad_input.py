"""The real kubectl sending bad input to `python -m controlplane apiserver` (real etcd): each bad
request is refused with Kubernetes' message (kubectl prints one ``Error from server`` line and
exits non-zero), and afterwards ``kubectl get cm -A`` and ``kubectl describe`` still work."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from controlplane.storage import testing
from tests.integration.test_kubectl_apiserver import cluster  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]


def kubectl(c, *args, stdin=None):
    env = {**os.environ, "HOME": str(c["dir"])}
    return subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                           str(c["dir"] / "cache"), *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=env)


HUGE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: huge}
spec:
  replicas: 9223372036854775808
  selector: {matchLabels: {app: h}}
  template:
    metadata: {labels: {app: h}}
    spec: {containers: [{name: c, image: nginx}]}
"""

NESTED_ANNOTATION = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: nested
  annotations:
    a: {b: c}
"""


def test_bad_input_is_refused_and_reads_keep_working(cluster):
    r = kubectl(cluster, "create", "configmap", "base", "--from-literal=a=b")
    assert r.returncode == 0, r.stderr
    refused = []
    r = kubectl(cluster, "create", "-f", "-", stdin=HUGE)
    refused.append(r)
    assert "Error from server (BadRequest)" in r.stderr and "cannot unmarshal number" in r.stderr \
        and "DeploymentSpec.spec.replicas of type int32" in r.stderr, r.stderr
    # kubectl refuses this one itself, with the decoder's own words, which the server gives too
    r = kubectl(cluster, "apply", "-f", "-", stdin=NESTED_ANNOTATION)
    refused.append(r)
    assert "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations of type " \
        "string" in r.stderr, r.stderr
    r = kubectl(cluster, "create", "--raw", "/api/v1/namespaces/default/configmaps", "-f", "-",
                stdin=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "nested", "annotations": {"a": {"b": "c"}}}}))
    refused.append(r)
    assert "Error from server (BadRequest)" in r.stderr and 'ConfigMap in version "v1" cannot be handled as a ' \
        "ConfigMap: json: cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations of type " \
        "string" in r.stderr, r.stderr
    r = kubectl(cluster, "patch", "cm", "base", "--type", "merge", "-p",
                json.dumps({"metadata": {"annotations": {"a": {"b": "c"}}}}))
    refused.append(r)
    # a Status Invalid without a kind: kubectl says "The request is invalid"
    assert r.stderr.startswith("The request is invalid: patch: Invalid value: ") and \
        r.stderr.rstrip().endswith("json: cannot unmarshal object into Go struct field "
                                   "ObjectMeta.metadata.annotations of type string"), r.stderr
    r = kubectl(cluster, "patch", "cm", "base", "--type", "merge", "-p", json.dumps({"data": "x"}))
    refused.append(r)
    assert r.stderr.startswith("The request is invalid: patch: ") and "ConfigMap.data of type" in r.stderr
    r = kubectl(cluster, "patch", "cm", "base", "-p", json.dumps({"data": {"a": 1}}))
    refused.append(r)
    assert r.stderr.startswith("The request is invalid: patch: Invalid value: \"map[data:map[a:1]]\"") \
        and "ConfigMap.data of type string" in r.stderr, r.stderr
    for r in refused:
        assert r.returncode != 0 and r.stdout == "" and "Traceback" not in r.stderr
    # an unknown field in a merge patch (kubectl patch: the server's default, Warn): dropped, and
    # kubectl prints the server's Warning; the same through kubectl apply --validate=false (Ignore)
    r = kubectl(cluster, "patch", "cm", "base", "--type", "merge", "-p", json.dumps({"foo": 1}))
    assert r.returncode == 0 and r.stderr == 'Warning: unknown field "foo"\n', r.stderr
    r = kubectl(cluster, "apply", "--validate=false", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"}, "foo": 1, "data": {"a": "b", "c": "d"}}))
    assert r.returncode == 0, r.stderr
    cm = json.loads(kubectl(cluster, "get", "cm", "base", "-o", "json").stdout)
    assert "foo" not in cm and cm["data"] == {"a": "b", "c": "d"}
    # nothing stored breaks a read
    r = kubectl(cluster, "get", "cm", "-A")
    assert r.returncode == 0 and "base" in r.stdout, r.stderr
    r = kubectl(cluster, "describe", "cm", "base")
    assert r.returncode == 0 and "Name:" in r.stdout, r.stderr
    r = kubectl(cluster, "get", "deploy", "huge")
    assert r.returncode != 0 and "NotFound" in r.stderr
    assert cluster["proc"].poll() is None
