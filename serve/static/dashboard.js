// The bkb dashboard: studies, and per study the history, parallel
// coordinates, slices, parameter importance, the GP along a parameter and
// the trials table, refreshed while the study runs. Charts: uPlot
// (vendored). window.bkb exposes the page's state to tests.
"use strict";

(function () {
  const bkb = (window.bkb = { ready: false, readyMs: null, renders: 0, complete: 0 });
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids) e.append(kid);
    return e;
  };

  // A token passed as #token=... is kept for this tab only.
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("bkb-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  const token = sessionStorage.getItem("bkb-token");

  async function api(path) {
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const r = await fetch(path, { headers, cache: "no-store" });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) {
      const e = new Error(body.error || r.status + " " + r.statusText);
      e.status = r.status;
      throw e;
    }
    return body;
  }

  function showError(e) {
    const p = $("#error");
    p.hidden = false;
    p.textContent = String(e.message || e);
    console.error(e);
  }

  const fmt = (v) => (v == null ? "" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)))) : String(v));
  const enc = encodeURIComponent;

  // ---- the list of studies ----
  async function showStudies() {
    $("#studies-view").hidden = false;
    $("#crumb").textContent = "studies";
    const draw = async () => {
      const { studies } = await api("/api/studies");
      const tb = $("#studies tbody");
      tb.replaceChildren();
      for (const s of studies) {
        const c = s.counts || {};
        const a = el("a", { href: "/?study=" + enc(s.name), text: s.name });
        const trials = (c.complete || 0) + (c.pending || 0) + (c.failed || 0) + (c.pruned || 0) + (c.waiting || 0);
        tb.append(el("tr", {}, el("td", {}, a), el("td", { text: s.direction || "" }), el("td", { text: s.policy || "" }),
          el("td", { text: trials }), el("td", { text: c.complete || 0 }), el("td", { text: c.pending || 0 }),
          el("td", { text: c.failed || 0 }), el("td", { text: s.budget || "-" }),
          el("td", { text: s.error ? s.error : s.best ? fmt(s.best.value) : "-" }),
          el("td", { text: s.created ? s.created.replace("T", " ").slice(0, 19) : "" })));
      }
      $("#no-studies").hidden = studies.length > 0;
      bkb.renders++;
    };
    await draw();
    markReady();
    setInterval(() => draw().catch(showError), 3000);
  }

  function markReady() {
    if (!bkb.ready) {
      bkb.ready = true;
      bkb.readyMs = performance.now();
    }
  }

  // ---- one study ----
  let study = null; // the summary
  let trials = []; // every trial
  let params = []; // the space's parameters
  const plots = {};
  const W = () => Math.max(600, Math.min(1100, document.body.clientWidth - 60));

  function completeTrials() {
    return trials.filter((t) => t.state === "complete" && t.value != null);
  }

  // numeric value of a parameter for plotting (a categorical: its index).
  function coord(p, v) {
    if (p.type === "categorical") return p.choices.findIndex((c) => String(c) === String(v));
    return v;
  }

  function better(a, b) {
    return study.direction === "maximize" ? a > b : a < b;
  }

  function drawSummary() {
    const c = study.counts || {};
    const s = $("#summary");
    s.replaceChildren();
    const item = (k, v) => s.append(el("span", {}, el("b", { text: k + ": " }), String(v)));
    item("direction", study.direction);
    item("policy", study.policy);
    item("complete", c.complete || 0);
    item("pending", c.pending || 0);
    item("failed", c.failed || 0);
    if (c.pruned) item("pruned", c.pruned);
    item("budget", study.budget || "none");
    if (study.best) item("best", fmt(study.best.value) + " (trial " + study.best.trial + ")");
    for (const a of study.attrs || []) item(a.key, JSON.stringify(a.value));
    bkb.complete = c.complete || 0;
  }

  function replot(key, container, opts, data) {
    if (plots[key]) plots[key].destroy();
    const box = typeof container === "string" ? $(container) : container;
    plots[key] = new uPlot(opts, data, box);
  }

  function drawHistory() {
    const done = completeTrials();
    const x = done.map((t) => t.trial);
    let y = done.map((t) => t.value);
    const log = $("#logy").checked;
    let note = "";
    if (log && y.length) {
      const lo = Math.min(...y);
      if (lo <= 0) {
        const hi = Math.max(...y);
        const eps = (hi - lo) * 1e-3 || 1e-12;
        y = y.map((v) => v - lo + eps);
        note = "log scale of value \u2212 min + " + eps.toPrecision(2) + " (some values are \u2264 0)";
      }
    }
    const best = [];
    let b = null;
    for (const v of y) {
      if (b === null || better(v, b)) b = v;
      best.push(b);
    }
    $("#log-note").textContent = note;
    replot("history", "#chart-history", {
      width: W(), height: 360,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [{ label: "trial" }, { label: log ? "value (log)" : "value" }],
      series: [{ label: "trial" },
        { label: "value", stroke: "#3b6fd8", paths: () => null, points: { show: true, size: 4, fill: "#3b6fd8" } },
        { label: "best so far", stroke: "#d83b3b", width: 2, paths: uPlot.paths.stepped({ align: 1 }) }],
    }, [x, y, best]);
    $("#chart-history").dataset.points = String(x.length);
  }

  function drawParallel() {
    const cv = $("#chart-parallel");
    cv.width = W();
    const ctx = cv.getContext("2d");
    const w = cv.width, h = cv.height, pad = 50, top = 30, bot = 40;
    ctx.clearRect(0, 0, w, h);
    const done = completeTrials();
    const axes = params.map((p) => ({ name: p.name, p }));
    axes.push({ name: "value", p: null });
    const n = axes.length;
    const xs = axes.map((_, i) => pad + (i * (w - 2 * pad)) / Math.max(1, n - 1));
    const ranges = axes.map((a) => {
      if (a.p && a.p.type === "categorical") return [0, Math.max(1, a.p.choices.length - 1), false];
      if (a.p) return [a.p.low, a.p.high, !!a.p.log];
      const vs = done.map((t) => t.value);
      return [Math.min(...vs), Math.max(...vs), false];
    });
    const ypos = (i, v) => {
      let [lo, hi, lg] = ranges[i];
      if (lg) { v = Math.log(v); lo = Math.log(lo); hi = Math.log(hi); }
      const u = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      return top + (1 - u) * (h - top - bot);
    };
    const vs = done.map((t) => t.value);
    const vlo = Math.min(...vs), vhi = Math.max(...vs);
    // Lines in 24 color buckets, one path each (fast at 10,000 trials),
    // worst first, so that the best lines are drawn on top.
    const buckets = Array.from({ length: 24 }, () => []);
    for (const t of done) {
      let q = vhi > vlo ? (t.value - vlo) / (vhi - vlo) : 0.5;
      if (study.direction !== "maximize") q = 1 - q; // q = 1: best
      buckets[Math.min(23, Math.floor(q * 24))].push(t);
    }
    ctx.lineWidth = 1;
    buckets.forEach((ts, b) => {
      if (!ts.length) return;
      const q = (b + 0.5) / 24;
      ctx.strokeStyle = `hsla(${220 - 200 * q}, 70%, ${65 - 30 * q}%, ${0.25 + 0.5 * q})`;
      ctx.beginPath();
      for (const t of ts) {
        axes.forEach((a, i) => {
          const v = a.p ? coord(a.p, t.params[a.name]) : t.value;
          const y = ypos(i, v);
          if (i === 0) ctx.moveTo(xs[i], y); else ctx.lineTo(xs[i], y);
        });
      }
      ctx.stroke();
    });
    ctx.fillStyle = "#1d2430";
    ctx.strokeStyle = "#1d2430";
    ctx.font = "12px system-ui, sans-serif";
    ctx.textAlign = "center";
    axes.forEach((a, i) => {
      ctx.beginPath(); ctx.moveTo(xs[i], top); ctx.lineTo(xs[i], h - bot); ctx.stroke();
      ctx.fillText(a.name, xs[i], h - bot + 18);
      const [lo, hi] = ranges[i];
      const lab = (v) => (a.p && a.p.type === "categorical" ? String(a.p.choices[v]) : fmt(v));
      ctx.fillText(lab(hi), xs[i], top - 8);
      ctx.fillText(lab(lo), xs[i], h - bot + 32);
    });
    cv.dataset.points = String(done.length);
  }

  function drawSlices() {
    const box = $("#chart-slices");
    const done = completeTrials();
    params.forEach((p, k) => {
      let div = box.children[k];
      if (!div) { div = el("div", { class: "slice" }); box.append(div); }
      const pts = done.map((t) => [coord(p, t.params[p.name]), t.value]).sort((a, b) => a[0] - b[0]);
      const axis = { label: p.name };
      if (p.type === "categorical") axis.values = (u, ticks) => ticks.map((v) => (Number.isInteger(v) ? String(p.choices[v] ?? "") : ""));
      const x = pts.map((q) => q[0]);
      replot("slice-" + k, div, {
        width: 360, height: 260,
        scales: { x: { time: false, distr: p.log ? 3 : 1, range: p.type === "categorical" ? [-0.5, p.choices.length - 0.5] : undefined } },
        axes: [axis, { label: "value" }],
        legend: { show: false },
        series: [{}, { stroke: "#3b6fd8", paths: () => null, points: { show: true, size: 4, fill: "#3b6fd8" } }],
      }, [x, pts.map((q) => q[1])]);
      div.dataset.points = String(pts.length);
      div.dataset.param = p.name;
    });
    box.dataset.points = String(done.length * params.length);
  }

  function drawImportance() {
    const box = $("#chart-importance");
    box.replaceChildren();
    const imp = study.importance;
    if (!imp) {
      box.append(el("p", { text: "No ARD fit yet (the GP's length scales are fitted after the initial design, for policies that fit them)." }));
      box.dataset.points = "0";
      return;
    }
    const names = Object.keys(imp).sort((a, b) => imp[b] - imp[a]);
    for (const n of names) {
      box.append(el("div", { class: "bar" }, el("span", { class: "name", text: n }),
        el("div", { class: "fill", style: `width:${(400 * imp[n]).toFixed(1)}px` }),
        el("span", { text: (100 * imp[n]).toFixed(1) + "%" })));
    }
    box.dataset.points = String(names.length);
  }

  const predict = (name) => api(`/api/studies/${enc(study.name)}/predict?param=${enc(name)}&points=80`);

  // drawGP draws the GP along the selected parameter; pending is a
  // request for it already under way.
  async function drawGP(pending) {
    const sel = $("#gp-param");
    const name = sel.value;
    const p = params.find((q) => q.name === name);
    if (!p || completeTrials().length === 0) return;
    const sl = await (pending || predict(name));
    const upper = sl.mean.map((m, i) => m + 2 * sl.sd[i]);
    const lower = sl.mean.map((m, i) => m - 2 * sl.sd[i]);
    const obs = completeTrials().map((t) => [coord(p, t.params[p.name]), t.value]).sort((a, b) => a[0] - b[0]);
    const data = uPlot.join([[sl.x, sl.mean, upper, lower], [obs.map((q) => q[0]), obs.map((q) => q[1])]]);
    const axis = { label: name };
    if (p.type === "categorical") axis.values = (u, ticks) => ticks.map((v) => (Number.isInteger(v) ? String(p.choices[v] ?? "") : ""));
    replot("gp", "#chart-gp", {
      width: W(), height: 360,
      scales: { x: { time: false, distr: p.log ? 3 : 1 } },
      axes: [axis, { label: "value" }],
      bands: [{ series: [2, 3], fill: "rgba(216,59,59,0.12)" }],
      series: [{ label: name },
        { label: "GP mean", stroke: "#d83b3b", width: 2, spanGaps: true, points: { show: p.type === "categorical" } },
        { label: "+2 sd", stroke: "rgba(216,59,59,0.4)", spanGaps: true, points: { show: false } },
        { label: "\u22122 sd", stroke: "rgba(216,59,59,0.4)", spanGaps: true, points: { show: false } },
        { label: "trials", stroke: "#3b6fd8", paths: () => null, points: { show: true, size: 3, fill: "#3b6fd8" } }],
    }, data);
    $("#chart-gp").dataset.points = String(sl.x.length);
    $("#chart-gp").dataset.observations = String(sl.observations);
  }

  // ---- the trials table ----
  const table = { sort: "trial", desc: false, page: 0, size: 100 };
  function drawTable() {
    const cols = ["trial", "state", "value", ...params.map((p) => p.name), "seconds", "time"];
    const head = $("#trials thead");
    head.replaceChildren(el("tr", {}, ...cols.map((c) => {
      const th = el("th", { text: c + (table.sort === c ? (table.desc ? " \u25be" : " \u25b4") : "") });
      th.onclick = () => { table.desc = table.sort === c ? !table.desc : false; table.sort = c; drawTable(); };
      return th;
    })));
    const val = (t, c) => (c === "trial" || c === "state" || c === "value" || c === "seconds" || c === "time" ? t[c] : t.params[c]);
    const f = $("#filter").value.trim().toLowerCase();
    let rows = trials;
    if (f) rows = rows.filter((t) => cols.some((c) => String(val(t, c) ?? "").toLowerCase().includes(f)));
    rows = rows.slice().sort((a, b) => {
      const x = val(a, table.sort), y = val(b, table.sort);
      const r = x == null ? 1 : y == null ? -1 : x < y ? -1 : x > y ? 1 : 0;
      return table.desc ? -r : r;
    });
    const pages = Math.max(1, Math.ceil(rows.length / table.size));
    table.page = Math.min(table.page, pages - 1);
    const tb = $("#trials tbody");
    tb.replaceChildren(...rows.slice(table.page * table.size, (table.page + 1) * table.size).map((t) =>
      el("tr", {}, ...cols.map((c) => {
        const v = val(t, c);
        const td = el("td", { text: c === "time" ? String(v || "").replace("T", " ").slice(0, 19) : fmt(v) });
        if (c === "state") td.className = "state-" + v;
        return td;
      }))));
    $("#table-count").textContent = `${rows.length} of ${trials.length} trials`;
    $("#page").textContent = `page ${table.page + 1} of ${pages}`;
    $("#trials").dataset.points = String(rows.length);
  }

  function drawAll() {
    drawSummary();
    drawHistory();
    drawParallel();
    drawSlices();
    drawImportance();
    drawTable();
    bkb.renders++;
  }

  async function showStudy(name) {
    $("#study-view").hidden = false;
    $("#crumb").textContent = name;
    document.title = name + " \u2013 bkb";
    study = await api(`/api/studies/${enc(name)}`);
    params = (study.space && study.space.params) || [];
    const sel = $("#gp-param");
    for (const p of params) sel.append(el("option", { value: p.name, text: p.name }));
    sel.onchange = () => drawGP().catch(showError);
    // The trials and the GP's slice are fetched at once.
    const gp = study.counts && study.counts.complete && params.length ? predict(params[0].name) : null;
    if (gp) gp.catch(() => {}); // reported by drawGP
    trials = (await api(`/api/studies/${enc(name)}/trials`)).trials;
    drawAll();
    await drawGP(gp).catch(showError);
    markReady();

    document.querySelectorAll("#tabs button").forEach((b) => {
      b.onclick = () => {
        document.querySelectorAll("#tabs button").forEach((x) => x.classList.toggle("on", x === b));
        document.querySelectorAll(".view").forEach((v) => (v.hidden = v.id !== "view-" + b.dataset.view));
      };
    });
    $("#logy").onchange = drawHistory;
    $("#filter").oninput = () => { table.page = 0; drawTable(); };
    $("#prev").onclick = () => { table.page = Math.max(0, table.page - 1); drawTable(); };
    $("#next").onclick = () => { table.page++; drawTable(); };

    // Refresh while the study runs: the summary's version changes with
    // every new or completed trial.
    let busy = false;
    setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        const s = await api(`/api/studies/${enc(name)}`);
        $("#status").textContent = "updated " + new Date().toLocaleTimeString();
        if (s.version !== study.version) {
          const doneBefore = (study.counts || {}).complete || 0;
          study = s;
          trials = (await api(`/api/studies/${enc(name)}/trials`)).trials;
          drawAll();
          if (((s.counts || {}).complete || 0) !== doneBefore) await drawGP();
        }
      } catch (e) {
        $("#status").textContent = "cannot reach the server: " + e.message;
      } finally {
        busy = false;
      }
    }, 1000);
  }

  const name = new URLSearchParams(location.search).get("study");
  (name ? showStudy(name) : showStudies()).catch(showError);
})();
