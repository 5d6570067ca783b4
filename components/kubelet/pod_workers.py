"""Pod workers: one serialised worker per pod, driving the simulated runtime.

Each pod bound to the node gets a worker task; updates for a pod that is being
synced are coalesced and handled by the same worker once the current sync ends
(``pkg/kubelet/pod_workers.go`` UpdatePod). A sync follows the order of
``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` SyncPod:

1. the pod sandbox (``pause`` container, pod IP from the node's podCIDR);
2. init containers one at a time, each to completion (exit 0) before the next;
3. app containers — image, create, start — all of them together;
4. a status update (``PATCH pods/NAME/status``, as the status manager does), sent
   when the generated status differs from the one the apiserver holds — the newest
   of the informer's pod and this kubelet's last write, by resourceVersion — so a
   status someone else changed (the node lifecycle controller's ``Ready=False``
   while the node was Unknown) is written back on the next sync. No extra GET: the
   pods informer's cache is the apiserver's view (``pkg/kubelet/status/status_manager.go``
   syncPod / needsUpdate / needsReconcile compare against the pod manager's pod).

A status write answered 404 or 409 is kept as unsynced (any other error fails the
sync, which the worker runs again 1 s later) and retried by :meth:`PodWorkers.sync_batch`,
the status manager's ``syncBatch`` run every :data:`STATUS_SYNC_PERIOD` (10 s,
``syncPeriod``): a GET of the pod, then the write again against that fresh copy; a 404
drops it (the pod is gone), so does another UID (a pod recreated under the same name).
The same batch writes back a status someone else changed while the pod's worker was
busy (needsReconcile). Pods in sync cost nothing there: only the unsynced and the
drifted are looked at.

Every sync that ends without error schedules the pod's next one ``sync_frequency``
(``--sync-frequency``, 1 min) later, plus up to half of that as jitter
(``pkg/kubelet/pod_workers.go`` completeWork: ``wait.Jitter(resyncInterval, 0.5)``);
:meth:`PodWorkers.resync_due`, called every second (``kubelet.go`` syncLoop's
``syncCh``), starts the pods that are due, so a pod left in a bad state is looked
at again.

A pod with ``deletionTimestamp`` is stopped gracefully (``Killing`` events, preStop
hooks, SIGTERM, SIGKILL at the end of the grace period: :meth:`PodWorkers.terminate_pod`),
gets its terminal status, loses its sandbox and IP, and is then deleted with
``gracePeriodSeconds=0`` (the kubelet's final delete, ``pkg/kubelet/status/status_manager.go``).
Exited containers are restarted per ``restartPolicy`` with the kubelet's back-off
(10 s doubling up to 300 s; CrashLoopBackOff in between). Images that cannot be pulled
(``images.py``) leave the container waiting in ErrImagePull / ImagePullBackOff with the
image back-off; probes (``prober.py``) set ``started`` / ``ready`` and kill a container
that fails its liveness or startup probe. Every duration is measured on the runtime's
clock (``SimulatedRuntime.clock``), the one a test replaces with a ``FakeClock``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Callable

from components.kubelet import events as ev
from components.kubelet import images as img
from components.kubelet import metrics, prober
from components.kubelet.lifecycle import (
    MINIMUM_GRACE_SECONDS,
    grace_period_seconds,
    hook_seconds,
    should_restart,
)
from components.kubelet.runtime import (
    Container,
    ImagePullError,
    Sandbox,
    SimulatedRuntime,
    container_timeline,
    exit_behaviour,
)
from components.kubelet.status import generate_pod_status, status_differs
from controlplane import apitime, otel
from controlplane.api.defaults import image_pull_policy
from controlplane.api.resources import PODS
from controlplane.client.rest import ApiError
from controlplane.log import event

log = logging.getLogger("kubelet.pods")

#: seconds between two status batches (``pkg/kubelet/status/status_manager.go`` syncPeriod)
STATUS_SYNC_PERIOD = 10.0
#: the periodic resync's jitter: up to this fraction of --sync-frequency more
#: (``pkg/kubelet/pod_workers.go`` workerResyncIntervalJitterFactor)
RESYNC_JITTER = 0.5


class _Preempted(Exception):
    """A newer version of the pod (e.g. its deletion) supersedes the running sync."""


def _uid(pod: dict) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


def _rv(pod: dict) -> int:
    """The pod's resourceVersion as a number (etcd's mod revision); -1 when absent."""
    rv = str((pod.get("metadata") or {}).get("resourceVersion") or "")
    return int(rv) if rv.isdigit() else -1


def _name(pod: dict) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace')}/{md.get('name')}"


class PodWorkers:
    """The pods of one node.

    ``client``: a RestClient-like object (``patch``, ``delete``); ``recorder``: an
    EventRecorder-like object (``event(obj, type, reason, message, field_path)``);
    ``tracer``: a TraceEmitter-like object (``emit(step, action, obj, detail)``) or None.
    ``backoff_base``/``backoff_max``: restart back-off in seconds. ``sync_frequency``: seconds
    between a pod's periodic syncs (``--sync-frequency``; 0: none).
    Call :meth:`update_pod` / :meth:`remove_pod` from informer handlers, :meth:`resync_due`
    every second and :meth:`sync_batch` every :data:`STATUS_SYNC_PERIOD` seconds.
    """

    def __init__(self, client: Any, node_name: str, host_ip: str, runtime: SimulatedRuntime,
                 recorder: Any, tracer: Any = None, *, backoff_base: float = 10.0,
                 backoff_max: float = 300.0,
                 on_images_changed: Callable[[], None] | None = None,
                 image_backoff_base: float = 10.0, image_backoff_max: float = 300.0,
                 adopt_from_status: bool = True, volumes: Any = None, tokens: Any = None,
                 sync_frequency: float = 60.0) -> None:
        self.client = client
        self.node_name = node_name
        self.host_ip = host_ip
        self.runtime = runtime
        self.recorder = recorder
        self.tracer = tracer
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.on_images_changed = on_images_changed
        #: a :class:`~components.kubelet.volumes.VolumeManager`, or None (no claims checked)
        self.volumes = volumes
        #: the node's one clock (seconds), the runtime's: exits, probes, back-offs
        self.clock = runtime.clock
        #: image pull back-off per ``<pod uid>_<image>`` (images.py)
        self.image_backoff = img.Backoff(image_backoff_base, image_backoff_max, runtime.clock)
        self._probe_timers: dict[str, asyncio.TimerHandle] = {}
        #: rebuild a running pod's sandbox the runtime lacks from its reported status (no
        #: --root-dir, or a checkpoint that missed it); False: a node reboot, it was lost
        self.adopt_from_status = adopt_from_status
        #: the projected service-account tokens (components/kubelet/tokens.py TokenManager), or None
        self.tokens = tokens
        self._latest: dict[str, dict] = {}
        self._dirty: set[str] = set()
        self._tasks: dict[str, asyncio.Task] = {}
        #: uid -> what our last status write returned of the pod: its resourceVersion and status
        #: alone (the status manager's ``podStatuses`` cache, ``pkg/kubelet/status/
        #: status_manager.go``, keeps a versionedPodStatus, not the pod), dropped once the
        #: informer delivers that version or a newer one
        self._written: dict[str, dict] = {}
        #: a status generated but not yet written: (pod, sandbox), superseded by the next
        #: write or written before the pod's worker waits (status_manager.go keeps only
        #: the latest status per pod and its sync writes that one)
        self._deferred: dict[str, tuple[dict, Sandbox]] = {}
        #: pods whose last status write did not land: retried by :meth:`sync_batch` (the status
        #: manager's cached status with ``apiStatusVersions`` behind its version, needsUpdate)
        self._unsynced: set[str] = set()
        #: pods another writer changed while their worker was busy, not compared since: compared
        #: by :meth:`sync_batch` against the informer's copy (status_manager.go needsReconcile)
        self._drifted: dict[str, int] = {}   # uid -> the resourceVersion that drifted
        self.sync_frequency = sync_frequency
        #: uid -> when (:attr:`clock`) the pod's periodic sync is due (pod_workers.go's workQueue)
        self._resync_at: dict[str, float] = {}
        #: the GETs made and the status writes landed by :meth:`sync_batch`, since the start
        self.batch_gets = 0
        self.batch_writes = 0
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._deleted: set[str] = set()
        self._wake: dict[str, asyncio.Event] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        #: pods whose start was observed (kubelet_pod_start_sli_duration_seconds) and image pull seconds per pod
        self._start_observed: set[str] = set()
        self._pull_seconds: dict[str, float] = {}

    # -- informer side ---------------------------------------------------------
    def update_pod(self, pod: dict) -> None:
        """A pod bound to this node was added or changed: (re)sync it soon."""
        uid = _uid(pod)
        if not uid or uid in self._deleted:
            return
        pod.setdefault("kind", "Pod")
        pod.setdefault("apiVersion", "v1")
        first = uid not in self._latest
        self._latest[uid] = pod
        written = self._written.get(uid)
        if not first and (written is None or _rv(pod) > _rv(written)):
            task = self._tasks.get(uid)
            if task is not None and not task.done():
                # another writer's version while the worker is in a sync that may not
                # compare again soon (an init container's run): the next batch compares
                self._drifted[uid] = _rv(pod)
        if written is not None and 0 <= _rv(written) <= _rv(pod):
            del self._written[uid]  # the informer caught up: its pod is the newer record
        if first and self.adopt_from_status and self.runtime.sandbox(uid) is None:
            self._reserve_reported_ip(pod)
        if (pod.get("metadata") or {}).get("deletionTimestamp") and uid in self._wake:
            self._wake[uid].set()
        if first and self.tracer is not None and self.runtime.sandbox(uid) is None \
                and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") \
                and not (pod.get("status") or {}).get("podIP"):  # else: adopted, traced then
            self.tracer.emit(12, f"pod bound to {self.node_name} received on watch", pod)
        self._kick(uid)

    def remove_pod(self, pod: dict) -> None:
        """The pod is gone from the apiserver: stop what runs and free its IP."""
        uid = _uid(pod)
        self._deleted.add(uid)
        if len(self._deleted) > 100_000:
            self._deleted.clear()
        self._latest.pop(uid, None)
        self._forget_status(uid)
        self._deferred.pop(uid, None)
        self._pull_seconds.pop(uid, None)
        wake = self._wake.pop(uid, None)
        if wake is not None:
            wake.set()
        for timers in (self._timers, self._probe_timers):
            t = timers.pop(uid, None)
            if t:
                t.cancel()
        task = self._tasks.get(uid)
        if task is not None and not task.done():
            task.cancel()
        if self.volumes is not None:
            self.volumes.release(uid)
        if self.tokens is not None:
            self.tokens.forget(uid)
        if self.runtime.stop_pod_sandbox(uid) is not None:
            event(log, "pod.removed", pod=_name(pod), node=self.node_name)

    def pods(self) -> list[dict]:
        return list(self._latest.values())

    def network_ready(self) -> None:
        """The node's podCIDR came: sync every pod waiting for the network now."""
        for uid in list(self._latest):
            if self.runtime.sandbox(uid) is None:
                self._kick(uid)

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until no worker is running (tests)."""
        await asyncio.wait_for(self._idle.wait(), timeout)

    async def stop(self) -> None:
        for timer in list(self._timers.values()) + list(self._probe_timers.values()):
            timer.cancel()
        tasks = [t for t in self._tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _kick(self, uid: str) -> None:
        self._dirty.add(uid)
        task = self._tasks.get(uid)
        if task is None or task.done():
            self._idle.clear()
            self._tasks[uid] = asyncio.get_running_loop().create_task(self._work(uid),
                                                                       name=f"pod-worker-{uid[:8]}")

    def _resync_after(self, uid: str, delay: float) -> None:
        """Sync the pod again in ``delay`` seconds (an earlier pending resync stands)."""
        loop = asyncio.get_running_loop()
        old = self._timers.get(uid)
        if old is not None:
            if old.when() <= loop.time() + max(delay, 0.0):
                return
            old.cancel()

        def fire() -> None:
            self._timers.pop(uid, None)
            if uid in self._latest:
                self._kick(uid)

        self._timers[uid] = asyncio.get_running_loop().call_later(max(delay, 0.0), fire)

    async def _work(self, uid: str) -> None:
        try:
            while uid in self._dirty:
                self._dirty.discard(uid)
                pod = self._latest.get(uid)
                if pod is None:
                    break
                try:
                    await self.sync_pod(pod)
                    await self._flush_deferred(uid)  # a sync that ended without writing its last status
                    self._schedule_resync(uid)
                except _Preempted:
                    continue
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # keep the worker alive; retry later
                    event(log, "pod.sync_failed", logging.WARNING, pod=_name(pod),
                          error=f"{type(e).__name__}: {e}"[:300])
                    self._resync_after(uid, 1.0)
        finally:
            self._tasks.pop(uid, None)
            if not any(not t.done() for t in self._tasks.values()):
                self._idle.set()

    def _schedule_resync(self, uid: str) -> None:
        """After a sync without error: the pod's next periodic sync is due in ``sync_frequency``
        seconds plus up to :data:`RESYNC_JITTER` of it (pod_workers.go completeWork); none for a
        pod gone or finished (Succeeded / Failed: its worker has nothing left to do)."""
        pod = self._latest.get(uid)
        if self.sync_frequency <= 0 or pod is None or uid in self._deleted:
            self._resync_at.pop(uid, None)
            return
        if self.apiserver_status(uid, pod).get("phase") in ("Succeeded", "Failed"):
            self._resync_at.pop(uid, None)
            return
        self._resync_at[uid] = self.clock() + self.sync_frequency * (1.0 + RESYNC_JITTER * random.random())

    def resync_due(self) -> int:
        """Start a sync of every pod whose periodic sync is due on :attr:`clock` (``kubelet.go``
        syncLoopIteration's ``syncCh``: getPodsToSync, then HandlePodSyncs). Returns how many."""
        if not self._resync_at:
            return 0
        now = self.clock()
        due = [uid for uid, at in self._resync_at.items() if at <= now]
        for uid in due:
            del self._resync_at[uid]
            if uid in self._latest:
                self._kick(uid)
        return len(due)

    def _forget_status(self, uid: str) -> None:
        """The pod is gone: nothing of its status is kept (status_manager.go RemoveOrphanedStatuses)."""
        self._written.pop(uid, None)
        self._unsynced.discard(uid)
        self._drifted.pop(uid, None)
        self._resync_at.pop(uid, None)

    async def _flush_deferred(self, uid: str) -> None:
        """Write the pod's deferred status (:attr:`_deferred`) before its worker waits."""
        deferred = self._deferred.pop(uid, None)
        if deferred is not None:
            await self._send_status(*deferred)

    async def _run_for(self, uid: str, seconds: float) -> None:
        """Let simulated time pass for the pod, cut short by its deletion."""
        if seconds > 0:
            await self._flush_deferred(uid)
            wake = self._wake.setdefault(uid, asyncio.Event())
            try:
                await asyncio.wait_for(wake.wait(), seconds)
            except asyncio.TimeoutError:
                pass
        self._check(uid)

    def _check(self, uid: str) -> None:
        """Abort the running sync when the pod was deleted or marked for deletion."""
        latest = self._latest.get(uid)
        if latest is None or (latest.get("metadata") or {}).get("deletionTimestamp"):
            self._dirty.add(uid)
            raise _Preempted()

    # -- the sync --------------------------------------------------------------
    async def sync_pod(self, pod: dict) -> None:
        """Bring the runtime in line with ``pod`` and report its status. With OpenTelemetry on
        (:mod:`controlplane.otel`), in the span ``syncPod`` (``pkg/kubelet/kubelet.go`` SyncPod, KEP-2831),
        a child of the pod's traceparent annotation, whose children are the runtime calls named as
        the CRI methods (``runtime.v1.RuntimeService/RunPodSandbox``, ``.../CreateContainer``,
        ``.../StartContainer``, ``runtime.v1.ImageService/PullImage``) and the status writes."""
        if not otel.enabled():
            return await self._sync_pod(pod)
        md = pod.get("metadata") or {}
        with otel.span("syncPod", parent=otel.traceparent_of(pod), attributes={
                "k8s.pod.uid": md.get("uid", ""), "k8s.pod": _name(pod), "k8s.pod.name": md.get("name", ""),
                "k8s.namespace.name": md.get("namespace", "")}):
            return await self._sync_pod(pod)

    async def _sync_pod(self, pod: dict) -> None:
        uid = _uid(pod)
        md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if md.get("deletionTimestamp"):
            await self.terminate_pod(pod)
            return
        sb = self.runtime.sandbox(uid)
        if sb is not None and sb.restored:   # from the checkpoint: containers kept running
            sb.restored = False
            self.restore_containers(pod, sb)
        if sb is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            if self.adopt_from_status:
                sb = self._adopt(pod)
        if self.volumes is not None and self.volumes.needs_mount(pod):
            failed = await self.volumes.mount(pod)
            if failed is not None and sb is None:  # WaitForAttachAndMount: no sandbox until mounted
                self.recorder.event(pod, "Warning", "FailedMount", failed)
                await self._send_status(pod, None)
                self._resync_after(uid, self.volumes.retry_after(pod))
                return
        if sb is None and not self.runtime.network_ready:
            # kubelet.go SyncPod: no sandbox while the network plugin is not ready
            self.recorder.event(pod, "Warning", ev.NETWORK_NOT_READY, ev.NETWORK_NOT_READY_MESSAGE)
            self._resync_after(uid, 5.0)   # and at once when the podCIDR comes (network_ready)
            return
        if sb is None:
            with otel.span("runtime.v1.RuntimeService/RunPodSandbox"):
                sb = self.runtime.run_pod_sandbox(uid)
            sb.start_time = (pod.get("status") or {}).get("startTime") or apitime.now()
            event(log, "pod.sandbox_created", pod=_name(pod), node=self.node_name, ip=sb.ip)
            if self._lost_containers(pod, sb):
                self.recorder.event(pod, "Normal", ev.SANDBOX_CHANGED, ev.SANDBOX_CHANGED_MESSAGE)
                self._trace(pod, f"sandbox re-created after a node reboot, IP {sb.ip}", "RunPodSandbox")
            else:
                self._trace(pod, f"sandbox created (pause container), IP {sb.ip}", "RunPodSandbox")
            # the sandbox's status (Pending, its IP, containers ContainerCreating) is
            # written only if the pod's worker waits before its next status (an image
            # pull, a container start, an init container's run); else that one supersedes it
            self._deferred[uid] = (pod, sb)
        if self.tokens is not None:
            await self.tokens.mount(pod)  # the projected token volume (kube-api-access-*)
        restart = spec.get("restartPolicy") or "Always"

        # init containers, one at a time, each to completion
        for ic in spec.get("initContainers") or []:
            self._check(uid)
            c = sb.get(ic["name"], True)
            if c is not None and c.state == "exited" and c.exit_code == 0:
                continue
            if c is not None and c.state == "exited":  # failed init container
                if restart == "Never" or not self._restart_due(pod, sb, c):
                    await self._send_status(pod, sb)
                    return
            if c is None or c.state in ("exited", "created"):
                # created, never started: the kubelet died between CreateContainer and
                # StartContainer (restored from the checkpoint); computeInitContainerActions
                # starts it again "to prevent the container from getting stuck in the
                # 'created' state" (pkg/kubelet/kuberuntime/kuberuntime_container.go)
                c = await self._start_container(pod, sb, ic, init=True)
                if c is None:
                    await self._send_status(pod, sb)
                    return
                pod = await self._send_status(pod, sb)
            after, code = exit_behaviour(ic, md.get("annotations")) or \
                (self.runtime.container_start_seconds, 0)
            # simulated run time of the init container (what is left of it after a restart)
            await self._run_for(uid, min(after, c.started_mono + after - self.clock()))
            self.runtime.exit_container(c, code)
            self._trace(pod, f"init container {ic['name']} completed" if code == 0 else
                        f"init container {ic['name']} failed (exit code {code})", "init")
            if code != 0:
                if restart != "Never":
                    self._restart_due(pod, sb, c)
                await self._send_status(pod, sb)
                return

        # app containers: start the missing ones together; restart exited ones per policy
        to_start = []
        for cs in spec.get("containers") or []:
            c = sb.get(cs["name"], False)
            waiting = sb.waiting.get((False, cs["name"]))
            if c is None and (waiting is None or waiting[0] in img.PULL_FAILURES):
                to_start.append(cs)
            elif c is not None and c.state == "created":
                # created but never started (the kubelet was killed between CreateContainer
                # and StartContainer): ShouldContainerBeRestarted always restarts a container
                # in the created state (pkg/kubelet/container/helpers.go), no back-off (only an
                # exited container has one); the new one's restartCount is the old one's + 1
                # (kuberuntime_container.go startContainer)
                to_start.append(cs)
            elif c is not None and c.state == "exited" and should_restart(restart, c.exit_code, c.killed) \
                    and self._restart_due(pod, sb, c):
                to_start.append(cs)
        if to_start:
            self._check(uid)
            started = await asyncio.gather(*(self._start_container(pod, sb, cs, init=False)
                                             for cs in to_start))
            names = [c.name for c in started if c is not None]
            if names:
                self._trace(pod, f"containers started: {', '.join(names)}", "StartContainer")
                self._observe_start(pod, sb)
            for c in started:
                if c is not None:
                    self._schedule_exit(pod, c)
        pod = await self._send_status(pod, sb, announce=bool(to_start))

    def _observe_start(self, pod: dict, sb: Sandbox) -> None:
        """``kubelet_pod_start_sli_duration_seconds`` once per pod, when all its app containers
        run: since its creationTimestamp, minus the time its image pulls took."""
        uid = _uid(pod)
        if uid in self._start_observed or any(sb.get(cs["name"], False) is None
                                              for cs in (pod.get("spec") or {}).get("containers") or []):
            return
        created = apitime.time_or_none((pod.get("metadata") or {}).get("creationTimestamp"))
        self._start_observed.add(uid)
        if len(self._start_observed) > 100_000:
            self._start_observed.clear()
        if created is not None:
            pulled = self._pull_seconds.pop(uid, 0.0)
            metrics.pod_start_sli.observe(max(0.0, apitime.clock() - created - pulled))

    def _reserve_reported_ip(self, pod: dict) -> None:
        """Hold the pod IP of a running pod the runtime lacks (one :meth:`_adopt` will take
        back: the checkpoint missed its sandbox) from the moment the informer shows it, so a
        new pod synced first is not given that IP — on a real node the IP stays with the
        sandbox the runtime keeps across a kubelet restart. Released with the sandbox
        (``stop_pod_sandbox``) when the pod goes."""
        st = pod.get("status") or {}
        if st.get("podIP") and st.get("phase") not in ("Succeeded", "Failed") and any(
                cs.get("containerID") for cs in (st.get("containerStatuses") or [])
                + (st.get("initContainerStatuses") or [])):
            self.runtime.ipam.reserve(_uid(pod), st["podIP"])

    def _adopt(self, pod: dict) -> Sandbox | None:
        st = pod.get("status") or {}
        if not st.get("podIP") or not any(cs.get("containerID")
                                          for cs in (st.get("containerStatuses") or [])
                                          + (st.get("initContainerStatuses") or [])):
            return None
        sb = self.runtime.adopt(pod)
        if sb is not None:
            event(log, "pod.adopted", pod=_name(pod), node=self.node_name, ip=sb.ip)
            self._trace(pod, f"running pod adopted after kubelet restart, IP {sb.ip}", "adopt")
            self.restore_containers(pod, sb)
        return sb

    def _lost_containers(self, pod: dict, sb: Sandbox) -> bool:
        """A node reboot: the pod's status shows containers this runtime no longer has.
        They are put back as exited (255, ``Unknown``) with their restart counts, so the
        restart policy starts them again with restartCount + 1; init containers that had
        completed stay completed. Returns whether there were any."""
        st = pod.get("status") or {}
        lost = False
        for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
            for cs in st.get(key) or []:
                if not cs.get("containerID") or sb.get(cs.get("name", ""), init) is not None:
                    continue
                term = (cs.get("state") or {}).get("terminated") or {}
                done = init and "terminated" in (cs.get("state") or {}) and not term.get("exitCode")
                c = Container(name=cs["name"], image=cs.get("image", ""), init=init,
                              container_id=cs["containerID"],
                              restart_count=int(cs.get("restartCount") or 0))
                c.started_at = ((cs.get("state") or {}).get("running") or term).get("startedAt") or ""
                c.state, c.exit_code = "exited", 0 if done else 255
                c.reason = "Completed" if done else "Unknown"
                c.finished_at, c.finished_mono = apitime.now(), self.clock()
                (sb.init_containers if init else sb.containers)[c.name] = c
                lost = True
        return lost

    def restore_containers(self, pod: dict, sb: Sandbox) -> None:
        """After a kubelet restart: give the sandbox's running containers back their
        command line's timeline (from the spec), their start on the node's clock (from
        ``startedAt``), their scheduled exits and their probe workers.

        A container the checkpoint holds as created whose reported status shows that same
        container (its containerID) running did start: the kill came after its start and its
        status write, before the next checkpoint write. It is resumed as running — a real
        runtime would report it running, and a kubelet restart leaves running containers
        alone — as :meth:`_adopt` resumes a sandbox the checkpoint missed. A created one
        without such a status never started and is started again by the sync
        (ShouldContainerBeRestarted, ``pkg/kubelet/container/helpers.go``)."""
        spec = pod.get("spec") or {}
        ann = (pod.get("metadata") or {}).get("annotations")
        now_wall, now = apitime.clock(), self.clock()
        st = pod.get("status") or {}
        for key, init in (("initContainers", True), ("containers", False)):
            reported = {x.get("name"): x for x in st.get("initContainerStatuses" if init else "containerStatuses") or []}
            for cs in spec.get(key) or []:
                c = sb.get(cs["name"], init)
                if c is None:
                    continue
                if c.state == "created":
                    r = reported.get(c.name) or {}
                    running = (r.get("state") or {}).get("running") or {}
                    if r.get("containerID") == c.container_id and running.get("startedAt"):
                        c.state, c.started_at = "running", running["startedAt"]
                        self.runtime.changed()
                if not c.started_mono and c.started_at:
                    try:
                        c.started_mono = now - max(now_wall - apitime.parse_time(c.started_at), 0.0)
                    except ValueError:
                        c.started_mono = now
                c.timeline = container_timeline(cs, ann)
                if not init and c.state == "running":
                    self._schedule_exit(pod, c, adopted=True)
                    self._start_probes(pod, c, cs)
                    self._resume_probe_results(pod, c)

    # -- containers ------------------------------------------------------------
    async def _ensure_image(self, pod: dict, cs: dict, init: bool) -> bool:
        """Pull the image per imagePullPolicy, recording the image manager's events
        (``pkg/kubelet/images/image_manager.go`` EnsureImageExists); False when the
        image cannot be had: ErrImageNeverPull, ErrImagePull (a pull that failed by the
        rules of ``images.py``) or ImagePullBackOff (within the pull back-off), each
        left as the container's waiting reason, with a resync when the back-off ends."""
        image = cs.get("image", "")
        name = cs["name"]
        fp = ev.field_path(name, init)
        uid = _uid(pod)
        policy = cs.get("imagePullPolicy") or image_pull_policy(image)
        present = self.runtime.image_present(image)
        sb = self.runtime.sandbox(uid)

        def wait(reason: str, message: str) -> None:
            if sb is not None:
                sb.waiting[(init, name)] = (reason, message)
            # startContainer's "Error: %v" of the image manager's error
            self.recorder.event(pod, "Warning", ev.FAILED, img.error_event(reason), fp)

        if policy == "Never" and not present:
            self.recorder.event(pod, "Warning", ev.ERR_IMAGE_NEVER_PULL, ev.never_pull(image), fp)
            wait(img.ERR_IMAGE_NEVER_PULL, ev.never_pull(image))
            return False
        if present and policy != "Always":
            self.recorder.event(pod, "Normal", ev.PULLED, ev.already_present(image), fp)
            self._trace(pod, f"image {image} already present on machine", "image")
            return True
        key = f"{uid}_{image}"
        if self.image_backoff.in_backoff(key):
            if sb is not None and (sb.waiting.get((init, name)) or ("",))[0] == img.IMAGE_PULL_BACKOFF:
                self._resync_after(uid, self.image_backoff.remaining(key))
                return False   # already reported for this back-off
            self.recorder.event(pod, "Normal", ev.BACKOFF, img.pulling_backoff(image), fp)
            wait(img.IMAGE_PULL_BACKOFF, img.pulling_backoff(image))
            self._resync_after(uid, self.image_backoff.remaining(key))
            return False
        self.recorder.event(pod, "Normal", ev.PULLING, ev.pulling(image), fp)
        error = img.pull_error(image, name, (pod.get("metadata") or {}).get("annotations"))
        if self.runtime.image_pull_seconds > 0:
            await self._flush_deferred(uid)
        try:
            with otel.span("runtime.v1.ImageService/PullImage", attributes={"image": image}):
                pull_s, total_s, size = await self.runtime.pull_image(image, always=policy == "Always",
                                                                      error=error)
        except ImagePullError as e:
            self.recorder.event(pod, "Warning", ev.FAILED, img.failed_to_pull(image, str(e)), fp)
            backoff = self.image_backoff.next(key)
            wait(img.ERR_IMAGE_PULL, str(e))
            self._trace(pod, f"image {image} pull failed", "image", str(e)[:200])
            event(log, "image.pull_failed", logging.INFO, pod=_name(pod), image=image,
                  backoff=f"{backoff:g}s")
            # the next sync finds the back-off (ImagePullBackOff), the one after retries
            self._resync_after(uid, min(backoff / 2, 2.0))
            return False
        self.image_backoff.reset(key)
        self._pull_seconds[uid] = self._pull_seconds.get(uid, 0.0) + total_s
        self.recorder.event(pod, "Normal", ev.PULLED, ev.pulled(image, pull_s, total_s, size), fp)
        self._trace(pod, f"image {image} pulled", "image", f"{ev.go_duration(total_s)}, {size} bytes")
        if not present and self.on_images_changed is not None:
            self.on_images_changed()
        return True

    async def _start_container(self, pod: dict, sb: Sandbox, cs: dict, init: bool) -> Container | None:
        """Image, CreateContainer (``Created``), StartContainer (``Started``); the
        probe workers of an app container start with it."""
        if not await self._ensure_image(pod, cs, init):
            return None
        self._check(_uid(pod))
        sb.waiting.pop((init, cs["name"]), None)
        fp = ev.field_path(cs["name"], init)
        with otel.span("runtime.v1.RuntimeService/CreateContainer", attributes={"container": cs["name"]}):
            c = self.runtime.create_container(sb, cs, init, (pod.get("metadata") or {}).get("annotations"))
        self.recorder.event(pod, "Normal", ev.CREATED, ev.created(c.name), fp)
        if self.runtime.container_start_seconds > 0:
            await self._flush_deferred(_uid(pod))
        with otel.span("runtime.v1.RuntimeService/StartContainer", attributes={"container": cs["name"]}):
            await self.runtime.start_container(c)
        self.recorder.event(pod, "Normal", ev.STARTED, ev.started(c.name), fp)
        event(log, "container.started", pod=_name(pod), container=c.name, init=init,
              restarts=c.restart_count)
        if not init:
            self._start_probes(pod, c, cs)
        return c

    def _schedule_exit(self, pod: dict, c: Container, adopted: bool = False) -> None:
        """Arrange the simulated exit of an app container whose command line ends
        (its :class:`~components.kubelet.script.Timeline`), counted from its start on
        the node's clock — so a container adopted after a kubelet restart ends when it
        would have."""
        if c.state != "running" or c.timeline.end is None:
            return
        code = c.timeline.code
        uid, cid = _uid(pod), c.container_id

        def exited() -> None:
            sb = self.runtime.sandbox(uid)
            cur = sb.get(c.name, False) if sb else None
            if cur is None or cur.container_id != cid or cur.state != "running":
                return
            self.runtime.exit_container(cur, code)
            event(log, "container.exited", pod=_name(pod), container=c.name, exit_code=code)
            if uid in self._latest:
                self._kick(uid)

        delay = c.started_mono + c.timeline.end - self.clock()
        asyncio.get_running_loop().call_later(max(delay, 0.0), exited)

    # -- probes (pkg/kubelet/prober) -----------------------------------------------
    @staticmethod
    def _resume_probe_results(pod: dict, c: Container) -> None:
        """A container found running after a kubelet restart keeps the readiness and
        start it had (the pod's reported status), instead of the workers' initial
        results, so a restart does not turn running pods unready."""
        if c.probes is None:
            return
        cs = next((x for x in (pod.get("status") or {}).get("containerStatuses") or []
                   if x.get("name") == c.name and x.get("containerID") == c.container_id), None)
        if cs is None:
            return
        for kind, ok in ((prober.STARTUP, cs.get("started")), (prober.READINESS, cs.get("ready"))):
            w = c.probes.workers.get(kind)
            if w is not None and ok:
                w.result = prober.SUCCESS

    def _start_probes(self, pod: dict, c: Container, cs: dict) -> None:
        if prober.probes_of(cs):
            c.probes = prober.ContainerProbes.for_container(cs, c.started_mono)
            self._schedule_probes(_uid(pod))

    def _schedule_probes(self, uid: str) -> None:
        """Arm the pod's probe timer for the earliest due probe of its running containers."""
        old = self._probe_timers.pop(uid, None)
        if old is not None:
            old.cancel()
        sb = self.runtime.sandbox(uid)
        if sb is None or uid not in self._latest:
            return
        dues = [d for c in sb.containers.values() if c.state == "running" and c.probes is not None
                and not c.killed for d in [c.probes.due()] if d is not None]
        if not dues:
            return
        delay = max(min(dues) - self.clock(), 0.0)
        self._probe_timers[uid] = asyncio.get_running_loop().call_later(delay, self.run_probes, uid)

    def run_probes(self, uid: str) -> None:
        """Run the probes of the pod's running containers that are due on the node's
        clock (``Unhealthy`` events for failures); a changed readiness or start resyncs
        the pod (status write), a liveness or startup Failure kills the container."""
        self._probe_timers.pop(uid, None)
        pod = self._latest.get(uid)
        sb = self.runtime.sandbox(uid)
        if pod is None or sb is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        now = self.clock()
        specs = {x.get("name"): x for x in (pod.get("spec") or {}).get("containers") or []}
        annotations = (pod.get("metadata") or {}).get("annotations")
        changed = False
        for c in list(sb.containers.values()):
            cs = specs.get(c.name)
            if c.state != "running" or c.probes is None or c.killed or cs is None:
                continue
            before = (c.probes.started, c.probes.ready)

            def run(probe: prober.Probe, elapsed: float, cs: dict = cs, c: Container = c) -> tuple[bool, str]:
                return prober.run_probe(probe, cs, c.timeline, elapsed, sb.ip, annotations)

            for probe, ok, output in c.probes.tick(now, run):
                if not ok:
                    self.recorder.event(pod, "Warning", ev.UNHEALTHY, prober.unhealthy(probe, output),
                                        ev.field_path(c.name, False))
            changed |= before != (c.probes.started, c.probes.ready)
            kind = c.probes.failed()
            if kind:
                changed = True
                self._kill_for_probe(pod, c, kind)
        if changed:
            self._kick(uid)
        self._schedule_probes(uid)

    def _kill_for_probe(self, pod: dict, c: Container, kind: str) -> None:
        """computePodActions' kill of a container that failed its liveness / startup
        probe: ``Killing``, then SIGTERM (SIGKILL after the grace period when the
        command ignores SIGTERM); the sync then restarts it per restartPolicy."""
        spec = pod.get("spec") or {}
        restart = (spec.get("restartPolicy") or "Always") != "Never"
        c.killed = kind
        self.recorder.event(pod, "Normal", ev.KILLING, prober.killing(c.name, kind, restart),
                            ev.field_path(c.name, False))
        event(log, "container.probe_failed", pod=_name(pod), container=c.name, probe=kind)
        probe = next((w.probe for w in c.probes.workers.values() if w.probe.kind == kind), None) \
            if c.probes is not None else None
        grace = grace_period_seconds(pod, probe.spec if probe is not None else None)
        uid, cid = _uid(pod), c.container_id

        def stopped(code: int) -> None:
            sb = self.runtime.sandbox(uid)
            cur = sb.get(c.name, False) if sb else None
            if cur is None or cur.container_id != cid or cur.state != "running":
                return
            self.runtime.exit_container(cur, code)
            if uid in self._latest:
                self._kick(uid)

        if c.timeline.ignores_sigterm:
            asyncio.get_running_loop().call_later(grace, stopped, 137)
        else:
            stopped(c.timeline.stop_code())

    def _restart_due(self, pod: dict, sb: Sandbox, c: Container) -> bool:
        """True when the exited container may be restarted now; otherwise mark it
        CrashLoopBackOff, record BackOff and resync when the back-off ends. The first
        restart is immediate, then 10 s, 20 s, 40 s... up to 300 s."""
        delay = 0.0 if c.restart_count == 0 else \
            min(self.backoff_base * 2 ** (c.restart_count - 1), self.backoff_max)
        wait = c.finished_mono + delay - self.clock()
        if wait <= 0:
            c.waiting_reason = c.waiting_message = ""
            return True
        c.waiting_reason = "CrashLoopBackOff"
        c.waiting_message = ev.backoff_waiting(c.name, pod, delay)
        self.recorder.event(pod, "Warning", ev.BACKOFF, ev.backoff_event(c.name, pod),
                            ev.field_path(c.name, c.init))
        self._resync_after(_uid(pod), wait)
        return False

    # -- termination -------------------------------------------------------------
    async def terminate_pod(self, pod: dict) -> None:
        """Stop the containers gracefully, report the terminal status, remove the
        sandbox (IP released) and delete the pod with ``gracePeriodSeconds=0`` (the
        status manager's final delete, ``pkg/kubelet/status/status_manager.go``).

        Each running container, all at once (``kuberuntime_container.go`` killContainer):
        ``Killing`` "Stopping container x"; its ``preStop`` hook (``exec``: as long as
        its command line takes by ``script.py`` — ``sleep 5`` is 5 s —; ``sleep.seconds``;
        ``httpGet``: at once), at most the grace period; then SIGTERM with what is left
        of the grace period (at least 2 s): honoured at once unless the command ignores
        it (``trap '' TERM``), which ends in SIGKILL (137) when the grace period is over.
        The grace period is ``metadata.deletionGracePeriodSeconds`` (else the spec's
        ``terminationGracePeriodSeconds``, else 30)."""
        uid = _uid(pod)
        sb = self.runtime.sandbox(uid)
        if sb is not None:
            t = self._probe_timers.pop(uid, None)
            if t is not None:
                t.cancel()
            grace = grace_period_seconds(pod)
            running = [c for c in list(sb.containers.values()) + list(sb.init_containers.values())
                       if c.state == "running"]
            for c in running:
                self.recorder.event(pod, "Normal", ev.KILLING, ev.killing(c.name),
                                    ev.field_path(c.name, c.init))
            await asyncio.gather(*(self._stop_container(pod, c, grace) for c in running))
            for c in list(sb.containers.values()) + list(sb.init_containers.values()):
                c.waiting_reason = c.waiting_message = ""
            await self._send_status(pod, sb, terminal=True)
            self.runtime.stop_pod_sandbox(uid)
        try:
            await self.client.delete(PODS, pod["metadata"]["name"], pod["metadata"]["namespace"],
                                     grace_period_seconds=0, preconditions={"uid": uid})
        except ApiError as e:
            if e.code not in (404, 409):
                raise
        self._trace(pod, "containers stopped, pod deleted (gracePeriodSeconds=0)", "kill",
                    f"IP {sb.ip} released" if sb else "")
        event(log, "pod.terminated", pod=_name(pod), node=self.node_name)
        if self.volumes is not None:
            self.volumes.release(uid)
        self._deleted.add(uid)
        self._latest.pop(uid, None)
        self._forget_status(uid)
        self._wake.pop(uid, None)

    async def _stop_container(self, pod: dict, c: Container, grace: float) -> None:
        """preStop hook, SIGTERM, SIGKILL at the end of ``grace`` seconds (see terminate_pod)."""
        key = "initContainers" if c.init else "containers"
        cs: dict = next((x for x in (pod.get("spec") or {}).get(key) or [] if x.get("name") == c.name), {})
        hook = ((cs.get("lifecycle") or {}).get("preStop") or {}) if grace > 0 else {}
        spent = 0.0
        if hook:
            took = hook_seconds(hook, c, self.clock())
            spent = min(took, grace)
            event(log, "container.prestop", pod=_name(pod), container=c.name, seconds=f"{spent:g}")
            if spent > 0:
                await asyncio.sleep(spent)  # the hook runs
        if c.state != "running":
            return
        if c.timeline.ignores_sigterm:
            await asyncio.sleep(max(grace - spent, MINIMUM_GRACE_SECONDS) if grace > 0 else 0.0)
            self.runtime.exit_container(c, 137)
        else:
            self.runtime.exit_container(c, c.timeline.stop_code())

    # -- status ---------------------------------------------------------------
    async def _send_status(self, pod: dict, sb: Sandbox | None, terminal: bool = False,
                           announce: bool = False, batch: bool = False) -> dict:
        """PATCH pods/NAME/status if the generated status differs from what the
        apiserver holds (:meth:`apiserver_status`); returns the pod with the status
        the apiserver now holds. A write answered 404 or 409 leaves the pod unsynced and the
        sync goes on: :meth:`sync_batch` retries it (its GET tells a pod gone or recreated
        from a passing conflict). Any other error is raised: the worker syncs the pod again
        1 s later, status write included, so the batch does not retry it as well."""
        uid = _uid(pod)
        self._deferred.pop(uid, None)  # this write supersedes a deferred one
        base = self.apiserver_status(uid, pod)
        self._drifted.pop(uid, None)   # compared against the newest version known
        work = dict(pod, status=base)
        st = generate_pod_status(work, sb, self.host_ip, terminal=terminal)
        if not status_differs(base, st):
            self._unsynced.discard(uid)
            return work
        md = pod["metadata"]
        if announce or terminal:
            # recorded as the request leaves, so it precedes the apiserver's step 13
            self._trace(pod, f"status update sent: {st['phase']}", "status")
        try:
            out = await self.client.patch(PODS, md["name"], {"metadata": {"uid": uid}, "status": st},
                                          md["namespace"], patch_type="merge", subresource="status")
        except ApiError as e:
            if e.code not in (404, 409):
                self._unsynced.discard(uid)   # the worker's retry (or the batch's caller) owns it
                raise
            self._unsynced.add(uid)
            event(log, "pod.status_failed", logging.INFO, pod=_name(pod), code=e.code,
                  error=str(e)[:200], retry="next status batch")
            return work
        self._unsynced.discard(uid)
        if batch:
            self.batch_writes += 1
        event(log, "pod.status_sent", pod=_name(pod), phase=st["phase"])
        new = out if isinstance(out, dict) and out.get("status") else dict(pod, status=st)
        new.setdefault("kind", "Pod")
        new.setdefault("apiVersion", "v1")
        self._remember(uid, new)
        drift = self._drifted.get(uid)
        if drift is not None and drift <= _rv(new):
            del self._drifted[uid]   # a version this write overwrote (or its own watch event)
        return new

    def _remember(self, uid: str, pod: dict) -> None:
        """Keep ``pod``'s resourceVersion and status as the apiserver's view (:attr:`_written`)
        unless a newer one is kept (two writes' answers may come back in either order)."""
        old = self._written.get(uid)
        if old is None or _rv(pod) < 0 or _rv(old) <= _rv(pod):
            self._written[uid] = {"metadata": {"resourceVersion": (pod.get("metadata") or {}).get("resourceVersion")},
                                  "status": pod.get("status")}

    def unsynced(self) -> int:
        """How many pods :meth:`sync_batch` has to look at (last write failed, or drifted)."""
        return len(self._unsynced) + len(self._drifted)

    async def sync_batch(self) -> int:
        """One status batch (``pkg/kubelet/status/status_manager.go`` syncBatch(all=true)):
        bring the apiserver's status of the pods that are not in sync back to this kubelet's.

        * a pod whose last write did not land (needsUpdate): GET it (syncPod); 404: it is gone,
          its status is dropped; another UID: deleted and recreated under that name, dropped;
          another error: kept for the next batch; else the status is generated again against
          the fresh copy and written if it differs;
        * a pod another writer changed while its worker was busy (needsReconcile): compared
          with the informer's copy, no GET, and written back if it differs.

        Pods being deleted are left to their worker's termination; pods in sync are not
        looked at (no request, no comparison). Returns how many pods were synced (written or
        found equal), as syncBatch returns the syncs it attempted."""
        synced = 0
        for uid in list(self._unsynced):
            pod = self._latest.get(uid)
            if pod is None:
                self._unsynced.discard(uid)
                continue
            md = pod.get("metadata") or {}
            if md.get("deletionTimestamp"):
                continue
            self.batch_gets += 1
            try:
                fresh = await self.client.get(PODS, md["name"], md["namespace"])
            except ApiError as e:
                if e.code == 404:   # the pod does not exist on the server: nothing to write
                    self._unsynced.discard(uid)
                    event(log, "pod.status_dropped", pod=_name(pod), reason="NotFound")
                continue
            except asyncio.CancelledError:
                raise
            except Exception as e:
                event(log, "pod.status_get_failed", logging.INFO, pod=_name(pod),
                      error=f"{type(e).__name__}: {e}"[:200])
                continue
            if _uid(fresh) != uid:   # "Pod was deleted and then recreated, skipping status update"
                self._unsynced.discard(uid)
                event(log, "pod.status_dropped", pod=_name(pod), reason="UIDMismatch", uid=_uid(fresh))
                continue
            self._remember(uid, fresh)
            if await self._batch_write(uid):
                synced += 1
        for uid in list(self._drifted):
            pod = self._latest.get(uid)
            if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp") \
                    or self.runtime.sandbox(uid) is None:
                self._drifted.pop(uid, None)
                continue
            if await self._batch_write(uid):
                synced += 1
        return synced

    async def _batch_write(self, uid: str) -> bool:
        """:meth:`_send_status` of the pod's latest version and sandbox, for :meth:`sync_batch`;
        False when it raised (logged; the pod stays unsynced)."""
        pod = self._latest.get(uid)
        if pod is None:
            return False
        try:
            await self._send_status(pod, self.runtime.sandbox(uid), batch=True)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._unsynced.add(uid)   # the next batch tries again
            event(log, "pod.status_failed", logging.INFO, pod=_name(pod), error=f"{type(e).__name__}: {e}"[:200],
                  retry="next status batch")
            return False
        return uid not in self._unsynced

    def apiserver_status(self, uid: str, pod: dict) -> dict:
        """The pod status the apiserver holds as far as this kubelet knows: that of
        the newest (highest resourceVersion) of ``pod``, the informer's latest pod and
        the response to this kubelet's last status write — the write wins a tie (a
        client without resourceVersions). Other writers' changes (conditions set by
        the node lifecycle or taint eviction controllers) arrive through the informer,
        so the next sync compares against them and writes the kubelet's view back."""
        cands = [p for p in (self._written.get(uid), self._latest.get(uid), pod) if p is not None]
        return max(cands, key=_rv).get("status") or {}

    def _trace(self, pod: dict, action: str, what: str = "", detail: str = "") -> None:
        if self.tracer is not None:
            self.tracer.emit(12, action, pod, detail)

