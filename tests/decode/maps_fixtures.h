// What the attend library tests share: the small model they draw (every
// arch, pre- or post-norm) with random weights peaked enough that searches
// differ; the architectures and decoder mixers each test runs through; a few
// sentences and forced targets (one empty source, one empty target); attend
// run over lines, returning each sentence's JSON text, and a whole document
// as MapsJsonWriter writes it; two JSON values equal to a tolerance.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/decode/maps.h"
#include "attn/decode/search.h"
#include "small_maps_config.h"

namespace attn::test {

inline model::ModelConfig small_config(const std::string& arch = "transformer", const std::string& norm = "pre") {
  model::ModelConfig c = test::small_maps_config(arch, static_cast<std::int64_t>(text::Bpe().vocab().size()));
  c.norm = *model::parse_norm(norm);
  c.max_positions = 64;
  c.options["muse_tap_dropout"] = 0.0f;
  c.options["csan_window"] = 3;
  return c;
}

// Random weights with every bias and norm away from its initial value, scaled
// so that the distributions are peaked and searches differ.
inline void randomize(model::Seq2Seq& m, std::uint64_t seed, float scale = 1.0f) {
  Rng init(seed);
  m.initialize(init);
  const std::vector<float> noise = test::random_vector(m.params().values().size(), seed + 1, -0.2f, 0.2f);
  std::size_t i = 0;
  for (float& v : m.params().values()) v = scale * (v + noise[i++]);
}

inline std::filesystem::path schema_path() {
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "docs" / "attention.schema.json";
}

// A whole document written by MapsJsonWriter, as text.
inline std::string document_text(const nlohmann::json& header, const std::vector<std::string>& sentences, bool jsonl) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  REQUIRE(f != nullptr);
  decode::MapsJsonWriter writer(f, header, jsonl);
  for (const std::string& s : sentences) writer.add(s);
  writer.finish();
  std::fclose(f);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// Runs attend over lines (forced when targets are given) and returns the sentences' JSON texts.
inline std::vector<std::string> attend_lines(const model::Seq2Seq& m, const text::Bpe& bpe,
                                             const std::vector<std::string>& lines,
                                             const std::vector<std::string>* target_lines,
                                             const decode::SearchOptions& search,
                                             const decode::MapsSelection& selection, std::int64_t chunk = 3) {
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (const auto& l : lines) sources.push_back(bpe.encode(l));
  if (target_lines)
    for (const auto& l : *target_lines) targets.push_back(bpe.encode(l));
  decode::AttendInput input;
  input.source_lines = &lines;
  input.sources = &sources;
  if (target_lines) {
    input.target_lines = target_lines;
    input.targets = &targets;
  }
  input.chunk = chunk;
  Arena arena;
  Rng rng(0);
  nn::StepContext ctx{const_cast<model::Seq2Seq&>(m).params(), arena, rng, false};
  std::vector<std::string> out;
  decode::run_attend(ctx, m, bpe, input, search, selection, [&](std::int64_t index, const std::string& s) {
    REQUIRE(index == static_cast<std::int64_t>(out.size()));  // in input order
    out.push_back(s);
  });
  return out;
}

// Every number in two JSON values equal within tol (same structure otherwise).
inline void require_json_close(const nlohmann::json& a, const nlohmann::json& b, double tol) {
  if (a.is_number() && b.is_number()) {
    REQUIRE(std::abs(a.get<double>() - b.get<double>()) <= tol);
    return;
  }
  REQUIRE(a.type() == b.type());
  if (a.is_array() || a.is_object()) {
    REQUIRE(a.size() == b.size());
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) require_json_close(*i, *j, tol);
  } else {
    REQUIRE(a == b);
  }
}

struct ArchVariant {
  const char* arch;
  const char* decoder_mixer;
  const char* csan_head_boundary = "drop";  // 2D ConvSAN: "wrap" writes head_policy "wrap"
};
// One a line (a trailing comma keeps clang-format from packing them), so an arch is a line added.
inline constexpr ArchVariant kArchs[] = {
    {"transformer", ""},
    {"convsan", ""},
    {"convsan2d", ""},
    {"convsan2d", "", "wrap"},
    {"fastdisa", ""},
    {"muse", ""},
    {"muse-simple", ""},
    {"transformer", "csan"},
    {"transformer", "fastdisa"},
    {"transformer", "muse"},
    {"disa", ""},
    {"transformer", "disa"},
    {"lightconv", ""},
    {"dynamicconv", ""},
};

inline model::ModelConfig variant_config(const ArchVariant& v) {
  model::ModelConfig config = small_config(v.arch);
  config.decoder_mixer = v.decoder_mixer;
  config.options["csan_head_boundary"] = v.csan_head_boundary;
  return config;
}

inline const std::vector<std::string> kLines{"ab cd", "x", "", "hello there, world", "tiny"};
inline const std::vector<std::string> kTargets{"ba", "yz", "q", "bonjour", ""};

}  // namespace attn::test
