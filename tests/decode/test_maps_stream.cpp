// attend streams: it holds one chunk at a time, so the step arena peaks at
// the same size for 4 and for 40 sentences, and JSON Lines gives one whole
// document per sentence; the sentences come out in input order, each as the
// whole input in one chunk gives it.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/core/arena.h"
#include "attn/decode/maps.h"
#include "attn/decode/search.h"
#include "json_schema.h"
#include "maps_fixtures.h"

using namespace attn;
using attn::test::document_text;
using attn::test::randomize;
using attn::test::require_json_close;
using attn::test::schema_path;
using attn::test::small_config;
using nlohmann::json;

TEST_CASE("attend: streaming holds one chunk: memory does not grow with the number of sentences", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("muse"));
  randomize(m, 71);
  const auto validator = test::SchemaValidator::from_file(schema_path());
  decode::SearchOptions search;
  search.max_len_b = 3.0f;
  auto peak = [&](std::size_t n, std::vector<std::string>& out) {
    const std::vector<std::string> lines(n, "a few words");
    std::vector<std::vector<std::int32_t>> sources;
    for (const auto& l : lines) sources.push_back(bpe.encode(l));
    decode::AttendInput input;
    input.source_lines = &lines;
    input.sources = &sources;
    input.chunk = 2;
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    decode::run_attend(ctx, m, bpe, input, search, {}, [&](std::int64_t, const std::string& s) { out.push_back(s); });
    return arena.high_water_floats();
  };
  std::vector<std::string> few, many;
  const std::size_t small = peak(4, few), large = peak(40, many);
  REQUIRE(many.size() == 40);
  REQUIRE(large == small);
  // JSON Lines: every line a complete document with one sentence.
  const json header = decode::maps_header(m, "m", false, search, {});
  const std::string text = document_text(header, few, true);
  std::size_t lines = 0, start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    const json doc = json::parse(text.substr(start, end - start));
    REQUIRE(validator.validate(doc).empty());
    REQUIRE(doc["sentences"].size() == 1);
    REQUIRE(doc["sentences"][0]["index"] == lines);
  }
  REQUIRE(lines == 4);
  REQUIRE(start == text.size());
}

TEST_CASE("attend: streaming hands the sentences over in input order, each as the whole input gives it", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("muse"));
  randomize(m, 73);
  decode::SearchOptions search;
  search.max_len_b = 3.0f;
  // Lengths that a batch sorted by length would reorder, across chunk boundaries.
  const std::vector<std::string> lines{"a much longer line of words here", "b", "", "c d e f g", "h i", "j k l"};
  std::vector<std::vector<std::int32_t>> sources;
  for (const auto& l : lines) sources.push_back(bpe.encode(l));
  auto stream = [&](std::int64_t chunk) {
    decode::AttendInput input;
    input.source_lines = &lines;
    input.sources = &sources;
    input.chunk = chunk;
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    std::vector<std::pair<std::int64_t, std::string>> got;
    decode::run_attend(ctx, m, bpe, input, search, {},
                       [&](std::int64_t i, const std::string& s) { got.emplace_back(i, s); });
    return got;
  };
  const auto whole = stream(static_cast<std::int64_t>(lines.size()));
  for (std::int64_t chunk : {1, 2, 4}) {
    INFO("chunk " << chunk);
    const auto got = stream(chunk);
    REQUIRE(got.size() == lines.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      REQUIRE(got[i].first == static_cast<std::int64_t>(i));
      const json doc = json::parse(got[i].second);
      REQUIRE(doc["source"] == lines[i]);
      // Another batch sums in another order: log-probabilities move in the last float
      // digits, a rounded weight by a unit at most.
      require_json_close(doc, json::parse(whole[i].second), 2e-4);
    }
  }
}
