// The 13-step flow (seed 000) as a sequence diagram: one lifeline per actor, one arrow
// per hop (request, watch event, response), numbered as seed 000 numbers the steps.
// Used by the live dashboard (app.js) and by the static page of `controlplane trace -o html`.
// No dependencies; exports window.CPSeq.
(function () {
  "use strict";
  const LANES = ["client", "apiserver", "etcd", "controller-manager", "scheduler", "kubelet"];
  // step number -> title: controlplane.trace.record.STEPS, which the page loads first
  // (/steps.js on the dashboard, inlined in a trace page)
  const STEPS = window.CP_STEPS || {};
  const COLORS = {"client": "#6b7280", "apiserver": "#2563eb", "etcd": "#0d9488",
    "controller-manager": "#9333ea", "scheduler": "#ea580c", "kubelet": "#16a34a"};

  function obj(r) {
    const o = r.object || {};
    return o.name ? (o.kind || "?") + "/" + o.name : "";
  }

  // The hops one record stands for: [{from, to, type: request|watch|response|note, label}].
  function hops(r) {
    const c = r.component, a = r.action || "", o = obj(r);
    switch (r.step) {
      case 1: return [{from: LANES.includes(c) ? c : "client", to: "apiserver", type: "request", label: "LIST + WATCH"}];
      case 2: return [{from: "client", to: "apiserver", type: "request", label: a.replace(/^received /, "") + " " + o}];
      case 3: return [{from: "apiserver", to: "etcd", type: "request", label: "txn create-if-absent " + o},
                      {from: "apiserver", to: "client", type: "response", label: "201 Created"}];
      case 4: return [{from: "etcd", to: "apiserver", type: "watch", label: "watch ADDED " + o}];
      case 5: return [{from: "apiserver", to: "controller-manager", type: "watch", label: a.replace(/ received on watch$/, "") + " " + o}];
      case 6: return [{from: "controller-manager", to: "apiserver", type: "request", label: "POST: " + a.replace(/^[a-z-]+ controller /, "")}];
      case 7: return [{from: "apiserver", to: "etcd", type: "request", label: "write " + o},
                      {from: "apiserver", to: "controller-manager", type: "response", label: "201 Created"}];
      case 8: return [{from: "etcd", to: "apiserver", type: "watch", label: "watch ADDED " + o}];
      case 9: return [{from: "apiserver", to: "scheduler", type: "watch", label: "unbound " + o},
                      {from: "scheduler", to: "scheduler", type: "note", label: a}];
      case 10:
        if (c === "scheduler") return [{from: "scheduler", to: "apiserver", type: "request", label: a}];
        return [{from: "apiserver", to: "etcd", type: "request", label: a.replace(/^Binding stored: /, "write ") + " " + o},
                {from: "apiserver", to: "scheduler", type: "response", label: "201 Created"}];
      case 11: return [{from: "etcd", to: "apiserver", type: "watch", label: "watch MODIFIED " + o + " (bound)"}];
      case 12:
        if (/received on watch/.test(a)) return [{from: "apiserver", to: "kubelet", type: "watch", label: "MODIFIED " + o + " (spec.nodeName)"}];
        if (/^status update sent/.test(a)) return [{from: "kubelet", to: "apiserver", type: "request", label: "PATCH pods/status: " + a.replace(/^status update sent: /, "")}];
        return [{from: "kubelet", to: "kubelet", type: "note", label: a}];
      case 13: return [{from: "apiserver", to: "etcd", type: "request", label: "write status " + o},
                       {from: "apiserver", to: "kubelet", type: "response", label: "200 OK"}];
    }
    return [{from: LANES.includes(c) ? c : "client", to: LANES.includes(c) ? c : "client", type: "note", label: a}];
  }

  // Group records into flows: a client create (steps 2/3) starts one; a record joins the flow
  // holding its object's uid or one of its owners' uids (Deployment -> ReplicaSet -> Pods).
  function flows(records) {
    const out = [];
    const byUid = {};
    const sorted = records.slice().sort((a, b) => a.time - b.time);
    for (const r of sorted) {
      if (r.step === 1) continue;
      const uid = (r.object || {}).uid || "";
      let f = byUid[uid];
      if (!f) for (const o of r.owners || []) { if (byUid[o]) { f = byUid[o]; break; } }
      if (!f && (r.step === 2 || r.step === 3)) {
        f = {root: r.object, t0: r.time, records: [], uids: new Set()};
        out.push(f);
      }
      if (!f) continue;
      if (uid && !f.uids.has(uid)) { f.uids.add(uid); byUid[uid] = f; }
      f.records.push(r);
    }
    return out;
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  }

  // An SVG string: lifelines and one row per hop of `records` (time order), times from t0.
  function svg(records, t0, opts) {
    opts = opts || {};
    const laneW = opts.laneWidth || 170, left = 60, top = 46, rowH = 24;
    const rows = [];
    for (const r of records.slice().sort((a, b) => a.time - b.time)) {
      for (const h of hops(r)) rows.push({r, h});
    }
    const width = left + laneW * LANES.length + 10;
    const height = top + rows.length * rowH + 20;
    const x = lane => left + laneW * LANES.indexOf(lane) + laneW / 2;
    const p = [`<svg xmlns="http://www.w3.org/2000/svg" class="seq" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
      `<defs>` + ["request", "watch", "response"].map(t =>
        `<marker id="arr-${t}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
        `<path d="M0,0 L10,5 L0,10 z" fill="${t === "watch" ? "#0d9488" : t === "response" ? "#9ca3af" : "#374151"}"/></marker>`).join("") + `</defs>`];
    for (const lane of LANES) {
      const xx = x(lane);
      p.push(`<rect x="${xx - laneW / 2 + 8}" y="6" width="${laneW - 16}" height="24" rx="5" fill="${COLORS[lane]}"/>`);
      p.push(`<text x="${xx}" y="22" text-anchor="middle" fill="#fff" font-weight="600" font-size="12">${lane}</text>`);
      p.push(`<line x1="${xx}" y1="30" x2="${xx}" y2="${height - 6}" stroke="#d1d5db" stroke-dasharray="4 3"/>`);
    }
    rows.forEach(({r, h}, i) => {
      const y = top + i * rowH + rowH / 2;
      const x1 = x(h.from), x2 = x(h.to);
      const dt = (r.time - t0) * 1000;
      const when = r.time >= t0 ? `+${dt.toFixed(0)}ms` : "before";
      const tip = esc(`[${r.step}] ${r.component}: ${r.action} ${obj(r)} rv=${r.resourceVersion || ""} ${r.detail || ""}`);
      p.push(`<g class="hop step-${r.step} ${h.type}" data-step="${r.step}"><title>${tip}</title>`);
      p.push(`<text x="8" y="${y + 4}" fill="#9ca3af" font-size="10">${when}</text>`);
      if (h.type === "note") {
        // a note: what happens inside the actor (filter and score, start containers)
        const w = 2 * laneW - 20, bx = Math.min(x1 - laneW / 2 + 4, width - w - 4);
        p.push(`<rect x="${bx}" y="${y - 9}" width="${w}" height="18" rx="3" fill="#fff7ed" stroke="${COLORS[h.from]}"/>`);
        p.push(`<circle cx="${bx + 10}" cy="${y}" r="8" fill="${COLORS[h.from]}"/>`);
        p.push(`<text x="${bx + 10}" y="${y + 3.5}" text-anchor="middle" fill="#fff" font-size="9" font-weight="700">${r.step}</text>`);
        p.push(`<text x="${bx + 22}" y="${y + 4}" fill="#111827">${esc(trim(h.label, w / 5.8 - 4))}</text>`);
      } else {
        const color = h.type === "watch" ? "#0d9488" : h.type === "response" ? "#9ca3af" : "#374151";
        const dash = h.type === "response" ? ' stroke-dasharray="5 3"' : h.type === "watch" ? ' stroke-dasharray="1 0"' : "";
        p.push(`<line x1="${x1}" y1="${y}" x2="${x2}" y2="${y}" stroke="${color}" stroke-width="${h.type === "watch" ? 2 : 1.4}"${dash} marker-end="url(#arr-${h.type})"/>`);
        const mid = (x1 + x2) / 2 + (x2 > x1 ? 5 : -5);
        const span = Math.abs(x2 - x1) - 20;
        p.push(`<text x="${mid}" y="${y - 4}" text-anchor="middle" fill="#111827">${esc(trim(h.label, Math.max(14, span / 5.8)))}</text>`);
        p.push(`<circle cx="${x1}" cy="${y}" r="8" fill="${COLORS[h.from]}"/>`);
        p.push(`<text x="${x1}" y="${y + 3.5}" text-anchor="middle" fill="#fff" font-size="9" font-weight="700">${r.step}</text>`);
      }
      p.push(`</g>`);
    });
    p.push("</svg>");
    return p.join("");
  }

  function trim(s, n) {
    n = Math.floor(n);
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  // The steps 1..13: whether each was seen in `records`, or why it is not part of this flow
  // (a bare Pod has no controller: no 4-7, its etcd event is step 8; a pod created with
  // spec.nodeName is never the scheduler's: no 9-11).
  function checklist(records) {
    const seen = new Set(records.map(r => r.step));
    const root = (records.find(r => r.step === 2 || r.step === 3) || {}).object || {};
    const pinned = !seen.has(9) && records.some(r => r.step === 8 && /already set/.test(r.detail || ""));
    return Object.keys(STEPS).map(k => {
      const n = +k;
      let skipped = "";
      if (!seen.has(n) && root.kind === "Pod" && n >= 4 && n <= 7) skipped = "not in a bare Pod's flow: no controller";
      if (!seen.has(n) && pinned && n >= 9 && n <= 11) skipped = "spec.nodeName is set: the scheduler is bypassed";
      return {step: n, title: STEPS[k], seen: seen.has(n), skipped};
    });
  }

  // The checklist as <li> items (class seen / skipped / unseen).
  function checklistHtml(records) {
    return checklist(records).map(s =>
      `<li value="${s.step}" class="${s.seen ? "seen" : s.skipped ? "skipped" : "unseen"}" data-step="${s.step}">` +
      `${esc(s.title)}${s.seen ? " ✓" : s.skipped ? ` — ${esc(s.skipped)}` : ""}</li>`).join("");
  }

  window.CPSeq = {LANES, STEPS, COLORS, hops, flows, svg, checklist, checklistHtml, esc};
})();
