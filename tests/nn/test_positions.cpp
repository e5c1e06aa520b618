// The position table computed row by row when asked (nn::Positions) holds the
// bits of the whole table computed at once, whatever order and threads ask.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attn/nn/embedding.h"
#include "attn/nn/positions.h"

using namespace attn;

TEST_CASE("positions: rows computed when asked are the whole table's bits, in any order and from several threads",
          "[nn][embedding]") {
  const std::int64_t max_len = 300, d = 10;
  Tensor whole = nn::sinusoidal_positions(max_len, d);
  // fairseq's layout, from the formula: column j < d/2 is sin(t·ω_j), d/2 + j is cos(t·ω_j).
  for (std::int64_t t : {0, 1, 17, 299}) {
    for (std::int64_t j = 0; j < d / 2; ++j) {
      const double w = std::exp(-static_cast<double>(j) * std::log(10000.0) / static_cast<double>(d / 2 - 1));
      REQUIRE(whole.at(t, j) == static_cast<float>(std::sin(static_cast<double>(t) * w)));
      REQUIRE(whole.at(t, d / 2 + j) == static_cast<float>(std::cos(static_cast<double>(t) * w)));
    }
  }
  const nn::Positions one_by_one(max_len, d);
  for (std::int64_t end : {1, 3, 2, 65, 64, 200, 300}) {
    const float* rows = one_by_one.rows(end);
    REQUIRE(std::memcmp(rows, whole.data(), static_cast<std::size_t>(end * d) * sizeof(float)) == 0);
  }
  REQUIRE_THROWS_AS(one_by_one.rows(max_len + 1), std::out_of_range);
  const nn::Positions shared(max_len, d);
  std::vector<std::thread> threads;
  std::vector<int> differing(4, 0);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (std::int64_t end = 1 + i; end <= max_len; end += 7) {
        const float* rows = shared.rows(end);
        differing[static_cast<std::size_t>(i)] +=
            std::memcmp(rows, whole.data(), static_cast<std::size_t>(end * d) * sizeof(float)) == 0 ? 0 : 1;
      }
    });
  for (std::thread& t : threads) t.join();
  REQUIRE(differing == std::vector<int>(4, 0));
}
