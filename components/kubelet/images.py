"""Image pulls that can fail, and the kubelet's image pull back-off.

**Which pulls fail** (:func:`pull_error`), checked in this order:

1. the pod annotation ``controlplane.io/image-pull: fail`` (or
   ``controlplane.io/image-pull.<container>: fail`` for one container): the registry
   refuses, as Docker Hub answers for a repository that does not exist or is private;
2. a registry host whose top-level domain cannot resolve — ``.invalid``, ``.example``,
   ``.test``, ``.localhost`` is not one, the RFC 2606 / RFC 6761 reserved names — e.g.
   ``registry.invalid/app:v1``: the DNS lookup fails (``no such host``);
3. a tag ``doesnotexist`` (any repository): the manifest is not found.

The error texts are containerd's, as the CRI returns them and the kubelet puts them in
the container's waiting message and the ``Failed`` event.

**Back-off** (:class:`Backoff`): client-go's ``util/flowcontrol.Backoff`` as the kubelet
builds it for images (``pkg/kubelet/kubelet.go``: ``NewBackOff(backOffPeriod=10s,
MaxContainerBackOff=300s)``): a failure starts at the initial period and doubles up to the
maximum; an entry idle for twice the maximum starts over; a pull is refused while
``now - lastUpdate < backoff`` (``IsInBackOffSinceUpdate``). Keyed ``<pod uid>_<image>``
as ``pkg/kubelet/images/image_manager.go`` EnsureImageExists does. No jitter, so the
sequence is exact under a fake clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from components.kubelet.runtime import ImagePullError, normalize_image

__all__ = ["ImagePullError", "Backoff", "pull_error"]

IMAGE_PULL_ANNOTATION = "controlplane.io/image-pull"
#: top-level domains that never resolve (RFC 2606 / RFC 6761)
UNRESOLVABLE_TLDS = ("invalid", "example", "test")
MISSING_TAG = "doesnotexist"

#: the image manager's errors (container waiting reasons) and the back-off reason
ERR_IMAGE_PULL = "ErrImagePull"
IMAGE_PULL_BACKOFF = "ImagePullBackOff"
ERR_IMAGE_NEVER_PULL = "ErrImageNeverPull"
PULL_FAILURES = (ERR_IMAGE_PULL, IMAGE_PULL_BACKOFF)


def registry_host(image: str) -> str:
    """The registry host of an image reference (``docker.io`` for short names), no port."""
    first = normalize_image(image).split("/", 1)[0]
    return first.rsplit(":", 1)[0] if not first.startswith("[") else first


def _tag(image: str) -> str:
    ref = normalize_image(image).split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else ""


def pull_error(image: str, container_name: str = "", annotations: dict | None = None) -> str | None:
    """The CRI error text of pulling ``image`` for this container, or None when the pull
    succeeds (the rules in the module docstring)."""
    ann = annotations or {}
    ref = normalize_image(image)
    flag = ann.get(f"{IMAGE_PULL_ANNOTATION}.{container_name}", ann.get(IMAGE_PULL_ANNOTATION, ""))
    head = f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}"'
    if str(flag).lower() == "fail":
        return (f"rpc error: code = Unknown desc = {head}: pull access denied, repository does not "
                "exist or may require authorization: server message: insufficient_scope: "
                "authorization failed")
    host = registry_host(image)
    if host.rsplit(".", 1)[-1].lower() in UNRESOLVABLE_TLDS and "." in host:
        repo_tag = ref.split("/", 1)[1] if "/" in ref else ref
        repo, _, tag = repo_tag.rpartition(":") if "@" not in repo_tag else (repo_tag, "", "")
        return (f"rpc error: code = Unknown desc = {head}: failed to do request: Head "
                f'"https://{host}/v2/{repo}/manifests/{tag or "latest"}": dial tcp: lookup {host}: '
                "no such host")
    if _tag(image) == MISSING_TAG:
        return f"rpc error: code = NotFound desc = {head}: {ref}: not found"
    return None


@dataclass
class _Entry:
    backoff: float
    last_update: float


class Backoff:
    """Per-key exponential back-off (client-go ``flowcontrol.Backoff`` without jitter).

    ``initial`` / ``maximum`` in seconds; ``clock`` returns seconds (monotonic by
    default; tests pass a ``FakeClock``)."""

    def __init__(self, initial: float = 10.0, maximum: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.initial = initial
        self.maximum = maximum
        self.clock = clock
        self._items: dict[str, _Entry] = {}

    def get(self, key: str) -> float:
        """The current back-off of ``key`` in seconds (0 when none)."""
        e = self._items.get(key)
        return e.backoff if e else 0.0

    def next(self, key: str, now: float | None = None) -> float:
        """Record a failure of ``key`` at ``now``; returns the new back-off (seconds)."""
        now = self.clock() if now is None else now
        e = self._items.get(key)
        if e is None or now - e.last_update > 2 * self.maximum:
            e = _Entry(self.initial, now)
        else:
            e = _Entry(min(e.backoff * 2, self.maximum), now)
        self._items[key] = e
        return e.backoff

    def in_backoff(self, key: str, now: float | None = None) -> bool:
        """``IsInBackOffSinceUpdate``: fewer than ``backoff`` seconds since the last failure."""
        e = self._items.get(key)
        now = self.clock() if now is None else now
        return e is not None and now - e.last_update < e.backoff

    def remaining(self, key: str, now: float | None = None) -> float:
        """Seconds until ``key`` may be tried again (0 when it may now)."""
        e = self._items.get(key)
        now = self.clock() if now is None else now
        return max(0.0, e.last_update + e.backoff - now) if e else 0.0

    def reset(self, key: str) -> None:
        self._items.pop(key, None)

    def gc(self, now: float | None = None) -> None:
        """Forget entries idle for more than twice the maximum (``Backoff.GC``)."""
        now = self.clock() if now is None else now
        for k in [k for k, e in self._items.items() if now - e.last_update > 2 * self.maximum]:
            del self._items[k]


def pulling_backoff(image: str) -> str:
    """The ``BackOff`` event and ImagePullBackOff waiting message."""
    return f'Back-off pulling image "{image}"'


def failed_to_pull(image: str, error: str) -> str:
    """The ``Failed`` event of a failed pull."""
    return f'Failed to pull image "{image}": {error}'


def error_event(reason: str) -> str:
    """The ``Failed`` event ``startContainer`` records (``"Error: %v"`` of the error)."""
    return f"Error: {reason}"
