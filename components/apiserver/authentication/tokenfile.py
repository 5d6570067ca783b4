"""``--token-auth-file``: static bearer tokens (``staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile``).

The file is CSV, one record per line: ``token,user,uid[,"group1,group2"]`` (Go's
``encoding/csv``: quoted fields, blank lines skipped; at least three columns, else the file is
refused with ``token file '<path>' must have at least 3 columns (token, user name, user uid),
found <n>``). A record with an empty token is skipped (logged); a repeated token keeps the last
record (logged). Wrapped audience-agnostic (``WrapAudienceAgnosticToken``): it answers with the
API audiences, or, when a review asks for audiences, with those among them (none → no opinion).
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Sequence

from components.apiserver.auth import UserInfo
from controlplane.log import event

log = logging.getLogger("apiserver.authn")


def parse(text: str, path: str = "") -> dict[str, UserInfo]:
    """Token → user of a token file's ``text``. Raises ValueError for a short record or bad CSV."""
    tokens: dict[str, UserInfo] = {}
    try:
        records = list(csv.reader(io.StringIO(text), strict=True))
    except csv.Error as e:
        raise ValueError(f"token file '{path}': {e}") from None
    n = 0
    for record in records:
        if not record:
            continue  # encoding/csv skips empty lines
        n += 1
        if len(record) < 3:
            raise ValueError(f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                             f"found {len(record)}")
        if not record[0]:
            event(log, "tokenfile.empty_token", logging.WARNING, path=path, record=n)
            continue
        if record[0] in tokens:
            event(log, "tokenfile.duplicate_token", logging.WARNING, path=path, record=n)
        groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
        tokens[record[0]] = UserInfo(record[1], record[2], groups)
    return tokens


class TokenFile:
    """Static tokens; :meth:`authenticate_token` → ``(user, audiences)`` or None."""

    def __init__(self, tokens: dict[str, UserInfo], api_audiences: Sequence[str] = ()) -> None:
        self.tokens = tokens
        self.api_audiences = tuple(api_audiences)

    @classmethod
    def from_file(cls, path: str, api_audiences: Sequence[str] = ()) -> "TokenFile":
        with open(path, encoding="utf-8") as f:
            return cls(parse(f.read(), path), api_audiences)

    async def authenticate_token(self, token: str, audiences: Sequence[str] | None = None
                           ) -> tuple[UserInfo, tuple[str, ...]] | None:
        user = self.tokens.get(token)
        if user is None:
            return None
        if not audiences:
            return user, self.api_audiences
        auds = tuple(a for a in audiences if a in self.api_audiences)
        return (user, auds) if auds else None
