#include "attn/decode/maps_page.h"

#include <nlohmann/json.hpp>

#include "attn/nn/mechanism.h"
#include "attn/text/html.h"

namespace attn::decode {

using text::html_escape;
using text::script_safe;

namespace {

// The page before the data: head, style and the empty frame the viewer fills.
constexpr const char* kPageHead = R"PAGE(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attn attend — attention maps</title>
<style>
:root {
  --bg: #f5f6f8; --card: #ffffff; --line: #e2e5ea; --ink: #1f2430; --muted: #6b7280;
  --accent: #3b5bdb; --accent-soft: #e7ecfd; --window: #f08c00; --masked: #eceef2;
  --mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif; }
header.top { display: flex; align-items: baseline; gap: 14px; padding: 14px 22px 4px; flex-wrap: wrap; }
header.top h1 { font-size: 19px; margin: 0; letter-spacing: -0.01em; }
header.top h1 span { color: var(--accent); }
header.top .meta { color: var(--muted); font-size: 13px; }
nav.bar { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center;
  padding: 10px 22px; background: rgba(245,246,248,0.94); backdrop-filter: blur(6px); border-bottom: 1px solid var(--line); }
nav.bar .group { display: flex; align-items: center; gap: 6px; }
nav.bar label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; margin-right: 2px; }
button, select { font: inherit; color: var(--ink); background: var(--card); border: 1px solid var(--line);
  border-radius: 7px; padding: 4px 10px; cursor: pointer; }
button:hover, select:hover { border-color: #c5cad3; }
select { max-width: 420px; }
.tabs { display: inline-flex; background: #e9ecf1; border-radius: 9px; padding: 3px; gap: 2px; }
.tabs button { border: none; background: transparent; border-radius: 7px; padding: 4px 12px; color: #4b5260; }
.tabs button.on { background: var(--card); color: var(--accent); font-weight: 600; box-shadow: 0 1px 2px rgba(0,0,0,0.08); }
.legend { display: flex; align-items: center; gap: 6px; font-size: 12px; color: var(--muted); }
.legend .ramp { width: 120px; height: 10px; border-radius: 3px; border: 1px solid var(--line); }
.legend .sw { width: 12px; height: 12px; border-radius: 2px; background: var(--masked); border: 1px solid var(--line); }
main { padding: 14px 22px 40px; display: flex; flex-direction: column; gap: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px;
  box-shadow: 0 1px 2px rgba(16,24,40,0.04); }
.card h2 { font-size: 13px; margin: 0 0 10px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: 0.05em; }
#sentence .line { display: grid; grid-template-columns: 96px 1fr; gap: 6px 12px; align-items: baseline; }
#sentence .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
#sentence .text { font-size: 15px; }
.toks { display: flex; flex-wrap: wrap; gap: 3px; }
.tok { font: 12px var(--mono); background: #f1f3f6; border: 1px solid #e4e7ec; border-radius: 5px; padding: 0 5px; white-space: pre; }
.tok.sp { color: var(--muted); }
.score { font: 13px var(--mono); color: #374151; }
.panels { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
#grid { flex: 1 1 560px; min-width: 0; }
#detail { flex: 1 1 640px; min-width: 0; position: sticky; top: 62px; max-height: calc(100vh - 76px); overflow: auto; }
.layer-row { display: flex; gap: 12px; padding: 10px 0; border-top: 1px solid #f0f1f4; }
.layer-row:first-of-type { border-top: none; padding-top: 0; }
.layer-head { width: 128px; flex: none; }
.layer-head .lname { font-weight: 650; }
.layer-head .mech { font-size: 12px; color: var(--muted); margin-bottom: 6px; }
.thumbs { display: flex; flex-wrap: wrap; gap: 10px; }
figure.thumb { margin: 0; padding: 6px; border-radius: 9px; border: 1px solid transparent; cursor: pointer; }
figure.thumb:hover { background: #f7f8fb; border-color: var(--line); }
figure.thumb.sel { border-color: var(--accent); background: var(--accent-soft); }
figure.thumb figcaption { font-size: 12px; color: #4b5260; margin-bottom: 4px; display: flex; gap: 6px; align-items: center; }
.badge { font-size: 11px; padding: 0 6px; border-radius: 10px; background: #eef1f6; color: #4b5260; }
.badge.fw { background: #e6f4ea; color: #1e7b3a; }
.badge.bw { background: #fdeeee; color: #b42318; }
svg.map { display: block; }
svg.map rect.c { width: var(--s); height: var(--s); }
svg.map rect.d { width: var(--s); height: var(--s); }
svg.map rect.x { width: var(--s); height: var(--s); }
svg text { font-family: var(--mono); fill: #374151; }
svg text.hl { fill: var(--accent); font-weight: 700; }
.wm { color: #b3b9c4; }
svg tspan.wm { fill: #b3b9c4; }
.win { fill: none; stroke: var(--window); stroke-width: 1.5; }
.gatebars { display: grid; grid-template-columns: auto 1fr auto; gap: 2px 6px; align-items: center; font-size: 11px; color: #4b5260; }
.gatebars .bar { height: 8px; border-radius: 4px; background: #eef1f6; overflow: hidden; min-width: 56px; }
.gatebars .bar i { display: block; height: 100%; background: #7c8fe0; }
.gatebars .v { font-family: var(--mono); }
#detail .title { display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; margin-bottom: 4px; }
#detail .title b { font-size: 15px; }
#detail .note { color: var(--muted); font-size: 12.5px; margin: 4px 0 10px; max-width: 860px; }
#detail .maps { display: flex; gap: 18px; align-items: flex-start; }
#detail .side-title { font-size: 11px; color: var(--muted); text-align: center; }
#tip { position: fixed; pointer-events: none; z-index: 20; background: #1f2430; color: #fff; font-size: 12px;
  padding: 5px 8px; border-radius: 6px; box-shadow: 0 4px 14px rgba(0,0,0,0.18); display: none; max-width: 420px; }
#tip .v { font: 600 13px var(--mono); color: #ffd98a; }
#tip .t { font-family: var(--mono); }
.empty { color: var(--muted); padding: 18px 0; }
footer { color: var(--muted); font-size: 12px; padding: 0 22px 24px; }
</style>
</head>
<body>
<header class="top"><h1><span>attn</span> attend</h1><div class="meta" id="meta"></div></header>
<nav class="bar">
  <div class="group"><label>Sentence</label><button id="prev" title="previous sentence (←)">◀</button><select id="pick"></select><button id="next" title="next sentence (→)">▶</button></div>
  <div class="group"><label>Map</label><div class="tabs" id="tabs"></div></div>
  <div class="group"><label>Contrast</label><div class="tabs" id="scale"><button data-k="linear" class="on">linear</button><button data-k="sqrt">√</button></div></div>
  <div class="legend"><span>0</span><span class="ramp" id="ramp"></span><span>1</span><span class="sw"></span><span>masked (never attended)</span></div>
</nav>
<main>
  <section class="card" id="sentence"></section>
  <div class="panels">
    <section class="card" id="grid"></section>
    <section class="card" id="detail"></section>
  </div>
</main>
<footer>Weights are the ones the model's forward pass used; rows are the attending tokens and sum to 1. Written by attn attend; the JSON format is described in docs/attention-json.md.</footer>
<div id="tip"></div>
)PAGE";

// The viewer, after the data blocks.
constexpr const char* kPageScript = R"PAGE(<script>
(function () {
  "use strict";
  const header = JSON.parse(document.getElementById("attn-header").textContent);
  const blocks = Array.from(document.querySelectorAll("script.attn-sentence"));
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const NAMES = { encoder: "Encoder self-attention", decoder: "Decoder self-attention", cross: "Cross-attention" };
  const SHORT = { encoder: "encoder", decoder: "decoder", cross: "cross" };
  // Each mechanism's label and note, written from its module (nn/mechanism.h) before this script.
  const MECH = ATTN_MECHANISMS;

  // Colour ramp: white through blue to indigo; exactly 0 is grey (masked).
  const STOPS = [[0, [252, 253, 255]], [0.12, [221, 232, 246]], [0.3, [166, 198, 233]], [0.5, [103, 154, 212]],
                 [0.72, [52, 100, 180]], [1, [24, 42, 110]]];
  const PALETTE = [];
  for (let k = 0; k < 256; ++k) {
    const t = k / 255;
    let a = STOPS[0], b = STOPS[STOPS.length - 1];
    for (let s = 1; s < STOPS.length; ++s) if (t <= STOPS[s][0]) { a = STOPS[s - 1]; b = STOPS[s]; break; }
    const f = (t - a[0]) / Math.max(1e-9, b[0] - a[0]);
    const c = a[1].map((x, i) => Math.round(x + f * (b[1][i] - x)));
    PALETTE.push("#" + c.map((x) => x.toString(16).padStart(2, "0")).join(""));
  }
  const MASKED = "#eceef2";
  $("ramp").style.background = "linear-gradient(90deg," + STOPS.map((s) => PALETTE[Math.round(s[0] * 255)] + " " + s[0] * 100 + "%").join(",") + ")";

  const state = { s: 0, component: null, layer: 0, head: 0, scale: "linear" };
  const cache = new Map();
  function sentence(k) {
    if (!cache.has(k)) {
      if (cache.size > 6) cache.delete(cache.keys().next().value);
      cache.set(k, JSON.parse(blocks[k].textContent));
    }
    return cache.get(k);
  }
  function color(v) {
    const t = state.scale === "sqrt" ? Math.sqrt(v) : v;
    return PALETTE[Math.max(0, Math.min(255, Math.round(t * 255)))];
  }
  function tokens(S, axis) {
    return axis === "source" ? S.source_tokens : axis === "target" ? S.target_tokens : S.target_input_tokens;
  }
  // A token with its word-start marker ▁ drawn faint (in HTML or in SVG text).
  function label(t, svg) {
    if (!t.startsWith("\u2581") || t.length === 1) return esc(t);
    return (svg ? '<tspan class="wm">' : '<span class="wm">') + "\u2581" + (svg ? "</tspan>" : "</span>") + esc(t.slice(1));
  }
  function fmt(v) { return v === null || v === undefined ? "—" : (+v).toFixed(Math.min(4, header.precision)); }

  // ---- URL hash: component, sentence, layer, head ----
  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (p.has("sentence")) state.s = Math.max(0, Math.min(blocks.length - 1, parseInt(p.get("sentence"), 10) || 0));
    if (p.has("component")) state.component = p.get("component");
    if (p.has("layer")) state.layer = parseInt(p.get("layer"), 10) || 0;
    if (p.has("head")) state.head = parseInt(p.get("head"), 10) || 0;
  }
  function writeHash() {
    const h = "#component=" + state.component + "&sentence=" + state.s + "&layer=" + state.layer + "&head=" + state.head;
    if (location.hash !== h) history.replaceState(null, "", h);
  }

  // Whether query i may attend to key j in this map: the mechanism's mask
  // (causal decoder, ConvSAN window, Fast-DiSA direction). Masked cells are grey.
  function allowedFn(L, hi) {
    const e = L.extras || {};
    const causal = state.component === "decoder", win = "left" in e;
    const dir = e.directions ? e.directions[hi] : null, strict = dir && !e.diagonal;
    return (i, j) => !(causal && j > i) && !(win && (j < i - e.left || j > i + e.right)) &&
                     !(dir === "forward" && (strict ? j >= i : j > i)) && !(dir === "backward" && (strict ? j <= i : j < i));
  }
  // ---- one heat map as SVG: a rect per cell, class cls ----
  function cells(W, F, T, s, cls, allowed) {
    const out = [];
    for (let i = 0; i < F; ++i) {
      const row = W[i];
      for (let j = 0; j < T; ++j) out.push('<rect class="' + cls + '" x="' + j * s + '" y="' + i * s + '" fill="' + (allowed(i, j) ? color(row[j]) : MASKED) + '"></rect>');
    }
    return out.join("");
  }
  // The outline of a ConvSAN window [i − left, i + right] over rows 0..F−1.
  function windowPath(L, F, T, s, x0, y0) {
    const e = L.extras || {};
    if (!("left" in e)) return "";
    const lo = (i) => Math.max(0, i - e.left), hi = (i) => Math.min(T, i + e.right + 1);
    let d = "M" + (x0 + lo(0) * s) + " " + y0;
    for (let i = 0; i < F; ++i) d += "H" + (x0 + lo(i) * s) + "V" + (y0 + (i + 1) * s);
    d += "H" + (x0 + hi(F - 1) * s);
    for (let i = F - 1; i >= 0; --i) d += "V" + (y0 + (i + 1) * s) + "H" + (x0 + hi(i) * s) + "V" + (y0 + i * s);
    return '<path class="win" d="' + d + 'Z"></path>';
  }
  function directionBadge(L, hi) {
    const dir = L.extras && L.extras.directions ? L.extras.directions[hi] : null;
    if (!dir) return "";
    return dir === "forward" ? '<span class="badge fw" title="forward mask: attends to earlier tokens">← fw</span>'
                             : '<span class="badge bw" title="backward mask: attends to later tokens">bw →</span>';
  }
  function gateBars(L) {
    const e = L.extras || {};
    if (!e.gate || !e.kernels) return "";
    let h = '<div class="gatebars" title="kernel gate π = softmax(α): how the convolution cells are mixed">';
    e.kernels.forEach((k, i) => {
      h += "<span>k=" + k + '</span><span class="bar"><i style="width:' + (100 * e.gate[i]).toFixed(1) + '%"></i></span><span class="v">' + fmt(e.gate[i]) + "</span>";
    });
    return h + "</div>";
  }

  // ---- top: meta, sentence menu, tabs ----
  function setup() {
    const cfg = header.model.config || {};
    $("meta").textContent = [header.model.file, cfg.arch, cfg.enc_layers + "+" + cfg.dec_layers + " layers", cfg.heads + " heads",
      header.mode === "forced" ? "forced target" : header.mode === "beam" ? "beam " + header.search.beam : "greedy"].join(" · ");
    const pick = $("pick");
    pick.innerHTML = blocks.map((b, k) => "<option value=\"" + k + "\">" + esc("#" + b.dataset.index + "  " + (b.dataset.preview || "")) + "</option>").join("");
    pick.onchange = () => { state.s = +pick.value; render(); };
    $("prev").onclick = () => { if (state.s > 0) { state.s--; render(); } };
    $("next").onclick = () => { if (state.s + 1 < blocks.length) { state.s++; render(); } };
    for (const b of $("scale").querySelectorAll("button")) b.onclick = () => {
      state.scale = b.dataset.k;
      for (const o of $("scale").querySelectorAll("button")) o.classList.toggle("on", o === b);
      render();
    };
    document.addEventListener("keydown", (ev) => {
      if (ev.target.tagName === "SELECT") return;
      if (ev.key === "ArrowLeft") $("prev").click();
      if (ev.key === "ArrowRight") $("next").click();
    });
    window.addEventListener("hashchange", () => { readHash(); render(); });
    let resizing = 0;
    window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(render, 150); });
  }

  function renderTabs(S) {
    const names = Object.keys(S.components);
    if (names.length === 0) { $("tabs").innerHTML = ""; return; }
    if (!names.includes(state.component)) state.component = names[0];
    $("tabs").innerHTML = names.map((n) => '<button data-c="' + n + '" class="' + (n === state.component ? "on" : "") + '">' + NAMES[n] + "</button>").join("");
    for (const b of $("tabs").querySelectorAll("button")) b.onclick = () => { state.component = b.dataset.c; render(); };
  }

  function renderSentence(S) {
    const tok = (t) => '<span class="tok' + (t === "</s>" || t === "<s>" ? " sp" : "") + '">' + label(t, false) + "</span>";
    const forced = header.mode === "forced";
    $("sentence").innerHTML = "<h2>Sentence " + S.index + " of " + blocks.length + "</h2>" +
      '<div class="line"><span class="k">source</span><span class="text">' + esc(S.source) + "</span>" +
      '<span class="k">subwords</span><span class="toks">' + S.source_tokens.map(tok).join("") + "</span>" +
      '<span class="k">' + (forced ? "target" : "output") + '</span><span class="text">' + esc(S.translation) + "</span>" +
      '<span class="k">subwords</span><span class="toks">' + S.target_tokens.map(tok).join("") + "</span>" +
      '<span class="k">score</span><span class="score">' + fmt(S.score) + "  (log-prob " + fmt(S.logprob) + ")</span></div>";
  }

  function renderGrid(S) {
    const comp = S.components[state.component];
    const grid = $("grid");
    if (!comp) { grid.innerHTML = '<div class="empty">This source line is empty: it was not run through the model and has no maps.</div>'; return; }
    grid.dataset.component = state.component;
    const F = tokens(S, comp.from).length, T = tokens(S, comp.to).length, n = Math.max(F, T);
    // Thumbnails up to 150 px; the grid asks for the width of one row of heads
    // (the detail panel moves below when both do not fit), then fits into what it got.
    const want = Math.min(120, n * 14), H = comp.heads.length;
    grid.style.flexBasis = Math.max(560, 200 + H * (want + 24)) + "px";
    const per = (grid.clientWidth - 32 - 140) / H - 24;
    const s = Math.max(2, Math.min(14, Math.floor(per / n)));
    let h = "<h2>" + NAMES[state.component] + " · " + comp.layers.length + " layers × " + comp.heads.length + " heads · rows: " + comp.from.replace("_", " ") + " tokens, columns: " + comp.to.replace("_", " ") + " tokens</h2>";
    comp.layers.forEach((L, li) => {
      h += '<div class="layer-row"><div class="layer-head"><div class="lname">Layer ' + L.layer + '</div><div class="mech">' + esc(MECH[L.mechanism] ? MECH[L.mechanism].label : L.mechanism) + "</div>" + gateBars(L) + '</div><div class="thumbs">';
      comp.heads.forEach((head, hi) => {
        const sel = li === state.layer && hi === state.head ? " sel" : "";
        h += '<figure class="thumb' + sel + '" data-l="' + li + '" data-h="' + hi + '"><figcaption>head ' + head + directionBadge(L, hi) + "</figcaption>" +
             '<svg class="map" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" width="' + T * s + '" height="' + F * s + '" style="--s:' + s + 'px" shape-rendering="crispEdges">' +
             cells(L.weights[hi], F, T, s, "c", allowedFn(L, hi)) + windowPath(L, F, T, s, 0, 0) + "</svg></figure>";
      });
      h += "</div></div>";
    });
    grid.innerHTML = h;
    for (const f of grid.querySelectorAll("figure.thumb")) f.onclick = () => { state.layer = +f.dataset.l; state.head = +f.dataset.h; render(); };
  }

  // Side strips aligned with the rows of the large map: MUSE taps, ConvSAN 2D head area, Fast-DiSA fusion gate.
  function sideStrips(S, comp, L, hi, F, s, top) {
    const e = L.extras || {};
    const out = [];
    const strip = (title, cols, rows, tip) => {
      const w = cols * s;
      let g = '<div><div class="side-title" style="height:' + (top - 4) + 'px;display:flex;align-items:flex-end;justify-content:center">' + title + "</div>" +
              '<svg class="map side" data-tip="' + tip + '" data-s="' + s + '" width="' + w + '" height="' + F * s + '" style="--s:' + s + 'px" shape-rendering="crispEdges">';
      for (let i = 0; i < F; ++i) for (let j = 0; j < cols; ++j) {
        const v = rows[i][j];
        g += '<rect class="x" x="' + j * s + '" y="' + i * s + '" fill="' + (v === null ? "#ffffff" : color(v)) + '"' + (v === null ? ' stroke="#e5e7eb"' : "") + "></rect>";
      }
      return g + "</svg></div>";
    };
    if (e.taps && e.kernels) e.kernels.forEach((k, ki) => {
      out.push(strip("conv taps<br>k=" + k + (e.gate ? " · π " + fmt(e.gate[ki]) : ""), k, e.taps[ki][hi], "taps:" + ki));
    });
    if (e.head_weights && e.head_window > 1) {
      out.push(strip("head area<br>h−" + (e.head_window - 1) / 2 + "…h+" + (e.head_window - 1) / 2, e.head_window, e.head_weights[hi], "area"));
    }
    if (e.fusion_gate) {
      const g = e.fusion_gate[hi], w = 64;
      let b = '<div><div class="side-title" style="height:' + (top - 4) + 'px;display:flex;align-items:flex-end;justify-content:center">fusion gate G</div>' +
              '<svg class="map side" data-tip="gate" data-s="' + s + '" width="' + (w + 36) + '" height="' + F * s + '">';
      for (let i = 0; i < F; ++i) {
        b += '<rect x="0" y="' + (i * s + 1) + '" width="' + w + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#eef1f6"></rect>' +
             '<rect x="0" y="' + (i * s + 1) + '" width="' + (w * g[i]).toFixed(1) + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#2f9e44" opacity="0.75"></rect>';
        if (s >= 10) b += '<text x="' + (w + 4) + '" y="' + (i * s + s / 2) + '" dominant-baseline="central" font-size="' + Math.min(11, s - 1) + '">' + fmt(g[i]) + "</text>";
      }
      out.push(b + "</svg></div>");
    }
    return out.join("");
  }

  function noteFor(L, comp) {
    const m = MECH[L.mechanism] || MECH.mha;
    return m.note(L.extras || {}, comp);
  }

  function renderDetail(S) {
    const comp = S.components[state.component];
    const box = $("detail");
    if (!comp) { box.innerHTML = ""; return; }
    const rowsTok = tokens(S, comp.from), colsTok = tokens(S, comp.to);
    const F = rowsTok.length, T = colsTok.length;
    state.layer = Math.max(0, Math.min(comp.layers.length - 1, state.layer));
    state.head = Math.max(0, Math.min(comp.heads.length - 1, state.head));
    const L = comp.layers[state.layer], hi = state.head, W = L.weights[hi];
    // Cells as large as the panel allows (the side strips of the extras take
    // their columns too), at least 12 px so that 60 labels stay legible.
    const e = L.extras || {};
    const sideCols = (e.taps ? e.kernels.reduce((a, k) => a + k + 2, 0) : 0) + (e.head_weights && e.head_window > 1 ? e.head_window + 2 : 0) +
                     (e.fusion_gate ? 8 : 0);
    const longest = (a) => a.reduce((m, t) => Math.max(m, [...t].length), 1);
    const guess = Math.min(150, 12 + longest(rowsTok) * 7.5);
    const s = Math.max(12, Math.min(28, Math.floor((box.clientWidth - 40 - guess) / (T + sideCols + 1))));
    const fs = Math.min(13, s - 1);
    const left = Math.min(150, 12 + longest(rowsTok) * fs * 0.62);
    const top = Math.min(130, 12 + longest(colsTok) * fs * 0.62 * 0.82);
    let g = '<svg class="map big" data-s="' + s + '" data-x="' + left + '" data-y="' + top + '" width="' + (left + T * s + 4) + '" height="' + (top + F * s + 4) + '" style="--s:' + s + 'px">';
    rowsTok.forEach((t, i) => { g += '<text class="rl" data-i="' + i + '" x="' + (left - 6) + '" y="' + (top + i * s + s / 2) + '" text-anchor="end" dominant-baseline="central" font-size="' + fs + '">' + label(t, true) + "</text>"; });
    colsTok.forEach((t, j) => { g += '<text class="cl" data-j="' + j + '" transform="translate(' + (left + j * s + s / 2) + "," + (top - 6) + ') rotate(-55)" dominant-baseline="central" font-size="' + fs + '">' + label(t, true) + "</text>"; });
    g += '<g transform="translate(' + left + "," + top + ')" shape-rendering="crispEdges">' + cells(W, F, T, s, "d", allowedFn(L, hi)) + "</g>";
    g += windowPath(L, F, T, s, left, top);
    g += '<rect id="hover" x="0" y="0" width="' + s + '" height="' + s + '" fill="none" stroke="#111827" stroke-width="1.5" visibility="hidden"></rect></svg>';
    box.innerHTML = '<div class="title"><b>' + NAMES[state.component] + " · layer " + L.layer + " · head " + comp.heads[hi] + "</b>" + directionBadge(L, hi) +
      '<span class="badge">' + esc(MECH[L.mechanism] ? MECH[L.mechanism].label : L.mechanism) + "</span></div>" +
      '<div class="note">' + esc(noteFor(L, state.component)) + "</div>" +
      '<div class="maps"><div>' + g + "</div>" + sideStrips(S, comp, L, hi, F, s, top) + "</div>";
  }

  // ---- hover values (one tooltip for every map) ----
  const tip = $("tip");
  function hideTip() { tip.style.display = "none"; const r = document.getElementById("hover"); if (r) r.setAttribute("visibility", "hidden"); }
  document.addEventListener("mousemove", (ev) => {
    const svg = ev.target.closest ? ev.target.closest("svg.map") : null;
    if (!svg) { hideTip(); return; }
    const S = sentence(state.s), comp = S.components[state.component];
    if (!comp) { hideTip(); return; }
    const rowsTok = tokens(S, comp.from), colsTok = tokens(S, comp.to);
    const box = svg.getBoundingClientRect(), s = +svg.dataset.s;
    const x0 = +(svg.dataset.x || 0), y0 = +(svg.dataset.y || 0);
    const j = Math.floor((ev.clientX - box.left - x0) / s), i = Math.floor((ev.clientY - box.top - y0) / s);
    if (i < 0 || i >= rowsTok.length || j < 0) { hideTip(); return; }
    let html = "";
    if (svg.classList.contains("side")) {
      const L = comp.layers[state.layer], e = L.extras, kind = svg.dataset.tip;
      if (kind.startsWith("taps:")) {
        const ki = +kind.slice(5), k = e.kernels[ki]; if (j >= k) { hideTip(); return; }
        const src = i + j - e.offsets[ki];
        html = 'tap ' + j + ' of k=' + k + ' for <span class="t">' + esc(rowsTok[i]) + '</span> reads ' + (src >= 0 && src < rowsTok.length ? '<span class="t">' + esc(tokens(S, comp.to)[src]) + "</span>" : "outside the sentence (0)") +
               '<br><span class="v">' + fmt(e.taps[ki][state.head][i][j]) + "</span>";
      } else if (kind === "area") {
        if (j >= e.head_window) { hideTip(); return; }
        const kh = comp.heads[state.head] + j - (e.head_window - 1) / 2, v = e.head_weights[state.head][i][j];
        html = '<span class="t">' + esc(rowsTok[i]) + "</span>: weight on head " + kh + '<br><span class="v">' + (v === null ? "dropped (no such head)" : fmt(v)) + "</span>";
      } else {
        html = '<span class="t">' + esc(rowsTok[i]) + '</span>: fusion gate<br><span class="v">' + fmt(e.fusion_gate[state.head][i]) + "</span>";
      }
    } else {
      if (j >= colsTok.length) { hideTip(); return; }
      const big = svg.classList.contains("big");
      const li = big ? state.layer : +svg.dataset.l, hi = big ? state.head : +svg.dataset.h;
      const L = comp.layers[li];
      html = "layer " + L.layer + " · head " + comp.heads[hi] + '<br><span class="t">' + esc(rowsTok[i]) + "</span> (" + i + ') → <span class="t">' + esc(colsTok[j]) + "</span> (" + j + ')<br><span class="v">' + fmt(L.weights[hi][i][j]) + "</span>";
      if (big) {
        const r = document.getElementById("hover");
        r.setAttribute("x", x0 + j * s); r.setAttribute("y", y0 + i * s); r.setAttribute("visibility", "visible");
        for (const t of svg.querySelectorAll("text.rl")) t.classList.toggle("hl", +t.dataset.i === i);
        for (const t of svg.querySelectorAll("text.cl")) t.classList.toggle("hl", +t.dataset.j === j);
      }
    }
    tip.innerHTML = html;
    tip.style.display = "block";
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(window.innerWidth - w - 8, ev.clientX + 14) + "px";
    tip.style.top = Math.min(window.innerHeight - h - 8, ev.clientY + 14) + "px";
  });

  function render() {
    if (blocks.length === 0) {
      $("sentence").innerHTML = '<div class="empty">No sentences in this file.</div>';
      $("grid").innerHTML = ""; $("detail").innerHTML = "";
      return;
    }
    const S = sentence(state.s);
    $("pick").value = String(state.s);
    renderTabs(S);
    renderSentence(S);
    renderGrid(S);
    renderDetail(S);
    writeHash();
  }

  setup();
  readHash();
  render();
})();
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string mechanisms_script() {
  std::string js = "<script>\nconst ATTN_MECHANISMS = {\n";
  for (const nn::Mechanism* m : nn::mechanisms())
    for (const nn::MapKind& k : m->map_kinds())
      js += "  " + nlohmann::json(std::string(k.kind)).dump() + ": { label: " + nlohmann::json(std::string(k.label)).dump() +
            ",\n    note: " + std::string(m->page_note()) + " },\n";
  return js + "};\n</script>\n";
}


MapsPageWriter::MapsPageWriter(std::FILE* out, const nlohmann::json& header) : out_(out) {
  std::fputs(kPageHead, out_);
  std::fputs("<script type=\"application/json\" id=\"attn-header\">", out_);
  std::fputs(script_safe(header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).c_str(), out_);
  std::fputs("</script>\n", out_);
}

void MapsPageWriter::add(std::int64_t index, const std::string& source_line, const std::string& sentence) {
  std::fprintf(out_, "<script type=\"application/json\" class=\"attn-sentence\" data-index=\"%lld\" data-preview=\"%s\">",
               static_cast<long long>(index), html_escape(source_line, 70).c_str());
  std::fputs(script_safe(sentence).c_str(), out_);
  std::fputs("</script>\n", out_);
}

void MapsPageWriter::finish() {
  std::fputs(mechanisms_script().c_str(), out_);
  std::fputs(kPageScript, out_);
  std::fflush(out_);
}

}  // namespace attn::decode
