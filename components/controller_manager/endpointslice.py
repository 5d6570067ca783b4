"""The EndpointSlice controller: ``discovery.k8s.io/v1`` EndpointSlices for every Service
with a selector, beside the Endpoints the endpoint controller writes.

Facts from ``pkg/controller/endpointslice/endpointslice_controller.go`` (syncService: a
Service that is gone, being deleted, of type ExternalName or without a selector is left
alone — the slices of a deleted Service go with it through their ownerReference, by the
garbage collector; the pods selected, ShouldPodBeInEndpoints with terminating pods
included; handlers: Services, the Services whose selector matches a pod's old or new
labels, and the managed slices' Service when a slice changes) and
``staging/src/k8s.io/endpointslice`` (the reconciler, :mod:`.endpointslice_util`). Each
slice is labelled ``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by:
endpointslice-controller.k8s.io``, owned by its Service, of addressType IPv4, with at most
``--max-endpoints-per-slice`` (default 100) endpoints. A pod whose node is not known is left
out and the Service retried ("skipping Pod ... Node ... Not Found"). As the controller's
``endpointSliceTracker``, the generation of every slice written is remembered: until the
informer shows it (and no longer shows a deleted one) a sync is refused with
:class:`StaleInformerCache` and retried, so a slice is never created twice.
"""

from __future__ import annotations

import logging

from controlplane.api.resources import NODES, PODS, get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import selector_from_dict

from . import endpointslice_util as esu
from .controller import Controller, ControllerContext
from .controller_utils import meta, pod_service_memberships
from .endpoint import should_pod_be_in_endpoints

log = logging.getLogger("controller-manager")

SERVICES = get("services")
ENDPOINTSLICES = get("endpointslices", "discovery.k8s.io")


class StaleInformerCache(RuntimeError):
    """The informer does not show this controller's own last writes yet (StaleInformerCache)."""


class EndpointSliceController(Controller):
    """See the module docstring. Queue keys are Service keys ``namespace/name``."""

    name = "endpointslice"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.max_per_slice = ctx.config.max_endpoints_per_slice
        self.services = ctx.informers.informer(SERVICES)
        self.pods = ctx.informers.informer(PODS)
        self.nodes = ctx.informers.informer(NODES)
        self.slices = ctx.informers.informer(ENDPOINTSLICES)
        self.services.add_handlers(lambda s: self.enqueue(key_of(s)), lambda o, n: self.enqueue(key_of(n)),
                                   lambda s: self.enqueue(key_of(s)))
        self.pods.add_handlers(lambda p: self._pod_changed(p), lambda o, n: self._pod_changed(n, o),
                               lambda p: self._pod_changed(p))
        self.slices.add_handlers(self._slice_changed, lambda o, n: self._slice_changed(n), self._slice_changed)
        #: Service key → {slice name: generation written, or None once deleted}
        self._written: dict[str, dict[str, int | None]] = {}

    def _pod_changed(self, pod: dict, old: dict | None = None) -> None:
        """GetPodServiceMemberships for the pod's new (and old) labels."""
        for key in pod_service_memberships(pod, old, self.services.store.values()):
            self.enqueue(key)

    def _slice_changed(self, slice_: dict) -> None:
        labels = meta(slice_).get("labels") or {}
        svc = labels.get(esu.LABEL_SERVICE_NAME)
        if svc and labels.get(esu.LABEL_MANAGED_BY) == esu.CONTROLLER_NAME:
            self.enqueue(f"{meta(slice_).get('namespace')}/{svc}")

    def _existing(self, ns: str, name: str) -> list[dict]:
        out = []
        for s in self.informers.in_namespace(ENDPOINTSLICES, ns):
            labels = meta(s).get("labels") or {}
            if labels.get(esu.LABEL_SERVICE_NAME) == name and labels.get(esu.LABEL_MANAGED_BY) == esu.CONTROLLER_NAME \
                    and not meta(s).get("deletionTimestamp"):
                out.append(s)
        return sorted(out, key=lambda s: meta(s).get("name", ""))

    def _stale(self, key: str, existing: list[dict]) -> bool:
        """endpointSliceTracker.StaleSlices: a slice written is missing or older in the
        informer, or a deleted one still there; forgets the writes the informer shows."""
        written = self._written.get(key)
        if not written:
            return False
        have = {meta(s).get("name"): int(meta(s).get("generation") or 0) for s in existing}
        stale = False
        for name, gen in list(written.items()):
            if gen is None:
                if name in have:
                    stale = True
                else:
                    del written[name]
            elif name not in have or have[name] < gen:
                stale = True
            else:
                del written[name]
        if not written:
            self._written.pop(key, None)
        return stale

    def _wrote(self, key: str, obj: dict) -> None:
        self._written.setdefault(key, {})[meta(obj).get("name", "")] = int(meta(obj).get("generation") or 0)

    async def sync(self, key: str) -> None:
        """Reconcile the slices of one Service (``namespace/name``). Raises
        :class:`StaleInformerCache` before writing when the informer is behind this
        controller's writes, RuntimeError after writing when a selected pod's node is unknown
        (both: the Service is retried)."""
        ns, _, name = key.partition("/")
        svc = self.services.store.get(key)
        if svc is None or meta(svc).get("deletionTimestamp"):
            self._written.pop(key, None)
            return
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName" or not spec.get("selector"):
            return
        s = selector_from_dict({"matchLabels": spec["selector"]})
        pods = [p for p in self.informers.in_namespace(PODS, ns) if s.matches(meta(p).get("labels") or {})]
        desired, missing = esu.desired_endpoints(svc, pods, self.nodes.store,
                                                 lambda p: should_pod_be_in_endpoints(p, True))
        existing = self._existing(ns, name)
        if self._stale(key, existing):
            raise StaleInformerCache(f"EndpointSlice informer cache is out of date for Service {key}")
        plan = esu.reconcile(svc, desired, existing, self.max_per_slice)
        for body in plan.create:
            self._wrote(key, await self.client.create(ENDPOINTSLICES, body, ns))
        for body in plan.update:
            self._wrote(key, await self.client.update(ENDPOINTSLICES, body))
        for old in plan.delete:
            try:
                await self.client.delete(ENDPOINTSLICES, meta(old)["name"], ns)
            except ApiError as e:
                if e.code != 404:
                    raise
            self._written.setdefault(key, {})[meta(old)["name"]] = None
        if plan:
            event(log, "endpointslices.synced", service=key, created=len(plan.create), updated=len(plan.update),
                  deleted=len(plan.delete),
                  endpoints=sum(len(eps) for _p, eps in desired.values()))
        if missing:
            raise RuntimeError(f"skipping Pods {', '.join(missing)} for Service {key}: Node Not Found")
