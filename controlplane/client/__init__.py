"""Client machinery shared by every component: REST client, informers, work
queue, event recorder. Components reach the apiserver only through this."""

from controlplane.client.events import EventRecorder  # noqa: F401
from controlplane.client.informer import Informer, key_of  # noqa: F401
from controlplane.client.rest import ApiError, RestClient, resolve_server, wait_ready  # noqa: F401
from controlplane.client.workqueue import ShutDown, WorkQueue  # noqa: F401
