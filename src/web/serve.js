(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const ORDER = ["encoder", "decoder", "cross"];
  // The selection every panel shows (layer, head: indices into the component's arrays).
  const view = { component: null, layer: 0, head: 0, scale: "linear" };
  const models = new Map();           // name → its /v1/models entry
  let panels = [];                    // [{name, doc, S, draw, el}] of the last answer
  let asked = 0;                      // the number of the newest request; older answers are dropped
  let waiting = false;                // a request is in flight: redraws keep the "busy" state
  const esc = attnMapsDrawer(view, 4).esc;
  $("ramp").style.background = attnMapsDrawer(view, 4).rampGradient();

  function setState(state, message) {
    document.body.dataset.state = state;
    const st = $("status");
    st.className = state === "busy" || state === "error" ? state : "";
    st.innerHTML = state === "error" ? "<b>Error</b>" + esc(message) : state === "busy" ? esc(message) : "";
    $("translate").disabled = state === "busy";
  }

  // ---- URL: ?s=&models=&beam= (what to ask), #component=&layer=&head=[&scale=sqrt] (what to show) ----
  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (p.has("component")) view.component = p.get("component");
    if (p.has("layer")) view.layer = parseInt(p.get("layer"), 10) || 0;
    if (p.has("head")) view.head = parseInt(p.get("head"), 10) || 0;
    view.scale = p.get("scale") === "sqrt" ? "sqrt" : "linear";
    for (const o of $("scale").querySelectorAll("button")) o.classList.toggle("on", o.dataset.k === view.scale);
  }
  function writeUrl(query) {
    const q = query === undefined ? location.search : query;
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (view.component) { p.set("component", view.component); p.set("layer", view.layer); p.set("head", view.head); }
    if (view.scale === "linear") p.delete("scale"); else p.set("scale", view.scale);
    const h = p.toString() ? "#" + p.toString() : "";
    if (location.search !== q || location.hash !== h) history.replaceState(null, "", location.pathname + q + h);
  }

  // An API call: the parsed JSON of a 2xx answer, or throws an Error with a readable message.
  async function api(path, body) {
    let res;
    try {
      res = await fetch(path, body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    } catch (e) {
      throw new Error("the server did not answer (" + e.message + ").");
    }
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch (e) { json = null; }
    if (!res.ok) {
      const m = json && json.error && json.error.message ? json.error.message : text.trim().slice(0, 300) || res.statusText;
      throw new Error(m + " (HTTP " + res.status + ")");
    }
    if (json === null) throw new Error("the server's answer to " + path + " is not JSON.");
    return json;
  }

  function modelPicker(list) {
    $("models").innerHTML = list.map((m) => '<label title="' + esc(m.file || "") + '"><input type="checkbox" name="model" value="' + esc(m.name) + '" checked>' +
      esc(m.name) + (m.arch && m.arch !== m.name ? " <small>" + esc(m.arch) + "</small>" : "") + "</label>").join("");
    $("meta").textContent = list.length + (list.length === 1 ? " model loaded" : " models loaded") + " · compare their attention on one sentence";
  }

  // query: the URL's own ?… when it asked; order: its models= list, whose order the panels keep.
  async function submit(query, order) {
    const sentence = $("sentence").value.trim();
    const chosen = order || Array.from(document.querySelectorAll("#models input[name=model]:checked")).map((i) => i.value);
    const beam = Number($("beam").value);
    if (!sentence) { setState("error", "Type a sentence first."); return; }
    if (chosen.length === 0) { setState("error", "Choose at least one model."); return; }
    const maxBeam = Number($("beam").max);
    if (!Number.isInteger(beam) || beam < 1 || beam > maxBeam) { setState("error", "The beam size must be a whole number from 1 to " + maxBeam + " (the server's --max-beam)."); return; }
    const ticket = ++asked;
    setState("busy", "Translating with " + chosen.join(", ") + "…");
    const all = chosen.length === models.size;
    writeUrl(query !== undefined ? query : "?s=" + encodeURIComponent(sentence) + (all ? "" : "&models=" + chosen.map(encodeURIComponent).join(",")) + (beam === 5 ? "" : "&beam=" + beam));
    let answer;
    waiting = true;
    try {
      answer = await api("/v1/attend", { models: chosen, sentences: [sentence], beam: beam });
    } catch (e) {
      if (ticket !== asked) return;
      waiting = false;
      // The panels drawn stay: a refused request does not take away what was shown.
      setState("error", e.message + (panels.length ? " The maps below are still those of the previous request." : ""));
      return;
    }
    if (ticket !== asked) return;
    waiting = false;
    try {
      show(chosen, answer);
    } catch (e) {
      setState("error", "The answer could not be drawn: " + e.message);
    }
  }

  // ---- the panels: one per model, in the requested order ----
  function show(chosen, answer) {
    const results = answer && Array.isArray(answer.results) ? answer.results : null;
    if (!results) throw new Error("it has no results.");
    panels = chosen.map((name) => {
      const r = results.find((x) => x.model === name);
      if (!r || !r.document || !r.document.sentences || !r.document.sentences[0]) throw new Error("nothing for model " + name + ".");
      return { name: name, doc: r.document, S: r.document.sentences[0], draw: attnMapsDrawer(view, r.document.precision || 4) };
    });
    $("results").innerHTML = panels.map((p) => '<section class="card model-panel" data-model="' + esc(p.name) + '"></section>').join("");
    panels.forEach((p, k) => { p.el = $("results").children[k]; p.el.innerHTML = panelHead(p); });
    $("bar").hidden = false;
    draw();
  }

  function panelHead(p) {
    const cfg = p.doc.model.config || {}, info = models.get(p.name) || {}, S = p.S;
    const meta = [cfg.arch || info.arch, cfg.enc_layers + "+" + cfg.dec_layers + " layers", cfg.heads + " heads", "d " + cfg.dim,
                  info.parameters ? (info.parameters / 1e6).toFixed(1) + " M parameters" : null].filter((x) => x).join(" · ");
    const side = (name, kinds) => {
      const labels = [...new Set(kinds || [])].map((k) => p.draw.mechLabel(k));
      return labels.length ? '<span class="badge"><b>' + name + "</b>" + esc(labels.join(" + ")) + "</span>" : "";
    };
    const search = p.doc.mode === "beam" ? "beam " + p.doc.search.beam : p.doc.mode;
    return '<div class="head"><h2>' + esc(p.name) + '</h2><div class="meta">' + esc(meta) + "</div></div>" +
      '<div class="mechs">' + side("encoder", p.doc.model.encoder_mixers) + side("decoder", p.doc.model.decoder_mixers) + "</div>" +
      '<div class="out"><div class="translation">' + (S.translation ? esc(S.translation) : '<span class="problem">(empty translation)</span>') + "</div>" +
      '<div class="score">score <span class="v">' + p.draw.fmt(S.score) + "</span> · log-prob " + p.draw.fmt(S.logprob) + " · " + S.target_tokens.length + " target subwords · " + esc(search) + "</div></div>" +
      '<div class="detail"></div><div class="grid"></div>';
  }

  // The tabs and the layer and head menus from the answers, then every panel's maps.
  function draw() {
    if (panels.length === 0) return;
    const names = ORDER.filter((c) => panels.some((p) => p.S.components[c]));
    if (!names.includes(view.component)) view.component = names[0] || null;
    $("tabs").innerHTML = names.map((n) => '<button type="button" data-c="' + n + '" class="' + (n === view.component ? "on" : "") + '">' + panels[0].draw.NAMES[n] + "</button>").join("");
    // The menus follow the model with the most layers and heads in this component.
    let widest = null;
    for (const p of panels) {
      const c = p.S.components[view.component];
      if (c && (!widest || c.layers.length * c.heads.length > widest.layers.length * widest.heads.length)) widest = c;
    }
    if (widest) {
      view.layer = Math.max(0, Math.min(widest.layers.length - 1, view.layer));
      view.head = Math.max(0, Math.min(widest.heads.length - 1, view.head));
      $("layer").innerHTML = widest.layers.map((L, li) => '<option value="' + li + '">' + L.layer + "</option>").join("");
      $("head").innerHTML = widest.heads.map((h, hi) => '<option value="' + hi + '">' + h + "</option>").join("");
      $("layer").value = String(view.layer);
      $("head").value = String(view.head);
    }
    // One cell size for every large map, the largest that fits in the narrowest panel, so that
    // the panels compare at a glance; the extras' strips take half-width columns.
    const fit = { narrowStrips: true };
    fit.cell = Math.min(...panels.map((p) => p.draw.detailCell(p.S, p.el.clientWidth, fit)));
    const title = '<h2>All layers × heads · click one to show it in every panel</h2>';
    for (const p of panels) {
      const detail = p.el.querySelector(".detail"), grid = p.el.querySelector(".grid");
      detail.innerHTML = p.draw.detailHTML(p.S, p.el.clientWidth, fit);
      grid.innerHTML = p.draw.gridHTML(p.S, p.el.clientWidth, { title: title });
      grid.dataset.component = view.component || "";
    }
    alignRows();
    writeUrl();
    if (!waiting) setState("drawn");
  }

  // The large maps of one row of panels start at one height: what stands above their cells (the
  // translation, the badges, the note, the column labels) is not as tall in every panel.
  function alignRows() {
    const rows = new Map();  // a row's top → its panels' maps
    for (const p of panels) {
      const svg = p.el.querySelector("svg.map.big"), maps = p.el.querySelector(".detail .maps");
      if (!svg || !maps) continue;
      maps.style.paddingTop = "";
      if (!rows.has(p.el.offsetTop)) rows.set(p.el.offsetTop, []);
      rows.get(p.el.offsetTop).push({ maps: maps, svg: svg });
    }
    for (const row of rows.values()) {
      const cells = row.map((r) => r.svg.getBoundingClientRect().top + Number(r.svg.dataset.y));
      const lowest = Math.max(...cells);
      row.forEach((r, k) => { r.maps.style.paddingTop = (lowest - cells[k]) + "px"; });
    }
  }

  function setup() {
    $("ask").addEventListener("submit", (ev) => { ev.preventDefault(); submit(); });
    $("tabs").addEventListener("click", (ev) => {
      const b = ev.target.closest("button[data-c]");
      if (b) { view.component = b.dataset.c; draw(); }
    });
    $("layer").onchange = () => { view.layer = +$("layer").value; draw(); };
    $("head").onchange = () => { view.head = +$("head").value; draw(); };
    for (const b of $("scale").querySelectorAll("button")) b.onclick = () => {
      view.scale = b.dataset.k;
      for (const o of $("scale").querySelectorAll("button")) o.classList.toggle("on", o === b);
      draw();
      writeUrl();  // also before any panel is drawn
    };
    $("results").addEventListener("click", (ev) => {
      const f = ev.target.closest("figure.thumb");
      if (f) { view.layer = +f.dataset.l; view.head = +f.dataset.h; draw(); }
    });
    window.addEventListener("hashchange", () => { readHash(); draw(); });
    let resizing = 0;
    window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(draw, 150); });
    attnTooltip($("tip"), (svg) => {
      const el = svg.closest(".model-panel");
      const p = el ? panels.find((x) => x.el === el) : null;
      return p ? [p.draw, p.S] : null;
    });
  }

  async function start() {
    setup();
    readHash();
    const q = new URLSearchParams(location.search);
    if (q.has("s")) setState("busy", "Loading the models…");
    let list;
    try {
      const answer = await api("/v1/models");
      list = answer.models;
      if (!Array.isArray(list)) throw new Error("the server's model list has no models.");
      // The controls allow what the server does.
      if (answer.limits && Number.isInteger(answer.limits.max_beam)) $("beam").max = answer.limits.max_beam;
    } catch (e) {
      setState("error", "Could not load the models: " + e.message);
      return;
    }
    for (const m of list) models.set(m.name, m);
    modelPicker(list);
    if (!q.has("s")) {
      setState("idle");
      $("results").innerHTML = '<div class="intro">Type a sentence above and press Enter: each chosen model translates it, and its attention maps appear side by side.</div>';
      $("sentence").focus();
      return;
    }
    $("sentence").value = q.get("s");
    if (q.has("beam")) $("beam").value = q.get("beam");
    if (q.has("models")) {
      const wanted = q.get("models").split(",").map((x) => x.trim()).filter((x) => x);
      const unknown = wanted.filter((n) => !models.has(n));
      if (unknown.length) {
        setState("error", "Unknown model" + (unknown.length > 1 ? "s " : " ") + unknown.join(", ") + "; loaded: " + [...models.keys()].join(", ") + ".");
        return;
      }
      for (const i of document.querySelectorAll("#models input[name=model]")) i.checked = wanted.includes(i.value);
      submit(location.search, wanted);
      return;
    }
    submit(location.search);
  }

  start();
})();
