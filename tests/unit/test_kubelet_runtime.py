"""Kubelet building blocks: IPAM, image naming, exit behaviour, event wording, pod phase."""

from __future__ import annotations

import pytest

from components.kubelet import events as ev
from components.kubelet.ipam import IPAM, IPExhausted
from components.kubelet.runtime import exit_behaviour, image_id, normalize_image
from components.kubelet.status import pod_phase


def test_ipam_allocates_skips_gateway_releases_and_exhausts():
    ipam = IPAM("10.244.1.0/29")  # .0 network, .1 gateway, .7 broadcast → .2-.6
    ips = [ipam.allocate(f"p{i}") for i in range(5)]
    assert ips == ["10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5", "10.244.1.6"]
    assert ipam.allocate("p0") == "10.244.1.2"  # idempotent per owner
    with pytest.raises(IPExhausted):
        ipam.allocate("p5")
    assert ipam.release("p2") == "10.244.1.4"
    assert ipam.allocate("p6") == "10.244.1.4"
    assert not ipam.reserve("x", "10.0.0.1") and not ipam.reserve("y", "10.244.1.2")
    with pytest.raises(ValueError):
        IPAM("10.244.1.0/99")


@pytest.mark.parametrize("image,ref", [
    ("nginx", "docker.io/library/nginx:latest"),
    ("nginx:1.25", "docker.io/library/nginx:1.25"),
    ("soscscs/myapp:v1", "docker.io/soscscs/myapp:v1"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
    ("localhost:5000/app", "localhost:5000/app:latest"),
])
def test_normalize_image(image, ref):
    assert normalize_image(image) == ref


def test_image_id_is_stable_repo_at_digest():
    assert image_id("nginx") == image_id("docker.io/library/nginx:latest")
    assert image_id("nginx").startswith("docker.io/library/nginx@sha256:")
    assert image_id("nginx") != image_id("nginx:1.25")


@pytest.mark.parametrize("command,expected", [
    ([], None),
    (["nginx", "-g", "daemon off;"], None),
    (["sh", "-c", "exit 3"], (0.0, 3)),
    (["/bin/sh", "-c", "echo hi; sleep 5"], (5.0, 0)),
    (["false"], (0.0, 1)),
    (["sh", "-c", "while true; do sleep 1; done"], None),
    (["sleep", "infinity"], None),
    (["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"], (0.0, 0)),
    (["python3", "-c", "print(42)"], (0.0, 0)),
    (["python3", "-c", "while True: print(1)"], None),
    (["perl", "server.pl"], None),
], ids=["the image's entrypoint runs forever", "a server in the foreground", "exits at once with a code",
        "echo then sleep 5", "false exits 1", "an endless loop", "sleep infinity",
        "the docs' perl pi one-liner", "a python one-liner", "a python loop", "a perl script file"])
def test_exit_behaviour(command, expected):
    assert exit_behaviour({"name": "c", "command": command}) == expected


def test_exit_behaviour_annotation_wins():
    ann = {"controlplane.io/exit-after-seconds.c": "2", "controlplane.io/exit-code.c": "7"}
    assert exit_behaviour({"name": "c", "command": ["nginx"]}, ann) == (2.0, 7)


def test_event_wording_v1_32():
    assert ev.created("nginx") == "Created container: nginx"
    assert ev.started("nginx") == "Started container nginx"
    assert ev.killing("nginx") == "Stopping container nginx"
    assert ev.pulled("nginx", 0.2, 0.25, 123) == \
        'Successfully pulled image "nginx" in 200ms (250ms including waiting). Image size: 123 bytes.'
    assert ev.already_present("nginx") == 'Container image "nginx" already present on machine'
    assert [ev.go_duration(x) for x in (0, 0.2, 1.5, 80, 300)] == ["0s", "200ms", "1.5s", "1m20s", "5m0s"]


def _st(name, state, last=None):
    return {"name": name, "state": state, "lastState": {"terminated": last} if last else {}}


RUN = {"running": {"startedAt": "t"}}
WAIT = {"waiting": {"reason": "ContainerCreating"}}


def term(code):
    return {"terminated": {"exitCode": code}}


@pytest.mark.parametrize("restart,init,apps,terminal,phase", [
    ("Always", [], [RUN], False, "Running"),
    ("Always", [], [WAIT], False, "Pending"),
    ("Always", [WAIT], [WAIT], False, "Pending"),
    ("Always", [term(0)], [RUN], False, "Running"),
    ("Never", [term(1)], [WAIT], False, "Failed"),
    ("Always", [], [term(0)], False, "Running"),
    ("Never", [], [term(0)], False, "Succeeded"),
    ("Never", [], [term(2)], False, "Failed"),
    ("OnFailure", [], [term(2)], False, "Running"),
    ("OnFailure", [], [term(0), RUN], False, "Running"),
    ("Always", [], [term(0)], True, "Succeeded"),
    ("Always", [], [term(137)], True, "Failed"),
], ids=["running", "waiting", "init container waiting", "init done, app running",
        "Never: init container failed", "Always: an exited container restarts", "Never: exited 0",
        "Never: exited non-zero", "OnFailure: a failed container restarts", "OnFailure: one done, one running",
        "terminal: all exited 0", "terminal: killed"])
def test_pod_phase(restart, init, apps, terminal, phase):
    spec = {"restartPolicy": restart,
            "initContainers": [{"name": f"i{n}"} for n in range(len(init))],
            "containers": [{"name": f"c{n}"} for n in range(len(apps))]}
    got = pod_phase(spec, [_st(f"i{n}", s) for n, s in enumerate(init)],
                    [_st(f"c{n}", s) for n, s in enumerate(apps)], terminal)
    assert got == phase


def test_crashloop_waiting_counts_as_stopped():
    spec = {"restartPolicy": "Never", "containers": [{"name": "c0"}]}
    st = [_st("c0", {"waiting": {"reason": "CrashLoopBackOff"}}, {"exitCode": 1})]
    assert pod_phase(spec, [], st) == "Failed"
