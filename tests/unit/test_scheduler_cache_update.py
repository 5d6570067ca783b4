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


def test_domain_counts_match_a_recount_through_pod_and_node_churn():
    import random

    from controlplane.selectors import selector_from_dict
    r = random.Random(7)
    c = Cache()
    key = "topology.kubernetes.io/zone"
    web = selector_from_dict({"matchLabels": {"app": "web"}})

    def node(i, zone):
        return {"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}", key: zone}},
                "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"}}}

    def recount():
        want: dict[str, int] = {}
        for ni in c.nodes():
            if ni.node is None:
                continue
            for pi in ni.pods.values():
                if pi.namespace == "default" and web.matches(pi.labels):
                    v = ni.labels.get(key)
                    if v is not None:
                        want[v] = want.get(v, 0) + 1
        return want

    for i in range(6):
        c.add_node(node(i, f"z{i % 3}"))
    live = {}
    for step in range(400):
        op = r.random()
        if op < 0.5:
            name = f"p{step}"
            p = {"metadata": {"name": name, "namespace": r.choice(["default", "other"]), "uid": name,
                              "labels": {"app": r.choice(["web", "db"])}},
                 "spec": {"nodeName": f"n{r.randrange(7)}", "containers": [{"name": "c"}]}}
            c.add_pod(p)
            live[name] = p
        elif op < 0.75 and live:
            c.remove_pod(live.pop(r.choice(sorted(live))))
        elif op < 0.9:
            c.update_node(node(r.randrange(6), f"z{r.randrange(4)}"))
        elif op < 0.95:
            c.remove_node(f"n{r.randrange(7)}")
        else:
            c.add_node(node(r.randrange(7), f"z{r.randrange(3)}"))
        if step % 10 == 0:
            assert c.selector_counts.domain_counts("default", web, key) == recount(), step
    assert c.selector_counts.domain_counts("default", web, key) == recount()
