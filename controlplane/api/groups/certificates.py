"""``certificates.k8s.io/v1``: CertificateSigningRequest (Kubernetes v1.32).

Facts from ``pkg/apis/certificates/validation/validation.go``
(ValidateCertificateSigningRequestCreate / Update / StatusUpdate / ApprovalUpdate: the
request a PEM ``CERTIFICATE REQUEST``, signerName a qualified ``domain/path``, usages
required, known and unique, expirationSeconds at least 600, conditions of known types,
Approved and Denied exclusive), ``pkg/apis/certificates/v1/defaults.go`` (a condition's
status True), ``pkg/registry/certificates/certificates/strategy.go`` (PrepareForCreate:
an empty status and the requesting user in ``spec.username/uid/groups/extra``; the
``status`` subresource keeps the spec and the Approved/Denied conditions; the ``approval``
subresource changes only ``status.conditions``; condition timestamps populated) and
``pkg/printers/internalversion/printers.go`` (printCertificateSigningRequest).

Not done here: the request's signature is not checked (no X.509 library is used; the
PEM block and its DER framing are), and no signer issues certificates. The requesting user
is the one the apiserver's authentication found (:func:`set_csr_requestor`); a create that
does not say (none through the REST handlers) records ``system:anonymous`` in
``system:unauthenticated``, as kube-apiserver records an anonymous request.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from controlplane import apitime
from controlplane.api import listfields, validators
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import AGE_COL, NAME_COL, age, col, invalid_raw, name, objs, strs, sub
from controlplane.api.printers import human_duration
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "certificates.k8s.io"
ANONYMOUS_USER = "system:anonymous"
ANONYMOUS_GROUPS = ["system:unauthenticated"]

#: certificates.KeyUsage values (``staging/src/k8s.io/api/certificates/v1/types.go``)
KEY_USAGES = ["signing", "digital signature", "content commitment", "key encipherment", "key agreement",
              "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
              "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
              "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"]
CONDITION_TYPES = ("Approved", "Denied", "Failed")

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "CertificateSigningRequestSpec": ("A certificate request, its signer and the requesting user.", {
        "request": ("bytes", "A PEM-encoded PKCS#10 CERTIFICATE REQUEST. Required, immutable."),
        "signerName": ("string", "The signer asked to sign (e.g. kubernetes.io/kube-apiserver-client). Required."),
        "expirationSeconds": ("int32", "Requested validity of the certificate in seconds (at least 600)."),
        "usages": ("[]string", "Key usages requested (e.g. digital signature, key encipherment, client auth)."),
        "username": ("string", "The requesting user (set by the server)."),
        "uid": ("string", "UID of the requesting user (set by the server)."),
        "groups": ("[]string", "Groups of the requesting user (set by the server)."),
        "extra": ("object:v1.ExtraValue", "Extra attributes of the requesting user (set by the server)."),
    }),
    "CertificateSigningRequestStatus": ("Approval and the issued certificate.", {
        "conditions": ("[]CertificateSigningRequestCondition", "Approved, Denied and Failed conditions."),
        "certificate": ("bytes", "The issued certificate (PEM), set by the signer after approval."),
    }),
    "CertificateSigningRequestCondition": ("A condition of a certificate request.", {
        "type": ("string", "Approved, Denied or Failed (others allowed)."),
        "status": ("string", "True (default), False or Unknown; Approved/Denied/Failed must be True."),
        "reason": ("string", "Short CamelCase reason."),
        "message": ("string", "Human-readable detail."),
        "lastUpdateTime": ("Time", "When the condition was last updated."),
        "lastTransitionTime": ("Time", "When the status last changed."),
    }),
}

listfields.declare(
    {"CertificateSigningRequest": {"spec": "CertificateSigningRequestSpec",
                                   "status": "CertificateSigningRequestStatus"}},
    {"CertificateSigningRequestSpec": {"usages": listfields.ATOMIC, "groups": listfields.ATOMIC},
     "CertificateSigningRequestStatus": {"conditions": listfields.ListField("type", "", "map", ("type",))}})


def default_csr(obj: JSON) -> None:
    """SetDefaults_CertificateSigningRequestCondition: a condition's status True."""
    for c in objs(sub(obj, "status").get("conditions")):
        if not c.get("status"):
            c["status"] = "True"


def go_bytes(raw: bytes) -> str:
    """A ``[]byte`` as Go's ``%#v`` prints it: ``[]byte{0x2d, 0x2d}``."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in raw) + "}"


def csr_problem(raw: bytes) -> str | None:
    """ParseCSR's error for ``raw`` (None when it holds a CERTIFICATE REQUEST PEM block
    whose body is a DER SEQUENCE)."""
    text = raw.decode("latin-1")
    begin, end = "-----BEGIN CERTIFICATE REQUEST-----", "-----END CERTIFICATE REQUEST-----"
    start = text.find("-----BEGIN ")
    if start < 0 or not text[start:].startswith(begin) or end not in text:
        return "PEM block type must be CERTIFICATE REQUEST"
    body = text[start + len(begin):text.index(end)]
    try:
        der = base64.b64decode("".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        return "PEM block type must be CERTIFICATE REQUEST"
    if len(der) < 2 or der[0] != 0x30:
        return "asn1: structure error: the request is not a DER SEQUENCE"
    return None


def _validate_signer_name(v: str, path: str, errs: ErrorList) -> None:
    """ValidateSignerName: ``<domain>/<path>``, the domain an RFC 1123 subdomain."""
    parts = v.split("/", 1)
    if len(parts) != 2:
        errs.invalid(path, v, "must be a fully qualified domain and path of the form 'example.com/signer-name'")
        return
    domain, rest = parts
    for m in validators.is_dns1123_subdomain(domain):
        errs.invalid(path, v, "validating domain component: " + m)
    if not rest:
        errs.invalid(path, v, "validating path component: must not be empty")


def _validate_conditions(conds: list[JSON], errs: ErrorList) -> None:
    seen: set[str] = set()
    for i, c in enumerate(conds):
        cp = f"status.conditions[{i}]"
        t = str(c.get("type") or "")
        if not t:
            errs.required(f"{cp}.type", "")
        if t in seen:
            errs.duplicate(f"{cp}.type", t)
        seen.add(t)
        s = c.get("status")
        if not s:
            errs.required(f"{cp}.status", "")
        elif s not in ("True", "False", "Unknown"):
            errs.not_supported(f"{cp}.status", s, ["False", "True", "Unknown"])
        elif t in CONDITION_TYPES and s != "True":
            errs.not_supported(f"{cp}.status", s, ["True"])
    if "Approved" in seen and "Denied" in seen:
        errs.invalid("status.conditions", "Approved", "Approved and Denied conditions are mutually exclusive")


def validate_csr(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateCertificateSigningRequestCreate / Update: the request, signerName, usages,
    expirationSeconds and the conditions; the spec is immutable (kept by the strategy)."""
    spec = sub(obj, "spec")
    req = spec.get("request")
    raw = b""
    if isinstance(req, str):
        try:
            raw = base64.b64decode(req)
        except (binascii.Error, ValueError):
            raw = req.encode()
    problem = csr_problem(raw)
    if problem is not None:
        invalid_raw(errs, "spec.request", go_bytes(raw) if raw else "[]byte(nil)", problem)
    signer = str(spec.get("signerName") or "")
    if not signer:
        errs.required("spec.signerName", "")
    else:
        _validate_signer_name(signer, "spec.signerName", errs)
    usages = strs(spec.get("usages"))
    if not usages:
        errs.required("spec.usages", "")
    seen: set[str] = set()
    for i, u in enumerate(usages):
        if u not in KEY_USAGES:
            errs.not_supported(f"spec.usages[{i}]", u, KEY_USAGES)
        if u in seen:
            errs.duplicate(f"spec.usages[{i}]", u)
        seen.add(u)
    exp = spec.get("expirationSeconds")
    if isinstance(exp, int) and exp < 600:
        errs.invalid("spec.expirationSeconds", exp, "may not specify a duration less than 600 seconds (10 minutes)")
    _validate_conditions(objs(sub(obj, "status").get("conditions")), errs)


def _populate_timestamps(new: JSON, old: JSON) -> None:
    """populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime the
    old one when type and status are unchanged, else now."""
    now = apitime.now()
    olds = {c.get("type"): c for c in objs(sub(old, "status").get("conditions"))}
    for c in objs(sub(new, "status").get("conditions")):
        if not c.get("lastUpdateTime"):
            c["lastUpdateTime"] = now
        if not c.get("lastTransitionTime"):
            prev = olds.get(c.get("type"))
            same = prev is not None and prev.get("status") == c.get("status") and prev.get("lastTransitionTime")
            c["lastTransitionTime"] = prev["lastTransitionTime"] if same and prev is not None else now


def prepare_csr_create(obj: JSON) -> None:
    """PrepareForCreate: an empty status; the (anonymous) requesting user in the spec."""
    obj["status"] = {}
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec["username"] = ANONYMOUS_USER
        spec["groups"] = list(ANONYMOUS_GROUPS)
        spec.pop("uid", None)
        spec.pop("extra", None)


def set_csr_requestor(obj: JSON, user: JSON) -> None:
    """PrepareForCreate's user from the request (``pkg/registry/certificates/certificates/
    strategy.go``): ``spec.username``, ``uid``, ``groups`` and ``extra`` of the requesting user."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec["username"] = user.get("username") or ""
    for f in ("uid", "groups", "extra"):
        if user.get(f):
            spec[f] = copy.deepcopy(user[f])
        else:
            spec.pop(f, None)


def prepare_csr_update(new: JSON, old: JSON, subresource: str) -> None:
    """PrepareForUpdate of the main resource (spec kept), ``status`` (Approved/Denied kept
    from the stored object) and ``approval`` (only the conditions change)."""
    if "spec" in old:
        new["spec"] = copy.deepcopy(old["spec"])
    if subresource == "approval":
        conds = sub(new, "status").get("conditions")
        status = copy.deepcopy(old.get("status") or {})
        if conds:
            status["conditions"] = conds
        else:
            status.pop("conditions", None)
        new["status"] = status
    elif subresource == "status":
        olds = {c.get("type"): c for c in objs(sub(old, "status").get("conditions"))}
        kept: list[JSON] = []
        for c in objs(sub(new, "status").get("conditions")):
            if c.get("type") in ("Approved", "Denied"):
                if c.get("type") in olds:
                    kept.append(copy.deepcopy(olds[c.get("type")]))
                continue
            kept.append(c)
        for t in ("Approved", "Denied"):
            if t in olds and all(k.get("type") != t for k in kept):
                kept.append(copy.deepcopy(olds[t]))
        if isinstance(new.get("status"), dict):
            if kept:
                new["status"]["conditions"] = kept
            else:
                new["status"].pop("conditions", None)
    _populate_timestamps(new, old)


def condition_summary(obj: JSON) -> str:
    """The CONDITION cell: Denied / Approved / Pending, then ``,Failed`` and ``,Issued``."""
    types = {c.get("type") for c in objs(sub(obj, "status").get("conditions"))}
    out = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        out += ",Failed"
    if sub(obj, "status").get("certificate"):
        out += ",Issued"
    return out


def _csr_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    exp = spec.get("expirationSeconds")
    duration = human_duration(exp) if isinstance(exp, int) else "<none>"
    return [name(obj), age(obj, now), spec.get("signerName", ""), spec.get("username", ""), duration,
            condition_summary(obj)], None


CSR = Printer((
    NAME_COL, AGE_COL,
    col("SignerName", description=columndocs.doc("CertificateSigningRequestSpec.signerName")),
    col("Requestor", description=columndocs.doc("CertificateSigningRequestSpec.request")),
    col("RequestedDuration", description=columndocs.doc("CertificateSigningRequestSpec.expirationSeconds")),
    col("Condition", description=columndocs.doc("CertificateSigningRequestStatus.conditions")),
), _csr_row)

def signer_name(obj: JSON) -> str:
    """The ``spec.signerName`` field label (the CSR strategy's SelectableFields)."""
    return str(sub(obj, "spec").get("signerName") or "")


CSR_STRATEGY = Strategy(prepare_create=prepare_csr_create, prepare_update=prepare_csr_update,
                        set_requestor=set_csr_requestor)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "certificatesigningrequests", "certificatesigningrequest", "CertificateSigningRequest",
             False, ("csr",), ("status", "approval"),
             printer=CSR,
             schema=KindSchema("CertificateSigningRequest asks a signer for an X.509 certificate; approved "
                               "through the approval subresource (kubectl certificate approve).", {
                                   "spec": ("CertificateSigningRequestSpec", "The request. Immutable."),
                                   "status": ("CertificateSigningRequestStatus", "Approval conditions and the "
                                                                                 "issued certificate.")}, TYPES),
             validate=validate_csr, default=default_csr, selectable_fields={"spec.signerName": signer_name},
             strategy=CSR_STRATEGY),
)
