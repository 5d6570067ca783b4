"""Storage errors, mirroring ``staging/src/k8s.io/apiserver/pkg/storage/errors.go``.

The apiserver maps each to a Kubernetes Status: :class:`KeyNotFound` → 404 NotFound,
:class:`KeyExists` → 409 AlreadyExists, :class:`Conflict` → 409 Conflict,
:class:`Expired` → 410 Expired (compacted revision / too old resourceVersion),
:class:`Unavailable` → 503/500 (etcd unreachable), :class:`CorruptObject` → 500 (a stored
value that cannot be decoded).
"""

from __future__ import annotations


class StorageError(Exception):
    """Base class; ``key`` is the etcd key involved (may be empty)."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class KeyNotFound(StorageError):
    """The key does not exist (or a precondition found it gone)."""


class KeyExists(StorageError):
    """create: the key already exists (txn compare create_revision == 0 failed)."""


class Conflict(StorageError):
    """A resourceVersion / uid precondition did not hold."""


class Expired(StorageError):
    """The requested revision has been compacted (etcd ``mvcc: required revision has been compacted``).

    ``current`` is the oldest revision still available, when known.
    """

    def __init__(self, message: str, key: str = "", current: int = 0) -> None:
        super().__init__(message, key)
        self.current = current


class Unavailable(StorageError):
    """etcd could not be reached (gRPC UNAVAILABLE / DEADLINE_EXCEEDED)."""


class CorruptObject(StorageError):
    """A stored value that cannot be decoded into an object (not JSON, or not a JSON object).

    The message is the etcd3 store's ``NewCorruptObjError`` text (``storage/errors.go``:
    ``StorageError: corrupt object, Code: 7, Key: K, ResourceVersion: 0, AdditionalErrorMsg: E``);
    the apiserver answers it as kube-apiserver answers a non-Status error: 500 with that text.
    """

    def __init__(self, key: str, error: Exception) -> None:
        super().__init__(f"StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, "
                         f"AdditionalErrorMsg: {type(error).__name__}: {error}", key)
        self.error = error


class TooLargeResourceVersion(StorageError):
    """The requested revision is in the future (etcd ``mvcc: required revision is a future revision``)."""
