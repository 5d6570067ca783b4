"""etcd3 storage for Kubernetes objects (keys, resourceVersion = mod_revision, guaranteed update, watch).

Modelled on ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go`` and
``watcher.go``. Public interface: :class:`Store`, :func:`object_key`,
:func:`collection_prefix`, the errors in :mod:`controlplane.storage.errors`.
"""

from controlplane.storage.errors import (  # noqa: F401
    Conflict,
    CorruptObject,
    Expired,
    KeyExists,
    KeyNotFound,
    StorageError,
    TooLargeResourceVersion,
    Unavailable,
)
from controlplane.storage.store import (  # noqa: F401
    CONTINUE_EXPIRED,
    EventStream,
    ListResult,
    Store,
    StoreEvent,
    collection_prefix,
    object_key,
)
