// attn attn-stats' arithmetic: known maps in, known numbers out (uniform,
// one-hot, one key, no key, distances and the mass near the diagonal,
// cross-attention's scaled diagonal); every mechanism's key window is its
// maps' mask (weights outside are exactly 0, inside they sum to 1); and the
// statistics of every arch's maps have every component, layer and head.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/decode/attention_stats.h"
#include "attn/decode/maps.h"
#include "maps_fixtures.h"

using namespace attn;
using decode::RowStats;
using decode::row_stats;
using decode::StatsSums;
using nlohmann::json;

namespace {

nn::KeyWindow full() { return {}; }
nn::KeyWindow causal() {
  nn::KeyWindow w;
  w.ahead = 0;
  return w;
}

}  // namespace

TEST_CASE("attention stats: a uniform row has normalised entropy 1 and largest weight 1/n", "[attn-stats]") {
  for (int n : {2, 3, 7, 50}) {
    INFO("n = " << n);
    const std::vector<float> row(static_cast<std::size_t>(n), 1.0f / static_cast<float>(n));
    const RowStats r = row_stats(row, 0, n - 1, 0.0, 2);
    CHECK(r.keys == n);
    CHECK(r.entropy == Approx(std::log(static_cast<double>(n))).epsilon(1e-6));
    CHECK(r.normalised_entropy == Approx(1.0).epsilon(1e-6));
    CHECK(r.max_weight == Approx(1.0 / n).epsilon(1e-6));
    // Query 0 over keys 0 … n−1: mean distance (n−1)/2, keys 0, 1, 2 within ±2.
    CHECK(r.distance == Approx((n - 1) / 2.0).epsilon(1e-6));
    CHECK(r.mass_within == Approx(std::min(3, n) / static_cast<double>(n)).epsilon(1e-6));
  }
  // Uniform over a window of the row: the other keys do not count.
  const std::vector<float> band{0.0f, 0.25f, 0.25f, 0.25f, 0.25f, 0.0f};
  const RowStats r = row_stats(band, 1, 4, 2.0, 0);
  CHECK(r.keys == 4);
  CHECK(r.normalised_entropy == Approx(1.0).epsilon(1e-6));
  CHECK(r.mass_within == Approx(0.25));
}

TEST_CASE("attention stats: a one-hot row has entropy 0 and largest weight 1", "[attn-stats]") {
  const std::vector<float> row{0.0f, 0.0f, 0.0f, 1.0f, 0.0f};
  const RowStats r = row_stats(row, 0, 4, 1.0, 1);
  CHECK(r.keys == 5);
  CHECK(r.entropy == 0.0);
  CHECK(r.normalised_entropy == 0.0);
  CHECK(r.max_weight == 1.0);
  CHECK(r.distance == Approx(2.0));
  CHECK(r.mass_within == 0.0);  // key 3 is 2 from query 1
  CHECK(row_stats(row, 0, 4, 1.0, 2).mass_within == 1.0);
  CHECK(row_stats(row, 0, 4, 3.0, 0).mass_within == 1.0);
}

TEST_CASE("attention stats: distance and the mass within ±w on a hand-made row", "[attn-stats]") {
  const std::vector<float> row{0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
  const RowStats r = row_stats(row, 0, 4, 2.0, 1);
  CHECK(r.distance == Approx(0.1 * 2 + 0.2 + 0.2 + 0.1 * 2));
  CHECK(r.mass_within == Approx(0.8));
  CHECK(r.max_weight == Approx(0.4));
  const double h = -(2 * 0.1 * std::log(0.1) + 2 * 0.2 * std::log(0.2) + 0.4 * std::log(0.4));
  CHECK(r.entropy == Approx(h).epsilon(1e-6));
  CHECK(r.normalised_entropy == Approx(h / std::log(5.0)).epsilon(1e-6));
  CHECK(row_stats(row, 0, 4, 2.0, 0).mass_within == Approx(0.4));
  // Query 0 of the same weights: distances 0 … 4.
  CHECK(row_stats(row, 0, 4, 0.0, 1).distance == Approx(0.2 + 0.8 + 0.6 + 0.4));
  // Weights that sum to 2 are read as the distribution they are proportional to.
  const std::vector<float> doubled{0.2f, 0.4f, 0.8f, 0.4f, 0.2f};
  CHECK(row_stats(doubled, 0, 4, 2.0, 1).entropy == Approx(h).epsilon(1e-6));
}

TEST_CASE("attention stats: rows with one key or none are counted, and left out of the means", "[attn-stats]") {
  const std::vector<float> one{0.0f, 1.0f, 0.0f};
  const RowStats single = row_stats(one, 1, 1, 1.0, 2);
  CHECK(single.keys == 1);
  CHECK(single.normalised_entropy == 0.0);  // defined as 0: log(1) = 0
  CHECK(single.max_weight == 1.0);
  const std::vector<float> zeros{0.0f, 0.0f, 0.0f};
  CHECK(row_stats(zeros, 1, 0, 0.0, 2).keys == 0);  // no allowed key (first > last)
  CHECK(row_stats(zeros, 0, 2, 0.0, 2).keys == 0);  // no weight on them

  StatsSums s;
  s.add(single);
  s.add(row_stats(zeros, 1, 0, 0.0, 2));
  CHECK(s.rows == 0);
  CHECK(s.single_key_rows == 1);
  CHECK(s.empty_rows == 1);
  nlohmann::ordered_json j = s.to_json();
  CHECK(j["entropy"].is_null());
  CHECK(j["max_weight"].is_null());
  const std::vector<float> uniform{0.5f, 0.5f, 0.0f};
  s.add(row_stats(uniform, 0, 1, 0.0, 2));
  s.add(row_stats(std::vector<float>{1.0f, 0.0f, 0.0f}, 0, 2, 0.0, 2));
  j = s.to_json();
  CHECK(j["rows"] == 2);
  CHECK(j["normalised_entropy"].get<double>() == Approx(0.5));
  CHECK(j["max_weight"].get<double>() == Approx(0.75));
  CHECK(j["mass_within"].get<double>() == Approx(1.0));
}

TEST_CASE("attention stats: cross-attention measures from the diagonal scaled by the length ratio", "[attn-stats]") {
  CHECK(decode::diagonal_position(3, 5, 5, true) == Approx(3.0));
  CHECK(decode::diagonal_position(0, 2, 4, true) == Approx(0.5));
  CHECK(decode::diagonal_position(1, 2, 4, true) == Approx(2.5));
  CHECK(decode::diagonal_position(1, 4, 2, true) == Approx(0.25));
  CHECK(decode::diagonal_position(1, 4, 2, false) == 1.0);
  // 2 target rows over 4 source keys, each one-hot on the diagonal's right neighbour.
  const std::vector<float> w{0, 1, 0, 0,  //
                             0, 0, 0, 1};
  std::vector<StatsSums> sums(1);
  const std::vector<nn::KeyWindow> windows{full()};
  decode::add_map(sums, w.data(), 1, 2, 4, windows, true, 0);
  CHECK(sums[0].rows == 2);
  CHECK(sums[0].distance / 2 == Approx(0.5));
  CHECK(sums[0].mass_within == 0.0);  // ±0 of 0.5 or 2.5 holds no key
  sums.assign(1, StatsSums{});
  decode::add_map(sums, w.data(), 1, 2, 4, windows, true, 1);
  CHECK(sums[0].mass_within / 2 == Approx(1.0));
}

TEST_CASE("attention stats: add_map reads each head's key window (causal, band, strict)", "[attn-stats]") {
  // 3 × 3 maps of 3 heads: causal uniform, a band of ±0 (one key), a strict forward direction.
  const float third = 1.0f / 3.0f;
  const std::vector<float> w{1, 0, 0, 0.5f, 0.5f, 0, third, third, third,  // causal
                             1, 0, 0, 0,    1,    0, 0,     0,     1,      // band ±0
                             0, 0, 0, 1,    0,    0, 0.5f,  0.5f,  0};     // strict forward
  nn::KeyWindow band, strict;
  band.behind = band.ahead = 0;
  strict.ahead = -1;
  const std::vector<nn::KeyWindow> windows{causal(), band, strict};
  std::vector<StatsSums> sums(3);
  decode::add_map(sums, w.data(), 3, 3, 3, windows, false, 1);
  CHECK(sums[0].rows == 2);
  CHECK(sums[0].single_key_rows == 1);
  CHECK(sums[0].normalised_entropy / 2 == Approx(1.0).epsilon(1e-6));
  CHECK(sums[0].max_weight / 2 == Approx((0.5 + 1.0 / 3) / 2).epsilon(1e-6));
  CHECK(sums[0].distance / 2 == Approx((0.5 + 1.0) / 2).epsilon(1e-6));
  CHECK(sums[1].rows == 0);
  CHECK(sums[1].single_key_rows == 3);
  CHECK(sums[2].empty_rows == 1);
  CHECK(sums[2].single_key_rows == 1);
  CHECK(sums[2].rows == 1);
  CHECK(sums[2].normalised_entropy == Approx(1.0).epsilon(1e-6));
  CHECK(sums[2].distance == Approx(1.5));
}

TEST_CASE("attention stats: every mechanism's key window is exactly where its maps have weight", "[attn-stats]") {
  for (const test::ArchVariant& v : test::kArchs) {
    INFO(v.arch << " / decoder " << v.decoder_mixer << " / " << v.csan_head_boundary);
    model::Seq2Seq m(test::variant_config(v));
    test::randomize(m, 11);
    const text::Bpe bpe;
    std::vector<std::vector<std::int32_t>> sources, targets;
    for (const char* s : {"hello there, world", "ab cd"}) sources.push_back(bpe.encode(s));
    for (const char* s : {"bonjour le monde", "ba"}) targets.push_back(bpe.encode(s));
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    const auto attended = decode::attend_chunk(ctx, m, sources, &targets, decode::SearchOptions{}, false);
    const std::vector<std::string> enc_kinds = m.encoder_mixer_kinds(), dec_kinds = m.decoder_mixer_kinds();
    for (const decode::AttendedSentence& s : attended) {
      const auto check = [&](const nn::MixerMaps& mm, const std::string& kind, bool is_causal) {
        const nn::Mechanism* mech = nn::mechanism_of_kind(kind);
        REQUIRE(mech != nullptr);
        const std::int64_t T = mm.length;
        for (std::int64_t h = 0; h < mm.heads; ++h) {
          const nn::KeyWindow w = mech->key_window(mm.extras, is_causal, h);
          for (std::int64_t i = 0; i < T; ++i) {
            double inside = 0.0;
            for (std::int64_t j = 0; j < T; ++j) {
              const float p = mm.weights[static_cast<std::size_t>((h * T + i) * T + j)];
              if (j < w.first(i) || j > w.last(i, T)) {
                INFO(kind << " head " << h << " query " << i << " key " << j);
                CHECK(p == 0.0f);
              } else {
                inside += p;
              }
            }
            if (w.first(i) <= w.last(i, T)) CHECK(inside == Approx(1.0).margin(1e-4));
          }
        }
      };
      for (std::size_t l = 0; l < s.maps.encoder.size(); ++l) check(s.maps.encoder[l], enc_kinds[l], false);
      for (std::size_t l = 0; l < s.maps.decoder.size(); ++l) check(s.maps.decoder[l], dec_kinds[l], true);
    }
  }
}

TEST_CASE("attention stats: every arch's statistics hold every component, layer and head", "[attn-stats]") {
  for (const test::ArchVariant& v : test::kArchs) {
    INFO(v.arch << " / decoder " << v.decoder_mixer);
    model::Seq2Seq m(test::variant_config(v));
    test::randomize(m, 5);
    const text::Bpe bpe;
    std::vector<std::vector<std::int32_t>> sources, targets;
    std::int64_t src_rows = 0, tgt_rows = 0;
    for (std::size_t k = 0; k < test::kLines.size(); ++k) {
      sources.push_back(bpe.encode(test::kLines[k]));
      targets.push_back(bpe.encode(test::kTargets[k]));
      if (sources.back().empty()) continue;
      src_rows += static_cast<std::int64_t>(sources.back().size());
      tgt_rows += static_cast<std::int64_t>(targets.back().size()) + 1;
    }
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    decode::AttentionStats stats(m, 2);
    for (const decode::AttendedSentence& s : decode::attend_chunk(ctx, m, sources, &targets, {}, false)) {
      if (s.source.empty())
        stats.add_empty();
      else
        stats.add(s.maps);
    }
    const json doc = json::parse(stats.to_json(decode::stats_header(m, "m.attn", true, {})).dump());
    CHECK(doc["format"] == decode::kStatsFormat);
    CHECK(doc["mode"] == "forced");
    CHECK(doc["search"].is_null());
    CHECK(doc["sentences"] == test::kLines.size());
    CHECK(doc["empty_sources"] == 1);
    CHECK(doc["source_tokens"]["total"] == src_rows);
    const std::int64_t H = m.config().heads;
    for (const char* name : {"encoder", "decoder", "cross"}) {
      INFO(name);
      const json& comp = doc["components"][name];
      const std::int64_t expected_layers = std::string(name) == "encoder" ? m.config().enc_layers
                                                                          : m.config().dec_layers;
      REQUIRE(comp["layers"].size() == static_cast<std::size_t>(expected_layers));
      const std::int64_t rows_per_head = std::string(name) == "encoder" ? src_rows : tgt_rows;
      for (std::size_t l = 0; l < comp["layers"].size(); ++l) {
        const json& layer = comp["layers"][l];
        CHECK(layer["layer"] == l);
        const std::string expected_mechanism = std::string(name) == "encoder"   ? m.encoder_mixer_kinds()[l]
                                               : std::string(name) == "decoder" ? m.decoder_mixer_kinds()[l]
                                                                                : "mha";
        CHECK(layer["mechanism"] == expected_mechanism);
        REQUIRE(layer["heads"].size() == static_cast<std::size_t>(H));
        std::int64_t all_rows = 0;
        for (std::int64_t h = 0; h < H; ++h) {
          const json& one = layer["heads"][static_cast<std::size_t>(h)];
          CHECK(one["head"] == h);
          // Every query row is counted once: measured, one key, or none.
          CHECK(one["rows"].get<std::int64_t>() + one["single_key_rows"].get<std::int64_t>() +
                    one["empty_rows"].get<std::int64_t>() ==
                rows_per_head);
          all_rows += one["rows"].get<std::int64_t>();
          REQUIRE(one["rows"].get<std::int64_t>() > 0);
          const double ne = one["normalised_entropy"].get<double>(), mw = one["max_weight"].get<double>();
          CHECK(ne >= 0.0);
          CHECK(ne <= 1.0 + 1e-6);
          CHECK(mw > 0.0);
          CHECK(mw <= 1.0 + 1e-6);
          CHECK(one["mass_within"].get<double>() <= 1.0 + 1e-6);
          CHECK(one["distance"].get<double>() >= 0.0);
        }
        CHECK(layer["all_heads"]["rows"] == all_rows);
      }
    }
    // The table: four lines of header, a line per component, layer and head, and one per layer for "all".
    const std::string table = stats.table();
    std::size_t lines = 0;
    for (char c : table) lines += c == '\n';
    const std::size_t layers = static_cast<std::size_t>(m.config().enc_layers + 2 * m.config().dec_layers);
    CHECK(lines == 4 + layers * static_cast<std::size_t>(H + 1));
  }
}
