// attn attend's document (decode/maps.h): rounding that keeps row sums;
// every arch's JSON, greedy, beam and forced, against the schema and the
// document's promises, and the schema check failing on broken documents;
// --layers, --heads and --components choosing what is written, and naming
// the flag when they are bad.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (a known GCC 12 false positive;
// GCC bug 105651 and relatives); nothing here indexes an array out of bounds.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/error.h"
#include "attn/decode/maps.h"
#include "json_schema.h"
#include "maps_checks.h"
#include "maps_fixtures.h"

using namespace attn;
using attn::test::ArchVariant;
using attn::test::attend_lines;
using attn::test::document_text;
using attn::test::kArchs;
using attn::test::kLines;
using attn::test::kTargets;
using attn::test::randomize;
using attn::test::schema_path;
using attn::test::small_config;
using attn::test::variant_config;
using nlohmann::json;
using decode::MapComponent;

TEST_CASE("attend: rounding keeps every row's sum and leaves zeros at 0", "[attend]") {
  for (int precision : {1, 2, 4, 6}) {
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      const std::size_t n = 1 + seed % 23;
      std::vector<float> row = test::random_vector(n, seed, 0.0f, 1.0f);
      for (std::size_t i = 0; i < n; i += 3) row[i] = 0.0f;  // masked cells
      double sum = 0;
      for (float v : row) sum += v;
      if (sum > 0)
        for (float& v : row) v = static_cast<float>(v / sum);
      std::vector<std::int64_t> units(n);
      decode::round_preserving_sum(row.data(), static_cast<std::int64_t>(n), precision, units.data());
      const double scale = std::pow(10.0, precision);
      std::int64_t total = 0;
      for (std::size_t i = 0; i < n; ++i) {
        INFO("precision " << precision << " seed " << seed << " i " << i);
        if (row[i] == 0.0f) REQUIRE(units[i] == 0);
        REQUIRE(units[i] >= static_cast<std::int64_t>(std::floor(row[i] * scale)));
        REQUIRE(units[i] <= static_cast<std::int64_t>(std::ceil(row[i] * scale)));
        total += units[i];
      }
      REQUIRE(total == (sum > 0 ? static_cast<std::int64_t>(scale) : 0));
    }
  }
  // Twenty weights of 0.05 at one decimal: rounding each to nearest would give 2.0.
  std::vector<float> flat(20, 0.05f);
  std::vector<std::int64_t> units(20);
  decode::round_preserving_sum(flat.data(), 20, 1, units.data());
  std::int64_t total = 0;
  for (std::int64_t u : units) {
    REQUIRE((u == 0 || u == 1));
    total += u;
  }
  REQUIRE(total == 10);
}

TEST_CASE("attend: every arch's JSON validates against the schema and keeps the document's promises", "[attend]") {
  const auto validator = test::SchemaValidator::from_file(schema_path());
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchs) {
    for (const char* mode : {"greedy", "beam", "forced"}) {
      INFO("arch " << v.arch << " decoder " << v.decoder_mixer << " heads " << v.csan_head_boundary << ", " << mode);
      const model::ModelConfig config = variant_config(v);
      model::Seq2Seq m(config);
      randomize(m, 41, 2.0f);
      decode::SearchOptions search;
      search.beam = std::string(mode) == "beam" ? 3 : 1;
      search.max_len_a = 1.0f;
      search.max_len_b = 4.0f;
      decode::MapsSelection selection;
      selection.precision = 3;
      const bool forced = std::string(mode) == "forced";
      const auto sentences = attend_lines(m, bpe, kLines, forced ? &kTargets : nullptr, search, selection);
      const json header = decode::maps_header(m, "model.attn", forced, search, selection);
      const json doc = json::parse(document_text(header, sentences, false));
      const auto errors = validator.validate(doc);
      INFO((errors.empty() ? std::string() : errors.front()));
      REQUIRE(errors.empty());
      REQUIRE(doc["mode"] == mode);
      REQUIRE(doc["sentences"].size() == kLines.size());
      test::check_maps_document(doc);
      for (std::size_t i = 0; i < kLines.size(); ++i) {
        const json& s = doc["sentences"][i];
        REQUIRE(s["index"] == i);
        REQUIRE(s["source"] == kLines[i]);
        REQUIRE(s["source_tokens"].size() == bpe.encode(kLines[i]).size());
        if (forced) {
          REQUIRE(s["translation"] == kTargets[i]);
          if (!kLines[i].empty()) REQUIRE(s["target_tokens"].size() == bpe.encode(kTargets[i]).size() + 1);
        }
        REQUIRE(s["score"].is_null() == kLines[i].empty());
        REQUIRE(s["components"].size() == (kLines[i].empty() ? 0 : 3));  // an empty source has no maps
        if (!kLines[i].empty())
          for (const char* c : {"encoder", "decoder", "cross"}) REQUIRE(s["components"][c]["layers"].size() == 2);
      }
      // The mechanisms named are the model's.
      const json& s0 = doc["sentences"][0]["components"];
      for (std::size_t l = 0; l < 2; ++l) {
        REQUIRE(s0["encoder"]["layers"][l]["mechanism"] == m.encoder_mixer_kinds()[l]);
        REQUIRE(s0["decoder"]["layers"][l]["mechanism"] == m.decoder_mixer_kinds()[l]);
      }
      if (std::string(v.arch) == "convsan2d")
        REQUIRE(s0["encoder"]["layers"][0]["extras"]["head_policy"] ==
                (std::string(v.csan_head_boundary) == "wrap" ? "wrap" : "truncate"));
    }
  }
}

TEST_CASE("attend: the schema check can fail", "[attend]") {
  const auto validator = test::SchemaValidator::from_file(schema_path());
  const text::Bpe bpe;
  model::ModelConfig config = small_config("convsan2d");
  model::Seq2Seq m(config);
  randomize(m, 51);
  decode::MapsSelection selection;
  const auto sentences = attend_lines(m, bpe, {"ab cd"}, nullptr, {}, selection);
  const json good = json::parse(document_text(decode::maps_header(m, "m", false, {}, selection), sentences, false));
  REQUIRE(validator.validate(good).empty());
  auto broken = [&](auto change) {
    json doc = good;
    change(doc);
    return !validator.validate(doc).empty();
  };
  REQUIRE(good["sentences"][0]["components"]["encoder"]["layers"][0]["mechanism"] == "csan2d");
  REQUIRE(broken([](json& d) { d.erase("version"); }));
  REQUIRE(broken([](json& d) { d["version"] = 2; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0].erase("weights"); }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["weights"][0][0][0] = 1.5; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["weights"][0][0][0] = "0.5"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["mechanism"] = "lstm"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["extras"].erase("window"); }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["cross"]["from"] = "source"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["decoder"]["layers"][0]["extras"]["gate"] = 1; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["score"] = "high"; }));
}

TEST_CASE("attend: --layers, --heads and --components choose what is written", "[attend]") {
  const text::Bpe bpe;
  model::ModelConfig config = small_config("fastdisa");
  model::Seq2Seq m(config);
  randomize(m, 61);
  decode::MapsSelection all, some;
  some.components = decode::parse_components("cross, encoder");
  some.layers = decode::parse_indices("1", "--layers");
  some.heads = decode::parse_indices("3,1", "--heads");
  decode::check_selection(some, config);
  const json full = json::parse(attend_lines(m, bpe, {"hello"}, nullptr, {}, all)[0])["components"];
  const json part = json::parse(attend_lines(m, bpe, {"hello"}, nullptr, {}, some)[0])["components"];
  REQUIRE(part.size() == 2);
  REQUIRE_FALSE(part.contains("decoder"));
  for (const char* c : {"encoder", "cross"}) {
    REQUIRE(part[c]["heads"] == json::array({1, 3}));
    REQUIRE(part[c]["layers"].size() == 1);
    const json& p = part[c]["layers"][0];
    const json& f = full[c]["layers"][1];
    REQUIRE(p["layer"] == 1);
    REQUIRE(p["weights"] == json::array({f["weights"][1], f["weights"][3]}));
  }
  const json& pe = part["encoder"]["layers"][0]["extras"];
  const json& fe = full["encoder"]["layers"][1]["extras"];
  REQUIRE(pe["directions"] == json::array({fe["directions"][1], fe["directions"][3]}));
  REQUIRE(pe["fusion_gate"] == json::array({fe["fusion_gate"][1], fe["fusion_gate"][3]}));
}

TEST_CASE("attend: bad --layers, --heads, --components and --precision name the flag", "[attend]") {
  REQUIRE(decode::parse_indices("all", "--layers").empty());
  REQUIRE(decode::parse_indices("2, 0,1-2", "--layers") == std::vector<std::int64_t>{0, 1, 2});
  REQUIRE(decode::parse_components("all").size() == 3);
  REQUIRE(decode::parse_components("cross,decoder") ==
          std::vector<MapComponent>{MapComponent::decoder, MapComponent::cross});
  REQUIRE_THROWS_WITH(decode::parse_indices("0,x", "--layers"), Catch::Contains("--layers") && Catch::Contains("'x'"));
  REQUIRE_THROWS_WITH(decode::parse_indices("-1", "--heads"), Catch::Contains("--heads"));
  REQUIRE_THROWS_WITH(decode::parse_indices("3-1", "--layers"), Catch::Contains("backwards"));
  REQUIRE_THROWS_WITH(decode::parse_indices("", "--heads"), Catch::Contains("--heads"));
  REQUIRE_THROWS_WITH(decode::parse_components("encoder,self"),
                      Catch::Contains("--components") && Catch::Contains("'self'"));
  model::ModelConfig config = small_config();
  config.enc_layers = 3;
  decode::MapsSelection s;
  s.heads = {4};
  REQUIRE_THROWS_WITH(decode::check_selection(s, config), Catch::Contains("--heads") && Catch::Contains("4 heads"));
  s = {};
  s.layers = {2};  // the encoder has it, the decoder does not
  REQUIRE_THROWS_WITH(decode::check_selection(s, config),
                      Catch::Contains("--layers") && Catch::Contains("decoder has 2"));
  s.components = {MapComponent::encoder};
  REQUIRE_NOTHROW(decode::check_selection(s, config));
  s.precision = 0;
  REQUIRE_THROWS_WITH(decode::check_selection(s, config), Catch::Contains("--precision"));
}
