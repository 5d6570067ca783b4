"""Authentication: every request's :class:`~components.apiserver.auth.UserInfo`, as kube-apiserver.

The pieces (``staging/src/k8s.io/apiserver/pkg/authentication/...``,
``pkg/kubeapiserver/authenticator/config.go``, ``pkg/serviceaccount/``):

- :mod:`.x509` — client certificates of the TLS connection (CN = user, O = groups);
- :mod:`.tokenfile` — ``--token-auth-file`` (CSV ``token,user,uid,"group1,group2"``);
- :mod:`.serviceaccount` — service-account JWTs: the claims Kubernetes writes, signing
  (:class:`~.serviceaccount.TokenIssuer`) and verification against the live objects;
- :mod:`.union` — the request authenticator in kube-apiserver's order (x509, bearer tokens:
  token file then service accounts, ``system:authenticated`` added, then anonymous unless a
  credential was presented and failed);
- :mod:`.impersonation` — the ``Impersonate-*`` headers, each checked with the authorizer;
- :mod:`.filter` — :class:`~.filter.Authentication`: the middleware step that stores
  :data:`components.apiserver.auth.USER` (401 / 403 as Status), and the TokenReview answer;
- :mod:`.tokenrequest` — the ``serviceaccounts/token`` subresource (TokenRequest).
"""
