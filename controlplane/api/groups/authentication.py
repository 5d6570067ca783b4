"""``authentication.k8s.io/v1``: TokenReview and SelfSubjectReview, create-only and never stored (Kubernetes v1.32),
and TokenRequest, the body of ``serviceaccounts/NAME/token``.

``pkg/registry/authentication/selfsubjectreview/rest.go`` answers a SelfSubjectReview with
the requesting user's attributes: the user the apiserver's authentication filter found (or the
one impersonated with the ``Impersonate-*`` headers). ``pkg/registry/authentication/tokenreview/
storage.go`` answers a TokenReview: a token is required (400 ``token is required for TokenReview
in authentication.k8s.io``); the apiserver answers it with its token authenticators
(``components/apiserver/authentication``); :func:`review_token` is the answer with no token
authenticator configured (an empty status, ``{"user": {}}``), as there.
Schema: ``staging/src/k8s.io/api/authentication/v1/types.go``.
"""

from __future__ import annotations

import copy

from controlplane.api import listfields
from controlplane.api.registry import JSON, KindSchema, Resource

GROUP = "authentication.k8s.io"

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "UserInfo": ("UserInfo holds the information about the user needed to implement the user.Info interface.", {
        "username": ("string", "The name that uniquely identifies this user among all active users."),
        "uid": ("string", "A unique value that identifies this user across time."),
        "groups": ("[]string", "The names of groups this user is a part of."),
        "extra": ("object:map[string][]string", "Any additional information provided by the authenticator."),
    }),
    "SelfSubjectReviewStatus": ("SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.", {
        "userInfo": ("UserInfo", "User attributes of the user making this request."),
    }),
    "TokenReviewSpec": ("TokenReviewSpec is a description of the token authentication request.", {
        "token": ("string", "Token is the opaque bearer token."),
        "audiences": ("[]string", "Audiences is a list of the identifiers that the resource server presented with "
                                  "the token identifies as."),
    }),
    "TokenReviewStatus": ("TokenReviewStatus is the result of the token authentication request.", {
        "authenticated": ("boolean", "Authenticated indicates that the token was associated with a known user."),
        "user": ("UserInfo", "User is the UserInfo associated with the provided token."),
        "audiences": ("[]string", "Audiences are audience identifiers chosen by the authenticator that are "
                                  "compatible with both the TokenReview and token."),
        "error": ("string", "Error indicates that the token couldn't be checked"),
    }),
    "TokenRequestSpec": ("TokenRequestSpec contains client provided parameters of a token request.", {
        "audiences": ("[]string", "Audiences are the intendend audiences of the token. A recipient of a token must "
                                  "identify themself with an identifier in the list of audiences of the token, and "
                                  "otherwise should reject the token."),
        "expirationSeconds": ("int64", "ExpirationSeconds is the requested duration of validity of the "
                                               "request."),
        "boundObjectRef": ("BoundObjectReference", "BoundObjectRef is a reference to an object that the token will "
                                                   "be bound to."),
    }),
    "BoundObjectReference": ("BoundObjectReference is a reference to an object that a token is bound to.", {
        "kind": ("string", "Kind of the referent. Valid kinds are 'Pod' and 'Secret'."),
        "apiVersion": ("string", "API version of the referent."),
        "name": ("string", "Name of the referent."),
        "uid": ("string", "UID of the referent."),
    }),
    "TokenRequestStatus": ("TokenRequestStatus is the result of a token request.", {
        "token": ("string", "Token is the opaque bearer token."),
        "expirationTimestamp": ("Time", "ExpirationTimestamp is the time of expiration of the returned token."),
    }),
}

#: the list tags of ``authentication/v1/types.go``: every list ``+listType=atomic``
listfields.declare(structs={"UserInfo": {"groups": listfields.ATOMIC},
                            "TokenReviewSpec": {"audiences": listfields.ATOMIC},
                            "TokenReviewStatus": {"audiences": listfields.ATOMIC},
                            "TokenRequestSpec": {"audiences": listfields.ATOMIC}})

SSR_SCHEMA = KindSchema(
    "SelfSubjectReview contains the user information that the kube-apiserver has about the user making this "
    "request. When using impersonation, users will receive the user info of the user being impersonated.", {
        "status": ("SelfSubjectReviewStatus", "Status is filled in by the server with the user attributes."),
    }, TYPES)
TOKENREVIEW_SCHEMA = KindSchema(
    "TokenReview attempts to authenticate a token to a known user. Note: TokenReview requests may be cached by the "
    "webhook token authenticator plugin in the kube-apiserver.", {
        "spec": ("TokenReviewSpec", "Spec holds information about the request being evaluated"),
        "status": ("TokenReviewStatus", "Status is filled in by the server and indicates whether the request can be "
                                        "authenticated."),
    }, TYPES)

#: the body of ``serviceaccounts/NAME/token`` (not a served resource: ``schemas.BODY_KINDS``)
TOKENREQUEST_SCHEMA = KindSchema(
    "TokenRequest requests a token for a given service account.", {
        "spec": ("TokenRequestSpec", "Spec holds information about the request being evaluated"),
        "status": ("TokenRequestStatus", "Status is filled in by the server and indicates whether the token can be "
                                         "authenticated."),
    }, TYPES)


def review_self(obj: JSON, user: JSON) -> JSON:
    """A SelfSubjectReview's answer: ``status.userInfo`` is the requesting ``user``
    (username, uid, groups, extra; empty ones left out)."""
    out = copy.deepcopy(obj)
    info = {k: copy.deepcopy(user[k]) for k in ("username", "uid", "groups", "extra") if user.get(k)}
    out["status"] = {"userInfo": info}
    return out


def review_token(obj: JSON, user: JSON) -> JSON:
    """A TokenReview's answer: the review as sent, with an empty status (no token
    authenticator is configured). Raises ValueError (400) without ``spec.token``."""
    if not (obj.get("spec") or {}).get("token"):
        raise ValueError(f"token is required for TokenReview in {GROUP}")
    out = copy.deepcopy(obj)
    out["status"] = {"user": {}}  # TokenReviewStatus.user is a struct: encoded even when empty
    return out


_CREATE = ("create",)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", False, (), (), (),
             _CREATE, schema=SSR_SCHEMA, review=review_self),
    Resource(GROUP, "v1", "tokenreviews", "tokenreview", "TokenReview", False, (), (), (), _CREATE,
             schema=TOKENREVIEW_SCHEMA, review=review_token),
)
