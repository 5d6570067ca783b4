"""Patches (being filled in)."""
from __future__ import annotations
import copy


class PatchError(ValueError):
    """A patch that cannot be applied."""


def json_merge_patch(target, patch):
    """RFC 7386 merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = json_merge_patch(out.get(k), v)
    return out


def json_patch(target, ops: list):
    raise PatchError("json patch not implemented yet")


def strategic_merge_patch(target, patch, kind: str):
    return json_merge_patch(target, patch)
