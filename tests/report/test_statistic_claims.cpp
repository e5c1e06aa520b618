// attn report --claims on attention statistics: the claims' grammar, the
// stats files' reader, and the verdicts on hand-made stats files whose
// numbers are worked out below — a layer claim that holds, one that the
// seeds do not confirm ("not distinguishable"), slopes against k against a
// constant and against another group, a missing per-sentence section (no
// pooled test) and claims that cannot be measured; Holm over the file's
// claims; the CLI's Markdown and JSON.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli/run_attn.h"
#include "../support.h"
#include "attn/core/error.h"
#include "attn/eval/paired_t.h"
#include "attn/report/attention_file.h"
#include "attn/report/claims.h"
#include "attn/report/comparison.h"
#include "attn/report/verdicts.h"

using namespace attn;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// One line of a layer: its rows and the mean of every statistic over them.
struct Line {
  int rows = 0;
  double value = 0.0;
};
using Layers = std::vector<std::vector<Line>>;  // [layer][line]

// An attn-attention-stats document whose every statistic of a layer has the
// lines' values; cross as the encoder.
json stats_doc(const Layers& encoder, const Layers& decoder, bool per_sentence) {
  const std::size_t lines = encoder.front().size();
  const auto component = [](const Layers& layers, const char* from, const char* to) {
    json out_layers = json::array();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      double rows = 0, sum = 0;
      for (const Line& x : layers[l]) {
        rows += x.rows;
        sum += x.rows * x.value;
      }
      json all = {{"rows", rows}, {"single_key_rows", 0}, {"empty_rows", 0}};
      for (const char* s : {"entropy", "normalised_entropy", "max_weight", "distance", "mass_within"})
        all[s] = sum / rows;
      json head = all;
      head["head"] = 0;
      out_layers.push_back({{"layer", l}, {"mechanism", "mha"}, {"all_heads", all}, {"heads", {head}}});
    }
    return json{{"from", from}, {"to", to}, {"layers", out_layers}};
  };
  const auto sentences = [](const Layers& layers) {
    json out = json::array();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      json layer = {{"layer", l}, {"rows", json::array()}};
      for (const char* s : {"entropy", "normalised_entropy", "max_weight", "distance", "mass_within"})
        layer[s] = json::array();
      for (const Line& x : layers[l]) {
        layer["rows"].push_back(x.rows);
        for (const char* s : {"entropy", "normalised_entropy", "max_weight", "distance", "mass_within"})
          layer[s].push_back(x.rows * x.value);
      }
      out.push_back(layer);
    }
    return out;
  };
  json doc = {{"format", "attn-attention-stats"}, {"version", 2}, {"sentences", lines}, {"empty_sources", 0}};
  doc["components"] = {{"encoder", component(encoder, "source", "source")},
                       {"decoder", component(decoder, "target", "target_input")},
                       {"cross", component(encoder, "target", "source")}};
  if (per_sentence)
    doc["per_sentence"] = {{"lines", lines},
                           {"encoder", sentences(encoder)},
                           {"decoder", sentences(decoder)},
                           {"cross", sentences(encoder)}};
  return doc;
}

// Two layers of `lines` lines: rows 10 on even lines and 12 on odd ones, value(layer, line).
Layers two_layers(std::size_t lines, const std::function<double(int, std::size_t)>& value) {
  Layers layers(2);
  for (int l = 0; l < 2; ++l)
    for (std::size_t i = 0; i < lines; ++i) layers[l].push_back({i % 2 ? 12 : 10, value(l, i)});
  return layers;
}

// The runs: groups tf and mu, seeds 1–3, sets t (8 lines), t.join2 (4), t.join4 (2):
//   encoder, group g, seed s, ×k, layer l, line i: base(g, l, s) + slope(g, s)·k + 0.02·(i odd)
//     tf: base 0.40 (layer 0), 0.70 + 0.01·s (layer 1); slope 0.05 + 0.001·s
//     mu: base 0.30, 0.35;                              slope 0.01 + 0.0005·s
//   decoder: 0.50 + 0.02·(i odd), layer 1 plus 0.05, −0.05, +0.01 for seeds 1, 2, 3
//   tf also has set u (4 lines, as t) without per-sentence sums; group bare has no stats.
// Lines have the same rows in both layers and every set, so on every set a
// layer's mean is base + slope·k + 0.02·12/22, and "all" the mean of the two.
std::vector<fs::path> write_runs(const test::ScratchDir& dir) {
  std::vector<fs::path> runs;
  for (const std::string group : {"tf", "mu", "bare"})
    for (int s = 1; s <= 3; ++s) {
      const fs::path run = dir.path() / "cmp" / group / ("seed" + std::to_string(s));
      fs::create_directories(run / "stats");
      std::ofstream(run / "log.jsonl") << json{{"split", "model"}, {"update", 0}, {"arch", group}}.dump() << "\n";
      runs.push_back(run);
      if (group == "bare") continue;
      const bool tf = group == "tf";
      const double slope = tf ? 0.05 + 0.001 * s : 0.01 + 0.0005 * s;
      const double base[2] = {tf ? 0.40 : 0.30, tf ? 0.70 + 0.01 * s : 0.35};
      const double decoder_step[4] = {0.0, 0.05, -0.05, 0.01};
      for (const auto& [set, k, lines] : {std::tuple{"t", 1, 8}, {"t.join2", 2, 4}, {"t.join4", 4, 2}, {"u", 1, 4}}) {
        const Layers encoder = two_layers(lines, [&](int l, std::size_t i) {
          return base[l] + slope * k + 0.02 * static_cast<double>(i % 2);
        });
        const Layers decoder = two_layers(lines, [&](int l, std::size_t i) {
          return 0.50 + 0.02 * static_cast<double>(i % 2) + (l == 1 ? decoder_step[s] : 0.0);
        });
        std::ofstream(run / "stats" / (std::string(set) + ".best.json"))
            << stats_doc(encoder, decoder, std::string(set) != "u").dump();
      }
    }
  return runs;
}

report::Verdicts judge(const std::vector<fs::path>& runs, const std::string& claims) {
  const report::Comparison c = report::compare_seed_runs(report::read_runs(runs), {});
  return report::judge_claims(report::parse_claims(claims, "attention.claims"), c);
}

const std::string kFamily = "tf encoder layer 1 max_weight above layer 0 on t | deeper, more concentrated\n"
                            "tf decoder layer 1 max_weight above layer 0 on t\n"
                            "tf encoder layer all normalised_entropy slope above 0 on t\n"
                            "mu encoder layer all normalised_entropy slope below tf on t\n";

}  // namespace

TEST_CASE("statistic claims: the grammar, its sides' names and its errors (file:line)", "[verdicts][report]") {
  const report::ClaimsFile f =
      report::parse_claims(kFamily + "tf cross layer last distance within 0.5 of 2 on t avg5\n", "x.claims");
  REQUIRE(f.claims.size() == 5);
  const report::Claim& layer = f.claims[0];
  REQUIRE(layer.statistic());
  CHECK(layer.stat->component == "encoder");
  CHECK(layer.stat->layer == "1");
  CHECK(layer.stat->statistic == "max_weight");
  CHECK(layer.b_layer == "0");
  CHECK(layer.b == "tf");
  CHECK(layer.sign == 1);
  CHECK_FALSE(layer.slope);
  CHECK(layer.label == "deeper, more concentrated");
  CHECK(layer.a_side() == "tf encoder layer 1 max_weight");
  CHECK(layer.b_side() == "layer 0");
  const report::Claim& constant = f.claims[2];
  CHECK((constant.slope && constant.constant == 0.0 && constant.b.empty() && constant.b_side() == "0"));
  const report::Claim& other = f.claims[3];
  CHECK((other.slope && other.sign == -1 && other.b == "tf" && other.b_layer.empty() && !other.constant));
  CHECK(other.b_side() == "tf");
  const report::Claim& same = f.claims[4];
  CHECK((same.margin == 0.5 && same.constant == 2.0 && same.model == "avg5" && same.stat->layer == "last"));
  // A BLEU claim is still one.
  CHECK_FALSE(report::parse_claims("tf beats mu on t\n", "x.claims").claims[0].statistic());

  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 attention above layer 0 on t\n", "x.claims"),
                    Catch::Contains("x.claims:1: unknown statistic 'attention'"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer first max_weight above layer 0 on t\n", "x.claims"),
                    Catch::Contains("the layer 'first' is not a layer number"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight beats layer 0 on t\n", "x.claims"),
                    Catch::Contains("unknown relation 'beats'"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight above layer 1 on t\n", "x.claims"),
                    Catch::Contains("two different layers"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight above a on t\n", "x.claims"),
                    Catch::Contains("two different run groups"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight within 0 of b on t\n", "x.claims"),
                    Catch::Contains("the margin '0' is not a positive number"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight above layer 0 t\n", "x.claims"),
                    Catch::Contains("expected 'on' at 't'"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight above\n", "x.claims"),
                    Catch::Contains("the claim ends before its target"));
  CHECK_THROWS_WITH(report::parse_claims("a encoder layer 1 max_weight above b on t best x\n", "x.claims"),
                    Catch::Contains("unexpected 'x' after the model"));
}

TEST_CASE("statistic claims: the stats file's reader pools layers by their rows", "[verdicts][report]") {
  // Layer 0: 10 rows of 0.4; layer 1: 30 rows of 0.7. All: (4 + 21) / 40.
  const json doc = stats_doc({{{10, 0.4}}, {{30, 0.7}}}, {{{1, 0.0}}, {{1, 0.0}}}, true);
  const report::AttentionFile f = report::parse_attention_file(doc.dump(), "s.json");
  CHECK(f.per_sentence);
  const std::size_t max_weight = report::statistic_index("max_weight");
  CHECK(report::resolve_layers("all", 2) == std::vector<std::size_t>{0, 1});
  CHECK(report::resolve_layers("last", 2) == std::vector<std::size_t>{1});
  CHECK(report::resolve_layers("2", 2).empty());
  CHECK(*report::pooled_mean(f, "encoder", {0, 1}, max_weight) == Approx(25.0 / 40.0).epsilon(1e-12));
  CHECK(*report::pooled_mean(f, "encoder", {1}, max_weight) == Approx(0.7).epsilon(1e-12));
  const eval::SegmentStats rows = report::line_sums(f, "encoder", {0, 1}, max_weight);
  CHECK(rows.values == std::vector<double>{40.0, 25.0});
  CHECK(report::ratio_of_sums(rows.sum()) == Approx(0.625));

  json old = doc;
  old.erase("per_sentence");
  old["version"] = 1;
  CHECK_FALSE(report::parse_attention_file(old.dump(), "s.json").per_sentence);
  json future = doc;
  future["version"] = 3;
  CHECK_THROWS_WITH(report::parse_attention_file(future.dump(), "s.json"),
                    Catch::Contains("s.json: version 3 of attn-attention-stats"));
  json short_lines = doc;
  short_lines["per_sentence"]["decoder"][1]["entropy"] = json::array();
  CHECK_THROWS_WITH(report::parse_attention_file(short_lines.dump(), "s.json"),
                    Catch::Contains("per_sentence.decoder layer 1 has not one entry per line"));
  CHECK_THROWS_WITH(report::parse_attention_file(json{{"format", "attn-attention-maps"}}.dump(), "s.json"),
                    Catch::Contains("not an attn-attention-stats document"));
  json missing = doc;
  missing["components"].erase("cross");
  CHECK_THROWS_WITH(report::parse_attention_file(missing.dump(), "s.json"), Catch::Contains("a field is missing"));
}

TEST_CASE("statistic claims: verdicts on hand-made stats files — holds, not distinguishable, slopes, Holm",
          "[verdicts][report]") {
  test::ScratchDir dir;
  const std::vector<fs::path> runs = write_runs(dir);
  const report::Verdicts v = judge(runs, kFamily);
  REQUIRE(v.claims.size() == 4);
  CHECK(v.pooled_family == 4);
  CHECK(v.seed_family == 4);
  const double odd = 0.02 * 12.0 / 22.0;  // the odd lines' share of the rows, times their 0.02

  // Layer 1 − layer 0 of tf's encoder on t: 0.30 + 0.01·s, every line alike.
  const report::ClaimVerdict& deep = v.claims[0];
  INFO(deep.decision.rule);
  CHECK(deep.seeds == std::vector<int>{1, 2, 3});
  for (int s = 1; s <= 3; ++s) {
    CHECK(deep.a_values[s - 1] == Approx(0.70 + 0.01 * s + (0.05 + 0.001 * s) + odd).epsilon(1e-9));
    CHECK(deep.b_values[s - 1] == Approx(0.40 + (0.05 + 0.001 * s) + odd).epsilon(1e-9));
    CHECK(deep.differences[s - 1] == Approx(0.30 + 0.01 * s).epsilon(1e-9));
  }
  // t = 0.32 / (0.01 / √3) with 2 df: two-sided p = 1 − t / √(t² + 2).
  const double t = 0.32 / (0.01 / std::sqrt(3.0));
  CHECK(deep.seed->t.t == Approx(t).epsilon(1e-6));
  CHECK(deep.seed->t.p == Approx(1.0 - t / std::sqrt(t * t + 2.0)).epsilon(1e-6));
  // Pooled: the seeds' rows added line by line; every resample's difference is 0.32, so p = 1/1001.
  CHECK(deep.pooled->difference == Approx(0.32).epsilon(1e-9));
  CHECK(deep.pooled->p == Approx(1.0 / 1001.0));
  CHECK(deep.pooled->what.find("8 test sentences of the 3 seeds") != std::string::npos);
  CHECK(deep.decision.verdict == "holds");

  // The decoder: +0.05, −0.05, +0.01 — the pooled test finds +0.0033 on every resample, the seeds do not.
  const report::ClaimVerdict& mixed = v.claims[1];
  CHECK(mixed.differences[0] == Approx(0.05).epsilon(1e-9));
  CHECK(mixed.differences[1] == Approx(-0.05).epsilon(1e-9));
  CHECK(mixed.differences[2] == Approx(0.01).epsilon(1e-9));
  const std::optional<eval::PairedT> direct = eval::paired_t(mixed.differences);
  CHECK(mixed.seed->t.p == direct->p);
  CHECK(mixed.seed->t.p > 0.9);
  CHECK(mixed.pooled->p == Approx(1.0 / 1001.0));
  CHECK(mixed.decision.verdict == "not distinguishable");
  CHECK(mixed.decision.rule.find("only the pooled test reaches") != std::string::npos);

  // Slopes of "all" over k = 1, 2, 4: exactly 0.05 + 0.001·s against the constant 0.
  const report::ClaimVerdict& rises = v.claims[2];
  CHECK(rises.ks == std::vector<int>{1, 2, 4});
  for (int s = 1; s <= 3; ++s) CHECK(rises.a_values[s - 1] == Approx(0.05 + 0.001 * s).epsilon(1e-9));
  CHECK(rises.b_values == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(rises.pooled->a_value == Approx(0.052).epsilon(1e-9));
  CHECK(rises.pooled->b_value == Approx(0.0).margin(1e-12));
  CHECK(rises.pooled->what.find("2 groups of 4 consecutive test sentences") != std::string::npos);
  CHECK(rises.decision.verdict == "holds");

  // mu's slope against tf's: (0.01 + 0.0005·s) − (0.05 + 0.001·s).
  const report::ClaimVerdict& less = v.claims[3];
  for (int s = 1; s <= 3; ++s) CHECK(less.differences[s - 1] == Approx(-0.04 - 0.0005 * s).epsilon(1e-9));
  CHECK(less.pooled->difference == Approx(-0.041).epsilon(1e-9));
  CHECK(less.decision.verdict == "holds");

  // Holm over the four: each adjusted p is at least its raw p, and the largest seed-level p stays itself.
  for (const report::ClaimVerdict& c : v.claims) {
    CHECK(*c.seed->p_holm >= c.seed->t.p);
    CHECK(*c.pooled->p_holm >= c.pooled->p);
  }
  CHECK(*mixed.seed->p_holm == Approx(mixed.seed->t.p));
  // The smallest seed-level p (mu's slope, t ≈ −142) is multiplied by 4.
  CHECK(*less.seed->p_holm == Approx(4.0 * less.seed->t.p).epsilon(1e-9));
}

TEST_CASE("statistic claims: no per-sentence sums, no pooled test; what cannot be measured says why",
          "[verdicts][report]") {
  test::ScratchDir dir;
  const std::vector<fs::path> runs = write_runs(dir);
  const report::Verdicts v = judge(runs, "tf encoder layer 1 max_weight above layer 0 on u\n"
                                         "tf encoder layer 5 max_weight above layer 0 on t\n"
                                         "bare encoder layer 1 max_weight above layer 0 on t\n"
                                         "tf encoder layer 1 max_weight above nope on t\n"
                                         "tf encoder layer 1 max_weight slope above 0 on u\n"
                                         "tf encoder layer last max_weight above layer 1 on t\n"
                                         "tf encoder layer 0 max_weight within 0.1 of 0.45 on t\n");
  const report::ClaimVerdict& seeds_only = v.claims[0];
  REQUIRE(seeds_only.seed);
  CHECK_FALSE(seeds_only.pooled);
  CHECK(seeds_only.notes.at(0).find("has no per-sentence sums (attn attn-stats --per-sentence") != std::string::npos);
  CHECK(seeds_only.decision.verdict == "not distinguishable");
  CHECK(v.claims[1].absent.find("has no encoder layer 5 (its layers: 0 to 1)") != std::string::npos);
  CHECK(v.claims[2].absent.find("no stats/t.best.json of bare") != std::string::npos);
  CHECK(v.claims[3].absent.find("no seed runs named nope") != std::string::npos);
  CHECK(v.claims[4].absent.find("at least one stats/u.join<K>.best.json") != std::string::npos);
  CHECK(v.claims[5].absent.find("are the same layer") != std::string::npos);
  for (std::size_t i = 1; i < 6; ++i) CHECK(v.claims[i].decision.verdict == "not measured");
  // Against a constant: 0.40 + 0.05 + 0.001·s + 0.02·12/22 − 0.45, within ±0.1 on every line and seed.
  const report::ClaimVerdict& near = v.claims[6];
  for (int s = 1; s <= 3; ++s) CHECK(near.differences[s - 1] == Approx(0.001 * s + 0.02 * 12.0 / 22.0).epsilon(1e-9));
  CHECK(near.decision.verdict.starts_with("equivalent within ±0.1"));
  CHECK(v.seed_family == 3);  // two difference p-values and one TOST
}

TEST_CASE("statistic claims (cli): attn report --claims prints them; --json names the statistic",
          "[verdicts][report][cli]") {
  test::ScratchDir dir;
  const std::vector<fs::path> runs = write_runs(dir);
  const std::string claims = dir.write("attention.claims", kFamily);
  std::vector<std::string> args{"report"};
  for (const fs::path& r : runs) args.push_back(r.string());
  args.insert(args.end(), {"--claims", claims});
  auto r = run_attn(test::shell_words(args));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("| deeper, more concentrated (tf encoder layer 1 max_weight above layer 0 on t) | +0.3200 |") !=
        std::string::npos);
  CHECK(r.out.find("**not distinguishable**") != std::string::npos);
  CHECK(r.out.find("slope in normalised_entropy per unit of k, seeds 1, 2, 3: tf encoder layer all "
                   "normalised_entropy +0.0510, +0.0520, +0.0530; 0 +0.0000") != std::string::npos);
  args.push_back("--json");
  r = run_attn(test::shell_words(args));
  REQUIRE(r.status == 0);
  const json claims_json = json::parse(r.out)["verdicts"]["claims"];
  CHECK(claims_json[0]["of"] == "statistic");
  CHECK(claims_json[0]["statistic"] == json{{"component", "encoder"}, {"layer", "1"}, {"name", "max_weight"}});
  CHECK(claims_json[0]["b_layer"] == "0");
  CHECK(claims_json[2]["of"] == "statistic_slope");
  CHECK(claims_json[2]["constant"] == 0.0);
  CHECK(claims_json[0]["verdict"] == "holds");
}
