"""The DELETE handler's shortcut past the DeleteOptions decoder (``rest._plain_delete_options``):
every body it takes is one the Go decoder takes unchanged; every other body still goes
through the decoder (its messages, its pruning)."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as hs

from components.apiserver.rest import _plain_delete_options
from controlplane.api import decoder

_values = hs.one_of(hs.none(), hs.booleans(), hs.integers(-(2 ** 64), 2 ** 64), hs.floats(allow_nan=False),
                    hs.text(max_size=3), hs.lists(hs.text(max_size=2), max_size=2),
                    hs.dictionaries(hs.sampled_from(["uid", "resourceVersion", "x"]),
                                    hs.one_of(hs.text(max_size=2), hs.integers(), hs.none()), max_size=2))
_bodies = hs.dictionaries(hs.sampled_from(["kind", "apiVersion", "propagationPolicy", "preconditions",
                                           "gracePeriodSeconds", "orphanDependents", "dryRun", "unknown"]),
                          _values, max_size=5)


@settings(max_examples=400, deadline=None)
@given(_bodies)
def test_plain_bodies_decode_to_themselves(body):
    if not _plain_delete_options(body):
        return
    decoded = copy.deepcopy(body)
    assert decoder.decode("DeleteOptions", decoded) == []
    assert decoded == body


def test_what_the_garbage_collector_sends_is_plain():
    assert _plain_delete_options({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
                                  "preconditions": {"uid": "u", "resourceVersion": "12"}})
    assert _plain_delete_options({"gracePeriodSeconds": 0, "dryRun": ["All"], "orphanDependents": False})


def test_others_go_through_the_decoder():
    for body in ({"gracePeriodSeconds": "30"}, {"gracePeriodSeconds": True}, {"preconditions": {"uid": None}},
                 {"propagationPolicy": None}, {"extra": 1}, {"gracePeriodSeconds": 2 ** 63}, {"dryRun": "All"}):
        assert not _plain_delete_options(body), body
