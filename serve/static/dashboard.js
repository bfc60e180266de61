// The bkb dashboard: studies, and per study the history, the Pareto front
// (several objectives), learning curves, parallel coordinates, slices, a
// contour of two parameters, the EDF of the values, parameter importance,
// the GP along a parameter and the trials table, refreshed while the study
// runs. Charts: uPlot (vendored) and a small canvas chart (canvasFrame).
// window.bkb exposes the page's state to tests.
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
        tb.append(el("tr", {}, el("td", {}, a), el("td", { text: (s.directions && s.directions.length ? s.directions : [s.direction || ""]).join(", ") }), el("td", { text: s.policy || "" }),
          el("td", { text: trials }), el("td", { text: c.complete || 0 }), el("td", { text: c.pending || 0 }),
          el("td", { text: c.failed || 0 }), el("td", { text: c.pruned || 0 }), el("td", { text: s.budget || "-" }),
          el("td", { text: s.error ? s.error : s.directions && s.directions.length > 1 ? (s.pareto_front ? "front of " + s.pareto_front.length : "-") : s.best ? fmt(s.best.value) : "-" }),
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
  let obj = 0; // the objective shown (several objectives)
  const plots = {};
  const W = () => Math.max(600, Math.min(1100, document.body.clientWidth - 60));

  const directions = () => (study.directions && study.directions.length ? study.directions : [study.direction || "minimize"]);
  const multi = () => directions().length > 1;

  // value returns the shown objective's value of a complete trial.
  function value(t) {
    if (t.values && t.values.length > obj) return t.values[obj];
    return obj === 0 ? t.value : null;
  }

  function completeTrials() {
    return trials.filter((t) => t.state === "complete" && value(t) != null);
  }

  // numeric value of a parameter for plotting (a categorical: its index).
  function coord(p, v) {
    if (p.type === "categorical") return p.choices.findIndex((c) => String(c) === String(v));
    return v;
  }

  function better(a, b) {
    return directions()[obj] === "maximize" ? a > b : a < b;
  }

  function drawSummary() {
    const c = study.counts || {};
    const s = $("#summary");
    s.replaceChildren();
    const item = (k, v) => s.append(el("span", {}, el("b", { text: k + ": " }), String(v)));
    if (multi()) {
      item("directions", directions().join(", "));
      item("Pareto front", study.pareto_front ? study.pareto_front.length + " trials" : "none yet");
      if (study.hypervolume != null) item("hypervolume", fmt(study.hypervolume));
    } else {
      item("direction", study.direction);
    }
    if (study.constraints) {
      const done = trials.filter((t) => t.state === "complete");
      item("constraints", study.constraints + " (" + done.filter((t) => !t.infeasible).length + " of " + done.length + " complete trials feasible)");
    }
    item("policy", study.policy);
    item("complete", c.complete || 0);
    item("pending", c.pending || 0);
    item("failed", c.failed || 0);
    if (c.pruned) item("pruned", c.pruned);
    item("budget", study.budget || "none");
    if (study.best && !multi()) item("best", fmt(study.best.value) + " (trial " + study.best.trial + ")");
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
    let y = done.map(value);
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
    // The best so far among the feasible trials (a constrained study).
    const best = [];
    let b = null;
    y.forEach((v, k) => {
      if (!done[k].infeasible && (b === null || better(v, b))) b = v;
      best.push(b);
    });
    $("#log-note").textContent = note;
    replot("history", "#chart-history", {
      width: W(), height: 360,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [{ label: "trial" }, { label: (multi() ? "objective " + (obj + 1) : "value") + (log ? " (log)" : "") }],
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
    axes.push({ name: multi() ? "objective " + (obj + 1) : "value", p: null });
    const n = axes.length;
    const xs = axes.map((_, i) => pad + (i * (w - 2 * pad)) / Math.max(1, n - 1));
    const ranges = axes.map((a) => {
      if (a.p && a.p.type === "categorical") return [0, Math.max(1, a.p.choices.length - 1), false];
      if (a.p) return [a.p.low, a.p.high, !!a.p.log];
      const vs = done.map(value);
      return [Math.min(...vs), Math.max(...vs), false];
    });
    const ypos = (i, v) => {
      let [lo, hi, lg] = ranges[i];
      if (lg) { v = Math.log(v); lo = Math.log(lo); hi = Math.log(hi); }
      const u = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      return top + (1 - u) * (h - top - bot);
    };
    const vs = done.map(value);
    const vlo = Math.min(...vs), vhi = Math.max(...vs);
    // Lines in 24 color buckets, one path each (fast at 10,000 trials),
    // worst first, so that the best lines are drawn on top.
    const buckets = Array.from({ length: 24 }, () => []);
    for (const t of done) {
      let q = vhi > vlo ? (value(t) - vlo) / (vhi - vlo) : 0.5;
      if (directions()[obj] !== "maximize") q = 1 - q; // q = 1: best
      buckets[Math.min(23, Math.floor(q * 24))].push(t);
    }
    ctx.lineWidth = 1;
    buckets.forEach((ts, b) => {
      if (!ts.length) return;
      const q = (b + 0.5) / 24;
      ctx.strokeStyle = `hsla(${220 - 200 * q}, 70%, ${65 - 30 * q}%, ${0.25 + 0.5 * q})`;
      ctx.beginPath();
      for (const t of ts) {
        // A parameter a trial does not have (a conditional space) is a
        // gap in its line.
        let pen = false;
        axes.forEach((a, i) => {
          if (a.p && !(a.name in t.params)) { pen = false; return; }
          const v = a.p ? coord(a.p, t.params[a.name]) : value(t);
          const y = ypos(i, v);
          if (pen) ctx.lineTo(xs[i], y); else ctx.moveTo(xs[i], y);
          pen = true;
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
      const pts = done.filter((t) => p.name in t.params).map((t) => [coord(p, t.params[p.name]), value(t)]).sort((a, b) => a[0] - b[0]);
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
    const obs = completeTrials().filter((t) => p.name in t.params).map((t) => [coord(p, t.params[p.name]), t.value]).sort((a, b) => a[0] - b[0]);
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

  // columns returns the table's columns: label, the cell's value and its
  // class; the values of several objectives, constraints, intermediate
  // steps, errors and user attributes where the study has them.
  function columns() {
    const cols = [{ label: "trial", get: (t) => t.trial }, { label: "state", get: (t) => t.state, cls: (t) => "state-" + t.state }];
    if (multi()) {
      directions().forEach((d, k) => cols.push({ label: "objective " + (k + 1) + " (" + d.replace("imize", "") + ")",
        get: (t) => (t.values && t.values.length > k ? t.values[k] : null), cls: (t) => (t.infeasible ? "infeasible" : "") }));
    } else {
      cols.push({ label: "value", get: (t) => t.value, cls: (t) => (t.infeasible ? "infeasible" : "") });
    }
    if (study.constraints) {
      cols.push({ label: "feasible", get: (t) => (t.state !== "complete" ? null : t.infeasible ? "no" : "yes") });
      cols.push({ label: "constraints", get: (t) => (t.constraints ? t.constraints.map(fmt).join(", ") : null) });
    }
    if (trials.some((t) => t.error)) cols.push({ label: "error", get: (t) => t.error || null, cls: () => "error" });
    for (const p of params) cols.push({ label: p.name, get: (t) => t.params[p.name] });
    if (trials.some((t) => t.intermediate)) {
      cols.push({ label: "steps", get: (t) => (t.intermediate ? Object.keys(t.intermediate).length : null) });
    }
    const keys = new Set();
    for (const t of trials) for (const k of Object.keys(t.attrs || {})) keys.add(k);
    for (const k of [...keys].sort()) {
      cols.push({ label: "attr: " + k, get: (t) => (t.attrs && k in t.attrs ? (typeof t.attrs[k] === "object" ? JSON.stringify(t.attrs[k]) : t.attrs[k]) : null) });
    }
    cols.push({ label: "seconds", get: (t) => t.seconds });
    cols.push({ label: "time", get: (t) => String(t.time || "").replace("T", " ").slice(0, 19) });
    return cols;
  }

  function drawTable() {
    const cols = columns();
    if (!cols.some((c) => c.label === table.sort)) table.sort = "trial";
    const head = $("#trials thead");
    head.replaceChildren(el("tr", {}, ...cols.map((c) => {
      const th = el("th", { text: c.label + (table.sort === c.label ? (table.desc ? " \u25be" : " \u25b4") : "") });
      th.onclick = () => { table.desc = table.sort === c.label ? !table.desc : false; table.sort = c.label; drawTable(); };
      if (c.label === "error") th.className = "left";
      return th;
    })));
    const f = $("#filter").value.trim().toLowerCase();
    let rows = trials;
    if (f) rows = rows.filter((t) => cols.some((c) => String(c.get(t) ?? "").toLowerCase().includes(f)));
    const sc = cols.find((c) => c.label === table.sort);
    rows = rows.slice().sort((a, b) => {
      const x = sc.get(a), y = sc.get(b);
      const r = x == null ? 1 : y == null ? -1 : x < y ? -1 : x > y ? 1 : 0;
      return table.desc ? -r : r;
    });
    const pages = Math.max(1, Math.ceil(rows.length / table.size));
    table.page = Math.min(table.page, pages - 1);
    const tb = $("#trials tbody");
    tb.replaceChildren(...rows.slice(table.page * table.size, (table.page + 1) * table.size).map((t) =>
      el("tr", {}, ...cols.map((c) => {
        const v = c.get(t);
        const td = el("td", { text: fmt(v) });
        const cls = c.cls && c.cls(t);
        if (cls) td.className = cls;
        if (c.label === "error" && v) td.title = v;
        return td;
      }))));
    $("#table-count").textContent = `${rows.length} of ${trials.length} trials`;
    $("#page").textContent = `page ${table.page + 1} of ${pages}`;
    $("#trials").dataset.points = String(rows.length);
    $("#trials").dataset.errors = String(rows.filter((t) => t.error).length);
  }

  // ---- a small canvas chart (the views uPlot does not draw: scatters
  // of several kinds of points, many curves, heatmaps) ----

  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const r = raw / mag;
    const step = (r >= 7.5 ? 10 : r >= 3.5 ? 5 : r >= 1.5 ? 2 : 1) * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }

  // axisScale maps values of an axis {min, max, log, choices, pad} to [0, 1]
  // and gives its ticks and their labels.
  function axisScale(a) {
    if (a.choices) {
      const k = a.choices.length;
      return { u: (v) => (v + 0.5) / k, ticks: a.choices.map((_, i) => i), label: (i) => String(a.choices[i]) };
    }
    let lo = a.min, hi = a.max;
    if (a.log && lo > 0 && hi > 0) {
      const l = Math.log10(lo), h = Math.log10(hi);
      const ticks = [];
      for (let e = Math.ceil(l - 1e-9); e <= h + 1e-9; e++) ticks.push(Math.pow(10, e));
      const span = h > l ? h - l : 1;
      return { u: (v) => (Math.log10(v) - l) / span, ticks: ticks.length >= 2 ? ticks : [lo, hi], label: fmt };
    }
    if (!(hi > lo)) { lo -= 0.5; hi += 0.5; }
    if (a.pad) { const m = 0.05 * (hi - lo); lo -= m; hi += m; }
    return { u: (v) => (v - lo) / (hi - lo), ticks: niceTicks(lo, hi, 6), label: fmt };
  }

  // canvasFrame clears the canvas, draws the axes, grid and labels, and
  // returns the context and the maps from values to pixels.
  function canvasFrame(cv, o) {
    cv.width = o.width;
    cv.height = o.height;
    const ctx = cv.getContext("2d");
    const L = 72, R = o.right || 20, T = 16, B = 48, w = cv.width, h = cv.height;
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, w, h);
    const sx = axisScale(o.x), sy = axisScale(o.y);
    const px = (v) => L + sx.u(v) * (w - L - R);
    const py = (v) => h - B - sy.u(v) * (h - T - B);
    ctx.font = "11px system-ui, sans-serif";
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#e3e6ea";
    ctx.fillStyle = "#1d2430";
    ctx.textAlign = "center";
    for (const t of sx.ticks) {
      const x = px(t);
      if (x < L - 1 || x > w - R + 1) continue;
      ctx.beginPath(); ctx.moveTo(x, T); ctx.lineTo(x, h - B); ctx.stroke();
      ctx.fillText(sx.label(t), x, h - B + 14);
    }
    ctx.textAlign = "right";
    for (const t of sy.ticks) {
      const y = py(t);
      if (y < T - 1 || y > h - B + 1) continue;
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(w - R, y); ctx.stroke();
      ctx.fillText(sy.label(t), L - 6, y + 4);
    }
    ctx.strokeStyle = "#8a8f96";
    ctx.strokeRect(L, T, w - L - R, h - T - B);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.fillText(o.x.label || "", L + (w - L - R) / 2, h - 12);
    ctx.save();
    ctx.translate(16, T + (h - T - B) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(o.y.label || "", 0, 0);
    ctx.restore();
    return { ctx, px, py, L, R, T, B, w, h };
  }

  const range = (vs) => ({ min: Math.min(...vs), max: Math.max(...vs) });

  function emptyCanvas(cv, msg) {
    cv.width = W();
    cv.height = 80;
    const ctx = cv.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, cv.width, cv.height);
    ctx.fillStyle = "#5b6470";
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillText(msg, 12, 30);
  }

  // ---- the Pareto front ----
  function drawPareto() {
    const cv = $("#chart-pareto");
    const ds = directions();
    if (ds.length < 2) return;
    const i = Number($("#pareto-x").value || 0), j = Number($("#pareto-y").value || 1);
    const done = trials.filter((t) => t.state === "complete" && t.values && t.values.length === ds.length);
    cv.dataset.points = String(done.length);
    if (!done.length) {
      cv.dataset.front = "0";
      emptyCanvas(cv, "No complete trial yet.");
      return;
    }
    const name = (k) => "objective " + (k + 1) + " (" + ds[k] + ")";
    const g = canvasFrame(cv, { width: W(), height: 460, x: { ...range(done.map((t) => t.values[i])), pad: true, label: name(i) },
      y: { ...range(done.map((t) => t.values[j])), pad: true, label: name(j) } });
    const { ctx, px, py } = g;
    const front = new Set(study.pareto_front || []);
    const dot = (t, fill, stroke, r) => {
      ctx.beginPath();
      ctx.arc(px(t.values[i]), py(t.values[j]), r, 0, 2 * Math.PI);
      if (fill) { ctx.fillStyle = fill; ctx.fill(); }
      if (stroke) { ctx.strokeStyle = stroke; ctx.lineWidth = 1.5; ctx.stroke(); }
    };
    const onFront = done.filter((t) => front.has(t.trial));
    if (ds.length === 2 && onFront.length > 1) {
      // The boundary of the region the front dominates: from the best x
      // to the worst, across then up or down to the next point.
      const pts = onFront.map((t) => [t.values[i], t.values[j]]).sort((a, b) => (ds[i] === "maximize" ? b[0] - a[0] : a[0] - b[0]));
      ctx.strokeStyle = "rgba(216,59,59,0.7)";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(px(pts[0][0]), py(pts[0][1]));
      for (let k = 1; k < pts.length; k++) {
        ctx.lineTo(px(pts[k][0]), py(pts[k - 1][1]));
        ctx.lineTo(px(pts[k][0]), py(pts[k][1]));
      }
      ctx.stroke();
    }
    for (const t of done) if (t.infeasible) dot(t, null, "#9aa0a6", 3.5);
    for (const t of done) if (!t.infeasible && !front.has(t.trial)) dot(t, "rgba(59,111,216,0.75)", null, 3.5);
    for (const t of onFront) dot(t, "#d83b3b", "#7a1010", 4.5);
    cv.dataset.front = String(onFront.length);
    cv.dataset.infeasible = String(done.filter((t) => t.infeasible).length);
  }

  // ---- learning curves ----
  function drawCurves() {
    const cv = $("#chart-curves");
    const curves = trials.filter((t) => t.intermediate && Object.keys(t.intermediate).length)
      .map((t) => ({ t, pts: Object.entries(t.intermediate).map(([s, v]) => [Number(s), v]).sort((a, b) => a[0] - b[0]) }));
    cv.dataset.points = String(curves.length);
    cv.dataset.pruned = String(curves.filter((c) => c.t.state === "pruned").length);
    if (!curves.length) {
      emptyCanvas(cv, "No intermediate values: trials report them with trial.report(step, value) (Python), Trial.Report (Go), bkb report, or a plugin's step lines.");
      return;
    }
    const log = $("#curves-logy").checked;
    const all = curves.flatMap((c) => c.pts);
    const ys = all.map((p) => p[1]);
    const useLog = log && Math.min(...ys) > 0;
    const g = canvasFrame(cv, { width: W(), height: 460, x: { ...range(all.map((p) => p[0])), pad: true, label: "step" },
      y: { ...range(ys), pad: !useLog, log: useLog, label: "intermediate value" + (useLog ? " (log)" : log ? " (not positive: linear)" : "") } });
    const { ctx, px, py } = g;
    const color = { complete: "rgba(59,111,216,0.55)", pruned: "rgba(216,59,59,0.7)", pending: "rgba(200,130,0,0.8)", failed: "rgba(120,120,120,0.6)" };
    // Complete first, pruned on top.
    const order = { failed: 0, complete: 1, pending: 2, pruned: 3 };
    curves.sort((a, b) => (order[a.t.state] ?? 0) - (order[b.t.state] ?? 0));
    for (const c of curves) {
      ctx.strokeStyle = color[c.t.state] || color.failed;
      ctx.lineWidth = 1.3;
      ctx.beginPath();
      c.pts.forEach(([s, v], k) => (k ? ctx.lineTo(px(s), py(v)) : ctx.moveTo(px(s), py(v))));
      ctx.stroke();
      const [s, v] = c.pts[c.pts.length - 1];
      if (c.t.state === "pruned") {
        const x = px(s), y = py(v);
        ctx.strokeStyle = "#b00020";
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.moveTo(x - 4, y - 4); ctx.lineTo(x + 4, y + 4); ctx.moveTo(x + 4, y - 4); ctx.lineTo(x - 4, y + 4);
        ctx.stroke();
      } else if (c.pts.length === 1) {
        ctx.fillStyle = color[c.t.state] || color.failed;
        ctx.fillRect(px(s) - 2, py(v) - 2, 4, 4);
      }
    }
  }

  // ---- contour of two parameters ----
  const viridis = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function colormap(q) {
    q = Math.min(1, Math.max(0, q)) * (viridis.length - 1);
    const k = Math.min(viridis.length - 2, Math.floor(q)), f = q - k;
    return viridis[k].map((a, n) => Math.round(a + f * (viridis[k + 1][n] - a)));
  }
  const css = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;

  // unit maps a parameter's value to [0, 1] (its contour coordinate).
  function unit(p, v) {
    if (p.type === "categorical") return p.choices.length > 1 ? coord(p, v) / (p.choices.length - 1) : 0.5;
    if (p.log) return (Math.log(v) - Math.log(p.low)) / (Math.log(p.high) - Math.log(p.low));
    return p.high > p.low ? (v - p.low) / (p.high - p.low) : 0.5;
  }

  function drawContour() {
    const cv = $("#chart-contour");
    const px_ = params.find((p) => p.name === $("#contour-x").value);
    const py_ = params.find((p) => p.name === $("#contour-y").value);
    // The trials that have both parameters (a conditional space's others
    // have no place on these axes).
    const done = completeTrials().filter((t) => (!px_ || px_.name in t.params) && (!py_ || py_.name in t.params));
    cv.dataset.points = String(done.length);
    if (params.length < 2 || !px_ || !py_) {
      emptyCanvas(cv, "A contour needs two parameters.");
      return;
    }
    if (!done.length) {
      emptyCanvas(cv, completeTrials().length ? "No complete trial has both parameters." : "No complete trial yet.");
      return;
    }
    const ax = (p) => (p.type === "categorical" ? { choices: p.choices, label: p.name } : { min: p.low, max: p.high, log: !!p.log, label: p.name });
    const g = canvasFrame(cv, { width: W(), height: 440, right: 110, x: ax(px_), y: ax(py_) });
    const { ctx, L, R, T, B, w, h } = g;
    const pts = done.map((t) => [unit(px_, t.params[px_.name]), unit(py_, t.params[py_.name]), value(t)]);
    const vs = pts.map((q) => q[2]);
    const lo = Math.min(...vs), hi = Math.max(...vs);
    // The interpolated values on an N x N grid of pixels, scaled up
    // smoothly onto the plot.
    const N = 60;
    const grid = document.createElement("canvas");
    grid.width = grid.height = N;
    const gctx = grid.getContext("2d");
    const img = gctx.createImageData(N, N);
    // Categorical axes: cells span their choices' bands.
    const cellU = (p, k) => {
      const u = (k + 0.5) / N;
      if (p.type !== "categorical") return u;
      const n = p.choices.length;
      return n > 1 ? Math.min(n - 1, Math.floor(u * n)) / (n - 1) : 0.5;
    };
    for (let a = 0; a < N; a++) {
      const u = cellU(px_, a);
      for (let b = 0; b < N; b++) {
        const v = cellU(py_, b);
        let num = 0, den = 0, exact = null;
        for (const q of pts) {
          const d2 = (q[0] - u) * (q[0] - u) + (q[1] - v) * (q[1] - v);
          if (d2 < 1e-12) { exact = q[2]; break; }
          const wt = 1 / d2; // Shepard's weights, power 2
          num += wt * q[2];
          den += wt;
        }
        const val = exact != null ? exact : num / den;
        const c = colormap(hi > lo ? (val - lo) / (hi - lo) : 0.5);
        const o = 4 * ((N - 1 - b) * N + a);
        img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255;
      }
    }
    gctx.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(grid, L, T, w - L - R, h - T - B);
    ctx.strokeStyle = "#8a8f96";
    ctx.strokeRect(L, T, w - L - R, h - T - B);
    // The trials, the best in white.
    let best = null;
    for (const t of done) if (!t.infeasible && (best === null || better(value(t), value(best)))) best = t;
    const X = (t) => L + (px_.type === "categorical" ? (coord(px_, t.params[px_.name]) + 0.5) / px_.choices.length : unit(px_, t.params[px_.name])) * (w - L - R);
    const Y = (t) => h - B - (py_.type === "categorical" ? (coord(py_, t.params[py_.name]) + 0.5) / py_.choices.length : unit(py_, t.params[py_.name])) * (h - T - B);
    ctx.fillStyle = "rgba(20,20,20,0.8)";
    for (const t of done) { ctx.beginPath(); ctx.arc(X(t), Y(t), 2.2, 0, 2 * Math.PI); ctx.fill(); }
    if (best) {
      ctx.beginPath(); ctx.arc(X(best), Y(best), 5, 0, 2 * Math.PI);
      ctx.fillStyle = "#fff"; ctx.fill(); ctx.strokeStyle = "#000"; ctx.lineWidth = 1.5; ctx.stroke();
    }
    // The color bar.
    const bx = w - R + 24, bw = 16;
    for (let k = 0; k < 100; k++) {
      ctx.fillStyle = css(colormap(k / 99));
      ctx.fillRect(bx, h - B - (k + 1) * (h - T - B) / 100, bw, (h - T - B) / 100 + 0.5);
    }
    ctx.fillStyle = "#1d2430";
    ctx.textAlign = "left";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(fmt(hi), bx + bw + 4, T + 10);
    ctx.fillText(fmt(lo), bx + bw + 4, h - B);
    ctx.save();
    ctx.translate(bx + bw + 40, T + (h - T - B) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.fillText(multi() ? "objective " + (obj + 1) : "value", 0, 0);
    ctx.restore();
    cv.dataset.grid = String(N * N);
  }

  // ---- EDF of the values ----
  function drawEDF() {
    const vs = completeTrials().filter((t) => !t.infeasible).map(value).sort((a, b) => a - b);
    const n = vs.length;
    const y = vs.map((_, k) => (k + 1) / n);
    replot("edf", "#chart-edf", {
      width: W(), height: 380,
      scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: [{ label: multi() ? "objective " + (obj + 1) : "value" }, { label: "fraction of trials \u2264 value" }],
      series: [{ label: "value" }, { label: "EDF", stroke: "#3b6fd8", width: 2, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }],
    }, [vs, y]);
    $("#chart-edf").dataset.points = String(n);
  }

  function drawAll() {
    drawSummary();
    drawHistory();
    drawPareto();
    drawCurves();
    drawParallel();
    drawSlices();
    drawContour();
    drawEDF();
    drawImportance();
    drawTable();
    bkb.renders++;
  }

  // setupViews fills the menus of the views that choose objectives or
  // parameters, and shows the Pareto front's tab with several objectives.
  function setupViews() {
    const ds = directions();
    const opt = (value, text) => el("option", { value, text });
    $("#tabs button[data-view=pareto]").hidden = ds.length < 2;
    $("#objective-pick").hidden = ds.length < 2;
    ds.forEach((d, k) => {
      $("#objective").append(opt(k, "objective " + (k + 1) + " (" + d + ")"));
      $("#pareto-x").append(opt(k, "objective " + (k + 1)));
      $("#pareto-y").append(opt(k, "objective " + (k + 1)));
    });
    if (ds.length > 1) $("#pareto-y").value = "1";
    for (const p of params) {
      $("#contour-x").append(opt(p.name, p.name));
      $("#contour-y").append(opt(p.name, p.name));
    }
    if (params.length > 1) $("#contour-y").value = params[1].name;
    $("#objective").onchange = () => { obj = Number($("#objective").value); drawAll(); };
    $("#pareto-x").onchange = $("#pareto-y").onchange = drawPareto;
    $("#contour-x").onchange = $("#contour-y").onchange = drawContour;
    $("#curves-logy").onchange = drawCurves;
  }

  async function showStudy(name) {
    $("#study-view").hidden = false;
    $("#crumb").textContent = name;
    document.title = name + " \u2013 bkb";
    study = await api(`/api/studies/${enc(name)}`);
    params = (study.space && study.space.params) || [];
    setupViews();
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
