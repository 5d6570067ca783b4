"""Kubernetes ``Status`` errors, as ``staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go``.

Handlers raise :class:`APIError`; the middleware answers with its :meth:`APIError.body`
(``{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...}``) and code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from controlplane.api.validation import ErrorList, invalid_message


class APIError(Exception):
    """An error answered as a metav1.Status with HTTP ``code`` and ``reason``."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def body(self) -> dict[str, Any]:
        b: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": self.message, "reason": self.reason}
        if self.details:
            b["details"] = self.details
        b["code"] = self.code
        return b


def _qualified(resource: Any) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def _details(resource: Any, name: str) -> dict:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if resource.group:
        d["group"] = resource.group
    d["kind"] = resource.plural
    return d


def not_found(resource: Any, name: str) -> APIError:
    return APIError(404, "NotFound", f'{_qualified(resource)} "{name}" not found', _details(resource, name))


def already_exists(resource: Any, name: str) -> APIError:
    return APIError(409, "AlreadyExists", f'{_qualified(resource)} "{name}" already exists',
                    _details(resource, name))


def conflict(resource: Any, name: str, message: str) -> APIError:
    """409 Conflict; ``message`` is the full text (e.g. the "object has been modified" sentence)."""
    return APIError(409, "Conflict", message, _details(resource, name))


def conflict_modified(resource: Any, name: str) -> APIError:
    return conflict(resource, name, f'Operation cannot be fulfilled on {_qualified(resource)} "{name}": '
                                    "the object has been modified; please apply your changes to the "
                                    "latest version and try again")


def cause(reason: str, message: str, field: str | None = None) -> dict[str, Any]:
    """One metav1.StatusCause ``{"reason", "message"[, "field"]}`` (keys in the order of
    ``StatusCause`` in ``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go``) for a
    cause that is not a field error (``ResourceVersionTooLarge``, ``FieldManagerConflict``)
    or whose message is not one of field.ErrorList's constructors."""
    c: dict[str, Any] = {"reason": reason, "message": message}
    if field is not None:
        c["field"] = field
    return c


def error_list(causes: Iterable[dict[str, Any]] = ()) -> ErrorList:
    """A :class:`controlplane.api.validation.ErrorList` (field.ErrorList) holding ``causes``;
    every ``details.causes`` the apiserver answers is built as one."""
    errs = ErrorList()
    errs.extend(causes)
    return errs


def invalid_fields(kind: str, group: str, name: str, errs: ErrorList, message: str | None = None) -> APIError:
    """422 Invalid of ``kind`` ``name`` whose causes are the field errors ``errs``; the message
    defaults to ``<Kind>[.<group>] "<name>" is invalid: <errors>`` (``errors.NewInvalid``)."""
    if message is None:
        message = invalid_message(kind, name, list(errs))
    return invalid(kind, group, name, errs, message)


def invalid(kind: str, group: str, name: str, causes: list[dict], message: str) -> APIError:
    """422 Invalid with ``details.causes`` ([{reason, message, field}]); prefer
    :func:`invalid_fields` with an ErrorList."""
    d: dict[str, Any] = {"name": name}
    if group:
        d["group"] = group
    d["kind"] = kind
    d["causes"] = causes
    return APIError(422, "Invalid", message, d)


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def forbidden(resource: Any, name: str, message: str) -> APIError:
    q = _qualified(resource)
    return APIError(403, "Forbidden", f'{q} "{name}" is forbidden: {message}', _details(resource, name))


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> APIError:
    return APIError(405, "MethodNotAllowed", message)


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def gone(message: str) -> APIError:
    return APIError(410, "Gone", message)


def unsupported_media_type(ctype: str) -> APIError:
    return APIError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                                                 f"accepted media types include: application/json, "
                                                 f"application/yaml, application/vnd.kubernetes.protobuf "
                                                 f"(got {ctype!r})")


def too_large(message: str = "limit is 3145728") -> APIError:
    """413 ``Request entity too large: <message>`` (errors.NewRequestEntityTooLargeError); the
    default is the apiserver's 3 MiB body limit (handlers/rest.go limitedReadBody)."""
    return APIError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def not_found_path() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


def internal(message: str) -> APIError:
    return APIError(500, "InternalError", f"Internal error occurred: {message}")


def unavailable(message: str) -> APIError:
    return APIError(503, "ServiceUnavailable", message)


def timeout(message: str) -> APIError:
    return APIError(504, "Timeout", message)


def success(details: dict | None = None, code: int = 200) -> dict:
    """A ``status: Success`` Status body (bindings, deletecollection of nothing...)."""
    b: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        b["details"] = details
    b["code"] = code
    return b
