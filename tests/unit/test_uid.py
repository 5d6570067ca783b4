"""controlplane.uid: version-4 UUID strings as k8s.io/apimachinery's uuid.NewUUID."""

from __future__ import annotations

import re
import uuid

from controlplane import uid


def test_new_is_a_version_4_rfc_4122_uuid_in_canonical_form():
    for _ in range(200):
        s = uid.new()
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", s)
        u = uuid.UUID(s)
        assert (u.version, u.variant, str(u)) == (4, uuid.RFC_4122, s)


def test_new_differs_each_time():
    assert len({uid.new() for _ in range(1000)}) == 1000
