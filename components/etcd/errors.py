"""etcd's client-facing errors: gRPC status code + the exact message etcd sends.

Source: etcd ``api/v3rpc/rpctypes/error.go`` (the ``ErrGRPC*`` table). Clients such as
etcdctl, aetcd and the Kubernetes apiserver match on these strings, so they are kept verbatim.
"""

from __future__ import annotations

import grpc


class EtcdError(Exception):
    """An error answered to the client as ``code`` with details ``message``."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _err(code: grpc.StatusCode, message: str) -> EtcdError:
    return EtcdError(code, message)


SC = grpc.StatusCode
EMPTY_KEY = _err(SC.INVALID_ARGUMENT, "etcdserver: key is not provided")
KEY_NOT_FOUND = _err(SC.INVALID_ARGUMENT, "etcdserver: key not found")
VALUE_PROVIDED = _err(SC.INVALID_ARGUMENT, "etcdserver: value is provided")
LEASE_PROVIDED = _err(SC.INVALID_ARGUMENT, "etcdserver: lease is provided")
TOO_MANY_OPS = _err(SC.INVALID_ARGUMENT, "etcdserver: too many operations in txn request")
DUPLICATE_KEY = _err(SC.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request")
COMPACTED = _err(SC.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted")
FUTURE_REV = _err(SC.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")
NO_SPACE = _err(SC.RESOURCE_EXHAUSTED, "etcdserver: mvcc: database space exceeded")
LEASE_NOT_FOUND = _err(SC.NOT_FOUND, "etcdserver: requested lease not found")
LEASE_EXIST = _err(SC.FAILED_PRECONDITION, "etcdserver: lease already exists")
LEASE_TTL_TOO_LARGE = _err(SC.OUT_OF_RANGE, "etcdserver: too large lease TTL")
REQUEST_TOO_LARGE = _err(SC.INVALID_ARGUMENT, "etcdserver: request is too large")
STOPPED = _err(SC.UNAVAILABLE, "etcdserver: server stopped")
