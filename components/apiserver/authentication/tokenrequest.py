"""The ``serviceaccounts/token`` subresource: TokenRequest (``pkg/registry/core/serviceaccount/storage/token.go``).

``POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`` with an ``authentication.k8s.io/v1``
TokenRequest answers 201 with the request, ``status.token`` (a signed service-account JWT) and
``status.expirationTimestamp``:

- ``spec.expirationSeconds`` defaults to 3600 (``SetDefaults_TokenRequestSpec``); less than 600
  or more than 2^32 → 422 (``ValidateTokenRequest``: ``may not specify a duration less than 10
  minutes`` / ``larger than 2^32 seconds``); more than ``--service-account-max-token-expiration``
  (when set) is shortened to it, with the warning ``requested expiration of N seconds shortened
  to M seconds``;
- ``spec.audiences`` defaults to the API audiences (``--api-audiences``, else the issuer);
- ``metadata.name`` / ``namespace``, when set, must be the account's (422 ``must match the
  service account name if specified``);
- the ServiceAccount must exist (404); ``spec.boundObjectRef`` may name a Pod (running as this
  account, else 400 ``cannot bind token for serviceaccount "NAME" to pod running with different
  serviceaccount name.``; its node is put in the token too), a Secret or a Node (404 when absent;
  another kind → 400 ``cannot bind token to object of type …``); a ``uid`` that is not the object's →
  409 Conflict;
- a pod-bound token asking for exactly 3607 s with API audiences only (the kubelet's projected
  volume) is issued for a year with ``warnafter`` at 3607 s (``--service-account-extend-token-
  expiration``, on by default); ``status.expirationTimestamp`` stays the requested one.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from components.apiserver import status as st
from components.apiserver.authentication.serviceaccount import (
    EXPIRATION_EXTENSION_SECONDS,
    WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
    Fetcher,
    Getter,
    TokenIssuer,
    claims,
)
from controlplane import apitime

GROUP = "authentication.k8s.io"
KIND = "TokenRequest"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32

_TOKENREQUEST = SimpleNamespace(kind=KIND, group=GROUP, plural="tokenrequests")


def _invalid(name: str, field: str, value: Any, detail: str) -> st.APIError:
    errs = st.error_list()
    errs.invalid(field, value, detail)
    return st.invalid_fields(KIND, GROUP, name, errs, f'{KIND}.{GROUP} "{name}" is invalid: {field}: '
                                                      f'{errs[0]["message"]}')


class TokenRequests:
    """Issues tokens for ServiceAccounts (module docstring). ``fetch(plural, ns, name)`` reads
    the account and the bound object from storage (as ``r.svcaccts.Get``: a just-created
    account is found); ``getter`` reads the pod's node from the watch cache (``ResourceVersion:
    "0"`` there)."""

    def __init__(self, issuer: TokenIssuer, getter: Getter, api_audiences: Sequence[str],
                 max_expiration_seconds: int = 0, extend_expiration: bool = True,
                 fetch: Fetcher | None = None) -> None:
        self.issuer = issuer
        self.getter = getter
        self.fetch = fetch
        self.api_audiences = list(api_audiences)
        self.max_expiration_seconds = max_expiration_seconds
        self.extend_expiration = extend_expiration

    async def _get(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        if self.fetch is not None:
            return await self.fetch(plural, namespace, name)
        return self.getter(plural, namespace, name)

    async def create(self, namespace: str, name: str, req: dict[str, Any], now: float | None = None
                     ) -> tuple[dict[str, Any], list[str]]:
        """The answered TokenRequest and the warnings to send. Raises
        :class:`~components.apiserver.status.APIError` (400, 404, 409, 422)."""
        warnings: list[str] = []
        out = copy.deepcopy(req)
        md = out.setdefault("metadata", {})
        spec = out.setdefault("spec", {})
        if spec.get("expirationSeconds") is None:
            spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
        exp = int(spec["expirationSeconds"])
        if exp < MIN_EXPIRATION_SECONDS:
            raise _invalid("", "spec.expirationSeconds", exp, "may not specify a duration less than 10 minutes")
        if exp > MAX_EXPIRATION_SECONDS:
            raise _invalid("", "spec.expirationSeconds", exp, "may not specify a duration larger than 2^32 seconds")
        if md.get("name") and md["name"] != name:
            raise _invalid(name, "metadata.name", md["name"], "must match the service account name if specified")
        if md.get("namespace") and md["namespace"] != namespace:
            raise _invalid(name, "metadata.namespace", md["namespace"],
                           "must match the service account namespace if specified")
        sa = await self._get("serviceaccounts", namespace, name)
        if sa is None:
            raise st.not_found(SimpleNamespace(plural="serviceaccounts", group=""), name)
        if not spec.get("audiences"):
            spec["audiences"] = list(self.api_audiences)
        if self.max_expiration_seconds > 0 and exp > self.max_expiration_seconds:
            warnings.append(f"requested expiration of {exp} seconds shortened to {self.max_expiration_seconds} "
                            "seconds")
            exp = spec["expirationSeconds"] = self.max_expiration_seconds
        pod = secret = node = None
        ref = spec.get("boundObjectRef")
        if isinstance(ref, dict) and ref:
            kind, av, rname = ref.get("kind") or "", ref.get("apiVersion") or "", ref.get("name") or ""
            group = av.rsplit("/", 1)[0] if "/" in av else ""
            if group == "" and kind == "Pod":
                pod = await self._get("pods", namespace, rname)
                if pod is None:
                    raise st.not_found(SimpleNamespace(plural="pods", group=""), rname)
                if (pod.get("spec") or {}).get("serviceAccountName") != name:
                    raise st.bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with '
                                         "different serviceaccount name.")
                bound = pod
                node_name = (pod.get("spec") or {}).get("nodeName")
                if node_name:
                    node = self.getter("nodes", "", node_name)
            elif group == "" and kind == "Secret":
                secret = await self._get("secrets", namespace, rname)
                if secret is None:
                    raise st.not_found(SimpleNamespace(plural="secrets", group=""), rname)
                bound = secret
            elif group == "" and kind == "Node":
                node = await self._get("nodes", "", rname)
                if node is None:
                    raise st.not_found(SimpleNamespace(plural="nodes", group=""), rname)
                bound = node
            else:
                gvk = f"{av}, Kind={kind}" if "/" in av else f"/{av}, Kind={kind}"
                raise st.bad_request(f"cannot bind token to object of type {gvk}")
            uid = str((bound.get("metadata") or {}).get("uid") or "")
            if ref.get("uid") and ref["uid"] != uid:
                raise st.conflict(SimpleNamespace(plural=kind, group=group), rname,
                                  f'Operation cannot be fulfilled on {kind} "{rname}": the UID in the bound object '
                                  f"reference ({ref['uid']}) does not match the UID in record. The object might "
                                  "have been deleted and then recreated")
        t = time.time() if now is None else now
        lifetime, warnafter = exp, 0
        if self.extend_expiration and pod is not None and exp == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS \
                and all(a in self.api_audiences for a in spec["audiences"]):
            warnafter, lifetime = exp, EXPIRATION_EXTENSION_SECONDS
        payload = claims(self.issuer.issuer, sa, spec["audiences"], lifetime, pod=pod, secret=secret, node=node,
                         warnafter=warnafter, now=t)
        out["status"] = {"token": self.issuer.generate(payload),
                         "expirationTimestamp": apitime.format_time(int(t) + exp)}
        md.setdefault("creationTimestamp", None)
        return out, warnings
