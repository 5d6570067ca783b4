"""A one-file HTML timeline of a flow: one swimlane per component, one marker
per step record at its time since submission, and the records as a table.

Self-contained (inline SVG and CSS, no script, nothing fetched), so it opens
from disk or a CI artifact. Hovering a marker shows the record (SVG ``title``).
"""

from __future__ import annotations

import html
from typing import Iterable

from controlplane.trace.record import STEPS, StepRecord

#: lane order, as the request travels (seed 000)
LANES = ("client", "apiserver", "etcd", "controller-manager", "scheduler", "kubelet")

#: steps the apiserver records on behalf of etcd's watch (drawn on the etcd lane)
ETCD_STEPS = {4, 8, 11}

COLORS = {"client": "#6b7280", "apiserver": "#2563eb", "etcd": "#0d9488",
          "controller-manager": "#9333ea", "scheduler": "#ea580c", "kubelet": "#16a34a"}


def lane_of(rec: StepRecord) -> str:
    """The swimlane a record is drawn on."""
    if rec.step == 2:
        return "client"
    if rec.component == "apiserver" and rec.step in ETCD_STEPS:
        return "etcd"
    return rec.component if rec.component in LANES else "client"


def render_html(records: Iterable[StepRecord], title: str, t0: float) -> str:
    """The page for ``records`` (any order), times relative to ``t0`` (epoch s)."""
    recs = sorted(records, key=lambda r: r.time)
    after = [r for r in recs if r.time >= t0]
    span = max((r.time - t0 for r in after), default=0.001) or 0.001
    width, left, lane_h, top = 1100, 150, 58, 30
    height = top + lane_h * len(LANES) + 30

    def x(t: float) -> float:
        return left + (width - left - 50) * (t - t0) / span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="system-ui, sans-serif" font-size="12">']
    for i, lane in enumerate(LANES):
        y = top + i * lane_h
        parts.append(f'<rect x="0" y="{y}" width="{width}" height="{lane_h}" '
                     f'fill="{"#f9fafb" if i % 2 else "#ffffff"}"/>')
        parts.append(f'<text x="8" y="{y + lane_h / 2 + 4}" fill="{COLORS[lane]}" '
                     f'font-weight="600">{lane}</text>')
    for k in range(6):
        t = span * k / 5
        xx = x(t0 + t)
        parts.append(f'<line x1="{xx:.1f}" y1="{top}" x2="{xx:.1f}" y2="{height - 24}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{xx:.1f}" y="{height - 8}" text-anchor="middle" fill="#6b7280">'
                     f'{t * 1000:.0f} ms</text>')
    last: dict[str, list[float]] = {}
    for r in after:
        lane = lane_of(r)
        i = LANES.index(lane)
        xx = x(r.time)
        # stagger markers that would overlap on the same lane (three rows)
        rows = last.setdefault(lane, [-99.0, -99.0, -99.0])
        row = next((k for k in range(3) if xx - rows[k] > 17), min(range(3), key=lambda k: rows[k]))
        rows[row] = xx
        y = top + i * lane_h + 12 + row * 17
        tip = html.escape(f"[{r.step}] {r.component}: {r.action} {r.object.get('kind', '')}/"
                          f"{r.object.get('name', '')} rv={r.resourceVersion} {r.detail}".strip())
        parts.append(f'<g><title>{tip}</title><circle cx="{xx:.1f}" cy="{y:.1f}" r="8" '
                     f'fill="{COLORS[lane]}"/><text x="{xx:.1f}" y="{y + 4:.1f}" text-anchor="middle" '
                     f'fill="#fff" font-size="9" font-weight="700">{r.step}</text></g>')
    parts.append("</svg>")
    table_rows = []
    for r in recs:
        dt = f"{(r.time - t0) * 1000:+.1f} ms" if r.time >= t0 else "before"
        table_rows.append(
            f"<tr><td class=n>{r.step}</td><td class=t>{dt}</td>"
            f"<td style='color:{COLORS[lane_of(r)]}'>{html.escape(r.component)}</td>"
            f"<td>{html.escape(r.action)}</td><td>{html.escape(r.object.get('kind', ''))}/"
            f"{html.escape(r.object.get('name', ''))}</td><td class=t>{html.escape(r.resourceVersion)}</td>"
            f"<td class=d>{html.escape(r.detail)}</td></tr>")
    legend = "".join(f"<li><b>{n}</b> {html.escape(t)}</li>" for n, t in STEPS.items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; color: #111827; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }} p.sub {{ color: #6b7280; margin: 0 0 16px; }}
table {{ border-collapse: collapse; font-size: 12px; margin-top: 16px; }}
td, th {{ border-bottom: 1px solid #e5e7eb; padding: 3px 8px; text-align: left; vertical-align: top; }}
td.n {{ font-weight: 700; text-align: right; }} td.t {{ font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.d {{ color: #6b7280; }} ol {{ columns: 2; font-size: 12px; color: #374151; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class=sub>{len(after)} step records after submission, over {span * 1000:.0f} ms; hover a marker for its
record. Step 1 (the components' list-watch) happened at start-up, before submission. Steps 2, 4, 8 and 11
are recorded by the apiserver and drawn on the lane of the actor: the client, and etcd's watch.</p>
{''.join(parts)}
<ol style="list-style:none;padding:0">{legend}</ol>
<table><tr><th>step</th><th>time</th><th>component</th><th>action</th><th>object</th><th>rv</th><th>detail</th></tr>
{''.join(table_rows)}</table>
</body></html>
"""
