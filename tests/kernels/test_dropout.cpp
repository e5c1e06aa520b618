// Dropout: the mask follows the documented Philox recipe exactly, so it is
// the same on every ISA and thread count; keep rate and scaling are right;
// backward against finite differences.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/core/rng.h"
#include "attn/kernels/dropout.h"

using namespace attn;
using namespace attn::kernels;

namespace {

const std::vector<std::int64_t> kSizes = {1, 2, 3, 4, 5, 7, 17, 63, 64, 65, 129, 1000, 1 << 16};

// The documented recipe, with the core's Philox.
std::vector<std::uint8_t> mask_reference(std::int64_t n, float p, std::uint64_t seed, std::uint64_t counter) {
  std::vector<std::uint8_t> keep(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto words = philox4x32(seed, counter + static_cast<std::uint64_t>(i / 4));
    keep[static_cast<std::size_t>(i)] = uniform_from_bits(words[static_cast<std::size_t>(i % 4)]) >= p ? 1 : 0;
  }
  return keep;
}

}  // namespace

TEST_CASE("dropout_forward: mask from philox4x32(seed, counter + i/4) word i%4, scaled kept values",
          "[kernels][dropout]") {
  test::for_each_isa_and_threads([](Isa, int) {
    // Counters straddling the 2^32 carry into Philox's second counter word.
    for (std::uint64_t counter :
         {std::uint64_t{0}, std::uint64_t{12345}, std::uint64_t{0xFFFFFFF0u}, (std::uint64_t{7} << 40) + 3}) {
      for (float p : {0.1f, 0.5f, 0.9f}) {
        for (std::int64_t n : kSizes) {
          INFO("counter " << counter << ", p " << p << ", n " << n);
          const std::uint64_t seed = 0x0123456789ABCDEFull + static_cast<std::uint64_t>(n);
          const auto x = test::random_vector(static_cast<std::size_t>(n), 3 + n);
          std::vector<float> y(x.size());
          std::vector<std::uint8_t> keep(x.size(), 7);
          dropout_forward(x.data(), y.data(), keep.data(), n, p, seed, counter);
          REQUIRE(keep == mask_reference(n, p, seed, counter));
          std::vector<double> want(x.size());
          for (std::size_t i = 0; i < x.size(); ++i) want[i] = keep[i] ? x[i] / (1.0 - p) : 0.0;
          test::require_close(y, want, 1e-30, 1e-6);
          // In place gives the same values.
          std::vector<float> in_place = x;
          dropout_forward(in_place.data(), in_place.data(), keep.data(), n, p, seed, counter);
          REQUIRE(std::memcmp(in_place.data(), y.data(), y.size() * sizeof(float)) == 0);
        }
      }
    }
  });
}

TEST_CASE("dropout_forward keeps about 1 − p, identically on every ISA and thread count", "[kernels][dropout]") {
  const std::int64_t n = 1 << 18;
  const std::vector<float> x(static_cast<std::size_t>(n), 1.0f);
  for (float p : {0.05f, 0.1f, 0.3f, 0.5f}) {
    std::vector<std::uint8_t> first;
    test::for_each_isa_and_threads([&](Isa, int) {
      INFO("p " << p);
      std::vector<float> y(x.size());
      std::vector<std::uint8_t> keep(x.size());
      dropout_forward(x.data(), y.data(), keep.data(), n, p, 42, 1000);
      if (first.empty()) first = keep;
      REQUIRE(keep == first);
      double kept = 0.0, kept_first_half = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        kept += keep[static_cast<std::size_t>(i)];
        if (i < n / 2) kept_first_half += keep[static_cast<std::size_t>(i)];
      }
      // Binomial: 6 standard deviations, on the whole and on one half.
      const double sd = std::sqrt(p * (1.0 - p) / n);
      REQUIRE(std::abs(kept / n - (1.0 - p)) < 6 * sd);
      REQUIRE(std::abs(kept_first_half / (n / 2) - (1.0 - p)) < 6 * sd * std::sqrt(2.0));
      // The scaled output keeps the mean.
      double mean = 0.0;
      for (float v : y) mean += v;
      REQUIRE(std::abs(mean / n - 1.0) < 6 * sd / (1.0 - p));
    });
  }
  // Different counters give different masks.
  std::vector<float> y(x.size());
  std::vector<std::uint8_t> a(x.size()), b(x.size());
  dropout_forward(x.data(), y.data(), a.data(), n, 0.5f, 42, 0);
  dropout_forward(x.data(), y.data(), b.data(), n, 0.5f, 42, n / 4);
  REQUIRE(a != b);
}

TEST_CASE("dropout: p = 0 is the identity, p = 1 drops everything", "[kernels][dropout]") {
  test::for_each_isa_and_threads([](Isa, int) {
    const std::int64_t n = 129;
    const auto x = test::random_vector(n, 9);
    std::vector<float> y(n, 5.0f);
    std::vector<std::uint8_t> keep(n, 0);
    dropout_forward(x.data(), y.data(), keep.data(), n, 0.0f, 1, 0);
    REQUIRE(y == x);
    REQUIRE(keep == std::vector<std::uint8_t>(n, 1));
    std::vector<float> dx(n, 1.0f);
    dropout_backward(x.data(), keep.data(), dx.data(), n, 0.0f);
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(dx[i] == 1.0f + x[i]);

    dropout_forward(x.data(), y.data(), keep.data(), n, 1.0f, 1, 0);
    REQUIRE(y == std::vector<float>(n, 0.0f));
    REQUIRE(keep == std::vector<std::uint8_t>(n, 0));
    std::vector<float> dx1(n, 1.0f);
    dropout_backward(x.data(), keep.data(), dx1.data(), n, 1.0f);
    REQUIRE(dx1 == std::vector<float>(n, 1.0f));
  });
}

TEST_CASE("dropout_backward matches finite differences and accumulates", "[kernels][dropout]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : kSizes) {
      INFO("n " << n);
      const float p = 0.3f;
      const auto x = test::random_vector(static_cast<std::size_t>(n), 20 + n);
      const auto w = test::random_vector(x.size(), 21 + n);
      const auto start = test::random_vector(x.size(), 22 + n);
      std::vector<float> y(x.size()), dx = start;
      std::vector<std::uint8_t> keep(x.size());
      dropout_forward(x.data(), y.data(), keep.data(), n, p, 77, 5);
      dropout_backward(w.data(), keep.data(), dx.data(), n, p);
      // L = Σ w ⊙ dropout(x) with the mask fixed; each term holds one x.
      std::vector<double> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        double xi = x[i];
        const double slope = test::central_difference([&] { return keep[i] ? w[i] * xi / (1.0 - p) : 0.0; }, xi);
        want[i] = start[i] + slope;
      }
      test::require_close(dx, want, 1e-6, 1e-5);
    }
  });
}

TEST_CASE("dropout_backward_write: kept elements scaled by 1/(1 − p), dropped ones exactly 0, even inf and NaN",
          "[kernels][dropout]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : kSizes)
      for (float p : {0.3f, 1.0f}) {
        INFO("n " << n << " p " << p);
        const auto x = test::random_vector(static_cast<std::size_t>(n), 30 + n);
        std::vector<float> y(x.size()), dy = test::random_vector(x.size(), 31 + n);
        std::vector<std::uint8_t> keep(x.size());
        dropout_forward(x.data(), y.data(), keep.data(), n, p, 78, 9);
        dy[0] = std::numeric_limits<float>::infinity();
        if (n > 2) dy[2] = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> want(dy.size());
        for (std::size_t i = 0; i < dy.size(); ++i) want[i] = keep[i] ? dy[i] * (1.0f / (1.0f - p)) : 0.0f;
        std::vector<float> dx(dy.size(), 5.0f);
        dropout_backward_write(dy.data(), keep.data(), dx.data(), n, p);
        dropout_backward_write(dy.data(), keep.data(), dy.data(), n, p);  // in place
        for (std::size_t i = 0; i < dy.size(); ++i) {
          if (std::isnan(want[i])) {
            REQUIRE(std::isnan(dx[i]));
            REQUIRE(std::isnan(dy[i]));
          } else {
            REQUIRE(dx[i] == want[i]);
            REQUIRE(dy[i] == want[i]);
          }
        }
      }
  });
}
