"""One static page drawing a recorded flow as the dashboard's sequence diagram.

``controlplane trace -o html`` writes it: the dashboard's own ``static/seq.js`` and
``style.css`` inlined with the records (JSON) in one file, so the page opens from
disk or a CI artifact and draws exactly what the live page draws — lanes client,
apiserver, etcd, controller-manager, scheduler, kubelet; an arrow per hop (request,
watch event, response) numbered with seed 000's step — plus the records as a table.
"""

from __future__ import annotations

import html
import json
import os
from typing import Iterable

from controlplane.trace.record import STEPS, StepRecord

STATIC = os.path.join(os.path.dirname(__file__), "static")


def steps_js() -> str:
    """``window.CP_STEPS = {...};``: seed 000's step titles (:data:`STEPS`) for ``seq.js``."""
    return f"window.CP_STEPS = {json.dumps({str(n): t for n, t in STEPS.items()})};\n"


def _asset(name: str) -> str:
    with open(os.path.join(STATIC, name), encoding="utf-8") as f:
        return f.read()


def render_sequence_html(records: Iterable[StepRecord], title: str, t0: float) -> str:
    """The page (a ``<!doctype html>`` string) for ``records`` (any order), times
    relative to ``t0`` (epoch seconds); the records are inlined as JSON, ``</`` escaped."""
    recs = sorted(records, key=lambda r: r.time)
    data = json.dumps([r.to_dict() for r in recs]).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_asset("style.css")}
body {{ padding: 16px 24px; }} #seq {{ max-height: none; display: inline-block; }}
</style></head><body>
<h1 style="font-size:20px">{html.escape(title)}</h1>
<p class="muted">{len(recs)} step records. Lanes are the actors of seed 000; each arrow is one hop —
solid: a request, green: a watch event, dashed: a response — numbered with its step. Steps 3, 4, 7, 8,
10, 11 and 13 are recorded by the apiserver and drawn as its hop to or from etcd. Hover an arrow for its record.</p>
<ol id="steps"></ol>
<div id="seq"></div>
<table id="records"><thead><tr><th>step</th><th>time</th><th>component</th><th>action</th><th>object</th>
<th>rv</th><th>detail</th></tr></thead><tbody></tbody></table>
<script>{steps_js()}{_asset("seq.js")}</script>
<script>
(function () {{
  const records = {data};
  const t0 = {t0!r};
  const esc = CPSeq.esc;
  document.getElementById("seq").innerHTML = CPSeq.svg(records, t0);
  document.getElementById("steps").innerHTML = CPSeq.checklistHtml(records);
  document.querySelector("#records tbody").innerHTML = records.map(r =>
    `<tr><td>${{r.step}}</td><td>${{r.time >= t0 ? "+" + ((r.time - t0) * 1000).toFixed(1) + " ms" : "before"}}</td>` +
    `<td>${{esc(r.component)}}</td><td>${{esc(r.action)}}</td><td>${{esc((r.object.kind || "") + "/" + (r.object.name || ""))}}</td>` +
    `<td>${{esc(r.resourceVersion)}}</td><td class="muted">${{esc(r.detail)}}</td></tr>`).join("");
}})();
</script>
</body></html>
"""
