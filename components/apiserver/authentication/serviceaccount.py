"""Service-account tokens: JWTs as ``pkg/serviceaccount`` writes and checks them.

- :func:`claims` — ``claims.go`` ``Claims``: ``iss``, ``sub`` (``system:serviceaccount:NS:NAME``),
  ``aud``, ``exp``, ``iat``, ``nbf``, ``jti`` (a UUID) and the private ``kubernetes.io`` claim
  (``namespace``, ``serviceaccount {name, uid}``, ``pod`` / ``secret`` ``{name, uid}`` of the
  bound object, ``node {name, uid}`` of a bound pod's node, ``warnafter``).
- :class:`KeySet` — the keys: ``--service-account-signing-key-file`` (a PEM private key, RSA
  or EC) and ``--service-account-key-file`` (PEM public keys, private keys or certificates;
  several files allowed). Without a signing key a key pair is generated in memory at start
  (tokens then verify for that process's lifetime only).
- :class:`TokenIssuer` — ``jwt.go`` ``JWTTokenGenerator``: RS256 (ES256/384/512 for EC keys),
  header ``kid`` = base64url(SHA-256(PKIX DER of the public key)), as ``keyIDFromPublicKey``.
- :class:`ServiceAccountAuthenticator` — ``jwt.go`` ``JWTTokenAuthenticator`` with the
  ``claims.go`` validator: a token not carrying one of our issuers is not ours (no opinion);
  otherwise the signature must verify with one of the keys, the issuer be known, the time
  window hold (60 s leeway, go-jose's ``DefaultLeeway``), the audiences meet the requested
  (or API) audiences, and the ServiceAccount — and the bound Pod, Secret or Node — still exist,
  not deleted, with the uid of the claim (read through ``getter``, the watch caches, and on a
  miss ``fetch``, etcd, as ``tokengetter.go`` falls back from the listers to a live Get).
  The user: ``system:serviceaccount:NS:NAME``, uid = the account's, groups
  ``system:serviceaccounts``, ``system:serviceaccounts:NS``, extra
  ``authentication.kubernetes.io/pod-name``, ``pod-uid``, ``node-name``, ``node-uid``,
  ``credential-id`` (``JTI=<jti>``).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from components.apiserver.auth import UserInfo
from controlplane import apitime

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: ``WarnOnlyBoundTokenExpirationSeconds``: the kubelet's projected tokens ask for 1 h 7 s
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
#: ``ExpirationExtensionSeconds``: such a token lives a year (warned about after 3607 s)
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60
#: go-jose's ``jwt.DefaultLeeway`` (seconds)
LEEWAY = 60
PRIVATE_CLAIM = "kubernetes.io"
SA_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

#: ``getter(plural, namespace, name)``: the live object (``serviceaccounts``, ``pods``,
#: ``secrets``, ``nodes``) or None
Getter = Callable[[str, str, str], "dict[str, Any] | None"]
#: ``fetch(plural, namespace, name)``: the stored object (read from etcd) or None
Fetcher = Callable[[str, str, str], Awaitable["dict[str, Any] | None"]]


class TokenError(Exception):
    """A token that is ours but does not authenticate; the text is Kubernetes' (shown in a
    TokenReview's ``status.error``, never in a 401)."""


def make_username(namespace: str, name: str) -> str:
    """``serviceaccount.MakeUsername``: ``system:serviceaccount:NS:NAME``."""
    return f"{SA_PREFIX}{namespace}:{name}"


def split_username(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: (namespace, name) of a service-account user name, or
    None for any other name (both parts non-empty, no further ``:``)."""
    if not username.startswith(SA_PREFIX):
        return None
    parts = username[len(SA_PREFIX):].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def group_names(namespace: str) -> tuple[str, str]:
    """``serviceaccount.MakeGroupNames``."""
    return ALL_SERVICE_ACCOUNTS, f"{ALL_SERVICE_ACCOUNTS}:{namespace}"


def _ref(obj: dict[str, Any]) -> dict[str, str]:
    md = obj.get("metadata") or {}
    return {"name": str(md.get("name") or ""), "uid": str(md.get("uid") or "")}


def claims(issuer: str, sa: dict[str, Any], audiences: Sequence[str], expiration_seconds: int, *,
           pod: dict[str, Any] | None = None, secret: dict[str, Any] | None = None,
           node: dict[str, Any] | None = None, warnafter: int = 0, now: float | None = None,
           jti: str | None = None) -> dict[str, Any]:
    """The claims of a token for ServiceAccount ``sa`` (``claims.go`` ``Claims``): times in
    whole Unix seconds, ``expiration_seconds`` from ``now``; ``warnafter`` seconds (0: none)."""
    t = int(now if now is not None else time.time())
    md = sa.get("metadata") or {}
    ns = str(md.get("namespace") or "")
    private: dict[str, Any] = {"namespace": ns, "serviceaccount": _ref(sa)}
    if pod is not None:
        private["pod"] = _ref(pod)
        if node is not None:
            private["node"] = _ref(node)
    elif secret is not None:
        private["secret"] = _ref(secret)
    elif node is not None:
        private["node"] = _ref(node)
    if warnafter:
        private["warnafter"] = t + warnafter
    return {"aud": list(audiences), "exp": t + expiration_seconds, "iat": t,
            "iss": issuer, PRIVATE_CLAIM: private, "jti": jti or str(uuid.uuid4()), "nbf": t,
            "sub": make_username(ns, str(md.get("name") or ""))}


# ---------------------------------------------------------------------- keys
PublicKey = Any
PrivateKey = Any


def key_id(public: PublicKey) -> str:
    """``keyIDFromPublicKey``: base64url (no padding) of SHA-256 of the PKIX DER public key."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _algorithm(key: Any) -> str:
    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        return {256: "ES256", 384: "ES384", 521: "ES512"}.get(key.curve.key_size, "ES256")
    return "RS256"


def _pem_blocks(data: bytes) -> list[bytes]:
    out, cur = [], []
    for line in data.splitlines(keepends=True):
        if line.startswith(b"-----BEGIN"):
            cur = [line]
        elif cur:
            cur.append(line)
            if line.startswith(b"-----END"):
                out.append(b"".join(cur))
                cur = []
    return out


def public_keys_from_pem(data: bytes, source: str = "") -> list[PublicKey]:
    """Every public key of a PEM file (``keyutil.PublicKeysFromFile``): PUBLIC KEY blocks,
    private keys (their public half) and certificates. Raises ValueError when none is found."""
    keys: list[PublicKey] = []
    for block in _pem_blocks(data):
        if b"CERTIFICATE" in block.split(b"\n", 1)[0]:
            keys.append(x509.load_pem_x509_certificate(block).public_key())
        elif b"PRIVATE KEY" in block.split(b"\n", 1)[0]:
            keys.append(serialization.load_pem_private_key(block, password=None).public_key())
        elif b"PUBLIC KEY" in block.split(b"\n", 1)[0]:
            keys.append(serialization.load_pem_public_key(block))
    keys = [k for k in keys if isinstance(k, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey))]
    if not keys:
        raise ValueError(f"data does not contain any valid RSA or ECDSA public keys{': ' + source if source else ''}")
    return keys


@functools.lru_cache(maxsize=4)
def _private_key(pem: bytes) -> Any:
    """A PEM private key, parsed (and for RSA checked, ~60 ms of CPU) once per process for the
    same bytes: the flags are checked at start-up, then the authenticator loads the same file."""
    return serialization.load_pem_private_key(pem, password=None)


@functools.lru_cache(maxsize=1)
def _ephemeral_key() -> rsa.RSAPrivateKey:
    """The in-memory key pair of this process (one per process: apiservers started in one
    test process share it)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclasses.dataclass
class KeySet:
    """The signing key and the verification keys; ``ephemeral``: generated in memory."""

    signing: PrivateKey
    verifying: list[PublicKey]
    ephemeral: bool = False

    @classmethod
    def load(cls, signing_key_file: str = "", key_files: Iterable[str] = ()) -> "KeySet":
        """From the flags' files; no signing key file: a new RSA 2048 key pair (also used to
        verify). Raises ValueError / OSError for an unreadable or key-less file."""
        verifying: list[PublicKey] = []
        for f in key_files:
            with open(f, "rb") as fh:
                verifying.extend(public_keys_from_pem(fh.read(), f))
        if signing_key_file:
            with open(signing_key_file, "rb") as fh:
                signing = _private_key(fh.read())
            if not isinstance(signing, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
                raise ValueError(f"{signing_key_file}: not an RSA or ECDSA private key")
            ephemeral = False
        else:
            signing, ephemeral = _ephemeral_key(), True
        if ephemeral or not verifying:
            verifying.append(signing.public_key())
        return cls(signing, verifying, ephemeral)


class TokenIssuer:
    """Signs claims into a compact JWT (``jwt.go`` ``JWTTokenGenerator``)."""

    def __init__(self, issuer: str, keys: KeySet) -> None:
        self.issuer = issuer
        self.keys = keys
        self._alg = _algorithm(keys.signing)
        self._kid = key_id(keys.signing.public_key())

    def generate(self, payload: dict[str, Any]) -> str:
        return jwt.encode(payload, self.keys.signing, algorithm=self._alg, headers={"kid": self._kid, "typ": None})


# ---------------------------------------------------------------------- verification
def _unverified_payload(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return payload if isinstance(payload, dict) else None


def _go_quote_list(values: Iterable[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _deleted_before(obj: dict[str, Any], limit: float) -> bool:
    t = apitime.time_or_none((obj.get("metadata") or {}).get("deletionTimestamp"))
    return t is not None and t < limit


#: tokens whose verified payload is remembered at most (cleared when full)
VERIFIED_CACHE_SIZE = 10_000


class ServiceAccountAuthenticator:
    """``JWTTokenAuthenticator(issuers, keys, apiAudiences, NewValidator(getter))``.

    :meth:`authenticate_token` → ``(user, audiences)``; None for a token that is not a JWT
    of one of ``issuers``; :class:`TokenError` for one that is but fails a check."""

    def __init__(self, issuers: Sequence[str], keys: Sequence[PublicKey], api_audiences: Sequence[str],
                 getter: Getter, clock: Callable[[], float] = time.time, fetch: Fetcher | None = None) -> None:
        self.issuers = tuple(issuers)
        self.keys = list(keys)
        self.api_audiences = tuple(api_audiences)
        self.getter = getter
        self.fetch = fetch
        self.clock = clock
        #: SHA-256 of a token whose signature verified → its payload: the signature is checked
        #: once per token (the expensive part), the claims and the live objects on every request,
        #: so an expired token or a deleted account is refused at once (kube-apiserver caches
        #: whole answers for 10 s instead: ``pkg/authentication/token/cache``)
        self._verified: dict[bytes, dict[str, Any]] = {}

    async def _get(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The informer's object, else a live read (``tokengetter.go``: lister, then client Get)."""
        obj = self.getter(plural, namespace, name)
        if obj is None and self.fetch is not None:
            obj = await self.fetch(plural, namespace, name)
        return obj

    async def authenticate_token(self, token: str, audiences: Sequence[str] | None = None
                           ) -> tuple[UserInfo, tuple[str, ...]] | None:
        unverified = _unverified_payload(token)
        if unverified is None or unverified.get("iss") not in self.issuers:
            return None  # hasCorrectIssuer: not one of ours
        digest = hashlib.sha256(token.encode()).digest()
        payload: dict[str, Any] | None = self._verified.get(digest)
        errors: list[str] = []
        for key in self.keys if payload is None else ():
            try:
                payload = jwt.decode(token, key, algorithms=["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"],
                                     options={"verify_signature": True, "verify_exp": False, "verify_nbf": False,
                                              "verify_iat": False, "verify_aud": False, "verify_iss": False})
                break
            except jwt.InvalidSignatureError:
                errors.append("go-jose/go-jose: error in cryptographic primitive")
            except jwt.PyJWTError as e:
                errors.append(str(e))
        if payload is None:
            if not errors:
                return None
            raise TokenError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        if digest not in self._verified:
            if len(self._verified) >= VERIFIED_CACHE_SIZE:
                self._verified.clear()
            self._verified[digest] = payload
        if payload.get("iss") not in self.issuers:
            raise TokenError(f"token issued by unexpected issuer: {payload.get('iss')}")
        aud = payload.get("aud")
        token_auds = tuple([aud] if isinstance(aud, str) else [str(a) for a in aud or ()])
        if not token_auds:
            token_auds = self.api_audiences  # a legacy token: the API audiences only
        requested = tuple(audiences) if audiences else self.api_audiences
        auds = tuple(a for a in token_auds if a in requested)
        if not auds and self.api_audiences:
            raise TokenError(f"token audiences {_go_quote_list(token_auds)} is invalid for the target audiences "
                             f"{_go_quote_list(requested)}")
        return await self._validate(payload), auds

    async def _validate(self, payload: dict[str, Any]) -> UserInfo:
        """``claims.go`` ``validator.Validate``."""
        now = self.clock()
        exp, nbf, iat = payload.get("exp"), payload.get("nbf"), payload.get("iat")
        if isinstance(exp, (int, float)) and now - LEEWAY > exp:
            raise TokenError("service account token has expired")
        if isinstance(nbf, (int, float)) and now + LEEWAY < nbf:
            raise TokenError("service account token is not valid yet")
        if isinstance(iat, (int, float)) and now + LEEWAY < iat:
            raise TokenError("service account token claims could not be validated due to unexpected validation "
                             "error")
        private = payload.get(PRIVATE_CLAIM)
        if not isinstance(private, dict):
            raise TokenError("service account token claims could not be validated due to unexpected private claim")
        ns = str(private.get("namespace") or "")
        saref = private.get("serviceaccount") or {}
        name = str(saref.get("name") or "")
        deleted_limit = now - LEEWAY
        sa = await self._get("serviceaccounts", ns, name)
        if sa is None:
            raise TokenError(f'serviceaccounts "{name}" not found')
        if _deleted_before(sa, deleted_limit):
            raise TokenError(f"service account {ns}/{name} has been deleted")
        sa_uid = str((sa.get("metadata") or {}).get("uid") or "")
        if sa_uid != str(saref.get("uid") or ""):
            raise TokenError(f"service account UID ({sa_uid}) does not match claim ({saref.get('uid') or ''})")
        node_bound = isinstance(private.get("node"), dict) and not isinstance(private.get("pod"), dict)
        for kind, plural in (("secret", "secrets"), ("pod", "pods"), ("node", "nodes")):
            ref = private.get(kind)
            if not isinstance(ref, dict) or (kind == "node" and not node_bound):
                continue  # a pod-bound token's node is only read out (ServiceAccountTokenPodNodeInfo)
            obj = await self._get(plural, "" if kind == "node" else ns, str(ref.get("name") or ""))
            if obj is None or _deleted_before(obj, deleted_limit):
                raise TokenError("service account token has been invalidated")
            uid = str((obj.get("metadata") or {}).get("uid") or "")
            if uid != str(ref.get("uid") or ""):
                raise TokenError(f"{kind} UID ({uid}) does not match service account {kind} ref claim "
                                 f"({ref.get('uid') or ''})")
        extra: dict[str, tuple[str, ...]] = {}
        pod = private.get("pod")
        if isinstance(pod, dict) and pod.get("name") and pod.get("uid"):
            extra[POD_NAME_KEY] = (str(pod["name"]),)
            extra[POD_UID_KEY] = (str(pod["uid"]),)
        if payload.get("jti"):
            extra[CREDENTIAL_ID_KEY] = (f"JTI={payload['jti']}",)
        node = private.get("node")
        if isinstance(node, dict) and node.get("name"):
            extra[NODE_NAME_KEY] = (str(node["name"]),)
            if node.get("uid"):
                extra[NODE_UID_KEY] = (str(node["uid"]),)
        return UserInfo(make_username(ns, name), sa_uid, group_names(ns), extra)
