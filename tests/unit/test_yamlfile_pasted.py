"""Text pasted from a web page: seed 000's manifests as the article has them (no-break spaces,
a full-width colon, a tab-only line) are named with line, column and fix, or fixed with a
warning; never a misleading kind error, never a traceback."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from controlplane import yamlfile

DATA = os.path.join(os.path.dirname(__file__), "data", "pasted")


@pytest.mark.parametrize("name,message", [
    pytest.param("myapp.yaml", "line 1, column 21: a no-break space (U+00A0) (43 in all), as pasted from a web "
                 "page; replace U+00A0 with a space", id="seed 000 Deployment: no-break spaces"),
    pytest.param("pod1.yaml", "line 18, column 20: a full-width colon (U+FF1A), as pasted from a web page; "
                 "delete U+FF1A (a ':' is already there)", id="pod1: the full-width colon on its own line"),
    pytest.param("pod3.yaml", "line 11, column 1: a tab in the indentation (U+0009), as pasted from a web page; "
                 "replace the tab with spaces", id="pod3: the tab-only last line"),
])
def test_seed_pasted_manifest_is_named_exactly(name, message):
    with pytest.raises(yamlfile.YAMLFileError) as e:
        yamlfile.load_file(os.path.join(DATA, name))
    assert message in str(e.value) and "\n" not in str(e.value)
    assert e.value.pasted


@pytest.mark.parametrize("name,kind,check", [
    pytest.param("myapp.yaml", "Deployment", lambda o: o["apiVersion"] == "apps/v1"
                 and o["spec"]["template"]["spec"]["nodeName"] == "node01", id="Deployment"),
    pytest.param("pod1.yaml", "Pod", lambda o: o["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0]
        == {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node02"]}, id="pod1"),
    pytest.param("pod3.yaml", "Pod", lambda o: o["metadata"]["labels"] == {"app": "myapp01"}, id="pod3"),
])
def test_fix_pasted_reads_what_the_article_meant_and_warns(name, kind, check):
    warnings: list[str] = []
    docs = yamlfile.load_file(os.path.join(DATA, name), fix=True, warn=warnings.append)
    assert len(docs) == 1 and docs[0]["kind"] == kind and check(docs[0])
    assert warnings and all(f"{os.path.join(DATA, name)}: line " in w and " fixed: " in w for w in warnings)


@pytest.mark.parametrize("text,fixed", [
    pytest.param("k\uff1av\n", {"k": "v"}, id="full-width colon as the separator"),
    pytest.param("k\uff1a v\n", {"k": "v"}, id="full-width colon before a space"),
    pytest.param("a:\n\u00a0 b: 1\n", {"a": {"b": 1}}, id="no-break space in the indentation"),
    pytest.param("a:\n\tb: 1\n", {"a": {"b": 1}}, id="tab indentation"),
    pytest.param("a: x\u200b\n", {"a": "x"}, id="zero-width space"),
    pytest.param("a:\u3000x\n", {"a": "x"}, id="ideographic space"),
])
def test_inline_pasted_characters(text, fixed):
    with pytest.raises(yamlfile.YAMLFileError, match=r"line \d+, column \d+: .* \(U\+[0-9A-F]{4}\)"):
        yamlfile.load_all(text)
    assert yamlfile.load_all(text, fix=True)[0] == fixed


@pytest.mark.parametrize("text,value", [
    pytest.param('a: "x\uff1ay"\n', {"a": "x\uff1ay"}, id="inside double quotes"),
    pytest.param("a: 'x\u00a0y'\n", {"a": "x\u00a0y"}, id="inside single quotes"),
    pytest.param("a: 1  # note\u00a0\n", {"a": 1}, id="in a comment"),
    pytest.param("a:\tb\n", {"a": "b"}, id="a tab after the colon is YAML"),
])
def test_lookalikes_inside_content_are_left_alone(text, value):
    assert yamlfile.load_all(text) == [value]


@pytest.mark.parametrize("extra,code,message", [
    pytest.param([], 1, "line 1, column 21: a no-break space (U+00A0)", id="named, exit 1"),
    pytest.param(["--fix-pasted", "--master", "http://127.0.0.1:9", "--timeout", "5",
                  "--request-timeout", "2s"], 1, "cannot reach the apiserver", id="fixed, then the cluster"),
])
def test_demo_on_pasted_manifest(extra, code, message):
    from controlplane.cli import demo
    result = CliRunner().invoke(demo.command, ["-f", os.path.join(DATA, "myapp.yaml"), "--no-color", *extra])
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output
    assert "is not a workload" not in result.output
    if "--fix-pasted" in extra:
        assert "warning: " in result.output and "U+00A0" in result.output
    else:
        assert "(or pass --fix-pasted)" in result.output
