// The live dashboard: state from /api/stream (server-sent events), drawn as nodes, pods and
// the selected flow's sequence diagram (seq.js); a click on a pod shows its scheduler table.
(function () {
  "use strict";
  const S = {nodes: {}, pods: {}, events: {}, records: [], phases: {}, selected: null, flow: null};
  const $ = sel => document.querySelector(sel);
  const esc = CPSeq.esc;
  const podKey = p => p.namespace + "/" + p.name;

  function notePhase(p) {
    const h = S.phases[p.uid] || (S.phases[p.uid] = []);
    const ph = p.deleting ? "Terminating" : p.phase;
    if (!h.length || h[h.length - 1] !== ph) h.push(ph);
  }

  function apply(kind, op, o) {
    if (kind === "record") { S.records.push(o); return; }
    const store = kind === "node" ? S.nodes : kind === "pod" ? S.pods : S.events;
    const key = kind === "node" ? o.name : kind === "pod" ? podKey(o) : o.namespace + "/" + o.name;
    if (op === "DELETED") delete store[key]; else store[key] = o;
    if (kind === "pod" && op !== "DELETED") notePhase(o);
  }

  function renderNodes() {
    const pods = Object.values(S.pods);
    const html = Object.values(S.nodes).sort((a, b) => a.name.localeCompare(b.name)).map(n => {
      const labels = Object.entries(n.labels).filter(([k]) => !k.startsWith("beta.kubernetes.io/"))
        .map(([k, v]) => `<span class="chip">${esc(k)}=${esc(v)}</span>`).join("");
      const taints = n.taints.map(t => `<span class="chip taint">${esc(t.key)}${t.value ? "=" + esc(t.value) : ""}:${esc(t.effect)}</span>`).join("");
      const mine = pods.filter(p => p.node === n.name).map(p => podChip(p)).join("");
      return `<div class="node" data-node="${esc(n.name)}"><span class="name">${esc(n.name)}</span>` +
        `<span class="ready ${esc(n.ready)}">Ready=${esc(n.ready)}${n.unschedulable ? ", cordoned" : ""}</span>` +
        `<div>${labels}</div><div>${taints}</div><div class="pods">${mine || '<span class="muted">no pods</span>'}</div></div>`;
    }).join("");
    const pending = pods.filter(p => !p.node).map(p => podChip(p)).join("");
    $("#nodes").innerHTML = html + (pending ? `<div class="node"><span class="name">not scheduled</span><div class="pods">${pending}</div></div>` : "");
  }

  function podChip(p, text) {
    const ph = p.deleting ? "Terminating" : p.phase;
    const sel = S.selected === podKey(p) ? " selected" : "";
    const why = p.scheduled ? ": FailedScheduling: " + p.scheduled : "";
    return `<span class="pod ${esc(ph)}${sel}" data-pod="${esc(podKey(p))}" title="${esc(ph + why)}">${esc(text || p.name)}</span>`;
  }

  function renderPods() {
    const rows = Object.values(S.pods).sort((a, b) => podKey(a).localeCompare(podKey(b))).map(p =>
      `<tr data-pod="${esc(podKey(p))}"><td>${esc(p.namespace === "default" ? p.name : podKey(p))}</td><td>${esc(p.node || "-")}</td>` +
      `<td>${podChip(p, p.deleting ? "Terminating" : p.phase)}</td><td>${esc(p.ready)}</td>` +
      `<td class="muted">${esc((S.phases[p.uid] || []).join(" → "))}</td></tr>`).join("");
    $("#pods tbody").innerHTML = rows;
  }

  function renderFlow() {
    const fl = CPSeq.flows(S.records);
    const sel = $("#flow");
    const keys = fl.map(f => (f.root.kind || "?") + " " + (f.root.namespace || "default") + "/" + f.root.name + " @" + new Date(f.t0 * 1000).toLocaleTimeString());
    const cur = S.flow === null ? fl.length - 1 : S.flow;  // the newest flow unless an older one was picked
    if (sel.options.length !== keys.length) {
      sel.innerHTML = keys.map((k, i) => `<option value="${i}">${esc(k)}</option>`).join("");
    }
    if (cur >= 0) sel.value = String(cur);
    const f = fl[cur];
    if (!f) {
      $("#seq").innerHTML = '<p class="muted" style="padding:8px">No flow yet: create a Deployment or a Pod (controlplane demo).</p>';
      $("#steps").innerHTML = "";
      return;
    }
    // step 1 happened at start-up: the newest list-watch record per component and node
    const step1 = {};
    for (const r of S.records) if (r.step === 1 && r.time <= f.t0) step1[r.component + ((r.object || {}).name || "")] = r;
    const recs = Object.values(step1).concat(f.records);
    $("#seq").innerHTML = CPSeq.svg(recs, f.t0);
    $("#steps").innerHTML = CPSeq.checklistHtml(recs);
  }

  let pending = false;
  function render() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; renderNodes(); renderPods(); renderFlow(); });
  }

  async function showPod(key) {
    S.selected = key;
    render();
    const [ns, name] = key.split("/");
    const d = await (await fetch(`/api/explain?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(name)}`)).json();
    $("#detail").hidden = false;
    $("#detail-title").textContent = `Pod ${key}` + (d.pod ? ` on ${d.pod.node || "no node"} (${d.pod.phase})` : " (gone)");
    let h = "";
    if (d.table) {
      const t = d.table;
      h += `<div class="muted">${t.head.map(esc).join("<br>")}</div>`;
      if (t.header.length) {
        h += `<table class="explain"><thead><tr>${t.header.map(c => `<th>${esc(c)}</th>`).join("")}</tr></thead><tbody>` +
          t.rows.map(r => `<tr>${r.map((c, i) => `<td class="${c === "<= chosen" ? "chosen" : (i > 0 && c && c !== "passed" && c !== "-" && c !== "skip" && !/^\d/.test(c) && c !== "<= chosen") ? "fail" : ""}">${esc(c)}</td>`).join("")}</tr>`).join("") +
          `</tbody></table>`;
      }
      h += `<div class="muted">${t.notes.map(esc).join("<br>")}</div>`;
    } else if (d.bypassed) {
      h += `<p class="bypassed">${esc(d.bypassed)}</p>`;
    } else {
      h += `<p class="muted">No scheduling record for this pod yet.</p>`;
    }
    $("#explain").innerHTML = h;
    $("#events tbody").innerHTML = d.events.map(e =>
      `<tr><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(e.source)}</td><td>${esc(e.message)}</td></tr>`).join("");
  }

  document.addEventListener("click", ev => {
    const el = ev.target.closest("[data-pod]");
    if (el) showPod(el.getAttribute("data-pod"));
  });
  $("#flow").addEventListener("change", ev => {
    const i = +ev.target.value;
    S.flow = i === ev.target.options.length - 1 ? null : i;
    render();
  });

  function connect() {
    const es = new EventSource("/api/stream");
    es.addEventListener("state", ev => {
      const st = JSON.parse(ev.data);
      S.nodes = {}; S.pods = {}; S.events = {}; S.records = [];
      st.nodes.forEach(n => apply("node", "ADDED", n));
      st.pods.forEach(p => apply("pod", "ADDED", p));
      st.events.forEach(e => apply("event", "ADDED", e));
      S.records = st.records;
      $("#conn").textContent = "live"; $("#conn").className = "conn on";
      render();
    });
    es.addEventListener("change", ev => {
      const c = JSON.parse(ev.data);
      apply(c.kind, c.op, c.object);
      render();
      if (S.selected && c.kind !== "record" && c.kind !== "node" && (c.object.namespace + "/" + (c.kind === "pod" ? c.object.name : c.object.object)) === S.selected) {
        clearTimeout(S.refresh); S.refresh = setTimeout(() => showPod(S.selected), 300);
      }
    });
    es.onerror = () => { $("#conn").textContent = "reconnecting…"; $("#conn").className = "conn off"; };
  }
  connect();
})();
