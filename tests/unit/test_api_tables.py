"""Server-side Tables as kubectl expects them (pkg/printers/internalversion/printers.go,
apimachinery util/duration HumanDuration, meta/v1 Table)."""
import pytest

from controlplane.api.tables import human_duration, table
from controlplane.apitime import format_time, parse_time

NOW = parse_time("2024-01-10T12:00:00Z")


def created(seconds_ago):
    return format_time(NOW - seconds_ago)


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (45, "45s"), (119, "119s"), (120, "2m"), (200, "3m20s"), (600, "10m"), (179 * 60, "179m"),
    (3 * 3600, "3h"), (5 * 3600 + 30 * 60, "5h30m"), (30 * 3600, "30h"), (2 * 86400 + 3 * 3600, "2d3h"),
    (3 * 86400, "3d"), (30 * 86400, "30d"), (800 * 86400, "2y70d"), (-0.5, "0s"), (-5, "<invalid>"),
])
def test_human_duration(seconds, text):
    assert human_duration(seconds) == text


def names(t, wide=None):
    return [c["name"] for c in t["columnDefinitions"] if wide is None or (c["priority"] == 1) == wide]


def pod(phase="Pending", statuses=None, **extra):
    p = {"metadata": {"name": "web-1", "namespace": "default", "creationTimestamp": created(200),
                      "labels": {"app": "web"}},
         "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
         "status": {"phase": phase, "containerStatuses": statuses or []}}
    for k, v in extra.items():
        p[k].update(v)
    return p


def test_table_shape():
    t = table("Pod", [pod()], "123", NOW)
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert t["metadata"] == {"resourceVersion": "123"}
    assert names(t, wide=False) == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert names(t, wide=True) == ["IP", "Node", "Nominated Node", "Readiness Gates"]
    assert t["columnDefinitions"][0]["format"] == "name"
    row = t["rows"][0]
    assert len(row["cells"]) == len(t["columnDefinitions"])
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": pod()["metadata"]}


def test_pending_pod_row():
    cells = table("Pod", [pod()], "1", NOW)["rows"][0]["cells"]
    assert cells == ["web-1", "0/2", "Pending", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"]


def running(name, ready=True, restarts=0):
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": created(60)}}}


@pytest.mark.parametrize("p, ready, status", [
    (pod("Pending", [{"name": "a", "state": {"waiting": {"reason": "ContainerCreating"}}},
                     {"name": "b", "state": {"waiting": {"reason": "ContainerCreating"}}}]), "0/2", "ContainerCreating"),
    (pod("Running", [running("a"), running("b")]), "2/2", "Running"),
    (pod("Running", [running("a"), {"name": "b", "restartCount": 3,
                                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]), "1/2", "CrashLoopBackOff"),
    (pod("Succeeded", [{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                       {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]),
     "0/2", "Completed"),
    (pod("Failed", [{"name": "a", "state": {"terminated": {"exitCode": 2}}}]), "0/2", "ExitCode:2"),
    (pod("Running", [running("a"), running("b")], metadata={"deletionTimestamp": created(1)}), "2/2", "Terminating"),
    (pod("Pending", [], spec={"initContainers": [{"name": "i1"}, {"name": "i2"}]},
         status={"initContainerStatuses": [
             {"name": "i1", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
             {"name": "i2", "state": {"running": {}}}]}), "0/2", "Init:1/2"),
    (pod("Pending", [], spec={"initContainers": [{"name": "i1"}]},
         status={"initContainerStatuses": [{"name": "i1", "state": {"waiting": {"reason": "ErrImagePull"}}}]}),
     "0/2", "Init:ErrImagePull"),
    (pod("Failed", [], status={"reason": "Evicted"}), "0/2", "Evicted"),
], ids=["containers being created", "running and ready", "one container in CrashLoopBackOff",
        "completed", "failed with an exit code", "being deleted", "second init container running",
        "init container failing to pull", "evicted"])
def test_pod_status_column(p, ready, status):
    cells = table("Pod", [p], "1", NOW)["rows"][0]["cells"]
    assert (cells[1], cells[2]) == (ready, status)


def test_pod_restarts_and_wide_cells():
    last = {"terminated": {"exitCode": 1, "finishedAt": created(90)}}
    p = pod("Running", [dict(running("a", restarts=2), lastState=last), running("b")],
            spec={"nodeName": "node01", "readinessGates": [{"conditionType": "x/ready"}]},
            status={"podIP": "10.1.0.7", "podIPs": [{"ip": "10.1.0.7"}],
                    "conditions": [{"type": "x/ready", "status": "True"}]})
    cells = table("Pod", [p], "1", NOW)["rows"][0]["cells"]
    assert cells[3] == "2 (90s ago)"
    assert cells[5:] == ["10.1.0.7", "node01", "<none>", "1/1"]


def test_completed_pod_row_condition():
    row = table("Pod", [pod("Succeeded")], "1", NOW)["rows"][0]
    assert row["conditions"][0]["type"] == "Completed"


def node(ready="True", unschedulable=False, labels=None):
    return {"metadata": {"name": "node01", "creationTimestamp": created(5 * 3600), "labels": labels or {}},
            "spec": {"unschedulable": unschedulable},
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian GNU/Linux 12 (bookworm)",
                                    "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.0"}}}


@pytest.mark.parametrize("n, status, roles", [
    (node(), "Ready", "<none>"),
    (node("False"), "NotReady", "<none>"),
    (node("Unknown", True), "NotReady,SchedulingDisabled", "<none>"),
    (node(labels={"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": ""}),
     "Ready", "control-plane,worker"),
    (node(labels={"kubernetes.io/role": "master"}), "Ready", "master"),
], ids=["ready", "not ready", "unknown and cordoned", "node-role labels", "the kubernetes.io/role label"])
def test_node_rows(n, status, roles):
    t = table("Node", [n], "1", NOW)
    assert names(t) == ["Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image",
                        "Kernel-Version", "Container-Runtime"]
    assert t["rows"][0]["cells"] == ["node01", status, roles, "5h", "v1.32.0", "172.18.0.2", "<none>",
                                     "Debian GNU/Linux 12 (bookworm)", "6.1.0", "containerd://1.7.0"]


def test_node_without_conditions_is_unknown():
    n = {"metadata": {"name": "n"}}
    assert table("Node", [n], "1", NOW)["rows"][0]["cells"][1] == "Unknown"


def workload(kind):
    spec = {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"},
                                                 {"name": "side", "image": "busybox"}]}}}
    if kind == "ReplicationController":
        spec["selector"] = {"app": "web"}
    return {"kind": kind, "metadata": {"name": "web", "creationTimestamp": created(45)}, "spec": spec,
            "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}


def test_deployment_row():
    t = table("Deployment", [workload("Deployment")], "1", NOW)
    assert names(t) == ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    assert t["rows"][0]["cells"] == ["web", "2/3", 3, 2, "45s", "nginx,side", "nginx:1.25,busybox", "app=web"]


@pytest.mark.parametrize("kind", ["ReplicaSet", "ReplicationController"])
def test_replicaset_rows(kind):
    t = table(kind, [workload(kind)], "1", NOW)
    assert names(t, wide=False) == ["Name", "Desired", "Current", "Ready", "Age"]
    assert t["rows"][0]["cells"] == ["web", 3, 3, 2, "45s", "nginx,side", "nginx:1.25,busybox", "app=web"]


def test_namespace_row():
    t = table("Namespace", [{"metadata": {"name": "default", "creationTimestamp": created(3 * 86400)},
                             "status": {"phase": "Active"}}], "1", NOW)
    assert t["rows"][0]["cells"] == ["default", "Active", "3d"]


def test_event_row():
    ev = {"metadata": {"name": "web-1.17a", "namespace": "default"}, "type": "Normal", "reason": "Scheduled",
          "message": "Successfully assigned default/web-1 to node01 ",
          "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": ""},
          "source": {"component": "default-scheduler"}, "firstTimestamp": created(100),
          "lastTimestamp": created(30), "count": 2}
    t = table("Event", [ev], "1", NOW)
    assert names(t, wide=False) == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert t["rows"][0]["cells"] == ["30s", "Normal", "Scheduled", "pod/web-1", "", "default-scheduler",
                                     "Successfully assigned default/web-1 to node01", "100s", 2, "web-1.17a"]


def test_other_kinds():
    svc = {"metadata": {"name": "web"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.10",
                                                 "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                                                 "selector": {"app": "web"}}}
    assert table("Service", [svc], "1", NOW)["rows"][0]["cells"][1:5] == ["NodePort", "10.96.0.10", "<none>",
                                                                          "80:30080/TCP"]
    cm = {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}}
    assert table("ConfigMap", [cm], "1", NOW)["rows"][0]["cells"][:2] == ["cfg", 2]
    lease = {"metadata": {"name": "node01"}, "spec": {"holderIdentity": "node01"}}
    assert table("Lease", [lease], "1", NOW)["rows"][0]["cells"][:2] == ["node01", "node01"]
    t = table("Widget", [{"metadata": {"name": "w"}}], "1", NOW)
    assert names(t) == ["Name", "Age"] and t["rows"][0]["cells"] == ["w", "<unknown>"]


def test_include_object_and_empty_list():
    p = pod()
    assert table("Pod", [p], "1", NOW, include_object="Object")["rows"][0]["object"] == p
    assert "object" not in table("Pod", [p], "1", NOW, include_object="None")["rows"][0]
    assert table("Pod", [], "9", NOW)["rows"] == []
