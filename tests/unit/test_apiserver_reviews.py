"""The requesting user of a review (no authenticator yet: anonymous, or impersonated)."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from components.apiserver import reviews


@pytest.mark.parametrize("headers, expect", [
    ([], {"username": "system:anonymous", "groups": ["system:unauthenticated"], "uid": "", "extra": {}}),
    ([("Impersonate-User", "alice")],
     {"username": "alice", "groups": ["system:authenticated"], "uid": "", "extra": {}}),
    ([("Impersonate-User", "bob"), ("Impersonate-Group", "a"), ("Impersonate-Group", "b"),
      ("Impersonate-Uid", "7"), ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit")],
     {"username": "bob", "groups": ["a", "b", "system:authenticated"], "uid": "7",
      "extra": {"scopes": ["view", "edit"]}}),
    ([("Impersonate-User", "system:anonymous")],
     {"username": "system:anonymous", "groups": ["system:unauthenticated"], "uid": "", "extra": {}}),
    ([("Impersonate-User", "carol"), ("Impersonate-Extra-acme.com%2Fproject", "x")],
     {"username": "carol", "groups": ["system:authenticated"], "uid": "", "extra": {"acme.com/project": ["x"]}}),
], ids=["anonymous", "user", "groups-uid-extra", "impersonating-anonymous", "escaped-extra-key"])
def test_request_user(headers, expect):
    h = CIMultiDict(headers)
    assert reviews.request_user(h, h.getall) == expect
