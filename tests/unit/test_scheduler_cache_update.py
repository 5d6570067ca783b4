"""Cache.update_pod: a kubelet's status update keeps the cached PodInfo (new object,
same counts); a label or spec change counts the pod again (cache.go UpdatePod)."""

from __future__ import annotations

import copy

from components.scheduler.cache import Cache
from controlplane.selectors import selector_from_dict


def pod(labels=None, phase="Pending", cpu="100m") -> dict:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": labels or {}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx",
                                                       "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase}}


def make() -> Cache:
    c = Cache()
    c.add_node({"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    return c


def test_status_update_keeps_the_pod_info_and_takes_the_new_object():
    c = make()
    old = pod({"app": "web"})
    c.add_pod(old)
    ni = c.snapshot().get("n1")
    pi = ni.pods["default/p"]
    web = selector_from_dict({"matchLabels": {"app": "web"}})
    assert c.selector_counts.counts("default", web) == {"n1": 1}
    new = copy.deepcopy(old)
    new["status"]["phase"] = "Running"
    c.update_pod(old, new)
    assert ni.pods["default/p"] is pi and pi.pod is new
    assert ni.requested.milli_cpu == 100
    assert c.selector_counts.counts("default", web) == {"n1": 1}


def test_label_and_spec_changes_count_the_pod_again():
    c = make()
    old = pod({"app": "web"})
    c.add_pod(old)
    web = selector_from_dict({"matchLabels": {"app": "web"}})
    assert c.selector_counts.counts("default", web) == {"n1": 1}
    relabelled = pod({"app": "db"})
    c.update_pod(old, relabelled)
    assert c.selector_counts.counts("default", web) == {}
    ni = c.snapshot().get("n1")
    resized = pod({"app": "db"}, cpu="300m")
    c.update_pod(relabelled, resized)
    assert ni.requested.milli_cpu == 300 and ni.pods["default/p"].pod is resized
