"""NodeAffinity's compiled matchers agree with the reference selector evaluation
(controlplane.selectors.node_selector_term_matches) on every operator."""

import itertools

import pytest

from components.scheduler.plugins.nodeaffinity import compile_required, compile_term
from controlplane.selectors import node_selector_term_matches

REQS = [
    {"key": "zone", "operator": "In", "values": ["a", "b"]},
    {"key": "zone", "operator": "NotIn", "values": ["a"]},
    {"key": "zone", "operator": "Exists"},
    {"key": "zone", "operator": "DoesNotExist"},
    {"key": "cpus", "operator": "Gt", "values": ["4"]},
    {"key": "cpus", "operator": "Lt", "values": ["4"]},
    {"key": "cpus", "operator": "Gt", "values": ["x"]},
]
FIELDS = [
    {"key": "metadata.name", "operator": "In", "values": ["n1"]},
    {"key": "metadata.name", "operator": "NotIn", "values": ["n1"]},
]
LABELS = [{}, {"zone": "a"}, {"zone": "c", "cpus": "8"}, {"cpus": "2"}, {"cpus": "abc"}]


@pytest.mark.parametrize("labels", LABELS, ids=["no labels", "zone a", "zone c and 8 cpus", "2 cpus",
                                                 "cpus not a number"])
@pytest.mark.parametrize("name", ["n1", "n2"])
def test_compiled_terms_match_reference(labels, name):
    terms = [{"matchExpressions": [r]} for r in REQS] + [{"matchFields": [f]} for f in FIELDS] + \
        [{"matchExpressions": [a, b]} for a, b in itertools.combinations(REQS, 2)] + [{}]
    for t in terms:
        want = node_selector_term_matches(t, labels, {"metadata.name": name})
        assert compile_term(t)(labels, name) == want, (t, labels, name)


def test_required_combines_node_selector_and_terms():
    m = compile_required({"disk": "ssd"}, [{"matchExpressions": [REQS[0]]}, {"matchFields": [FIELDS[0]]}])
    assert m({"disk": "ssd", "zone": "a"}, "n9")
    assert m({"disk": "ssd"}, "n1")
    assert not m({"disk": "ssd"}, "n2")
    assert not m({"zone": "a"}, "n1")
    assert compile_required({"disk": "ssd"}, None)({"disk": "ssd"}, "x")
    assert not compile_required({}, [])({}, "x")  # an empty term list matches nothing
