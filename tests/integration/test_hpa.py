"""The "HorizontalPodAutoscaler Walkthrough" with real processes and the real kubectl: php-apache
with a 200m cpu request, ``kubectl autoscale --cpu-percent=50 --min=1 --max=10``, simulated load
(the ``controlplane.io/cpu-usage`` pod annotation of controlplane/usage.py) scales it up, removing
the load scales it down after the HPA behavior's (shortened) stabilization window; ``kubectl top``
reads ``metrics.k8s.io``. Every wait is a watch (``kubectl wait``), never a sleep."""

from __future__ import annotations

import os
import re
import signal
import subprocess

import pytest

from tests.integration.conftest import KUBECTL, spawn, start_control_plane, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.path.exists(KUBECTL), reason="needs /usr/bin/kubectl")]

PHP_APACHE = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: php-apache
spec:
  selector:
    matchLabels:
      run: php-apache
  template:
    metadata:
      labels:
        run: php-apache
    spec:
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        ports:
        - containerPort: 80
        resources:
          limits:
            cpu: 500m
          requests:
            cpu: 200m
"""


@pytest.fixture()
def hpa_cluster(tmp_path):
    """etcd, apiserver, a controller-manager syncing HPAs every second (cpu samples of new pods
    trusted after 1 s), a scheduler and one kubelet; yields a kubectl runner."""
    procs: list[subprocess.Popen] = []
    try:
        server, _ = start_control_plane(procs, "--horizontal-pod-autoscaler-sync-period", "1s",
                                        "--horizontal-pod-autoscaler-cpu-initialization-period", "1s")
        kubelet, k_out = spawn("kubelet", "--master", server, "--node-name", "node-1")
        procs.append(kubelet)
        k_out.wait_for("kubelet.nodes_registered", 30)
        cache = str(tmp_path / "kube-cache")

        def kubectl(*args: str, input: str | None = None, timeout: float = 120) -> str:
            p = subprocess.run([KUBECTL, "--server", server, "--cache-dir", cache, *args], input=input,
                               capture_output=True, text=True, timeout=timeout)
            assert p.returncode == 0, f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}"
            return p.stdout
        yield kubectl
    finally:
        for p in reversed(procs):
            stop(p, signal.SIGTERM)


def test_hpa_walkthrough_scales_up_under_load_and_down_after_the_window(hpa_cluster):
    kubectl = hpa_cluster
    kubectl("apply", "-f", "-", input=PHP_APACHE)
    kubectl("rollout", "status", "deployment/php-apache", "--timeout=60s")
    kubectl("wait", "node/node-1", "--for=condition=Ready", "--timeout=60s")

    out = kubectl("autoscale", "deployment", "php-apache", "--cpu-percent=50", "--min=1", "--max=10")
    assert "horizontalpodautoscaler.autoscaling/php-apache autoscaled" in out
    kubectl("wait", "hpa/php-apache", "--for=condition=ScalingActive=True", "--timeout=60s")
    table = kubectl("get", "hpa", "php-apache")
    assert re.search(r"php-apache\s+Deployment/php-apache\s+cpu: \d+%/50%\s+1\s+10\s+1\s", table), table

    top_pods = kubectl("top", "pods")
    assert re.search(r"^php-apache-\S+\s+\d+m\s+\d+Mi\s*$", top_pods, re.M), top_pods
    top_nodes = kubectl("top", "nodes")
    assert re.search(r"^node-1\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$", top_nodes, re.M), top_nodes
    assert kubectl("top", "node", "node-1").splitlines()[1].startswith("node-1 ")
    containers = kubectl("top", "pods", "-A", "--containers")
    assert re.search(r"^default\s+php-apache-\S+\s+php-apache\s+\d+m\s+\d+Mi\s*$", containers, re.M), containers

    # the load: the running pod now uses a whole core (500% of its request)
    kubectl("annotate", "pods", "-l", "run=php-apache", "controlplane.io/cpu-usage=1", "--overwrite")
    kubectl("wait", "deployment/php-apache", "--for=jsonpath={.spec.replicas}=10", "--timeout=90s")
    events = kubectl("get", "events", "--field-selector", "reason=SuccessfulRescale", "-o",
                     "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
    assert "New size: 4; reason: cpu resource utilization (percentage of request) above target" in events, events

    # load removed; the HPA's behavior shortens the 5 min scale-down window to 5 s
    kubectl("patch", "hpa", "php-apache", "--type=merge", "-p",
            '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":5}}}}')
    kubectl("annotate", "pods", "-l", "run=php-apache", "controlplane.io/cpu-usage-")
    kubectl("wait", "deployment/php-apache", "--for=jsonpath={.spec.replicas}=1", "--timeout=120s")
    events = kubectl("get", "events", "--field-selector", "reason=SuccessfulRescale", "-o",
                     "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
    assert "reason: All metrics below target" in events, events
    kubectl("wait", "hpa/php-apache", "--for=jsonpath={.status.desiredReplicas}=1", "--timeout=60s")
    hpa = kubectl("get", "hpa", "php-apache", "-o", "jsonpath={.status.conditions[*].reason}")
    assert "ValidMetricFound" in hpa, hpa
