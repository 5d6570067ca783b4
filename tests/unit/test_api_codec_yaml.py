"""controlplane.api.codec.load_yaml: YAML as sigs.k8s.io/yaml hands it to the JSON decoder."""

from __future__ import annotations

import pytest

from controlplane.api.codec import YAML_MAX_DEPTH, load_yaml


def test_values_as_go_yaml_gives_them():
    assert load_yaml("a: 3.0\nb: 1.5\nc: 1e3\nd: yes\ne: null\nt: 2020-01-01T00:00:00Z\nq: '5'\n1: x\n") == {
        "a": 3, "b": 1.5, "c": 1000, "d": True, "e": None, "t": "2020-01-01T00:00:00Z", "q": "5", "1": "x"}


def test_first_document_only_and_merge_keys():
    assert load_yaml("--- a\n--- b\n") == "a"
    assert load_yaml("x: &a {q: 1}\ny:\n  <<: *a\n  r: 2\n") == {"x": {"q": 1}, "y": {"q": 1, "r": 2}}
    assert load_yaml("") is None


@pytest.mark.parametrize("text, message", [
    ("a: b: c\n", "yaml: line 1: mapping values are not allowed in this context"),
    ("[" * 20000, f"yaml: line 1: exceeded max depth of {YAML_MAX_DEPTH}"),
    ("a: *nope\n", "yaml: unknown anchor 'nope' referenced"),
    (b"\x00\x01", "yaml: unacceptable character #x0000: control characters are not allowed"),
    ("? [a]\n: b\n", 'yaml: invalid map key: ["a"]'),
], ids=["a mapping inside a value", "nested too deeply", "an unknown anchor", "a control character",
        "a list as a map key"])
def test_errors_are_one_line(text, message):
    with pytest.raises(ValueError) as e:
        load_yaml(text)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)
