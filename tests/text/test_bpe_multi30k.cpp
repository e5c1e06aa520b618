// Manual timing on the real corpus; hidden (not run by default, not part of
// [text]). Run with:
//   ATTN_MULTI30K=/work/shared/data/multi30k build/attn_tests '[.multi30k]'
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "../support.h"
#include "attn/text/bpe.h"

using namespace attn::text;

TEST_CASE("bpe: learning and encoding time on Multi30k train.{de,en}", "[.multi30k]") {
  const char* dir = std::getenv("ATTN_MULTI30K");
  if (!dir) {
    ATTN_SKIP("ATTN_MULTI30K is not set (ATTN_MULTI30K=../shared/data/multi30k build/attn_tests '[.multi30k]')");
  }
  std::vector<std::string> lines;
  for (const char* name : {"/train.de", "/train.en"}) {
    std::ifstream file(std::string(dir) + name);
    REQUIRE(file);
    for (std::string line; std::getline(file, line);) lines.push_back(line);
  }
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point from) {
    return std::chrono::duration<double>(Clock::now() - from).count();
  };

  auto start = Clock::now();
  const Bpe bpe = Bpe::learn(lines, {.vocab_size = 8000, .min_frequency = 2});
  const double learn_seconds = seconds(start);

  start = Clock::now();
  std::size_t tokens = 0;
  for (const std::string& line : lines) tokens += bpe.encode(line).size();
  const double encode_seconds = seconds(start);

  start = Clock::now();
  std::size_t changed = 0;
  for (const std::string& line : lines) {
    std::string normalised;  // whitespace runs collapsed, ends trimmed
    for (char c : line) {
      const bool space = c == ' ' || (c >= '\t' && c <= '\r');
      if (space) {
        if (!normalised.empty() && normalised.back() != ' ') normalised += ' ';
      } else {
        normalised += c;
      }
    }
    if (!normalised.empty() && normalised.back() == ' ') normalised.pop_back();
    if (bpe.decode(bpe.encode(line)) != normalised) ++changed;
  }
  const double round_trip_seconds = seconds(start);

  std::cout << "multi30k: " << lines.size() << " lines; learn " << learn_seconds << " s (" << bpe.vocab().size()
            << " pieces, " << bpe.merges().size() << " merges); encode " << encode_seconds << " s (" << tokens
            << " tokens); encode+decode " << round_trip_seconds << " s\n";
  REQUIRE(bpe.vocab().size() == 8000);
  REQUIRE(changed == 0);
}
