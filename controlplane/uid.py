"""Random identifiers: the RFC 4122 version-4 UUIDs Kubernetes gives objects (``metadata.uid``)
and requests (the ``Audit-ID``), as ``k8s.io/apimachinery/pkg/util/uuid`` NewUUID
(``github.com/google/uuid`` NewRandom): 122 random bits, the version nibble 4 and the
RFC 4122 variant, written as 36 lowercase hex characters ``8-4-4-4-12``.

:func:`new` is ``str(uuid.uuid4())`` without the :class:`uuid.UUID` object (about half its
cost; every create and every request takes one)."""

from __future__ import annotations

import os


def new() -> str:
    """A fresh version-4 UUID string, e.g. ``'3b241101-e2bb-4255-8caf-4136c566a962'``."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # variant RFC 4122 (10xx)
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
