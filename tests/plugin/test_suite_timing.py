"""The issue's yardstick (issue 16, "Done when"): a suite of 20 tests that each create a
namespace and a Deployment and wait for its pod to run, on the plugin's session cluster.
The sub-run's wall time, cluster start included, is printed and kept as a user property, for
both ``--controlplane-namespace-deletion`` modes."""

from __future__ import annotations

import re
import time

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

TWENTY = '''
import pytest


@pytest.mark.parametrize("i", range(20))
def test_deployment_runs(cluster, namespace, i):
    status, body = cluster.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"web-{i}"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": f"web-{i}"}},
                 "template": {"metadata": {"labels": {"app": f"web-{i}"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    assert status == 201, body
    cluster.watch_until(f"/api/v1/namespaces/{namespace}/pods?labelSelector=app%3Dweb-{i}",
                        lambda pods: any(p.get("status", {}).get("phase") == "Running" for p in pods.values()),
                        timeout=60)
'''


@pytest.mark.parametrize("deletion", ["wait", "background"])
def test_twenty_deployments_each_in_a_fresh_namespace(pytester, record_property, capsys, deletion):
    pytester.makepyfile(test_twenty=TWENTY)
    t0 = time.monotonic()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q",
                                           f"--controlplane-namespace-deletion={deletion}", timeout=540)
    total = time.monotonic() - t0
    result.assert_outcomes(passed=20)
    inner = re.search(r"20 passed in ([\d.]+)s", result.stdout.str())
    record_property("twenty_tests_seconds", round(total, 2))
    with capsys.disabled():
        print(f"\n20 namespace+Deployment tests, namespace deletion {deletion}: {total:.1f} s wall (sub-pytest reports "
              f"{inner.group(1) if inner else '?'} s, cluster start included)")
