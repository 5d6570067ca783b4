"""Authorization: from a request's :class:`~components.apiserver.auth.Attributes` to a decision.

kube-apiserver's authorization layer, one module each (nothing is imported here, so a
module may import one part without the rest):

- :mod:`.attributes` — ``Attributes`` derived from the request path, method and query, as
  ``staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`` derives the
  RequestInfo (also for paths we do not serve, which are authorized before their 404);
- :mod:`.rules` — PolicyRule matching (``plugin/pkg/auth/authorizer/rbac/rbac.go``
  ``RuleAllows``, ``pkg/apis/rbac/v1/evaluation_helpers.go``);
- :mod:`.rbac` — the RBAC authorizer on an index of the four RBAC kinds kept from the watch
  caches (``plugin/pkg/auth/authorizer/rbac``, ``pkg/registry/rbac/validation/rule.go``);
- :mod:`.node` — the Node authorizer and its graph of pods → secrets, configmaps, PVCs,
  PVs, serviceaccounts (``plugin/pkg/auth/authorizer/node``);
- :mod:`.union` — ``--authorization-mode``, the union of authorizers, the ``system:masters``
  superuser, the authorization filter and its 403
  (``staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go``);
- :mod:`.bootstrappolicy` — the default ClusterRoles, bindings and namespaced roles written
  and reconciled at start (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``);
- :mod:`.escalation` — the RBAC escalation check on writing roles and bindings
  (``pkg/registry/rbac/*/policybased``);
- :mod:`.reviews` — SubjectAccessReview & co. answered by the configured authorizers
  (``pkg/registry/authorization/*``);
- :mod:`.context` — the requesting user of the running request (a context variable, as
  Kubernetes carries it in the request's ``context.Context``).
"""
