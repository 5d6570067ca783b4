"""The kubelet's projected service-account tokens (components/kubelet/tokens.py): one pod-bound
TokenRequest per projected source, cached, refreshed at 80 % of its life, forgotten with the pod;
failures recorded as FailedMount (but not a missing account)."""

from __future__ import annotations

import asyncio

import pytest

from components.kubelet.tokens import TokenManager, token_request, token_sources
from controlplane import apitime
from controlplane.client.rest import ApiError

POD = {"metadata": {"name": "web", "namespace": "ns1", "uid": "pod-uid"},
       "spec": {"serviceAccountName": "robot", "volumes": [
           {"name": "kube-api-access-abcde", "projected": {"sources": [  # the ServiceAccount admission plugin's
               {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
               {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}},
           {"name": "data", "emptyDir": {}}]}}


class FakeClient:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple] = []
        self.error = error
        self.now = 1_000_000.0

    async def create_subresource(self, res, name, sub, body, namespace=None):
        self.calls.append((res.plural, namespace, name, sub, body))
        if self.error is not None:
            raise self.error
        exp = self.now + body["spec"]["expirationSeconds"]
        return {**body, "status": {"token": f"tok-{len(self.calls)}", "expirationTimestamp": apitime.format_time(exp)}}


def test_sources_and_request_body():
    (name, src), = token_sources(POD)
    assert name == "kube-api-access-abcde" and src == {"expirationSeconds": 3607, "path": "token"}
    assert token_request(POD, src) == {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {},
        "spec": {"expirationSeconds": 3607,
                 "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web", "uid": "pod-uid"}}}
    assert token_request(POD, {"audience": "vault", "expirationSeconds": 600})["spec"]["audiences"] == ["vault"]


async def test_mount_requests_once_then_uses_the_cache():
    client = FakeClient()
    tm = TokenManager(client, clock=lambda: client.now)
    assert await tm.mount(POD) == 1
    assert client.calls[0][:4] == ("serviceaccounts", "ns1", "robot", "token")
    assert await tm.mount(POD) == 0 and len(client.calls) == 1
    assert tm.token_for(POD) == "tok-1"
    tm.close()


async def test_refresh_at_eighty_percent_of_life():
    client = FakeClient()
    tm = TokenManager(client, clock=lambda: client.now)
    await tm.mount(POD)
    client.now += 0.79 * 3607
    assert await tm.mount(POD) == 0
    client.now += 0.02 * 3607
    assert await tm.mount(POD) == 1 and tm.token_for(POD) == "tok-2"
    tm.close()


async def test_refresh_timer_fires_without_a_sync():
    client = FakeClient()
    tm = TokenManager(client, clock=lambda: client.now)
    await tm.mount(POD)
    handle = tm._timers["pod-uid"]
    assert handle.when() - asyncio.get_running_loop().time() == pytest.approx(0.8 * 3607, abs=1)
    client.now += 0.81 * 3607
    handle.cancel()
    tm._refresh("pod-uid")  # the timer's callback, now rather than in 48 minutes
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(client.calls) == 2 and tm.token_for(POD) == "tok-2"
    tm.close()


async def test_forget_drops_tokens_and_timer():
    client = FakeClient()
    tm = TokenManager(client, clock=lambda: client.now)
    await tm.mount(POD)
    tm.forget("pod-uid")
    assert tm.tokens == {} and tm._timers == {} and tm.token_for(POD) is None


@pytest.mark.parametrize("error, events", [
    (ApiError(403, "Forbidden", 'serviceaccounts "robot" is forbidden'),
     ['MountVolume.SetUp failed for volume "kube-api-access-abcde" : failed to fetch token: serviceaccounts '
      '"robot" is forbidden']),
    (ApiError(404, "NotFound", 'serviceaccounts "robot" not found'), []),
], ids=["refused-is-failed-mount", "missing-account-is-only-logged"])
async def test_failures(error, events):
    client, seen = FakeClient(error), []
    tm = TokenManager(client, lambda pod, msg: seen.append(msg), clock=lambda: client.now)
    assert await tm.mount(POD) == 0
    assert seen == events and tm.tokens == {}
    client.error = None
    assert await tm.mount(POD) == 1  # retried at the next sync
    tm.close()


async def test_pod_without_projected_token():
    client = FakeClient()
    tm = TokenManager(client)
    assert await tm.mount({"metadata": {"uid": "u"}, "spec": {"volumes": [{"name": "d", "emptyDir": {}}]}}) == 0
    assert client.calls == []
