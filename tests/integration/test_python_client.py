"""The official Python client (`kubernetes` package) against `python -m controlplane apiserver`.

CRUD, list with label/field selectors, ``watch.Watch().stream`` with a resourceVersion
resume, and 409s (AlreadyExists, Conflict on a stale resourceVersion) as ApiException.
"""

from __future__ import annotations

import uuid

import pytest

from controlplane.storage import testing

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from tests.integration.conftest import start_apiserver, stop  # noqa: E402
from tests.support.tls import harness  # noqa: E402

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")]


@pytest.fixture(scope="module")
def api():
    import asyncio
    etcd = testing.EtcdProcess()
    url = asyncio.run(etcd.start())
    proc, _, server = start_apiserver(url)
    cfg = client.Configuration()
    cfg.host = server
    cfg.ssl_ca_cert, cfg.cert_file, cfg.key_file = harness().ca_file, harness().cert_file, harness().key_file
    api_client = client.ApiClient(cfg)
    yield client.CoreV1Api(api_client)
    api_client.close()
    stop(proc)
    asyncio.run(etcd.stop())


@pytest.fixture
def ns(api):
    name = "py-" + uuid.uuid4().hex[:8]
    api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


def pod(name, labels=None):
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.27")]))


def test_crud(api, ns):
    created = api.create_namespaced_pod(ns, pod("a", {"app": "web"}))
    assert created.metadata.uid and created.metadata.resource_version
    assert created.spec.restart_policy == "Always"                 # defaulted by the server
    got = api.read_namespaced_pod("a", ns)
    assert got.metadata.uid == created.metadata.uid
    patched = api.patch_namespaced_pod("a", ns, {"metadata": {"labels": {"tier": "front"}}})
    assert patched.metadata.labels == {"app": "web", "tier": "front"}
    patched.metadata.annotations = {"note": "replaced"}
    replaced = api.replace_namespaced_pod("a", ns, patched)
    assert replaced.metadata.annotations == {"note": "replaced"}
    assert int(replaced.metadata.resource_version) > int(patched.metadata.resource_version)
    api.delete_namespaced_pod("a", ns, grace_period_seconds=0)
    with pytest.raises(ApiException) as e:
        api.read_namespaced_pod("a", ns)
    assert e.value.status == 404


def test_list_with_selectors(api, ns):
    for name, app in (("a", "web"), ("b", "web"), ("c", "db")):
        api.create_namespaced_pod(ns, pod(name, {"app": app}))
    web = api.list_namespaced_pod(ns, label_selector="app=web")
    assert sorted(p.metadata.name for p in web.items) == ["a", "b"]
    not_web = api.list_namespaced_pod(ns, label_selector="app!=web")
    assert [p.metadata.name for p in not_web.items] == ["c"]
    by_name = api.list_namespaced_pod(ns, field_selector="metadata.name=b")
    assert [p.metadata.name for p in by_name.items] == ["b"]
    page = api.list_namespaced_pod(ns, limit=2)
    assert len(page.items) == 2 and page.metadata._continue
    rest = api.list_namespaced_pod(ns, limit=2, _continue=page.metadata._continue)
    assert [p.metadata.name for p in rest.items] == ["c"]


def test_watch_stream_and_resume(api, ns):
    rv = api.list_namespaced_pod(ns).metadata.resource_version
    api.create_namespaced_pod(ns, pod("w1"))
    api.create_namespaced_pod(ns, pod("w2"))
    w = watch.Watch()
    seen = []
    for ev in w.stream(api.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=10):
        seen.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.resource_version))
        if len(seen) == 2:
            w.stop()
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "w1"), ("ADDED", "w2")]
    # resume after the first event: only the second comes again
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_pod, ns, resource_version=seen[0][2], timeout_seconds=10):
        assert (ev["type"], ev["object"].metadata.name) == ("ADDED", "w2")
        w.stop()


def test_conflicts_are_409(api, ns):
    first = api.create_namespaced_pod(ns, pod("dup"))
    with pytest.raises(ApiException) as e:
        api.create_namespaced_pod(ns, pod("dup"))
    assert e.value.status == 409 and '"reason":"AlreadyExists"' in e.value.body.replace(" ", "")
    api.patch_namespaced_pod("dup", ns, {"metadata": {"labels": {"x": "1"}}})
    first.metadata.labels = {"x": "2"}                 # still the old resourceVersion
    with pytest.raises(ApiException) as e:
        api.replace_namespaced_pod("dup", ns, first)
    assert e.value.status == 409 and "the object has been modified" in e.value.body
