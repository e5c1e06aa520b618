// Colour ramp: white through blue to indigo; exactly 0 is grey (masked). 256 entries.
const ATTN_STOPS = [[0, [252, 253, 255]], [0.12, [221, 232, 246]], [0.3, [166, 198, 233]], [0.5, [103, 154, 212]],
                    [0.72, [52, 100, 180]], [1, [24, 42, 110]]];
const ATTN_PALETTE = (function () {
  const out = [];
  for (let k = 0; k < 256; ++k) {
    const t = k / 255;
    let a = ATTN_STOPS[0], b = ATTN_STOPS[ATTN_STOPS.length - 1];
    for (let s = 1; s < ATTN_STOPS.length; ++s) if (t <= ATTN_STOPS[s][0]) { a = ATTN_STOPS[s - 1]; b = ATTN_STOPS[s]; break; }
    const f = (t - a[0]) / Math.max(1e-9, b[0] - a[0]);
    const c = a[1].map((x, i) => Math.round(x + f * (b[1][i] - x)));
    out.push("#" + c.map((x) => x.toString(16).padStart(2, "0")).join(""));
  }
  return out;
})();

function attnMapsDrawer(view, precision) {
  "use strict";
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const NAMES = { encoder: "Encoder self-attention", decoder: "Decoder self-attention", cross: "Cross-attention" };
  // Each map kind's label and drawing hooks, from its mechanism's module (nn/mechanism.h), written
  // before this script: what a mechanism adds to a map (masks, outlines, badges, strips) is drawn there.
  const MECH = ATTN_MECHANISMS;
  const PALETTE = ATTN_PALETTE, MASKED = "#eceef2";
  // The legend's CSS background: the ramp at its stops.
  const rampGradient = () => "linear-gradient(90deg," + ATTN_STOPS.map((s) => PALETTE[Math.round(s[0] * 255)] + " " + s[0] * 100 + "%").join(",") + ")";

  function color(v) {
    const t = view.scale === "sqrt" ? Math.sqrt(v) : v;
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
  function fmt(v) { return v === null || v === undefined ? "—" : (+v).toFixed(Math.min(4, precision)); }
  function mechLabel(kind) { return MECH[kind] ? MECH[kind].label : kind; }
  // The hooks of a layer's mechanism (MHA's for a kind this page does not know) and its extras.
  function hooks(L) { return MECH[L.mechanism] || MECH.mha; }
  function noteFor(L, component) { return hooks(L).note(L.extras || {}, component); }
  // The selection as indices valid in this component: {layer, head}.
  function pick(comp) {
    return { layer: Math.max(0, Math.min(comp.layers.length - 1, view.layer)),
             head: Math.max(0, Math.min(comp.heads.length - 1, view.head)) };
  }

  // Whether query i may attend to key j in this map: the causal decoder's mask, then the
  // mechanism's own (hook mask). Masked cells are grey.
  function allowedFn(L, hi) {
    const causal = view.component === "decoder", h = hooks(L);
    const own = h.mask ? h.mask(L.extras || {}, hi) : null;
    return (i, j) => !(causal && j > i) && (!own || own(i, j));
  }
  // A head's statistics over this sentence's map (docs/attention-stats.md, as attn attn-stats
  // computes them over a test set): per query row with at least two allowed keys, the entropy
  // (nats), the entropy over log(keys), the largest weight and the distance from the diagonal
  // (cross-attention: scaled by the length ratio); their means. null when no row has two keys.
  function headStats(L, hi, F, T) {
    const allowed = allowedFn(L, hi), W = L.weights[hi], cross = view.component === "cross";
    let rows = 0, H = 0, Hn = 0, mx = 0, dist = 0;
    for (let i = 0; i < F; ++i) {
      const c = cross ? (i + 0.5) * T / F - 0.5 : i;
      let k = 0, sum = 0;
      for (let j = 0; j < T; ++j) if (allowed(i, j)) { ++k; sum += Math.max(0, W[i][j]); }
      if (k < 2 || !(sum > 0)) continue;
      let h = 0, m = 0, d = 0;
      for (let j = 0; j < T; ++j) {
        if (!allowed(i, j)) continue;
        const p = Math.max(0, W[i][j]) / sum;
        if (p > 0) h -= p * Math.log(p);
        m = Math.max(m, p);
        d += p * Math.abs(j - c);
      }
      ++rows; H += h; Hn += h / Math.log(k); mx += m; dist += d;
    }
    return rows ? { rows, entropy: H / rows, normalised: Hn / rows, max: mx / rows, distance: dist / rows } : null;
  }
  // The statistics as a title (tooltip) and short text under a thumbnail (Hn: the normalised
  // entropy), or a line over the large map.
  function statsTitle(st) {
    return st ? "mean over " + st.rows + " query rows with ≥ 2 keys: entropy " + st.entropy.toFixed(3) + " nats, normalised " + st.normalised.toFixed(3) +
      ", largest weight " + st.max.toFixed(3) + ", distance from the diagonal " + st.distance.toFixed(2) : "no query row has two keys";
  }
  function statsShort(st) {
    return '<div class="hstats" title="' + esc(statsTitle(st)) + '">' + (st ? "<span>Hn " + st.normalised.toFixed(2) + "</span> <span>max " + st.max.toFixed(2) + "</span>" : "—") + "</div>";
  }
  function statsLine(st) {
    if (!st) return '<div class="hstats big">Statistics: no query row has two allowed keys.</div>';
    return '<div class="hstats big" title="' + esc(statsTitle(st)) + '">entropy <b>' + st.entropy.toFixed(3) + "</b> nats · normalised <b>" + st.normalised.toFixed(3) +
      "</b> · max weight <b>" + st.max.toFixed(3) + "</b> · mean distance <b>" + st.distance.toFixed(2) + "</b>" +
      (view.component === "cross" ? " (from the length-scaled diagonal)" : "") + " · over " + st.rows + " rows</div>";
  }
  // One heat map W [F][T] as SVG rects of s px, class cls.
  function cells(W, F, T, s, cls, allowed) {
    const out = [];
    for (let i = 0; i < F; ++i) {
      const row = W[i];
      for (let j = 0; j < T; ++j) out.push('<rect class="' + cls + '" x="' + j * s + '" y="' + i * s + '" fill="' + (allowed(i, j) ? color(row[j]) : MASKED) + '"></rect>');
    }
    return out.join("");
  }
  // What the mechanism draws over a map of F × T cells of s px at (x0, y0) (hook outline), beside a
  // head's name (hook badge) and under a layer's label (hook layerSummary).
  function outline(L, F, T, s, x0, y0) { const h = hooks(L); return h.outline ? h.outline(L.extras || {}, F, T, s, x0, y0, drawer) : ""; }
  // The outline of a band window [i − left, i + right] (clipped to 0..T−1) over rows 0..F−1 of such a
  // map: ConvSAN's window and LightConv's taps draw it.
  function bandOutline(left, right, F, T, s, x0, y0) {
    const lo = (i) => Math.max(0, i - left), hi = (i) => Math.min(T, i + right + 1);
    let d = "M" + (x0 + lo(0) * s) + " " + y0;
    for (let i = 0; i < F; ++i) d += "H" + (x0 + lo(i) * s) + "V" + (y0 + (i + 1) * s);
    d += "H" + (x0 + hi(F - 1) * s);
    for (let i = F - 1; i >= 0; --i) d += "V" + (y0 + (i + 1) * s) + "H" + (x0 + hi(i) * s) + "V" + (y0 + i * s);
    return '<path class="win" d="' + d + 'Z"></path>';
  }
  function badge(L, hi) { const h = hooks(L); return h.badge ? h.badge(L.extras || {}, hi) : ""; }
  function layerSummary(L) { const h = hooks(L); return h.layerSummary ? h.layerSummary(L.extras || {}, drawer) : ""; }
  // Side strips aligned with the F rows (s px) of the large map of layer li, head hi, under a
  // title band of `top` px: the mechanism's (hook strips), drawn with strip() or titled() below.
  // Their columns are w px wide (s unless given).
  function sideStrips(L, li, hi, F, s, top, w) {
    const h = hooks(L);
    if (!h.strips) return "";
    const cw = w || s;
    const titled = (title) => '<div><div class="side-title" style="height:' + (top - 4) + 'px;display:flex;align-items:flex-end;justify-content:center">' + title + "</div>";
    // A titled strip of `cols` columns: rows[i][j] in the colour ramp, null as an empty cell; tip names it for hook stripTip.
    const strip = (title, cols, rows, tip) => {
      let g = titled(title) + '<svg class="map side" data-tip="' + tip + '" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" data-w="' + cw + '" width="' + cols * cw + '" height="' + F * s + '" style="--s:' + s + 'px;--w:' + cw + 'px" shape-rendering="crispEdges">';
      for (let i = 0; i < F; ++i) for (let j = 0; j < cols; ++j) {
        const v = rows[i][j];
        g += '<rect class="x" x="' + j * cw + '" y="' + i * s + '" fill="' + (v === null ? "#ffffff" : color(v)) + '"' + (v === null ? ' stroke="#e5e7eb"' : "") + "></rect>";
      }
      return g + "</svg></div>";
    };
    return h.strips(L.extras || {}, hi, { F, s, li, titled, strip, fmt, color });
  }

  // The width (px) a grid would like: one row of heads at up to 120 px each beside the layer labels.
  function gridBasis(S) {
    const comp = S.components[view.component];
    if (!comp) return 560;
    const n = Math.max(tokens(S, comp.from).length, tokens(S, comp.to).length);
    return Math.max(560, 200 + comp.heads.length * (Math.min(120, n * 14) + 24));
  }
  // The layer × head thumbnails of the selected component, fitted into `width` px.
  // opts.labelWidth: the layer label column (default 128 px, as the stylesheet's); opts.title: HTML
  // to head the grid instead of the component's name and shape.
  function gridHTML(S, width, opts) {
    const comp = S.components[view.component];
    if (!comp) return '<div class="empty">This source line is empty: it was not run through the model and has no maps.</div>';
    const labelWidth = opts && opts.labelWidth ? opts.labelWidth : 128;
    const F = tokens(S, comp.from).length, T = tokens(S, comp.to).length, n = Math.max(F, T), H = comp.heads.length;
    const per = (width - 44 - labelWidth) / H - 24;
    const s = Math.max(2, Math.min(14, Math.floor(per / n)));
    const sel = pick(comp);
    let h = opts && opts.title !== undefined ? opts.title : "<h2>" + NAMES[view.component] + " · " + comp.layers.length + " layers × " + H + " heads · rows: " + comp.from.replace("_", " ") + " tokens, columns: " + comp.to.replace("_", " ") + " tokens</h2>";
    comp.layers.forEach((L, li) => {
      h += '<div class="layer-row"><div class="layer-head"' + (opts && opts.labelWidth ? ' style="width:' + labelWidth + 'px"' : "") + '><div class="lname">Layer ' + L.layer + '</div><div class="mech">' + esc(mechLabel(L.mechanism)) + "</div>" + layerSummary(L) + '</div><div class="thumbs">';
      comp.heads.forEach((head, hi) => {
        const on = li === sel.layer && hi === sel.head ? " sel" : "";
        h += '<figure class="thumb' + on + '" data-l="' + li + '" data-h="' + hi + '"><figcaption>head ' + head + badge(L, hi) + "</figcaption>" +
             '<svg class="map" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" width="' + T * s + '" height="' + F * s + '" style="--s:' + s + 'px" shape-rendering="crispEdges">' +
             cells(L.weights[hi], F, T, s, "c", allowedFn(L, hi)) + outline(L, F, T, s, 0, 0) + "</svg>" + statsShort(headStats(L, hi, F, T)) + "</figure>";
      });
      h += "</div></div>";
    });
    return h;
  }

  const longest = (a) => a.reduce((m, t) => Math.max(m, [...t].length), 1);
  // The cell size (px) of the large map of the selection fitted into `width` px: 12 to 28 px, so
  // that 60 labels stay legible. opts.narrowStrips: the extras' strips have columns half as wide.
  function detailCell(S, width, opts) {
    const comp = S.components[view.component];
    if (!comp) return 28;
    const T = tokens(S, comp.to).length, L = comp.layers[pick(comp).layer], h = hooks(L);
    const f = opts && opts.narrowStrips ? 0.5 : 1;
    const sideCols = h.stripColumns ? h.stripColumns(L.extras || {}, f) : 0;
    const guess = Math.min(150, 12 + longest(tokens(S, comp.from)) * 7.5);
    return Math.max(12, Math.min(28, Math.floor((width - 40 - guess) / (T + sideCols + 1))));
  }
  // The large map of the selected layer and head with the tokens on both axes, its note and the
  // extras' side strips, fitted into `width` px. opts.cell: this cell size instead (pages that
  // show several maps side by side use one size); opts.narrowStrips as above.
  function detailHTML(S, width, opts) {
    const comp = S.components[view.component];
    if (!comp) return "";
    const rowsTok = tokens(S, comp.from), colsTok = tokens(S, comp.to);
    const F = rowsTok.length, T = colsTok.length;
    const sel = pick(comp), L = comp.layers[sel.layer], hi = sel.head, W = L.weights[hi];
    const s = opts && opts.cell ? opts.cell : detailCell(S, width, opts);
    const sw = opts && opts.narrowStrips ? Math.max(5, Math.round(s / 2)) : s;
    const fs = Math.min(13, s - 1);
    const left = Math.min(150, 12 + longest(rowsTok) * fs * 0.62);
    const top = Math.min(130, 12 + longest(colsTok) * fs * 0.62 * 0.82);
    let g = '<svg class="map big" data-l="' + sel.layer + '" data-h="' + hi + '" data-s="' + s + '" data-x="' + left + '" data-y="' + top + '" width="' + (left + T * s + 4) + '" height="' + (top + F * s + 4) + '" style="--s:' + s + 'px">';
    rowsTok.forEach((t, i) => { g += '<text class="rl" data-i="' + i + '" x="' + (left - 6) + '" y="' + (top + i * s + s / 2) + '" text-anchor="end" dominant-baseline="central" font-size="' + fs + '">' + label(t, true) + "</text>"; });
    colsTok.forEach((t, j) => { g += '<text class="cl" data-j="' + j + '" transform="translate(' + (left + j * s + s / 2) + "," + (top - 6) + ') rotate(-55)" dominant-baseline="central" font-size="' + fs + '">' + label(t, true) + "</text>"; });
    g += '<g transform="translate(' + left + "," + top + ')" shape-rendering="crispEdges">' + cells(W, F, T, s, "d", allowedFn(L, hi)) + "</g>";
    g += outline(L, F, T, s, left, top);
    g += '<rect class="hover" x="0" y="0" width="' + s + '" height="' + s + '" fill="none" stroke="#111827" stroke-width="1.5" visibility="hidden"></rect></svg>';
    return '<div class="title"><b>' + NAMES[view.component] + " · layer " + L.layer + " · head " + comp.heads[hi] + "</b>" + badge(L, hi) +
      '<span class="badge">' + esc(mechLabel(L.mechanism)) + "</span></div>" +
      '<div class="note">' + esc(noteFor(L, view.component)) + "</div>" + statsLine(headStats(L, hi, F, T)) +
      '<div class="maps"><div>' + g + "</div>" + sideStrips(L, sel.layer, hi, F, s, top, sw) + "</div>";
  }

  // The tooltip's HTML for the pointer at (x, y) over `svg` (a thumbnail, the large map or a side
  // strip drawn above from S), or "" off the cells. Over the large map it also moves the cell
  // outline and highlights the row and column labels.
  function hover(S, svg, x, y) {
    const comp = S && S.components ? S.components[view.component] : null;
    if (!comp) return "";
    const rowsTok = tokens(S, comp.from), colsTok = tokens(S, comp.to);
    const box = svg.getBoundingClientRect(), s = +svg.dataset.s;
    const x0 = +(svg.dataset.x || 0), y0 = +(svg.dataset.y || 0);
    const j = Math.floor((x - box.left - x0) / +(svg.dataset.w || s)), i = Math.floor((y - box.top - y0) / s);
    const li = +svg.dataset.l, hi = +svg.dataset.h, L = comp.layers[li];
    if (!L || i < 0 || i >= rowsTok.length || j < 0) return "";
    if (svg.classList.contains("side")) {
      const h = hooks(L);
      return h.stripTip ? h.stripTip(L.extras, svg.dataset.tip, i, j, { rowsTok, colsTok, hi, head: comp.heads[hi], esc, fmt }) : "";
    }
    if (j >= colsTok.length) return "";
    if (svg.classList.contains("big")) {
      const r = svg.querySelector("rect.hover");
      r.setAttribute("x", x0 + j * s); r.setAttribute("y", y0 + i * s); r.setAttribute("visibility", "visible");
      for (const t of svg.querySelectorAll("text.rl")) t.classList.toggle("hl", +t.dataset.i === i);
      for (const t of svg.querySelectorAll("text.cl")) t.classList.toggle("hl", +t.dataset.j === j);
    }
    return "layer " + L.layer + " · head " + comp.heads[hi] + '<br><span class="t">' + esc(rowsTok[i]) + "</span> (" + i + ') → <span class="t">' + esc(colsTok[j]) + "</span> (" + j + ')<br><span class="v">' + fmt(L.weights[hi][i][j]) + "</span>";
  }

  const drawer = { NAMES, MASKED, esc, fmt, label, tokens, color, rampGradient, mechLabel, noteFor, pick, allowedFn, headStats, cells,
                   outline, bandOutline, badge, layerSummary, sideStrips, gridBasis, gridHTML, detailCell, detailHTML, hover };
  return drawer;
}

// One tooltip element for every svg.map of the page. find(svg) → [drawer, S] or null.
function attnTooltip(tip, find) {
  "use strict";
  let lit = null;  // the large map whose cell outline is shown
  function hide() {
    tip.style.display = "none";
    if (lit) { const r = lit.querySelector("rect.hover"); if (r) r.setAttribute("visibility", "hidden"); lit = null; }
  }
  document.addEventListener("mousemove", (ev) => {
    const svg = ev.target.closest ? ev.target.closest("svg.map") : null;
    const found = svg ? find(svg) : null;
    if (lit && lit !== svg) hide();
    const html = found ? found[0].hover(found[1], svg, ev.clientX, ev.clientY) : "";
    if (!html) { hide(); return; }
    if (svg.classList.contains("big")) lit = svg;
    tip.innerHTML = html;
    tip.style.display = "block";
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(window.innerWidth - w - 8, ev.clientX + 14) + "px";
    tip.style.top = Math.min(window.innerHeight - h - 8, ev.clientY + 14) + "px";
  });
}
