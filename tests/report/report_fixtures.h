// What the report tests share: runs' notes as text, and synthetic run
// directories with known numbers: train and validation log lines (update u's
// loss, perplexity, BLEU and elapsed time are simple functions of u), a log
// file of them, and a tiny model file of any arch; and the check that a
// plotted series is exactly the log's points.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/core/rng.h"
#include "attn/model/model_file.h"
#include "attn/report/run_summary.h"

namespace attn::test {

inline bool has_note(const report::RunSummary& r, const std::string& needle) {
  for (const std::string& n : r.notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

inline std::string notes_of(const report::RunSummary& r) {
  std::string all;
  for (const std::string& n : r.notes) all += n + " | ";
  return all;
}

// ---- synthetic runs: logs with known numbers, tiny model files, score files ----

inline nlohmann::json train_line(int u, bool with_rss) {
  nlohmann::json j = {{"split", "train"},
                      {"update", u},
                      {"epoch", 1 + u / 20},
                      {"loss", 9.0 - 0.125 * u},
                      {"nll_loss", 8.5 - 0.125 * u},
                      {"ppl", std::exp(8.5 - 0.125 * u)},
                      {"lr", 1e-4 * u},
                      {"grad_norm", 1.5},
                      {"tokens_per_s", 1000.0 + 10.0 * u},
                      {"elapsed_s", 1.5 * u},
                      {"target_tokens", 100 * u}};
  if (with_rss) j["peak_rss_mb"] = 100.0 + u;
  return j;
}

inline nlohmann::json valid_line(int u, double bleu, std::optional<double> chrf = std::nullopt) {
  nlohmann::json j = {{"split", "valid"},
                      {"update", u},
                      {"epoch", 1 + u / 20},
                      {"loss", 5.0 - 0.05 * u},
                      {"nll_loss", 4.0 - 0.05 * u},
                      {"ppl", std::exp(4.0 - 0.05 * u)},
                      {"lr", 1e-4 * u},
                      {"tokens_per_s", 0.0},
                      {"elapsed_s", 1.5 * u + 0.25},
                      {"target_tokens", 100 * u},
                      {"bleu", bleu}};
  if (chrf) j["chrf"] = *chrf;
  return j;
}

inline std::string lines_of(const std::vector<nlohmann::json>& records) {
  std::string text;
  for (const nlohmann::json& j : records) text += j.dump() + "\n";
  return text;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A tiny model file; returns its parameter count.
inline std::int64_t write_model(const std::filesystem::path& path, const std::string& arch) {
  const std::vector<std::string> corpus{"a small dog sleeps .", "ein kleiner hund schläft .", "the cat ."};
  text::BpeOptions options;
  options.vocab_size = 300;
  const text::Bpe bpe = text::Bpe::learn(corpus, options);
  model::ModelConfig c = model::preset(arch);
  c.vocab_size = bpe.vocab().size();
  c.dim = 16;
  c.heads = 2;
  c.ffn_dim = 32;
  c.enc_layers = 1;
  c.dec_layers = 1;
  c.options["muse_kernels"] = nlohmann::json::array({3});
  model::Seq2Seq m(c);
  Rng init(5);
  m.initialize(init);
  model::save_model_file(path, m, bpe);
  return m.parameter_count();
}

// A plotted series against the log it came from: one point per line of `split`
// with `key`, its update, elapsed time and value exactly.
inline void require_series(const std::vector<report::SeriesPoint>& got, const std::vector<nlohmann::json>& log,
                           const char* split, const char* key) {
  std::vector<report::SeriesPoint> want;
  for (const nlohmann::json& j : log)
    if (j["split"] == split && j.contains(key))
      want.push_back({j["update"].get<std::int64_t>(), j["elapsed_s"].get<double>(), j[key].get<double>()});
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(split << " " << key << " point " << i);
    REQUIRE(got[i].update == want[i].update);
    REQUIRE(got[i].elapsed_s == want[i].elapsed_s);
    REQUIRE(got[i].value == want[i].value);
  }
}

}  // namespace attn::test
