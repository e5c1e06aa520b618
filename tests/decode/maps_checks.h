// What an attend document promises beyond its schema (docs/attention-json.md):
// every weights array is [heads][from tokens][to tokens]; every row sums to 1
// (or is all 0 where the mechanism leaves a query without keys); masked cells
// (causal, windows, directions) are exactly 0; the extras have the shapes the
// document names. Shared by tests/decode/test_maps.cpp and tests/cli/test_attend.cpp.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attn::test {

// The sum of a rounded row is exact in decimal; parsed as doubles it is 1 to
// far better than the 10^-precision the format promises.
inline constexpr double kRowSumTolerance = 1e-9;

inline const nlohmann::json& tokens_of(const nlohmann::json& s, const std::string& axis) {
  return axis == "source" ? s["source_tokens"] : axis == "target" ? s["target_tokens"] : s["target_input_tokens"];
}

inline double row_sum(const nlohmann::json& row) {
  double sum = 0.0;
  for (const auto& v : row) sum += v.get<double>();
  return sum;
}

// Checks one sentence of a document whose header is `doc`.
inline void check_sentence_maps(const nlohmann::json& doc, const nlohmann::json& s) {
  const int precision = doc["precision"].get<int>();
  const double unit = std::pow(10.0, -precision);
  REQUIRE(s["target_tokens"].size() == s["target_input_tokens"].size());
  if (!s["source_tokens"].empty()) {
    REQUIRE(s["target_tokens"].back() == "</s>");
    REQUIRE(s["target_input_tokens"].front() == "<s>");
  }
  for (auto c = s["components"].begin(); c != s["components"].end(); ++c) {
    const std::string name = c.key();
    const nlohmann::json& comp = c.value();
    const std::size_t F = tokens_of(s, comp["from"]).size(), T = tokens_of(s, comp["to"]).size();
    const nlohmann::json& heads = comp["heads"];
    for (const auto& L : comp["layers"]) {
      const std::string mech = L["mechanism"];
      const nlohmann::json& e = L["extras"];
      INFO("component " << name << ", layer " << L["layer"] << " (" << mech << ")");
      REQUIRE(L["weights"].size() == heads.size());
      for (std::size_t k = 0; k < heads.size(); ++k) {
        const nlohmann::json& W = L["weights"][k];
        REQUIRE(W.size() == F);
        for (std::size_t i = 0; i < F; ++i) {
          INFO("head " << heads[k] << ", row " << i);
          REQUIRE(W[i].size() == T);
          const auto ii = static_cast<std::int64_t>(i);
          // Which keys this row may attend to.
          auto allowed = [&](std::int64_t j) {
            bool ok = true;
            if (name == "decoder") ok = j <= ii;  // causal
            if (mech == "csan" || mech == "csan2d")
              ok = ok && j >= ii - e["left"].get<std::int64_t>() && j <= ii + e["right"].get<std::int64_t>();
            if (mech == "lightconv" || mech == "dynamicconv")  // the convolution's window
              ok = ok && j >= ii - e["left"].get<std::int64_t>() && j <= ii + e["right"].get<std::int64_t>();
            if ((mech == "fastdisa" || mech == "disa") && name == "encoder")
              ok = ok && (e["directions"][k] == "forward" ? j < ii : j > ii);  // strict: no diagonal
            return ok;
          };
          bool any_allowed = false;
          for (std::size_t j = 0; j < T; ++j) {
            const double w = W[i][j].get<double>();
            REQUIRE(w >= 0.0);
            REQUIRE(w <= 1.0);
            const double scaled = w / unit;  // a whole number of units: rounded to the precision
            REQUIRE(std::abs(scaled - std::round(scaled)) < 1e-6);
            if (allowed(static_cast<std::int64_t>(j)))
              any_allowed = true;
            else
              REQUIRE(w == 0.0);  // masked: exactly 0
          }
          const double sum = row_sum(W[i]);
          if (any_allowed)
            REQUIRE(std::abs(sum - 1.0) <= kRowSumTolerance);
          else
            REQUIRE(sum == 0.0);  // a query with no key: all 0
        }
      }
      // Extras: per-head arrays hold the chosen heads, distributions sum to 1.
      if (mech == "csan" || mech == "csan2d") {
        const std::int64_t n = (e["head_window"].get<std::int64_t>() - 1) / 2;
        // The configured window is 2m+1; the band is [i−m, i+m], or [i−m, i] when causal.
        const std::int64_t m = (e["window"].get<std::int64_t>() - 1) / 2;
        REQUIRE(e["left"].get<std::int64_t>() == m);
        REQUIRE(e["right"].get<std::int64_t>() == (name == "decoder" ? 0 : m));
        REQUIRE(e["head_weights"].size() == heads.size());
        const auto H = static_cast<std::int64_t>(doc["model"]["config"]["heads"].get<std::int64_t>());
        for (std::size_t k = 0; k < heads.size(); ++k) {
          REQUIRE(e["head_weights"][k].size() == F);
          for (const auto& row : e["head_weights"][k]) {
            REQUIRE(row.size() == e["head_window"].get<std::size_t>());
            double sum = 0.0;
            for (std::int64_t so = 0; so < static_cast<std::int64_t>(row.size()); ++so) {
              const std::int64_t key_head = heads[k].get<std::int64_t>() + so - n;
              // "truncate" leaves heads past the edges out (null); "wrap" takes them modulo H.
              const bool outside = key_head < 0 || key_head >= H;
              REQUIRE(row[so].is_null() == (outside && e["head_policy"] != "wrap"));
              if (!row[so].is_null()) sum += row[so].get<double>();
            }
            REQUIRE(std::abs(sum - 1.0) <= kRowSumTolerance);
          }
        }
      } else if (mech == "muse" && e.contains("kernels")) {
        REQUIRE(e["gate"].size() == e["kernels"].size());
        REQUIRE(std::abs(row_sum(e["gate"]) - 1.0) <= kRowSumTolerance);
        REQUIRE(e["taps"].size() == e["kernels"].size());
        for (std::size_t ki = 0; ki < e["kernels"].size(); ++ki) {
          const auto K = e["kernels"][ki].get<std::int64_t>();
          REQUIRE(e["offsets"][ki].get<std::int64_t>() == (name == "decoder" ? K - 1 : K / 2));
          REQUIRE(e["taps"][ki].size() == heads.size());
          for (const auto& per_head : e["taps"][ki]) {
            REQUIRE(per_head.size() == F);
            for (const auto& taps : per_head) {
              REQUIRE(taps.size() == static_cast<std::size_t>(K));
              REQUIRE(std::abs(row_sum(taps) - 1.0) <= kRowSumTolerance);
            }
          }
        }
      } else if (mech == "lightconv" || mech == "dynamicconv") {
        const auto K = e["kernel"].get<std::int64_t>();
        REQUIRE(e["left"].get<std::int64_t>() == (name == "decoder" ? K - 1 : K / 2));
        REQUIRE(e["left"].get<std::int64_t>() + e["right"].get<std::int64_t>() == K - 1);
        REQUIRE(e["taps"].size() == heads.size());
        for (const auto& per_head : e["taps"]) {
          REQUIRE(per_head.size() == F);
          for (const auto& taps : per_head) {
            REQUIRE(taps.size() == static_cast<std::size_t>(K));
            REQUIRE(std::abs(row_sum(taps) - 1.0) <= kRowSumTolerance);
          }
          if (mech == "lightconv")  // one kernel per head, the same for every token
            for (const auto& taps : per_head) REQUIRE(taps == per_head[0]);
        }
      } else if (mech == "fastdisa" || mech == "disa") {
        if (mech == "disa") REQUIRE(!e["fusion_gate"].is_null());  // DiSA always has its gate
        REQUIRE(e["directions"].size() == heads.size());
        REQUIRE(e["averaged_over_features"] == true);
        REQUIRE(e["diagonal"] == (name == "decoder"));
        if (name == "decoder")
          for (const auto& d : e["directions"]) REQUIRE(d == "forward");
        if (!e["fusion_gate"].is_null()) {
          REQUIRE(e["fusion_gate"].size() == heads.size());
          for (const auto& per_head : e["fusion_gate"]) {
            REQUIRE(per_head.size() == F);
            for (const auto& g : per_head) REQUIRE((g.get<double>() >= 0.0 && g.get<double>() <= 1.0));
          }
        }
      }
    }
  }
}

inline void check_maps_document(const nlohmann::json& doc) {
  for (const auto& s : doc["sentences"]) {
    INFO("sentence " << s["index"]);
    check_sentence_maps(doc, s);
  }
}

}  // namespace attn::test
