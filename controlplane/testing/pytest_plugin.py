"""The pytest plugin: a whole control plane for your integration tests.

Registered through the ``pytest11`` entry point ``controlplane``; nothing starts unless a test
asks for one of its fixtures.

Fixtures:

* ``cluster`` (session): a :class:`controlplane.testing.ClusterHandle` — etcd (embedded, data in
  a temporary dir; or ``--controlplane-etcd-servers``), apiserver, controller-manager,
  scheduler and a kubelet per node, each a separate process on free ports, started in
  parallel; usable (nodes Ready, ``default`` ServiceAccount present) when the fixture returns.
* ``controlplane`` (function): the cluster of this test — the session's, or the one the test's
  ``@pytest.mark.controlplane(nodes=..., hollow_nodes=..., etcd_servers=...)`` asks for (started
  once per distinct marker, stopped at the session's end).
* ``controlplane_cluster`` (session): a factory, ``controlplane_cluster(nodes=(...),
  hollow_nodes=N, etcd_servers=URLS)`` -> a cached :class:`ClusterHandle`.
* ``kubeconfig`` (session): path of the session cluster's kubeconfig.
* ``k8s_client`` (session): a ``kubernetes.client.ApiClient`` on the session cluster (skipped
  when the ``kubernetes`` package is missing); ``k8s_async_client`` (function): a
  ``kubernetes_asyncio.client.ApiClient`` on this test's cluster (skipped when
  ``kubernetes_asyncio`` or ``pytest-asyncio`` is missing).
* ``namespace`` (function): a fresh namespace on this test's cluster whose ``default``
  ServiceAccount exists; deleted afterwards, waiting until the namespace controller has
  emptied and removed it (``pkg/controller/namespace/deletion/namespaced_resources_deleter.go``).
* ``kubectl`` (function): runs the real ``kubectl`` against this test's cluster with a cache dir
  of its own; returns a ``subprocess.CompletedProcess`` (text), raising AssertionError on a
  non-zero exit unless ``check=False``.

A failing test's report carries, for each cluster it used, what every component logged during
the test (sections ``controlplane <component> log``). Under pytest-xdist every worker process
starts its own clusters (session fixtures are per worker, ports and dirs are its own).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterator

import pytest

if TYPE_CHECKING:
    from controlplane.testing.cluster import ClusterHandle, ClusterSpec

OPTION_PREFIX = "--controlplane-"
_POOL_KEY = pytest.StashKey["ClusterPool"]()
_OFFSETS_KEY = pytest.StashKey[dict[str, dict[str, int]]]()
_SETUP_OFFSETS_KEY = pytest.StashKey[dict[str, dict[str, int]]]()
_USED_KEY = pytest.StashKey[list["ClusterHandle"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("controlplane", "controlplane: a whole Kubernetes control plane for tests")
    group.addoption(f"{OPTION_PREFIX}nodes", default="node01,node02", metavar="NAMES",
                    help="comma-separated node names of the session cluster, one kubelet each "
                         "(default: node01,node02)")
    group.addoption(f"{OPTION_PREFIX}hollow-nodes", default=0, type=int, metavar="N",
                    help="also run N hollow nodes (hollow-0...) in one kubelet process (default: 0)")
    group.addoption(f"{OPTION_PREFIX}etcd-servers", default=None, metavar="URLS",
                    help="use this etcd (e.g. a real one, http://127.0.0.1:2379) instead of the embedded "
                         "etcd; every cluster then shares it, so give each run its own etcd")
    group.addoption(f"{OPTION_PREFIX}namespace-deletion", default="wait", choices=("wait", "background"),
                    help="wait: each test's namespace fixture waits until its namespace is gone "
                         "(the namespace controller rechecks remaining content every second, as "
                         "Kubernetes'); background: it only deletes it, and the session's end waits for "
                         "every such namespace to be gone (default: wait)")
    group.addoption(f"{OPTION_PREFIX}config", default=None, metavar="FILE",
                    help="a declarative cluster config (kind: Cluster, controlplane.io/v1alpha1) for the "
                         "session cluster, as `controlplane up --config`; it replaces --controlplane-nodes "
                         "and --controlplane-hollow-nodes")
    group.addoption(f"{OPTION_PREFIX}start-timeout", default=120.0, type=float, metavar="SECONDS",
                    help="how long a cluster may take to become usable (default: 120)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "controlplane(nodes=('node01', 'node02'), hollow_nodes=0, etcd_servers=None, config=None): "
        "run this "
        "test's controlplane/namespace/kubectl/k8s_async_client fixtures on a cluster of these settings")


class ClusterPool:
    """The clusters of one session (one per :class:`ClusterSpec`), started on first use in
    ``<basetemp>/controlplane-N`` and stopped by :meth:`stop_all`."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, timeout: float) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.timeout = timeout
        self.clusters: dict[ClusterSpec, ClusterHandle] = {}
        #: namespaces deleted in the background: (cluster, name), waited for by stop_all
        self.deleting: list[tuple[ClusterHandle, str]] = []

    def get(self, spec: ClusterSpec) -> ClusterHandle:
        """The running cluster for ``spec``, started now if needed (RuntimeError if it cannot
        start; its logs then stay in the temporary dir)."""
        from controlplane.testing.cluster import ClusterHandle
        if spec not in self.clusters:
            handle = ClusterHandle(str(self.tmp_path_factory.mktemp("controlplane") / "cp"), spec)
            handle.start(self.timeout)
            self.clusters[spec] = handle
        return self.clusters[spec]

    def stop_all(self) -> None:
        """Wait (60 s each, then TimeoutError) until every namespace deleted in the background
        is gone, then stop every cluster."""
        try:
            for handle, name in self.deleting:
                wait_namespace_gone(handle, name)
        finally:
            self.deleting.clear()
            for handle in self.clusters.values():
                handle.stop()
            self.clusters.clear()


def _spec(nodes: Any = None, hollow_nodes: int | None = None, etcd_servers: str | None = None,
          cluster_config: str | None = None, *, config: pytest.Config, base_dir: str | None = None) -> ClusterSpec:
    """The :class:`ClusterSpec` of these settings; unset ones from the command line. A relative
    ``cluster_config`` path is taken from ``base_dir`` (a marker's: the test file's folder)."""
    from controlplane.testing.cluster import ClusterSpec
    if cluster_config is None and nodes is None and hollow_nodes is None:
        cluster_config = config.getoption(f"{OPTION_PREFIX}config")
        base_dir = str(config.invocation_params.dir)
    if cluster_config is not None:
        path = os.path.abspath(os.path.join(base_dir or os.getcwd(), os.fspath(cluster_config)))
        return ClusterSpec(nodes=(), etcd_servers=etcd_servers or config.getoption(f"{OPTION_PREFIX}etcd-servers"),
                           config=path)
    if nodes is None:
        nodes = config.getoption(f"{OPTION_PREFIX}nodes")
    if isinstance(nodes, str):
        nodes = [n.strip() for n in nodes.split(",") if n.strip()]
    if hollow_nodes is None:
        hollow_nodes = int(config.getoption(f"{OPTION_PREFIX}hollow-nodes"))
    if etcd_servers is None:
        etcd_servers = config.getoption(f"{OPTION_PREFIX}etcd-servers")
    if not nodes and not hollow_nodes:
        raise pytest.UsageError("controlplane: a cluster needs at least one node")
    return ClusterSpec(nodes=tuple(nodes), hollow_nodes=hollow_nodes, etcd_servers=etcd_servers)


@pytest.fixture(scope="session")
def controlplane_pool(request: pytest.FixtureRequest,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPool]:
    """The session's :class:`ClusterPool`; every cluster in it is stopped at the session's end."""
    pool = ClusterPool(tmp_path_factory, float(request.config.getoption(f"{OPTION_PREFIX}start-timeout")))
    request.config.stash[_POOL_KEY] = pool
    try:
        yield pool
    finally:
        pool.stop_all()
        del request.config.stash[_POOL_KEY]


@pytest.fixture(scope="session")
def controlplane_cluster(request: pytest.FixtureRequest,
                         controlplane_pool: ClusterPool) -> Callable[..., ClusterHandle]:
    """``controlplane_cluster(nodes=("a", "b"), hollow_nodes=0, etcd_servers=None)`` -> the
    session's cluster of these settings (unset ones come from the command line)."""
    def get(nodes: Any = None, hollow_nodes: int | None = None, etcd_servers: str | None = None,
            config: str | None = None, *, base_dir: str | None = None) -> ClusterHandle:
        return controlplane_pool.get(_spec(nodes, hollow_nodes, etcd_servers, config,
                                           config=request.config, base_dir=base_dir))
    return get


@pytest.fixture(scope="session")
def cluster(controlplane_cluster: Callable[..., ClusterHandle]) -> ClusterHandle:
    """The session cluster, of the ``--controlplane-*`` options' settings."""
    return controlplane_cluster()


@pytest.fixture()
def controlplane(request: pytest.FixtureRequest, controlplane_cluster: Callable[..., ClusterHandle]) -> ClusterHandle:
    """This test's cluster: the one its ``controlplane`` marker asks for, else the session's."""
    marker = request.node.get_closest_marker("controlplane")
    handle = (controlplane_cluster(*marker.args, **marker.kwargs, base_dir=str(request.node.path.parent))
              if marker else controlplane_cluster())
    _note_used(request.node, handle)
    return handle


@pytest.fixture(scope="session")
def kubeconfig(cluster: ClusterHandle) -> str:
    """Path of the session cluster's kubeconfig (current context's namespace: ``default``)."""
    return cluster.kubeconfig


def _admin_configuration(configuration: Any, handle: ClusterHandle) -> Any:
    """A ``Configuration`` of the official client (``kubernetes`` or ``kubernetes_asyncio``: the
    class is given) for ``handle``'s apiserver over HTTPS: the cluster CA and the admin's client
    certificate (CN ``kubernetes-admin``, O ``system:masters``)."""
    conf = configuration(host=handle.server)
    conf.ssl_ca_cert = handle.ca_file
    conf.cert_file, conf.key_file = handle.admin_cert_files
    return conf


@pytest.fixture(scope="session")
def k8s_client(cluster: ClusterHandle) -> Iterator[Any]:
    """A ``kubernetes.client.ApiClient`` on the session cluster; skipped without ``kubernetes``."""
    kubernetes = pytest.importorskip("kubernetes", reason="k8s_client needs the kubernetes package")
    client = kubernetes.client.ApiClient(_admin_configuration(kubernetes.client.Configuration, cluster))
    try:
        yield client
    finally:
        client.close()


try:
    import pytest_asyncio

    @pytest_asyncio.fixture()
    async def k8s_async_client(controlplane: ClusterHandle) -> Any:
        """A ``kubernetes_asyncio.client.ApiClient`` on this test's cluster, closed after the
        test; skipped without ``kubernetes_asyncio``."""
        kubernetes_asyncio = pytest.importorskip(
            "kubernetes_asyncio", reason="k8s_async_client needs the kubernetes_asyncio package")
        client = kubernetes_asyncio.client.ApiClient(
            _admin_configuration(kubernetes_asyncio.client.Configuration, controlplane))
        try:
            yield client
        finally:
            await client.close()
except ImportError:  # pragma: no cover - pytest-asyncio is missing
    @pytest.fixture()
    def k8s_async_client() -> Any:
        """Skipped: an asyncio client fixture needs pytest-asyncio."""
        pytest.skip("k8s_async_client needs pytest-asyncio")


def _namespace_name(node_name: str) -> str:
    """A DNS-1123 label from a test's name: ``test-<name, at most 40 chars>-<5 hex>``."""
    base = re.sub(r"[^a-z0-9-]+", "-", node_name.lower()).strip("-")[:40].strip("-") or "t"
    return f"test-{base}-{uuid.uuid4().hex[:5]}"


@pytest.fixture()
def namespace(request: pytest.FixtureRequest, controlplane: ClusterHandle) -> Generator[str, None, None]:
    """A fresh namespace's name (``test-<test name>-<5 hex>``) whose ``default`` ServiceAccount
    exists. Afterwards it is deleted and the fixture waits (60 s, then a teardown error) until
    the namespace is gone — its contents removed by the namespace controller, its pods ended
    by their kubelets; with ``--controlplane-namespace-deletion=background`` that wait happens
    at the session's end instead."""
    pool = request.config.stash[_POOL_KEY]
    name = _namespace_name(request.node.name)
    status, body = controlplane.request("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    if status != 201:
        raise RuntimeError(f"creating namespace {name}: {status} {body.get('message', body)}")
    controlplane.watch_until(f"/api/v1/namespaces/{name}/serviceaccounts", lambda sas: "default" in sas)
    yield name
    status, body = controlplane.request("DELETE", f"/api/v1/namespaces/{name}")
    if status not in (200, 202, 404):
        raise RuntimeError(f"deleting namespace {name}: {status} {body.get('message', body)}")
    if request.config.getoption(f"{OPTION_PREFIX}namespace-deletion") == "background":
        pool.deleting.append((controlplane, name))
    else:
        wait_namespace_gone(controlplane, name)


def wait_namespace_gone(handle: ClusterHandle, name: str, timeout: float = 60) -> None:
    """Block until namespace ``name`` no longer exists on ``handle``'s cluster (TimeoutError
    after ``timeout`` s)."""
    handle.watch_until(f"/api/v1/namespaces?fieldSelector=metadata.name%3D{name}",
                       lambda nss: name not in nss, timeout)


class Kubectl:
    """``kubectl(*args, input=None, check=True, timeout=60)`` runs ``KUBECTL --kubeconfig K
    --cache-dir D ARGS`` -> ``subprocess.CompletedProcess[str]``; AssertionError (with the
    output) on a non-zero exit when ``check``."""

    def __init__(self, binary: str, kubeconfig: str, cache_dir: str) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir

    def __call__(self, *args: str, input: str | None = None, check: bool = True,
                 timeout: float = 60) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([self.binary, "--kubeconfig", self.kubeconfig, "--cache-dir", self.cache_dir, *args],
                           input=input, capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        return p


@pytest.fixture()
def kubectl(controlplane: ClusterHandle) -> Kubectl:
    """A :class:`Kubectl` on this test's cluster (cache dir ``<data-dir>/kube-cache``);
    skipped when no kubectl is on PATH."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl not found on PATH")
    return Kubectl(binary, controlplane.kubeconfig, os.path.join(controlplane.data_dir, "kube-cache"))


# -- component logs in a failing test's report -------------------------------------------------
def _note_used(item: pytest.Item, handle: ClusterHandle) -> None:
    used = item.stash.setdefault(_USED_KEY, [])
    if handle not in used:
        used.append(handle)


def _offsets(item: pytest.Item) -> dict[str, dict[str, int]]:
    pool = item.config.stash.get(_POOL_KEY, None)
    return {h.data_dir: h.log_sizes() for h in pool.clusters.values()} if pool is not None else {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, None]:
    """Remember where each running cluster's logs end before and after the test's setup, so a
    failure shows only its own phase's part (a cluster started by this setup: from its start)."""
    item.stash[_SETUP_OFFSETS_KEY] = _offsets(item)
    yield
    item.stash[_OFFSETS_KEY] = _offsets(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.failed:
        return
    used: list[ClusterHandle] = []
    if _USED_KEY in item.stash:
        noted: list[ClusterHandle] = item.stash[_USED_KEY]
        used += noted
    pool = item.config.stash.get(_POOL_KEY, None)
    if pool is not None and "cluster" in getattr(item, "fixturenames", ()):
        used += [h for h in pool.clusters.values() if h.spec == _spec(config=item.config) and h not in used]
    offsets = item.stash.get(_SETUP_OFFSETS_KEY if report.when == "setup" else _OFFSETS_KEY, {})
    for handle in used:
        many = len(used) > 1
        for name, text in handle.logs_since(offsets.get(handle.data_dir, {})).items():
            if text.strip():
                where = f" ({handle.data_dir})" if many else ""
                report.sections.append((f"controlplane {name} log{where}", text))
