"""Request options: ``resourceVersionMatch`` and ``sendInitialEvents`` validation, and the
request deadline (``?timeout=``).

The rules and messages of ``ValidateListOptions`` / ``validateWatchOptions``
(``staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go``,
WatchList enabled); a violation is 422 Invalid on ``ListOptions.meta.k8s.io`` with one
cause per error, as ``handlers/get.go`` answers it. ``too_large_resource_version`` is
``NewTooLargeResourceVersionError`` (``apimachinery/pkg/api/errors``): 504 Timeout,
retry after 1 s. :func:`request_timeout` is ``WithRequestDeadline``'s parseTimeout
(``staging/src/k8s.io/apiserver/pkg/endpoints/filters/request_deadline.go``).
"""

from __future__ import annotations

from typing import Mapping

from components.apiserver import status as st
from controlplane import apitime

#: request_deadline.go's invalidTimeoutInURL
INVALID_TIMEOUT_IN_URL = "invalid timeout specified in the request URL"

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def _flag(v: str | None) -> bool | None:
    if v is None:
        return None
    return v.lower() in ("1", "true", "t", "yes")


def parse(query: Mapping[str, str], watch: bool) -> tuple[str, bool | None]:
    """(resourceVersionMatch, sendInitialEvents or None) of a list/watch query; raises 422."""
    match = query.get("resourceVersionMatch", "")
    send_initial = _flag(query.get("sendInitialEvents"))
    rv = query.get("resourceVersion", "")
    cont = query.get("continue", "")
    errs = st.error_list()
    forbidden = errs.forbidden

    def unsupported(field: str, value: str, supported: list[str]) -> None:
        # the value as sent, unescaped (ErrorList.not_supported would quote it as Go's %q)
        vals = ", ".join(f'"{s}"' for s in supported)
        errs.append(st.cause("FieldValueNotSupported", f'Unsupported value: "{value}": supported values: {vals}',
                             field))

    if watch:
        if send_initial is not None and match != NOT_OLDER_THAN:
            forbidden("resourceVersionMatch", f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}")
        if match:
            if send_initial is None:
                forbidden("resourceVersionMatch",
                          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
            if match != NOT_OLDER_THAN:
                unsupported("resourceVersionMatch", match, [NOT_OLDER_THAN])
            if cont:
                forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
    else:
        if match:
            if not rv:
                forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
            if cont:
                forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
            if match not in (EXACT, NOT_OLDER_THAN):
                unsupported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""])
            if match == EXACT and rv == "0":
                forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        if send_initial is not None:
            forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
    if errs:
        texts = [f"{e['field']}: {e['message']}" for e in errs]
        joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        raise st.invalid_fields("ListOptions", "meta.k8s.io", "", errs, f'ListOptions.meta.k8s.io "" is invalid: {joined}')
    return match, send_initial


def too_large_resource_version(requested: int, current: int) -> st.APIError:
    """504 "Too large resource version: N, current: M" (the cache did not reach N in time)."""
    return st.APIError(504, "Timeout", f"Too large resource version: {requested}, current: {current}",
                       {"causes": st.error_list([st.cause("ResourceVersionTooLarge", "Too large resource version")]),
                        "retryAfterSeconds": 1})


def request_timeout(value: str | None, maximum: float) -> float:
    """Seconds a non-long-running request may take: ``?timeout=`` as a Go duration
    (``30s``, ``1m30s``, ``500ms``) when it is positive and below ``maximum`` (the server's
    request timeout), else ``maximum`` (unset, ``0`` and negative mean "no timeout of the
    client's own"). A value ``time.ParseDuration`` rejects is 400 BadRequest
    ``invalid timeout specified in the request URL - time: invalid duration "x"``."""
    if not value:
        return maximum
    try:
        t = apitime.parse_duration(value)
    except apitime.DurationError as e:
        raise st.bad_request(f"{INVALID_TIMEOUT_IN_URL} - {e}") from None
    return t if 0 < t < maximum else maximum
