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
  // Each mechanism's label and note, written from its module (nn/mechanism.h) before this script.
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
  function noteFor(L, component) {
    const m = MECH[L.mechanism] || MECH.mha;
    return m.note(L.extras || {}, component);
  }
  // The selection as indices valid in this component: {layer, head}.
  function pick(comp) {
    return { layer: Math.max(0, Math.min(comp.layers.length - 1, view.layer)),
             head: Math.max(0, Math.min(comp.heads.length - 1, view.head)) };
  }

  // Whether query i may attend to key j in this map: the mechanism's mask
  // (causal decoder, ConvSAN window, Fast-DiSA direction). Masked cells are grey.
  function allowedFn(L, hi) {
    const e = L.extras || {};
    const causal = view.component === "decoder", win = "left" in e;
    const dir = e.directions ? e.directions[hi] : null, strict = dir && !e.diagonal;
    return (i, j) => !(causal && j > i) && !(win && (j < i - e.left || j > i + e.right)) &&
                     !(dir === "forward" && (strict ? j >= i : j > i)) && !(dir === "backward" && (strict ? j <= i : j < i));
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
  // Side strips aligned with the F rows (s px) of the large map of layer li, head hi, under a
  // title band of `top` px: MUSE taps, ConvSAN 2D head area, Fast-DiSA fusion gate. Their
  // columns are w px wide (s unless given).
  function sideStrips(L, li, hi, F, s, top, w) {
    const cw = w || s;
    const e = L.extras || {};
    const out = [];
    const titled = (title) => '<div><div class="side-title" style="height:' + (top - 4) + 'px;display:flex;align-items:flex-end;justify-content:center">' + title + "</div>";
    const strip = (title, cols, rows, tip) => {
      let g = titled(title) + '<svg class="map side" data-tip="' + tip + '" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" data-w="' + cw + '" width="' + cols * cw + '" height="' + F * s + '" style="--s:' + s + 'px;--w:' + cw + 'px" shape-rendering="crispEdges">';
      for (let i = 0; i < F; ++i) for (let j = 0; j < cols; ++j) {
        const v = rows[i][j];
        g += '<rect class="x" x="' + j * cw + '" y="' + i * s + '" fill="' + (v === null ? "#ffffff" : color(v)) + '"' + (v === null ? ' stroke="#e5e7eb"' : "") + "></rect>";
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
      let b = titled("fusion gate G") + '<svg class="map side" data-tip="gate" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" data-w="' + (w + 36) + '" width="' + (w + 36) + '" height="' + F * s + '">';
      for (let i = 0; i < F; ++i) {
        b += '<rect x="0" y="' + (i * s + 1) + '" width="' + w + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#eef1f6"></rect>' +
             '<rect x="0" y="' + (i * s + 1) + '" width="' + (w * g[i]).toFixed(1) + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#2f9e44" opacity="0.75"></rect>';
        if (s >= 10) b += '<text x="' + (w + 4) + '" y="' + (i * s + s / 2) + '" dominant-baseline="central" font-size="' + Math.min(11, s - 1) + '">' + fmt(g[i]) + "</text>";
      }
      out.push(b + "</svg></div>");
    }
    return out.join("");
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
      h += '<div class="layer-row"><div class="layer-head"' + (opts && opts.labelWidth ? ' style="width:' + labelWidth + 'px"' : "") + '><div class="lname">Layer ' + L.layer + '</div><div class="mech">' + esc(mechLabel(L.mechanism)) + "</div>" + gateBars(L) + '</div><div class="thumbs">';
      comp.heads.forEach((head, hi) => {
        const on = li === sel.layer && hi === sel.head ? " sel" : "";
        h += '<figure class="thumb' + on + '" data-l="' + li + '" data-h="' + hi + '"><figcaption>head ' + head + directionBadge(L, hi) + "</figcaption>" +
             '<svg class="map" data-l="' + li + '" data-h="' + hi + '" data-s="' + s + '" width="' + T * s + '" height="' + F * s + '" style="--s:' + s + 'px" shape-rendering="crispEdges">' +
             cells(L.weights[hi], F, T, s, "c", allowedFn(L, hi)) + windowPath(L, F, T, s, 0, 0) + "</svg></figure>";
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
    const T = tokens(S, comp.to).length, e = comp.layers[pick(comp).layer].extras || {};
    const f = opts && opts.narrowStrips ? 0.5 : 1;
    const sideCols = (e.taps ? e.kernels.reduce((a, k) => a + k * f + 2, 0) : 0) + (e.head_weights && e.head_window > 1 ? e.head_window * f + 2 : 0) +
                     (e.fusion_gate ? 8 : 0);
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
    g += windowPath(L, F, T, s, left, top);
    g += '<rect class="hover" x="0" y="0" width="' + s + '" height="' + s + '" fill="none" stroke="#111827" stroke-width="1.5" visibility="hidden"></rect></svg>';
    return '<div class="title"><b>' + NAMES[view.component] + " · layer " + L.layer + " · head " + comp.heads[hi] + "</b>" + directionBadge(L, hi) +
      '<span class="badge">' + esc(mechLabel(L.mechanism)) + "</span></div>" +
      '<div class="note">' + esc(noteFor(L, view.component)) + "</div>" +
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
      const e = L.extras, kind = svg.dataset.tip;
      if (kind.startsWith("taps:")) {
        const ki = +kind.slice(5), k = e.kernels[ki];
        if (j >= k) return "";
        const src = i + j - e.offsets[ki];
        return "tap " + j + " of k=" + k + ' for <span class="t">' + esc(rowsTok[i]) + "</span> reads " + (src >= 0 && src < colsTok.length ? '<span class="t">' + esc(colsTok[src]) + "</span>" : "outside the sentence (0)") +
               '<br><span class="v">' + fmt(e.taps[ki][hi][i][j]) + "</span>";
      }
      if (kind === "area") {
        if (j >= e.head_window) return "";
        const kh = comp.heads[hi] + j - (e.head_window - 1) / 2, v = e.head_weights[hi][i][j];
        return '<span class="t">' + esc(rowsTok[i]) + "</span>: weight on head " + kh + '<br><span class="v">' + (v === null ? "dropped (no such head)" : fmt(v)) + "</span>";
      }
      return '<span class="t">' + esc(rowsTok[i]) + '</span>: fusion gate<br><span class="v">' + fmt(e.fusion_gate[hi][i]) + "</span>";
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

  return { NAMES, MASKED, esc, fmt, label, tokens, color, rampGradient, mechLabel, noteFor, pick, allowedFn, cells,
           windowPath, directionBadge, gateBars, sideStrips, gridBasis, gridHTML, detailCell, detailHTML, hover };
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
