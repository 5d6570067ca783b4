"""The live dashboard in headless Chromium (Playwright driving Debian's /usr/bin/chromium, no
browser download): during a demo it shows the nodes, a pod reaching Running and the 13 steps
of seed 000 drawn as a sequence diagram; a click on a pod shows its scheduler table and events.
``controlplane trace -o html`` draws the same diagram from a file. Screenshots are saved in
the test's tmp_path."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from controlplane.lifeline import child_kwargs
from tests.integration.conftest import ROOT, start_up, stop

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"BROWSER TEST SKIPPED: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="BROWSER TEST SKIPPED: playwright is not installed")


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("dash"))
    proc, out, data_dir = start_up(tmp)
    url = re.search(r"dashboard: (http://127\.0\.0\.1:\d+/)", out.wait_for("dashboard: ", 30)).group(1)
    yield url, os.path.join(data_dir, "kubeconfig")
    stop(proc)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def test_dashboard_during_a_demo(up, browser, tmp_path):
    url, kubeconfig = up
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#conn.on", timeout=20_000)
    page.wait_for_selector('.node[data-node="node01"]', timeout=20_000)
    page.wait_for_selector('.node[data-node="node02"]', timeout=20_000)
    assert "kubernetes.io/hostname=node01" in page.inner_text('.node[data-node="node01"]')
    page.screenshot(path=str(tmp_path / "dashboard-before.png"))

    demo = subprocess.Popen([sys.executable, "-m", "controlplane", "demo", "--no-color", "--kubeconfig", kubeconfig],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        # three replicas of seed 000's myapp1 Running on node01 (nodeSelector kgc: a)
        page.wait_for_function("document.querySelectorAll('.node[data-node=\"node01\"] .pod.Running').length >= 3",
                               timeout=90_000)
        page.wait_for_function("document.querySelectorAll('#steps li.seen').length === 13", timeout=60_000)
        out, _ = demo.communicate(timeout=120)
    finally:
        if demo.poll() is None:
            demo.kill()
    assert demo.returncode == 0, out[-3000:]
    assert "kgc=a" in page.inner_text('.node[data-node="node01"]')
    assert page.locator("#flow option").last.inner_text().startswith("Deployment default/myapp1")
    steps = {int(s) for s in page.eval_on_selector_all("#seq g.hop", "els => els.map(e => e.dataset.step)")}
    assert steps == set(range(1, 14))
    lanes = page.eval_on_selector_all("#seq svg > text", "els => els.map(e => e.textContent)")
    assert lanes == ["client", "apiserver", "etcd", "controller-manager", "scheduler", "kubelet"]
    # the phases each pod went through, as the watch delivered them
    assert re.search(r"myapp1-\S+\s+node01\s+Running\s+1/1", page.inner_text("#pods"))
    page.screenshot(path=str(tmp_path / "dashboard-flow.png"))

    page.locator('.node[data-node="node01"] .pod.Running').first.click()
    page.wait_for_selector("#explain table.explain", timeout=20_000)
    table = page.inner_text("#explain")
    assert "NodeAffinity" in table and "<= chosen" in table
    assert "node(s) didn't match Pod's node affinity/selector" in table
    page.wait_for_function("document.querySelector('#events tbody').innerText.includes('Scheduled')",
                           timeout=20_000)
    page.screenshot(path=str(tmp_path / "dashboard.png"))
    if os.environ.get("CP_UPDATE_DOCS_SCREENSHOT"):
        page.screenshot(path=os.path.join(ROOT, "docs", "dashboard.png"))
    assert not errors, errors


def test_trace_html_draws_the_same_sequence_diagram(up, browser, tmp_path):
    url, kubeconfig = up
    p = subprocess.run([sys.executable, "-m", "controlplane", "trace", "--kubeconfig", kubeconfig, "--kind",
                        "Deployment", "--name", "myapp1", "-o", "html"], capture_output=True, text=True, timeout=60,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    f = tmp_path / "flow.html"
    f.write_text(p.stdout)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"file://{f}")
    steps = {int(s) for s in page.eval_on_selector_all("#seq g.hop", "els => els.map(e => e.dataset.step)")}
    assert set(range(2, 14)) <= steps
    # one table row per record; a record is one hop or two (a write to etcd and the answer to its client)
    rows, hops = page.locator("#records tbody tr").count(), page.locator("#seq g.hop").count()
    assert rows >= 13 and rows <= hops <= 2 * rows
    page.screenshot(path=str(tmp_path / "trace-html.png"), full_page=True)


@pytest.mark.parametrize("records,skipped", [
    pytest.param([(2, "apiserver", "received POST pods from kubectl/v1.32", ""), (3, "apiserver", "stored", ""),
                  (8, "apiserver", "etcd watch event: pod ADDED", ""), (9, "scheduler", "picked node01", "")],
                 {4: "not in a bare Pod's flow", 5: "not in a bare Pod's flow", 6: "not in a bare Pod's flow",
                  7: "not in a bare Pod's flow"}, id="bare Pod: no 4-7"),
    pytest.param([(2, "apiserver", "received POST pods from kubectl/v1.32", ""), (3, "apiserver", "stored", ""),
                  (8, "apiserver", "etcd watch event: pod ADDED", "spec.nodeName=node01 already set: steps 9-11 "
                   "skipped"), (12, "kubelet", "pod bound to node01 received on watch", "")],
                 {4: "no controller", 5: "no controller", 6: "no controller", 7: "no controller",
                  9: "scheduler is bypassed", 10: "scheduler is bypassed", 11: "scheduler is bypassed"},
                 id="bare Pod with nodeName: no 4-7, no 9-11"),
])
def test_sequence_page_says_which_steps_a_flow_has_not(browser, tmp_path, records, skipped):
    from controlplane.dashboard.sequence import render_sequence_html
    from controlplane.trace.record import make_record
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}
    recs = [make_record(n, comp, action, pod, detail=detail) for n, comp, action, detail in records]
    f = tmp_path / "p.html"
    f.write_text(render_sequence_html(recs, "p", recs[0].time))
    page = browser.new_page()
    page.goto(f"file://{f}")
    items = {int(li.get_attribute("value")): (li.get_attribute("class"), li.inner_text())
             for li in page.locator("#steps li").all()}
    assert {n for n, (cls, _) in items.items() if cls == "skipped"} == set(skipped)
    for n, text in skipped.items():
        assert text in items[n][1]
    assert page.locator("#seq g.hop").count() == len(recs) + sum(1 for r in recs if r.step in (3, 9))


def test_dashboard_command_serves_any_running_cluster(up):
    import json
    import urllib.request

    from tests.integration.conftest import LineReader
    _, kubeconfig = up
    proc = subprocess.Popen([sys.executable, "-m", "controlplane", "dashboard", "--kubeconfig", kubeconfig,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                            start_new_session=True, **child_kwargs())
    try:
        line = LineReader(proc, proc.stdout).wait_for("dashboard: http://127.0.0.1:", 30)
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line).group(1)
        with urllib.request.urlopen(url + "api/state", timeout=10) as r:
            state = json.load(r)
        assert {n["name"] for n in state["nodes"]} >= {"node01", "node02"}
        with urllib.request.urlopen(url, timeout=10) as r:
            assert b"/static/seq.js" in r.read()
    finally:
        stop(proc)
