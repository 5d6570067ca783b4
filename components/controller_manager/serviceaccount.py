"""The service account controller: every active namespace has a ``default``
ServiceAccount (``pkg/controller/serviceaccount/serviceaccounts_controller.go``:
syncNamespace creates each configured account — by default only ``default`` —
missing from a namespace whose phase is Active; a deleted account is recreated).
"""

from __future__ import annotations

import logging

from controlplane.api.resources import NAMESPACES, get
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, name_of

log = logging.getLogger("controller-manager")

SERVICEACCOUNTS = get("serviceaccounts")
#: the accounts ensured in every namespace (ServiceAccountsControllerOptions default)
DEFAULT_ACCOUNTS = ("default",)


class ServiceAccountsController(Controller):
    """See the module docstring. Queue keys are namespace names."""

    name = "serviceaccount"
    workers = 1

    def __init__(self, ctx: ControllerContext, accounts: tuple[str, ...] = DEFAULT_ACCOUNTS) -> None:
        super().__init__(ctx)
        self.accounts = accounts
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.serviceaccounts = ctx.informers.informer(SERVICEACCOUNTS)
        self.namespaces.add_handlers(lambda ns: self.enqueue(name_of(ns)),
                                     lambda old, new: self.enqueue(name_of(new)), None)
        self.serviceaccounts.add_handlers(None, None, self._account_deleted)

    def _account_deleted(self, sa: dict) -> None:
        ns = meta(sa).get("namespace")
        if meta(sa).get("name") in self.accounts and ns:
            self.enqueue(ns)

    async def sync(self, key: str) -> None:
        ns = self.namespaces.store.get(key)
        if ns is None or meta(ns).get("deletionTimestamp") or \
                (ns.get("status") or {}).get("phase", "Active") != "Active":
            return
        for name in self.accounts:
            if f"{key}/{name}" in self.serviceaccounts.store:
                continue
            try:
                await self.client.create(SERVICEACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                           "metadata": {"name": name, "namespace": key}}, key)
            except ApiError as e:
                # 409: it exists (our cache is behind); 403/404: the namespace is going away
                if e.code in (409, 403, 404):
                    continue
                raise
            event(log, "serviceaccount.created", namespace=key, name=name)
