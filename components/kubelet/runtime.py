"""A simulated container runtime (the CRI side of one node), KWOK-style.

Nothing runs: the runtime keeps, per node, the image store, the pod sandboxes
(the ``pause`` infra container holding the pod's network namespace and IP) and
the containers inside them, with the states a CRI runtime reports
(created → running → exited). Time passes only where the real thing takes time:
an image pull (``image_pull_seconds``, first time per image per node) and a
container start (``container_start_seconds``).

Identifiers look like containerd's: ``containerd://<64 hex>`` container IDs and
``docker.io/library/nginx@sha256:<64 hex>`` image IDs (the digest is a stable
hash of the image reference, so every node reports the same one).

How a simulated container ends is read from its spec (see :func:`exit_behaviour`).
Sources: the CRI ``RuntimeService``/``ImageService`` in
``staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto``; sandbox image
``registry.k8s.io/pause:3.10`` is the v1.32 default (``cmd/kubelet/app/options``).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Callable

from components.kubelet import metrics
from components.kubelet.ipam import IPAM
from components.kubelet.prober import ContainerProbes
from components.kubelet.script import Timeline, argv_of, timeline
from controlplane import apitime

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
RUNTIME_VERSION = "containerd://1.7.0-controlplane-simulated"

#: annotation overrides for the simulated behaviour of a container (value: seconds / code)
EXIT_AFTER_ANNOTATION = "controlplane.io/exit-after-seconds"
EXIT_CODE_ANNOTATION = "controlplane.io/exit-code"


class ImagePullError(Exception):
    """A pull the registry (or DNS) refused; ``str()`` is the CRI's error text."""


def normalize_image(image: str) -> str:
    """Fully qualified reference, as containerd reports ``status.image``:
    ``nginx`` → ``docker.io/library/nginx:latest``, ``soscscs/myapp:v1`` →
    ``docker.io/soscscs/myapp:v1``; a registry host (has ``.`` or ``:`` or is
    ``localhost``) is kept. Source: docker/distribution ``reference.ParseNormalizedNamed``."""
    ref = image.strip()
    name, digest = (ref.split("@", 1) + [""])[:2]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if not digest and ":" not in last:
        name += ":latest"
    return f"{name}@{digest}" if digest else name


def image_digest(image: str) -> str:
    """A stable fake ``sha256:<64 hex>`` digest of an image reference."""
    return "sha256:" + hashlib.sha256(normalize_image(image).encode()).hexdigest()


def image_id(image: str) -> str:
    """``imageID`` as containerd reports it: repository@digest."""
    ref = normalize_image(image)
    if "@" in ref:
        return ref
    repo = ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
    return f"{repo}@{image_digest(image)}"


def image_size(image: str) -> int:
    """A stable fake image size in bytes (5–150 MB)."""
    h = int(hashlib.sha256(normalize_image(image).encode()).hexdigest()[:8], 16)
    return 5_000_000 + h % 145_000_000


def new_container_id() -> str:
    return "containerd://" + secrets.token_hex(32)


def container_timeline(container: dict, annotations: dict | None = None) -> Timeline:
    """The :class:`~components.kubelet.script.Timeline` of a container spec: its command
    line read by the rules of ``script.py``, unless the annotations
    ``controlplane.io/exit-after-seconds`` / ``controlplane.io/exit-code`` (pod-wide, or
    ``...-seconds.<container>``) say when and how it exits."""
    ann = annotations or {}
    name = container.get("name", "")
    tl = timeline(argv_of(container))
    after = ann.get(f"{EXIT_AFTER_ANNOTATION}.{name}", ann.get(EXIT_AFTER_ANNOTATION))
    code = ann.get(f"{EXIT_CODE_ANNOTATION}.{name}", ann.get(EXIT_CODE_ANNOTATION))
    if after is not None or code is not None:
        try:
            tl.end, tl.code = float(after or 0), int(code or 0)
        except ValueError:
            tl.end, tl.code = None, 0
    return tl


def exit_behaviour(container: dict, annotations: dict | None = None) -> tuple[float, int] | None:
    """When and how a simulated container exits: ``(seconds_after_start, exit_code)``
    or None for "runs until stopped" (:func:`container_timeline`; the rules are in
    ``components/kubelet/script.py``: ``sh -c "sleep 20; exit 3"`` → ``(20.0, 3)``)."""
    tl = container_timeline(container, annotations)
    return None if tl.end is None else (tl.end, tl.code)


@dataclass
class Container:
    """One runtime container. ``state``: created | running | exited."""

    name: str
    image: str
    init: bool = False
    container_id: str = field(default_factory=new_container_id)
    state: str = "created"
    created_at: str = field(default_factory=apitime.now)
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    reason: str = ""
    restart_count: int = 0
    last_terminated: dict | None = None
    backoff_until: float = 0.0  # monotonic time before which it may not restart
    waiting_reason: str = ""    # set while exited and waiting to restart (CrashLoopBackOff)
    waiting_message: str = ""
    finished_mono: float = 0.0  # monotonic time of the exit, for restart back-off
    started_mono: float = 0.0   # the runtime's clock at the start (probes, scripted exits)
    #: what the command line does (script.py); set at creation
    timeline: Timeline = field(default_factory=Timeline)
    #: the probe workers of this instance, None without probes
    probes: ContainerProbes | None = None
    #: set when the kubelet killed it (liveness/startup failure, deletion)
    killed: str = ""

    @property
    def image_ref(self) -> str:
        return normalize_image(self.image)

    def terminated_state(self) -> dict:
        return {"exitCode": self.exit_code or 0, "reason": self.reason or "Completed",
                "startedAt": self.started_at or None, "finishedAt": self.finished_at,
                "containerID": self.container_id}


@dataclass
class Sandbox:
    """The pod sandbox (``pause`` container): network namespace and pod IP."""

    pod_uid: str
    ip: str
    sandbox_id: str = field(default_factory=lambda: secrets.token_hex(32))
    created_at: str = field(default_factory=apitime.now)
    start_time: str = ""
    init_containers: dict[str, Container] = field(default_factory=dict)
    containers: dict[str, Container] = field(default_factory=dict)
    #: (init, name) -> (reason, message) for containers that could not be created
    waiting: dict[tuple[bool, str], tuple[str, str]] = field(default_factory=dict)
    #: restored from the checkpoint; the pod worker resumes its containers once
    restored: bool = False

    def get(self, name: str, init: bool) -> Container | None:
        return (self.init_containers if init else self.containers).get(name)


class SimulatedRuntime:
    """The runtime of one node: image store, sandboxes (by pod uid), IPAM.

    ``image_pull_seconds`` / ``container_start_seconds`` are the simulated
    durations (seconds, float). Methods raise :class:`components.kubelet.ipam.IPExhausted`
    when the node's pod CIDR is full and :class:`components.kubelet.ipam.NetworkNotReady` while
    the node has none (``pod_cidr`` None until :meth:`update_pod_cidr`).
    """

    def __init__(self, node_name: str, pod_cidr: str | None, image_pull_seconds: float = 0.2,
                 container_start_seconds: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.node_name = node_name
        #: the one clock of this node's simulated processes (seconds): exits, probes, back-offs
        self.clock = clock
        #: called after every change worth checkpointing (checkpoint.py); None: nothing to do
        self.on_change: Callable[[], None] | None = None
        self.ipam = IPAM(pod_cidr)
        self.image_pull_seconds = image_pull_seconds
        self.container_start_seconds = container_start_seconds
        self.images: dict[str, int] = {PAUSE_IMAGE: image_size(PAUSE_IMAGE)}
        self.sandboxes: dict[str, Sandbox] = {}
        self._pull_locks: dict[str, asyncio.Lock] = {}
        metrics.RUNTIMES.add(self)

    @property
    def network_ready(self) -> bool:
        """Whether the network plugin can wire pods (the node's podCIDR is known)."""
        return self.ipam.ready

    def update_pod_cidr(self, cidr: str) -> None:
        """The node's podCIDR was set (CRI UpdateRuntimeConfig, from the kubelet's updatePodCIDR)."""
        self.ipam.set_cidr(cidr)

    # -- images (ImageService) ---------------------------------------------
    def image_present(self, image: str) -> bool:
        return normalize_image(image) in self.images

    async def pull_image(self, image: str, always: bool = False,
                         error: str | None = None) -> tuple[float, float, int]:
        """Pull ``image`` (simulated). Returns ``(pull_seconds, total_seconds_including_waiting,
        size_bytes)``; concurrent pulls of one image wait for the first. ``always``
        (imagePullPolicy Always) re-checks the registry even when the image is
        present, which takes a quarter of a full pull. ``error`` (the CRI error text,
        ``images.pull_error``): the registry refuses after a quarter of a pull's time;
        raises ``images.ImagePullError``."""
        ref = normalize_image(image)
        t0 = time.monotonic()
        lock = self._pull_locks.setdefault(ref, asyncio.Lock())
        async with lock:
            if error is not None:
                if self.image_pull_seconds > 0:
                    await asyncio.sleep(self.image_pull_seconds * 0.25)  # the failing lookup
                raise ImagePullError(error)
            if ref in self.images and not always:  # pulled meanwhile by another pod
                return 0.0, time.monotonic() - t0, self.images[ref]
            t1 = time.monotonic()
            seconds = self.image_pull_seconds * (0.25 if ref in self.images else 1.0)
            if seconds > 0:
                await asyncio.sleep(seconds)  # simulated pull duration
            self.images[ref] = image_size(ref)
            self.changed()
            return time.monotonic() - t1, time.monotonic() - t0, self.images[ref]

    def changed(self) -> None:
        """Note a change of the runtime's state (for the checkpoint)."""
        if self.on_change is not None:
            self.on_change()

    def node_images(self) -> list[dict]:
        """``node.status.images``: ``[{"names": [repo@digest, ref], "sizeBytes": n}]``."""
        return [{"names": [image_id(ref), ref], "sizeBytes": size}
                for ref, size in sorted(self.images.items(), key=lambda kv: -kv[1])]

    # -- sandboxes and containers (RuntimeService) -------------------------
    def sandbox(self, pod_uid: str) -> Sandbox | None:
        return self.sandboxes.get(pod_uid)

    def run_pod_sandbox(self, pod_uid: str) -> Sandbox:
        """Create the pod sandbox and give it an IP (idempotent per pod uid)."""
        sb = self.sandboxes.get(pod_uid)
        if sb is None:
            sb = Sandbox(pod_uid=pod_uid, ip=self.ipam.allocate(pod_uid))
            self.sandboxes[pod_uid] = sb
            self.changed()
        return sb

    def create_container(self, sb: Sandbox, spec: dict, init: bool,
                         annotations: dict | None = None) -> Container:
        """CreateContainer: a new container (state ``created``); an existing exited one
        of the same name becomes ``last_terminated`` and its restart count carries on."""
        prev = sb.get(spec["name"], init)
        c = Container(name=spec["name"], image=spec.get("image", ""), init=init)
        c.timeline = container_timeline(spec, annotations)
        if prev is not None:
            c.restart_count = prev.restart_count + 1
            c.last_terminated = prev.terminated_state() if prev.state == "exited" else None
            c.backoff_until = prev.backoff_until
        (sb.init_containers if init else sb.containers)[c.name] = c
        return c

    async def start_container(self, c: Container) -> None:
        """StartContainer: takes ``container_start_seconds``; state becomes running."""
        if self.container_start_seconds > 0:
            await asyncio.sleep(self.container_start_seconds)  # simulated start
        c.state = "running"
        c.started_at = apitime.now()
        c.started_mono = self.clock()
        self.changed()

    def exit_container(self, c: Container, exit_code: int, reason: str | None = None) -> None:
        """The container's process ended (or was stopped) with ``exit_code``."""
        if c.state == "exited":
            return
        c.state = "exited"
        c.exit_code = exit_code
        c.reason = reason or ("Completed" if exit_code == 0 else "Error")
        c.finished_at = apitime.now()
        c.finished_mono = self.clock()
        self.changed()

    def stop_pod_sandbox(self, pod_uid: str) -> Sandbox | None:
        """StopPodSandbox + RemovePodSandbox: stop what runs and release the pod IP."""
        sb = self.sandboxes.pop(pod_uid, None)
        self.ipam.release(pod_uid)
        if sb is not None:
            for c in list(sb.init_containers.values()) + list(sb.containers.values()):
                self.exit_container(c, 0)
            self.changed()
        return sb

    def adopt(self, pod: dict) -> Sandbox | None:
        """Rebuild a sandbox from a pod's reported status (kubelet restart: the
        containers kept running). Returns None when the status shows no pod IP."""
        md, st = pod.get("metadata") or {}, pod.get("status") or {}
        uid, ip = md.get("uid", ""), st.get("podIP")
        if not uid or not ip:
            return None
        if not self.ipam.reserve(uid, ip):
            return None
        sb = Sandbox(pod_uid=uid, ip=ip, start_time=st.get("startTime") or "")
        for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
            for cs in st.get(key) or []:
                state = cs.get("state") or {}
                cid = cs.get("containerID")
                if not cid:
                    continue
                c = Container(name=cs["name"], image=cs.get("image", ""), init=init,
                              container_id=cid, restart_count=int(cs.get("restartCount") or 0))
                c.last_terminated = (cs.get("lastState") or {}).get("terminated")
                if "running" in state:
                    c.state, c.started_at = "running", state["running"].get("startedAt") or ""
                elif "terminated" in state:
                    t = state["terminated"]
                    c.state, c.exit_code, c.reason = "exited", int(t.get("exitCode") or 0), t.get("reason", "")
                    c.started_at, c.finished_at = t.get("startedAt") or "", t.get("finishedAt") or ""
                else:
                    continue
                self.images.setdefault(normalize_image(c.image), image_size(c.image))
                (sb.init_containers if init else sb.containers)[c.name] = c
        self.sandboxes[uid] = sb
        return sb
