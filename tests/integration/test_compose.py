"""The docker-compose demo: one image, one container per component, host network.

Cheap checks (the compose file's shape, its one build section, the one-line stop
when no image is built, the healthcheck probes) run wherever a compose binary is
installed. The expensive ones — build the base and the image
(``docker/build-image.sh``), run every subcommand in the image, run ``compose up
demo`` and ``docker/compose-demo.sh`` to the end of the 13 steps, and check that
nothing is left behind — are marked ``docker`` and are opt-in: they need a running
docker daemon and ``CP_DOCKER_TESTS=1``.

    CP_DOCKER_TESTS=1 python3 -m pytest -m docker tests/integration/test_compose.py

Env: ``CP_COMPOSE`` picks the compose command (default: ``docker compose`` if the
plugin exists, else ``docker-compose``); ``CP_BASE_IMAGE`` the base image
(default: python:3.11-slim when present locally, else the offline base that
docker/build-base.sh makes). Ports are free ones picked at run time, the compose
project name is unique, and ``down -v`` removes containers and the etcd volume.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPOSE_FILE = os.path.join(ROOT, "docker-compose.yml")
HEALTHCHECK = os.path.join(ROOT, "docker", "healthcheck.py")
IMAGE = "controlplane:local"
SERVICES = {"pki", "etcd", "apiserver", "controller-manager", "scheduler",
            "kubelet-node01", "kubelet-node02", "demo"}
#: the kubeconfig each client service runs with, in the shared pki volume (kubeadm's names)
KUBECONFIGS = {"controller-manager": "/data/pki/controller-manager.conf", "scheduler": "/data/pki/scheduler.conf",
               "kubelet-node01": "/data/pki/kubelet-node01.conf", "kubelet-node02": "/data/pki/kubelet-node02.conf",
               "demo": "/data/pki/kubeconfig"}

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compose_command() -> list[str] | None:
    """The compose CLI as an argv prefix, or None when none is installed."""
    if os.environ.get("CP_COMPOSE"):
        return shlex.split(os.environ["CP_COMPOSE"])
    if shutil.which("docker"):
        r = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if r.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def docker_unavailable() -> str | None:
    """Why the docker tests cannot run here, or None when they can."""
    if os.environ.get("CP_DOCKER_TESTS") != "1":
        return "docker tests are opt-in (they build images): set CP_DOCKER_TESTS=1"
    if not shutil.which("docker"):
        return "no docker CLI: apt-get install -y docker.io docker-compose debootstrap"
    r = subprocess.run(["docker", "info"], capture_output=True, timeout=60)
    if r.returncode != 0:
        return "docker daemon unreachable: start it (dockerd >/tmp/dockerd.log 2>&1 &)"
    if compose_command() is None:
        return "neither `docker compose` nor `docker-compose` is installed"
    return None


def image_present(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode == 0


def compose_env(etcd_port: int, apiserver_port: int) -> dict[str, str]:
    """The environment compose runs with: the ports, and CP_IMAGE (which .env holds after a build)."""
    env = dict(os.environ, CP_ETCD_PORT=str(etcd_port), CP_APISERVER_PORT=str(apiserver_port), CP_IMAGE=IMAGE)
    env.pop("DOCKER_BUILDKIT", None)
    return env


def compose_without_image(tmp_path, *args: str, project: str = "cpnoimage") -> subprocess.CompletedProcess:
    """Run compose on a copy of the compose file in a directory with no .env and no CP_IMAGE."""
    compose = compose_command()
    if compose is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    shutil.copy(COMPOSE_FILE, tmp_path / "docker-compose.yml")
    env = compose_env(free_port(), free_port())
    del env["CP_IMAGE"]
    return subprocess.run([*compose, "-f", str(tmp_path / "docker-compose.yml"), "-p", project, *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


# --- cheap: the compose file and the healthcheck probes ----------------------------------

def test_compose_file_runs_every_component_on_the_host_network():
    compose = compose_command()
    if compose is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    r = subprocess.run([*compose, "-f", COMPOSE_FILE, "config"], capture_output=True, text=True,
                       env=compose_env(41001, 41002), timeout=60)
    assert r.returncode == 0, r.stderr
    config = yaml.safe_load(r.stdout)
    services = config["services"]
    assert set(services) == SERVICES
    for name, svc in services.items():
        assert svc["image"] == IMAGE, name
        assert svc["network_mode"] == "host", name
        command = svc["command"] if isinstance(svc["command"], str) else " ".join(svc["command"])
        assert command.startswith("controlplane "), name
        # Every client runs with its own kubeconfig (its identity) from the pki volume (or its env).
        if name in KUBECONFIGS:
            blob = command + " " + " ".join(str(v) for v in (svc.get("environment") or {}).values())
            assert KUBECONFIGS[name] in blob, name
        if name != "etcd":
            volumes = [v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in svc["volumes"]]
            assert any(v.startswith("pki:/data/pki") for v in volumes), (name, volumes)
    # The ports chosen on the host reach the pki step (the kubeconfigs' server) and the apiserver.
    assert "--server https://127.0.0.1:41002" in services["pki"]["command"]
    assert "--listen-client-urls http://127.0.0.1:41001" in services["etcd"]["command"]
    assert "--etcd-servers http://127.0.0.1:41001" in services["apiserver"]["command"]
    assert services["apiserver"]["healthcheck"]["test"][-1] == "https://127.0.0.1:41002/readyz"
    assert "--client-ca-file /data/pki/pki/ca.crt" in services["apiserver"]["command"]
    assert services["apiserver"]["depends_on"]["pki"]["condition"] == "service_completed_successfully"
    # compose v1 prints "etcd-data:/data/etcd:rw", v2 a {type, source, target} mapping
    volumes = [v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in services["etcd"]["volumes"]]
    assert any(v.startswith("etcd-data:/data/etcd") for v in volumes), volumes
    assert "--secure-port 41002" in services["apiserver"]["command"]
    assert "etcd-data" in config["volumes"]
    for name in SERVICES - {"demo"}:
        assert services[name]["restart"] == "on-failure", name
    assert services["demo"]["restart"] == "no"
    demo_deps = services["demo"]["depends_on"]
    assert set(demo_deps) == SERVICES - {"demo", "etcd", "pki"}
    assert demo_deps["apiserver"]["condition"] == "service_healthy"


def test_one_service_builds_the_image_every_service_runs():
    compose = compose_command()
    if compose is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    r = subprocess.run([*compose, "-f", COMPOSE_FILE, "config"], capture_output=True, text=True,
                       env=compose_env(41001, 41002), timeout=60)
    assert r.returncode == 0, r.stderr
    services = yaml.safe_load(r.stdout)["services"]
    assert [name for name, svc in services.items() if "build" in svc] == ["etcd"]
    assert {svc["image"] for svc in services.values()} == {IMAGE}


def test_compose_without_a_built_image_stops_on_one_line_naming_the_command(tmp_path):
    r = compose_without_image(tmp_path, "config")
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert "docker/compose-demo.sh" in lines[0]


def run_probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, HEALTHCHECK, *args], capture_output=True, text=True, timeout=30)


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200 if self.path == "/readyz" else 500)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_healthcheck_probes_report_healthy_unhealthy_and_bad_usage():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        assert run_probe("http", f"http://127.0.0.1:{port}/readyz").returncode == 0
        bad = run_probe("http", f"http://127.0.0.1:{port}/livez")
        assert bad.returncode == 1 and "HTTP 500" in bad.stderr
        assert run_probe("tcp", f"127.0.0.1:{port}").returncode == 0
    finally:
        server.shutdown()
        server.server_close()
    closed = run_probe("tcp", f"127.0.0.1:{free_port()}")
    assert closed.returncode == 1 and closed.stderr.startswith("unhealthy: tcp")
    for args in [(), ("ftp", "x"), ("tcp", "no-port")]:
        r = run_probe(*args)
        assert r.returncode in (1, 2) and len(r.stderr.strip().splitlines()) == 1, args
    assert run_probe("ftp", "x").returncode == 2
    assert run_probe("--cacert").returncode == 2


def test_healthcheck_probe_over_https_with_the_ca_and_a_client_certificate():
    from tests.support.tls import harness
    h = harness()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(h.pki.path("apiserver"), h.pki.path("apiserver", "key"))
    ctx.load_verify_locations(h.ca_file)
    ctx.verify_mode = ssl.CERT_REQUIRED
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/readyz"
        tls = ["--cacert", h.ca_file, "--cert", h.cert_file, "--key", h.key_file]
        assert run_probe(*tls, "http", url).returncode == 0
        no_ca = run_probe("http", url)
        assert no_ca.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in no_ca.stderr
        no_cert = run_probe("--cacert", h.ca_file, "http", url)
        assert no_cert.returncode == 1 and no_cert.stderr.startswith("unhealthy: http")
    finally:
        server.shutdown()
        server.server_close()


# --- expensive: build the image and run the compose demo ---------------------------------

@pytest.fixture(scope="module")
def image() -> str:
    """Build controlplane:local with docker/build-image.sh (offline base when no registry)."""
    reason = docker_unavailable()
    if reason:
        pytest.skip(reason)
    args = [os.path.join(ROOT, "docker", "build-image.sh")]
    env = dict(os.environ)
    if env.get("CP_BASE_IMAGE"):
        env["BASE"] = env["CP_BASE_IMAGE"]
    elif not image_present("python:3.11-slim"):
        args.append("--offline")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert image_present(IMAGE)
    return IMAGE


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_image_runs_every_subcommand(image: str):
    from controlplane.cli.main import SUBCOMMANDS
    for sub in SUBCOMMANDS:
        r = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "controlplane", sub, "--help"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "Usage:" in r.stdout, f"controlplane {sub} --help: {r.stderr[-500:]}"
    r = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "controlplane-healthcheck"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "usage:" in r.stderr


class Project:
    """One compose project on free ports: ``run(*args)`` runs a compose subcommand."""

    def __init__(self) -> None:
        compose = compose_command()
        assert compose is not None
        self.name = f"cptest{uuid.uuid4().hex[:10]}"
        self.etcd_port, self.apiserver_port = free_port(), free_port()
        self.env = compose_env(self.etcd_port, self.apiserver_port)
        self.base = [*compose, "-f", COMPOSE_FILE, "-p", self.name]
        self.server = f"https://127.0.0.1:{self.apiserver_port}"
        self._ssl: ssl.SSLContext | None = None

    def ssl_context(self) -> ssl.SSLContext:
        """Trusting the cluster CA, as the admin: the files the ``pki`` service wrote into the
        project's ``pki`` volume, read with the image itself."""
        if self._ssl is None:
            files = {}
            for name in ("ca.crt", "admin.crt", "admin.key"):
                r = subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{self.name}_pki:/data/pki",
                                    IMAGE, "cat", f"/data/pki/pki/{name}"], capture_output=True, timeout=120)
                assert r.returncode == 0, r.stderr[-2000:]
                files[name] = r.stdout
            d = tempfile.mkdtemp(prefix="cptest-pki-")
            for name, data in files.items():
                with open(os.path.join(d, name), "wb") as f:
                    f.write(data)
            ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
            ctx.load_cert_chain(os.path.join(d, "admin.crt"), os.path.join(d, "admin.key"))
            self._ssl = ctx
        return self._ssl

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, env=self.env, timeout=timeout)

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10, context=self.ssl_context()) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def wait_ready(self, timeout: float = 120) -> None:
        """Wait until the apiserver's /readyz answers 200 (polled every 0.2 s)."""
        deadline = time.monotonic() + timeout
        tick = threading.Event()
        while True:
            try:
                with urllib.request.urlopen(self.server + "/readyz", timeout=2, context=self.ssl_context()) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                logs = self.run("logs", "--tail", "20", timeout=60).stdout
                raise TimeoutError(f"{self.server}/readyz not ready in {timeout}s\n{logs}")
            tick.wait(0.2)


@pytest.fixture
def project(image: str):
    """A compose project on free ports; ``down --volumes`` afterwards leaves nothing behind."""
    p = Project()
    yield p
    p.run("down", "--volumes", "--timeout", "10", timeout=300)
    left = subprocess.run(["docker", "ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={p.name}"],
                          capture_output=True, text=True, timeout=60)
    assert left.stdout.strip() == "", f"containers left behind by {p.name}"


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_etcd_data_survives_a_restart_on_the_named_volume(project: Project):
    r = project.run("up", "-d", "--no-build", "apiserver")
    assert r.returncode == 0, r.stderr[-3000:]
    project.wait_ready()
    name = f"compose-{uuid.uuid4().hex[:6]}"
    code, created = project.request("POST", "/api/v1/namespaces",
                                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert code == 201, created
    r = project.run("restart", "etcd", "apiserver")
    assert r.returncode == 0, r.stderr[-3000:]
    project.wait_ready()
    code, got = project.request("GET", f"/api/v1/namespaces/{name}")
    assert code == 200, got
    assert got["metadata"]["uid"] == created["metadata"]["uid"]


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_compose_up_demo_runs_the_13_steps(project: Project):
    r = project.run("up", "--no-build", "--exit-code-from", "demo", "demo")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    steps = {int(m) for m in re.findall(r"\[\s*(\d{1,2})\]\s+[+-]?\d", out)}
    assert set(range(2, 14)) <= steps, f"steps seen: {sorted(steps)}\n{out[-4000:]}"
    # seed 000: 3 replicas with nodeSelector kgc=a, and only node01 carries kgc=a
    assert re.search(r"Summary: 3 pod\(s\) Running", out), out[-4000:]
    assert "every pod landed on node01" in out, out[-4000:]


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_a_killed_component_is_restarted_on_failure(project: Project):
    r = project.run("up", "-d", "--no-build", "scheduler")  # waits for a healthy apiserver first
    assert r.returncode == 0, r.stderr[-3000:]
    container = project.run("ps", "-q", "scheduler", timeout=60).stdout.strip()
    assert container

    def state() -> tuple[int, str, int]:
        out = subprocess.run(["docker", "inspect", "-f", "{{.RestartCount}} {{.State.Status}} {{.State.Pid}}",
                              container], capture_output=True, text=True, timeout=60).stdout.split()
        return int(out[0]), out[1], int(out[2])

    restarts, status, pid = state()
    assert status == "running" and pid > 0
    os.kill(pid, 9)  # the container's own process, as an OOM kill or crash would end it
    deadline = time.monotonic() + 60
    tick = threading.Event()
    while state()[:2] != (restarts + 1, "running"):
        assert time.monotonic() < deadline, f"scheduler not restarted: {state()}"
        tick.wait(0.2)


def project_leftovers(name: str) -> str:
    """Containers and volumes still labelled with compose project ``name`` (empty when none)."""
    label = f"label=com.docker.compose.project={name}"
    containers = subprocess.run(["docker", "ps", "-a", "-q", "--filter", label],
                                capture_output=True, text=True, timeout=60).stdout.strip()
    volumes = subprocess.run(["docker", "volume", "ls", "-q", "--filter", label],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    return (containers + " " + volumes).strip()


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_compose_up_without_a_built_image_creates_nothing_and_pulls_nothing(tmp_path):
    reason = docker_unavailable()
    if reason:
        pytest.skip(reason)
    name = f"cptest{uuid.uuid4().hex[:10]}"
    r = compose_without_image(tmp_path, "up", "demo", project=name)
    assert r.returncode != 0
    out = (r.stdout + r.stderr).strip()
    assert len(out.splitlines()) == 1 and "docker/compose-demo.sh" in out, out
    assert "registry" not in out and "pull" not in out.lower(), out
    assert project_leftovers(name) == ""


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_compose_demo_script_runs_the_13_steps_and_leaves_nothing_behind(image: str):
    name = f"cptest{uuid.uuid4().hex[:10]}"
    env = compose_env(free_port(), free_port())
    env["COMPOSE_PROJECT_NAME"] = name
    try:
        r = subprocess.run([os.path.join(ROOT, "docker", "compose-demo.sh")], capture_output=True, text=True,
                           env=env, timeout=900)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out[-4000:]
        steps = {int(m) for m in re.findall(r"\[\s*(\d{1,2})\]\s+[+-]?\d", out)}
        assert set(range(2, 14)) <= steps, f"steps seen: {sorted(steps)}\n{out[-4000:]}"
        assert "every pod landed on node01" in out, out[-4000:]
        assert "compose-demo.sh: building" not in out, "the image was built already: the script must reuse it"
        assert project_leftovers(name) == "", out[-2000:]
    finally:
        compose = compose_command()
        if compose and project_leftovers(name):
            subprocess.run([*compose, "-f", COMPOSE_FILE, "-p", name, "down", "-v"],
                           env=env, capture_output=True, timeout=300)
