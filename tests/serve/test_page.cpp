// The page of attn serve (serve/page.h) without the server: the document is
// self-contained, and in headless Chromium, with the API answered by a stub
// fetch from documents of real (random) models, it draws one panel per model
// with every cell of the selected component, each mechanism's extras, one
// selection shared by the panels, and the server's error as a message.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (as in tests/decode/test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../report/browser.h"
#include "../decode/small_maps_config.h"
#include "../support.h"
#include "attn/core/arena.h"
#include "attn/decode/maps.h"
#include "attn/serve/page.h"

using namespace attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The attend document (one sentence, the default search: beam 5) of a random model of `arch`, as attn serve answers it.
json attend_document(const std::string& arch, const std::string& sentence, std::uint64_t seed) {
  const text::Bpe bpe;
  const model::ModelConfig c = test::small_maps_config(arch, static_cast<std::int64_t>(bpe.vocab().size()));
  model::Seq2Seq m(c);
  Rng init(seed);
  m.initialize(init);
  for (float& v : m.params().values()) v *= 2.5f;  // peaked maps
  const std::vector<std::string> lines{sentence};
  const std::vector<std::vector<std::int32_t>> sources{bpe.encode(sentence)};
  decode::SearchOptions search;
  search.max_len_a = 0.0;
  search.max_len_b = 6.0;
  decode::AttendInput input;
  input.source_lines = &lines;
  input.sources = &sources;
  Arena arena;
  Rng rng(0);
  nn::StepContext ctx{m.params(), arena, rng, false};
  json doc = decode::maps_header(m, arch + ".attn", false, search, {});
  doc["sentences"] = json::array();
  decode::run_attend(ctx, m, bpe, input, search, {},
                     [&](std::int64_t, const std::string& s) { doc["sentences"].push_back(json::parse(s)); });
  return doc;
}

// The page with a stand-in for fetch before its scripts: GET /v1/models lists `models`; POST
// /v1/attend answers `attend` (status and body) and records the request in body[data-asked];
// with `later`, every call after the first answers 400 with that body.
std::string stubbed_page(const json& models, int status, const json& attend, const json& later = nullptr) {
  std::string page = serve::serve_page();
  const std::string stub =
      "<script>\n"
      "window.fetch = async function (path, init) {\n"
      "  const reply = (status, body) => new Response(JSON.stringify(body), {status: status, headers: {'Content-Type': 'application/json'}});\n"
      "  if (path === '/v1/models') return reply(200, " +
      models.dump() +
      ");\n"
      "  document.body.dataset.asked = init.body;\n"
      "  window.attendCalls = (window.attendCalls || 0) + 1;\n"
      "  if (window.attendCalls > 1 && " +
      later.dump() + " !== null) return reply(400, " + later.dump() +
      ");\n"
      "  return reply(" +
      std::to_string(status) + ", " + attend.dump() +
      ");\n"
      "};\n"
      "</script>\n";
  page.insert(page.find("</head>"), stub);
  return page;
}

}  // namespace

TEST_CASE("serve page: one self-contained document with the controls the tests and links rely on", "[serve]") {
  const std::string page = serve::serve_page();
  REQUIRE(page.rfind("<!doctype html>", 0) == 0);
  REQUIRE(page.rfind("</html>\n") == page.size() - 8);
  for (const char* outside : {"http://", "https://", "<script src", "<link", "@import", "url("}) {
    INFO(outside);
    REQUIRE(page.find(outside) == std::string::npos);
  }
  for (const char* part :
       {"<body data-state=\"idle\">", "id=\"sentence\"", "id=\"translate\"", "id=\"models\"", "id=\"beam\"",
        "id=\"tabs\"", "id=\"layer\"", "id=\"head\"", "id=\"scale\"", "id=\"status\"", "id=\"results\"", "id=\"tip\"",
        "const ATTN_MECHANISMS", "function attnMapsDrawer", "function attnTooltip"}) {
    INFO(part);
    REQUIRE(page.find(part) != std::string::npos);
  }
}

TEST_CASE("serve page (cli): headless chromium draws a panel per model from the API's documents",
          "[serve][cli][browser][e2e]") {
  if (!fs::exists(test::kChromium)) {
    ATTN_SKIP("chromium is not installed (apt-get install chromium)");
  }
  test::ScratchDir dir;
  const std::string sentence = "a dog runs .";
  const std::vector<std::string> archs{"muse", "convsan2d", "fastdisa"};
  json models = {{"models", json::array()}}, results = json::array();
  for (std::size_t k = 0; k < archs.size(); ++k) {
    const json doc = attend_document(archs[k], sentence, 40 + k);
    models["models"].push_back({{"name", archs[k]},
                                {"file", archs[k] + ".attn"},
                                {"arch", archs[k]},
                                {"parameters", 1000},
                                {"config", doc["model"]["config"]},
                                {"encoder_mixers", doc["model"]["encoder_mixers"]},
                                {"decoder_mixers", doc["model"]["decoder_mixers"]}});
    results.push_back({{"model", archs[k]}, {"document", doc}});
  }
  const json& s0 = results[0]["document"]["sentences"][0];
  const std::size_t F = s0["source_tokens"].size();
  REQUIRE(F > 3);

  const fs::path page = dir.path() / "serve.html";
  std::ofstream(page, std::ios::binary) << stubbed_page(models, 200, {{"results", results}});
  // The encoder's layer 0, head 2 in every panel, at the URL's request.
  std::string dom = test::browse(dir.path(),
                                 page.string() + "?s=a%20dog%20runs%20.&beam=3#component=encoder&layer=0&head=2",
                                 "--dump-dom");
  REQUIRE(dom.find("<body data-state=\"drawn\"") != std::string::npos);
  REQUIRE(dom.find("data-asked=\"{&quot;models&quot;:[&quot;muse&quot;,&quot;convsan2d&quot;,&quot;fastdisa&quot;],"
                   "&quot;sentences&quot;:[&quot;a dog runs .&quot;],&quot;beam&quot;:3}\"") != std::string::npos);
  std::vector<std::string> panel;
  for (const std::string& name : archs) {
    const std::size_t at = dom.find("data-model=\"" + name + "\"");
    REQUIRE(at != std::string::npos);
    panel.push_back(dom.substr(at, dom.find("data-model=", at + 12) - at));
    INFO(name);
    REQUIRE(test::count_occurrences(panel.back(), "<rect class=\"d\"") == F * F);          // the large map
    REQUIRE(test::count_occurrences(panel.back(), "<rect class=\"c\"") == 2 * 4 * F * F);  // 2 layers × 4 heads
    REQUIRE(test::count_occurrences(panel.back(), "<figure class=\"thumb sel\" data-l=\"0\" data-h=\"2\"") == 1);
    REQUIRE(panel.back().find("<svg class=\"map big\" data-l=\"0\" data-h=\"2\"") != std::string::npos);
  }
  REQUIRE(panel[0].find("data-tip=\"taps:1\"") != std::string::npos);  // MUSE: the k=7 cell's taps
  REQUIRE(panel[1].find("<path class=\"win\"") != std::string::npos);  // ConvSAN: the window
  REQUIRE(panel[1].find("data-tip=\"area\"") != std::string::npos);    // ConvSAN 2D: the head area
  REQUIRE(panel[2].find("class=\"badge bw\"") != std::string::npos);   // Fast-DiSA: its backward heads
  REQUIRE(panel[2].find("data-tip=\"gate\"") != std::string::npos);    // and its fusion gate

  // A click on a thumbnail of one panel selects that layer and head in all of them.
  std::string html = test::slurp(page);
  html.insert(
      html.rfind("</body>"),
      "<script>new MutationObserver(() => {\n"
      "  if (document.body.dataset.state !== 'drawn' || document.body.dataset.probe) return;\n"
      "  document.querySelector('[data-model=\"fastdisa\"] figure.thumb[data-l=\"1\"][data-h=\"3\"]').click();\n"
      "  document.body.setAttribute('data-probe', Array.from(document.querySelectorAll('svg.map.big'))\n"
      "    .map((s) => s.dataset.l + '/' + s.dataset.h).join(' ') + ' ' + location.hash);\n"
      "}).observe(document.body, {attributes: true});</script>\n");
  const fs::path probe = dir.path() / "probe.html";
  std::ofstream(probe, std::ios::binary) << html;
  dom = test::browse(dir.path(), probe.string() + "?s=a%20dog%20runs%20.", "--dump-dom");
  const std::size_t at = dom.find("data-probe=\"");
  REQUIRE(at != std::string::npos);
  REQUIRE(dom.substr(at + 12, dom.find('"', at + 12) - at - 12) ==
          "1/3 1/3 1/3 #component=encoder&amp;layer=1&amp;head=3");

  // The server's error is a message on the page.
  std::ofstream(page, std::ios::binary) << stubbed_page(
      models, 400, {{"error", {{"status", 400}, {"message", "the sentence is longer than 256 tokens"}}}});
  dom = test::browse(dir.path(), page.string() + "?s=a%20dog", "--dump-dom");
  REQUIRE(dom.find("<body data-state=\"error\"") != std::string::npos);
  REQUIRE(dom.find("the sentence is longer than 256 tokens (HTTP 400)") != std::string::npos);
  REQUIRE(dom.find("data-model=\"muse\"") == std::string::npos);  // no panel

  // The beam box allows what /v1/models says the server does; a refused request keeps the panels drawn.
  json limited = models;
  limited["limits"] = {{"max_beam", 7}};
  html = stubbed_page(limited, 200, {{"results", results}},
                      {{"error", {{"status", 400}, {"message", "the server is busy"}}}});
  html.insert(
      html.rfind("</body>"),
      "<script>new MutationObserver(() => {\n"
      "  const state = document.body.dataset.state;\n"
      "  if (state === 'drawn' && !window.again) { window.again = true; document.getElementById('translate').click(); }\n"
      "  if (state === 'error' && !document.body.dataset.probe)\n"
      "    document.body.setAttribute('data-probe', document.querySelectorAll('section.model-panel').length + ' ' +\n"
      "      document.getElementById('beam').max);\n"
      "}).observe(document.body, {attributes: true});</script>\n");
  std::ofstream(probe, std::ios::binary) << html;
  dom = test::browse(dir.path(), probe.string() + "?s=a%20dog%20runs%20.", "--dump-dom");
  const std::size_t kept = dom.find("data-probe=\"");
  REQUIRE(kept != std::string::npos);
  REQUIRE(dom.substr(kept + 12, dom.find('"', kept + 12) - kept - 12) == "3 7");
  REQUIRE(dom.find("the server is busy (HTTP 400)") != std::string::npos);
}

// Three panels at 1,280 px: one row, the large maps' cells starting at one
// height whatever stands above them, and the contrast kept in the URL as the
// component, layer and head are.
TEST_CASE("serve page (cli): at 1,280 px three panels share a row, their maps start at one height, the contrast is "
          "in the URL",
          "[serve][cli][browser][nothing-lost-4][e2e]") {
  if (!fs::exists(test::kChromium)) {
    ATTN_SKIP("chromium is not installed (apt-get install chromium)");
  }
  test::ScratchDir dir;
  const std::vector<std::string> archs{"muse", "convsan2d", "fastdisa"};
  json models = {{"models", json::array()}}, results = json::array();
  for (std::size_t k = 0; k < archs.size(); ++k) {
    const json doc = attend_document(archs[k], "a dog runs .", 40 + k);
    models["models"].push_back({{"name", archs[k]},
                                {"file", archs[k] + ".attn"},
                                {"arch", archs[k]},
                                {"parameters", 1000},
                                {"config", doc["model"]["config"]},
                                {"encoder_mixers", doc["model"]["encoder_mixers"]},
                                {"decoder_mixers", doc["model"]["decoder_mixers"]}});
    results.push_back({{"model", archs[k]}, {"document", doc}});
  }
  // One translation long enough to take two lines: that panel's map would start lower.
  results[1]["document"]["sentences"][0]["translation"] =
      "a translation long enough to wrap onto a second line in a panel a third of the window wide";
  std::string html = stubbed_page(models, 200, {{"results", results}});
  // Once drawn: each panel's top, each large map's first cell row (page y), then the hash after a
  // click on the square-root contrast.
  html.insert(html.rfind("</body>"),
              "<script>new MutationObserver(() => {\n"
              "  if (document.body.dataset.state !== 'drawn' || document.body.dataset.probe) return;\n"
              "  const panels = Array.from(document.querySelectorAll('section.model-panel'));\n"
              "  const tops = panels.map((p) => Math.round(p.getBoundingClientRect().top));\n"
              "  const cells = panels.map((p) => { const s = p.querySelector('svg.map.big');\n"
              "    return Math.round(s.getBoundingClientRect().top + Number(s.dataset.y)); });\n"
              "  document.querySelector('#scale button[data-k=sqrt]').click();\n"
              "  document.body.setAttribute('data-probe', 'panels ' + tops.join(' ') + ' cells ' + cells.join(' ') +\n"
              "    ' hash ' + location.hash);\n"
              "}).observe(document.body, {attributes: true});</script>\n");
  const fs::path probe = dir.path() / "probe.html";
  std::ofstream(probe, std::ios::binary) << html;
  const std::string dom =
      test::browse(dir.path(), probe.string() + "?s=a%20dog%20runs%20.#component=cross", "--dump-dom", "1280,900");
  const std::size_t at = dom.find("data-probe=\"");
  REQUIRE(at != std::string::npos);
  std::istringstream probed(dom.substr(at + 12, dom.find('"', at + 12) - at - 12));
  INFO(probed.str());
  std::string word, hash;
  int panel_top[3], cell_top[3];
  probed >> word >> panel_top[0] >> panel_top[1] >> panel_top[2] >> word >> cell_top[0] >> cell_top[1] >> cell_top[2] >>
      word >> hash;
  REQUIRE(panel_top[1] == panel_top[0]);  // one row
  REQUIRE(panel_top[2] == panel_top[0]);
  REQUIRE(std::abs(cell_top[1] - cell_top[0]) <= 1);  // maps at one height
  REQUIRE(std::abs(cell_top[2] - cell_top[0]) <= 1);
  REQUIRE(hash == "#component=cross&amp;layer=0&amp;head=0&amp;scale=sqrt");

  // A link with the contrast opens with it: the √ button on, and the link kept.
  html = stubbed_page(models, 200, {{"results", results}});
  html.insert(
      html.rfind("</body>"),
      "<script>new MutationObserver(() => {\n"
      "  if (document.body.dataset.state !== 'drawn' || document.body.dataset.probe) return;\n"
      "  document.body.setAttribute('data-probe', document.querySelector('#scale button.on').dataset.k + ' ' +\n"
      "    location.hash);\n"
      "}).observe(document.body, {attributes: true});</script>\n");
  std::ofstream(probe, std::ios::binary) << html;
  const std::string linked = test::browse(
      dir.path(), probe.string() + "?s=a%20dog%20runs%20.#component=encoder&layer=1&head=0&scale=sqrt", "--dump-dom");
  const std::size_t kept = linked.find("data-probe=\"");
  REQUIRE(kept != std::string::npos);
  REQUIRE(linked.substr(kept + 12, linked.find('"', kept + 12) - kept - 12) ==
          "sqrt #component=encoder&amp;layer=1&amp;head=0&amp;scale=sqrt");
}
