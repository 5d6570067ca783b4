"""The example controller (controller.py) on the controlplane pytest plugin's cluster: a labelled
namespace gets its quota, the cluster's resourcequota controller fills in its status, and the quota
goes when the label does.

    pip install controlplane kubernetes
    pytest examples/watch-controller
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
sys.path.insert(0, str(Path(__file__).parent))
import controller  # noqa: E402


@pytest.fixture()
def running_controller(k8s_client):
    stop = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            controller.run(k8s_client, stop)
        except BaseException as e:   # surfaced by the test
            errors.append(e)
    t = threading.Thread(target=target, daemon=True)
    t.start()
    yield
    stop.set()
    t.join(15)
    assert not errors, errors


def test_labelled_namespace_gets_a_quota_that_the_cluster_tracks(running_controller, kubectl, namespace):
    kubectl("label", "namespace", namespace, "team=blue")
    # the controller creates the quota; the resourcequota controller writes status.hard and used
    kubectl("-n", namespace, "wait", "--for=create", f"resourcequota/{controller.QUOTA}", "--timeout=60s")
    kubectl("-n", namespace, "wait", "--for=jsonpath={.status.hard.pods}=10", f"resourcequota/{controller.QUOTA}",
            "--timeout=60s")
    kubectl("-n", namespace, "run", "web", "--image=nginx", "--overrides",
            json.dumps({"spec": {"containers": [{"name": "web", "image": "nginx",
                                                 "resources": {"requests": {"cpu": "500m"}}}]}}))
    kubectl("-n", namespace, "wait", "--for=jsonpath={.status.used.pods}=1", f"resourcequota/{controller.QUOTA}",
            "--timeout=60s")
    quota = json.loads(kubectl("-n", namespace, "get", "resourcequota", controller.QUOTA, "-o", "json").stdout)
    assert quota["status"]["used"]["requests.cpu"] == "500m"

    kubectl("label", "namespace", namespace, "team-")
    kubectl("-n", namespace, "wait", "--for=delete", f"resourcequota/{controller.QUOTA}", "--timeout=60s")
