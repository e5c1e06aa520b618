(function () {
  "use strict";
  const header = JSON.parse(document.getElementById("attn-header").textContent);
  const blocks = Array.from(document.querySelectorAll("script.attn-sentence"));
  const $ = (id) => document.getElementById(id);
  const state = { s: 0, component: null, layer: 0, head: 0, scale: "linear" };
  const draw = attnMapsDrawer(state, header.precision);
  const esc = draw.esc, fmt = draw.fmt, NAMES = draw.NAMES;
  $("ramp").style.background = draw.rampGradient();

  const cache = new Map();
  function sentence(k) {
    if (!cache.has(k)) {
      if (cache.size > 6) cache.delete(cache.keys().next().value);
      cache.set(k, JSON.parse(blocks[k].textContent));
    }
    return cache.get(k);
  }

  // ---- URL hash: component, sentence, layer, head, scale (sqrt only) ----
  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (p.has("sentence")) state.s = Math.max(0, Math.min(blocks.length - 1, parseInt(p.get("sentence"), 10) || 0));
    if (p.has("component")) state.component = p.get("component");
    if (p.has("layer")) state.layer = parseInt(p.get("layer"), 10) || 0;
    if (p.has("head")) state.head = parseInt(p.get("head"), 10) || 0;
    state.scale = p.get("scale") === "sqrt" ? "sqrt" : "linear";
    for (const o of $("scale").querySelectorAll("button")) o.classList.toggle("on", o.dataset.k === state.scale);
  }
  function writeHash() {
    const h = "#component=" + state.component + "&sentence=" + state.s + "&layer=" + state.layer + "&head=" + state.head +
      (state.scale === "linear" ? "" : "&scale=" + state.scale);
    if (location.hash !== h) history.replaceState(null, "", h);
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
    attnTooltip($("tip"), () => blocks.length ? [draw, sentence(state.s)] : null);
  }

  function renderTabs(S) {
    const names = Object.keys(S.components);
    if (names.length === 0) { $("tabs").innerHTML = ""; return; }
    if (!names.includes(state.component)) state.component = names[0];
    $("tabs").innerHTML = names.map((n) => '<button data-c="' + n + '" class="' + (n === state.component ? "on" : "") + '">' + NAMES[n] + "</button>").join("");
    for (const b of $("tabs").querySelectorAll("button")) b.onclick = () => { state.component = b.dataset.c; render(); };
  }

  function renderSentence(S) {
    const tok = (t) => '<span class="tok' + (t === "</s>" || t === "<s>" ? " sp" : "") + '">' + draw.label(t, false) + "</span>";
    const forced = header.mode === "forced";
    $("sentence").innerHTML = "<h2>Sentence " + S.index + " of " + blocks.length + "</h2>" +
      '<div class="line"><span class="k">source</span><span class="text">' + esc(S.source) + "</span>" +
      '<span class="k">subwords</span><span class="toks">' + S.source_tokens.map(tok).join("") + "</span>" +
      '<span class="k">' + (forced ? "target" : "output") + '</span><span class="text">' + esc(S.translation) + "</span>" +
      '<span class="k">subwords</span><span class="toks">' + S.target_tokens.map(tok).join("") + "</span>" +
      '<span class="k">score</span><span class="score">' + fmt(S.score) + "  (log-prob " + fmt(S.logprob) + ")</span></div>";
  }

  function renderGrid(S) {
    const grid = $("grid");
    if (S.components[state.component]) {
      grid.dataset.component = state.component;
      // The grid asks for the width of one row of heads (the detail panel moves
      // below when both do not fit), then fits into what it got.
      grid.style.flexBasis = draw.gridBasis(S) + "px";
    }
    grid.innerHTML = draw.gridHTML(S, grid.clientWidth);
    for (const f of grid.querySelectorAll("figure.thumb")) f.onclick = () => { state.layer = +f.dataset.l; state.head = +f.dataset.h; render(); };
  }

  function render() {
    if (blocks.length === 0) {
      $("sentence").innerHTML = '<div class="empty">No sentences in this file.</div>';
      $("grid").innerHTML = ""; $("detail").innerHTML = "";
      return;
    }
    const S = sentence(state.s);
    $("pick").value = String(state.s);
    renderTabs(S);
    const comp = S.components[state.component];
    if (comp) Object.assign(state, draw.pick(comp));
    renderSentence(S);
    renderGrid(S);
    $("detail").innerHTML = draw.detailHTML(S, $("detail").clientWidth);
    writeHash();
  }

  setup();
  readHash();
  render();
})();
