// The map pages' per-head statistics (maps_draw.js headStats, shown beside
// each map) are attn attn-stats' (decode/attention_stats.h) for the sentence
// shown: for every arch, the pages' script run in Node over attend's JSON of
// one sentence gives the same means per component, layer and head as the C++
// over the same maps, and the pages draw them under every thumbnail and over
// the large map. Skipped when Node is not installed (apt-get install nodejs).
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../decode/maps_fixtures.h"
#include "../support.h"
#include "attn/decode/attention_stats.h"
#include "attn/decode/maps.h"
#include "attn/decode/maps_draw.h"
#include "attn/decode/maps_page.h"

using namespace attn;
using nlohmann::json;

namespace {

// A <script>…</script> block's body.
std::string script_body(const std::string& block) {
  const std::size_t open = block.find('>') + 1, close = block.rfind("</script>");
  return block.substr(open, close - open);
}

}  // namespace

TEST_CASE("head stats (page): the pages' statistics of a map equal attn-stats' for every arch",
          "[attn-stats][web][e2e]") {
  if (std::system("node --version >/dev/null 2>&1") != 0) ATTN_SKIP("node is not installed (apt-get install nodejs)");
  test::ScratchDir dir;
  const std::string program =
      "const fs = require('fs');\n" + script_body(decode::mechanisms_script()) +
      script_body(decode::maps_draw_script()) +
      "const S = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));\n"
      "const out = {};\n"
      "for (const c of ['encoder', 'decoder', 'cross']) {\n"
      "  const view = { component: c, layer: 0, head: 0, scale: 'linear' };\n"
      "  const d = attnMapsDrawer(view, 9), comp = S.components[c];\n"
      "  const F = d.tokens(S, comp.from).length, T = d.tokens(S, comp.to).length;\n"
      "  out[c] = comp.layers.map((L) => comp.heads.map((h, hi) => d.headStats(L, hi, F, T)));\n"
      "  // What the pages draw: a line under every thumbnail, and one over the large map.\n"
      "  const count = (html) => html.split('class=\"hstats').length - 1;\n"
      "  out[c + '_grid'] = count(d.gridHTML(S, 900));\n"
      "  out[c + '_detail'] = count(d.detailHTML(S, 900));\n"
      "}\n"
      "fs.writeFileSync(process.argv[3], JSON.stringify(out));\n";
  const std::string script = dir.write("stats.js", program);
  for (const test::ArchVariant& v : test::kArchs) {
    INFO(v.arch << " / decoder " << v.decoder_mixer << " / " << v.csan_head_boundary);
    model::Seq2Seq m(test::variant_config(v));
    test::randomize(m, 3);
    const text::Bpe bpe;
    const std::vector<std::vector<std::int32_t>> sources{bpe.encode("hello there, world")},
        targets{bpe.encode("bonjour le monde")};
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    const auto attended = decode::attend_chunk(ctx, m, sources, &targets, {}, false);
    decode::MapsSelection selection;
    selection.precision = 9;
    const std::string sentence =
        decode::sentence_json(attended[0], 0, "hello there, world", "bonjour le monde", bpe, m, selection);
    const std::string in = dir.write("sentence.json", sentence), out = (dir.path() / "out.json").string();
    const std::string cmd = "node " + script + " " + in + " " + out + " 2>" + (dir.path() / "err.txt").string();
    INFO(dir.read("err.txt"));
    REQUIRE(std::system(cmd.c_str()) == 0);
    const json page = json::parse(dir.read("out.json"));

    decode::AttentionStats stats(m, 2);
    stats.add(attended[0].maps);
    const json cxx = json::parse(stats.to_json(json::object()).dump());
    for (const char* c : {"encoder", "decoder", "cross"}) {
      const json& layers = cxx["components"][c]["layers"];
      REQUIRE(page[c].size() == layers.size());
      CHECK(page[std::string(c) + "_grid"] == layers.size() * static_cast<std::size_t>(m.config().heads));
      CHECK(page[std::string(c) + "_detail"] == 1);
      for (std::size_t l = 0; l < layers.size(); ++l)
        for (std::size_t h = 0; h < layers[l]["heads"].size(); ++h) {
          INFO(c << " layer " << l << " head " << h);
          const json& want = layers[l]["heads"][h];
          const json& got = page[c][l][h];
          if (want["rows"] == 0) {
            CHECK(got.is_null());
            continue;
          }
          REQUIRE(got.is_object());
          CHECK(got["rows"] == want["rows"]);
          CHECK(got["entropy"].get<double>() == Approx(want["entropy"].get<double>()).margin(1e-5));
          CHECK(got["normalised"].get<double>() == Approx(want["normalised_entropy"].get<double>()).margin(1e-5));
          CHECK(got["max"].get<double>() == Approx(want["max_weight"].get<double>()).margin(1e-5));
          CHECK(got["distance"].get<double>() == Approx(want["distance"].get<double>()).margin(1e-5));
        }
    }
  }
}
