#include "attn/decode/maps_page.h"

#include <nlohmann/json.hpp>

#include "attn/decode/maps_draw.h"
#include "attn/nn/mechanism.h"
#include "attn/text/html.h"

namespace attn::decode {

using text::html_escape;
using text::script_safe;

namespace {

// The page before the data: head, the shared map style (maps_draw.h), this
// page's layout and the empty frame the viewer fills.

constexpr const char* kPageLayout = R"PAGE(<style>
nav.bar { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center;
  padding: 10px 22px; background: rgba(245,246,248,0.94); backdrop-filter: blur(6px); border-bottom: 1px solid var(--line); }
nav.bar .group { display: flex; align-items: center; gap: 6px; }
nav.bar label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; margin-right: 2px; }
main { padding: 14px 22px 40px; display: flex; flex-direction: column; gap: 14px; }
#sentence .line { display: grid; grid-template-columns: 96px 1fr; gap: 6px 12px; align-items: baseline; }
#sentence .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
#sentence .text { font-size: 15px; }
.panels { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
#grid { flex: 1 1 560px; min-width: 0; }
#detail { flex: 1 1 640px; min-width: 0; position: sticky; top: 62px; max-height: calc(100vh - 76px); overflow: auto; }
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
    <section class="card detail" id="detail"></section>
  </div>
</main>
<footer>Weights are the ones the model's forward pass used; rows are the attending tokens and sum to 1. Written by attn attend; the JSON format is described in docs/attention-json.md.</footer>
<div id="tip"></div>
)PAGE";

// The viewer, after the data blocks, the mechanisms and the drawing code (maps_draw.h).
constexpr const char* kPageScript = R"PAGE(<script>
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
  std::fputs(page_head("attn attend — attention maps").c_str(), out_);
  std::fputs(maps_style().c_str(), out_);
  std::fputs(kPageLayout, out_);
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
  std::fputs(maps_draw_script().c_str(), out_);
  std::fputs(kPageScript, out_);
  std::fflush(out_);
}

}  // namespace attn::decode
