"""The simulated runtime's state on disk, so containers outlive a kubelet restart.

On a real node the containers belong to containerd, not to the kubelet: a kubelet
restart finds them running with their IDs, start times and restart counts
(``pkg/kubelet/kuberuntime`` reads them back through the CRI). Here the runtime lives in
the kubelet's process, so it is written to ``<root-dir>/runtime-state.json`` (the
kubelet's ``--root-dir``, ``/var/lib/kubelet`` on a real node; ``controlplane up`` passes
``<data-dir>/kubelet/<node>``, or ``<data-dir>/kubelet/hollow`` for the hollow nodes'
process): one file per process holding every node of it — images, sandboxes (pod uid,
IP) and containers (state, IDs, times, restart counts) —, rewritten atomically (write
then rename) at most every ``interval`` seconds after a change (batched, so 1,000 hollow
nodes cost one write per interval), and once more when the kubelet stops.

A start with a checkpoint restores every node's runtime, then reconciles it with the pods
the apiserver has once the pods informer listed them: a sandbox whose pod is gone is
removed (its containers gone, its IP free); a running pod the checkpoint missed (started
less than ``interval`` before a kill -9) is adopted from its reported status; a container
saved in the created state is resumed as running when its reported status shows it running
(its start came after the last write), else — the kill came between CreateContainer and
StartContainer — started again by its pod worker, as the kubelet starts a runtime's created
container (``pkg/kubelet/container/helpers.go`` ShouldContainerBeRestarted). A start with
``--root-dir`` but no checkpoint is a **node reboot** — delete the root dir (or the file) to reboot a node: the containers
did not survive, so the kubelet creates new sandboxes and restarts every container
(``SandboxChanged``, restartCount + 1). Without ``--root-dir`` there is no checkpoint and
the kubelet adopts running pods from their reported status (the earlier behaviour).

Times are kept as epoch seconds and turned back into the runtime's monotonic clock on
load. Raises nothing on a corrupt file: it is logged and treated as a reboot.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any

import orjson

from components.kubelet.runtime import Container, Sandbox, SimulatedRuntime, normalize_image
from controlplane.log import event

log = logging.getLogger("kubelet.checkpoint")

FILE_NAME = "runtime-state.json"
VERSION = 1
#: Container fields kept verbatim (the rest is rebuilt: timeline and probes from the spec)
_FIELDS = ("name", "image", "init", "container_id", "state", "created_at", "started_at",
           "finished_at", "exit_code", "reason", "restart_count", "last_terminated",
           "waiting_reason", "waiting_message")


def dump_container(c: Container, clock_now: float, epoch_now: float) -> dict[str, Any]:
    """One container as JSON; monotonic times as epoch seconds."""
    out: dict[str, Any] = {k: getattr(c, k) for k in _FIELDS}
    out["started_epoch"] = epoch_now - (clock_now - c.started_mono) if c.started_mono else None
    out["finished_epoch"] = epoch_now - (clock_now - c.finished_mono) if c.finished_mono else None
    return out


def load_container(d: dict[str, Any], clock_now: float, epoch_now: float) -> Container:
    c = Container(**{k: d[k] for k in _FIELDS if k in d})
    if d.get("started_epoch") is not None:
        c.started_mono = clock_now - max(epoch_now - float(d["started_epoch"]), 0.0)
    if d.get("finished_epoch") is not None:
        c.finished_mono = clock_now - max(epoch_now - float(d["finished_epoch"]), 0.0)
    return c


def dump_runtime(rt: SimulatedRuntime) -> dict[str, Any]:
    """A runtime's images and sandboxes as JSON."""
    now, epoch = rt.clock(), time.time()
    sandboxes = []
    for sb in rt.sandboxes.values():
        sandboxes.append({
            "pod_uid": sb.pod_uid, "ip": sb.ip, "sandbox_id": sb.sandbox_id,
            "created_at": sb.created_at, "start_time": sb.start_time,
            "init_containers": [dump_container(c, now, epoch) for c in sb.init_containers.values()],
            "containers": [dump_container(c, now, epoch) for c in sb.containers.values()],
            "waiting": [[init, name, r, m] for (init, name), (r, m) in sb.waiting.items()]})
    return {"images": dict(rt.images), "sandboxes": sandboxes}


def load_runtime(rt: SimulatedRuntime, state: dict[str, Any]) -> int:
    """Restore ``state`` (from :func:`dump_runtime`) into ``rt``; returns the number of
    sandboxes restored (one whose IP is outside the node's CIDR is dropped). Restored
    sandboxes are marked ``restored`` so the pod worker resumes their containers."""
    now, epoch = rt.clock(), time.time()
    for ref, size in (state.get("images") or {}).items():
        rt.images[normalize_image(ref)] = int(size)
    n = 0
    for s in state.get("sandboxes") or []:
        uid, ip = s.get("pod_uid", ""), s.get("ip", "")
        if not uid or not rt.ipam.reserve(uid, ip):
            continue
        sb = Sandbox(pod_uid=uid, ip=ip, sandbox_id=s.get("sandbox_id") or "",
                     created_at=s.get("created_at") or "", start_time=s.get("start_time") or "")
        for key, target in (("init_containers", sb.init_containers), ("containers", sb.containers)):
            for d in s.get(key) or []:
                c = load_container(d, now, epoch)
                target[c.name] = c
        sb.waiting = {(bool(w[0]), str(w[1])): (str(w[2]), str(w[3])) for w in s.get("waiting") or []}
        sb.restored = True
        rt.sandboxes[uid] = sb
        n += 1
    return n


class Checkpoint:
    """The checkpoint file of one kubelet process (every node it runs).

    ``root_dir``: the ``--root-dir`` (created if missing); ``interval``: seconds between a
    change and its write. :meth:`load` before the nodes start, :meth:`attach` each node's
    runtime, :meth:`flush` when stopping."""

    def __init__(self, root_dir: str, interval: float = 0.5) -> None:
        self.root_dir = root_dir
        self.path = os.path.join(root_dir, FILE_NAME)
        self.interval = interval
        self.runtimes: dict[str, SimulatedRuntime] = {}
        self.state: dict[str, Any] = {}
        self.found = False
        self._timer: asyncio.TimerHandle | None = None
        self.writes = 0
        #: node -> its runtime as encoded JSON, re-encoded only when the node changed
        self._encoded: dict[str, bytes] = {}
        self._dirty: set[str] = set()

    def load(self) -> bool:
        """Read the file; True when there was one (False: a first start or a reboot)."""
        os.makedirs(self.root_dir, exist_ok=True)
        try:
            with open(self.path, "rb") as f:
                doc = json.loads(f.read())
            if not isinstance(doc, dict) or doc.get("version") != VERSION:
                raise ValueError(f"unknown checkpoint version {doc.get('version') if isinstance(doc, dict) else doc!r}")
            self.state = doc.get("nodes") or {}
            self.found = True
        except FileNotFoundError:
            self.found = False
        except (OSError, ValueError) as e:
            event(log, "checkpoint.unreadable", logging.WARNING, path=self.path, error=str(e)[:200])
            self.found = False
        return self.found

    def attach(self, node: str, rt: SimulatedRuntime) -> int:
        """Restore ``node``'s saved runtime into ``rt`` and checkpoint its changes from now
        on; returns the number of sandboxes restored."""
        n = load_runtime(rt, self.state.get(node) or {}) if self.found else 0
        self.runtimes[node] = rt
        self._dirty.add(node)

        def changed() -> None:
            self.mark_dirty(node)

        rt.on_change = changed
        return n

    def mark_dirty(self, node: str | None = None) -> None:
        """Note that ``node`` (None: every node) changed and schedule a write ``interval``
        seconds from now (one write for a burst)."""
        self._dirty.update([node] if node is not None else self.runtimes)
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._timer = loop.call_later(self.interval, self._fire)

    def _fire(self) -> None:
        self._timer = None
        try:
            self.flush()
        except OSError as e:
            event(log, "checkpoint.write_failed", logging.WARNING, path=self.path, error=str(e)[:200])

    def flush(self) -> None:
        """Write every attached node's runtime now (to a temporary file, then renamed over
        the checkpoint). Only the nodes that changed since the last write are encoded again:
        a burst on one hollow node does not re-encode the other 999."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for n in self._dirty:
            rt = self.runtimes.get(n)
            if rt is not None:
                self._encoded[n] = orjson.dumps(dump_runtime(rt))
        self._dirty.clear()
        body = b"".join([b'{"version":%d,"nodes":{' % VERSION,
                         b",".join(orjson.dumps(n) + b":" + enc for n, enc in self._encoded.items()),
                         b"}}"])
        tmp = f"{self.path}.tmp"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, self.path)
        self.writes += 1

