// Strided row kernels (windowed attention's inner loops) against a naive
// double-precision reference, on awkward shapes and every ISA.
#include <vector>

#include "../support.h"
#include "attn/kernels/rows.h"

using namespace attn;

TEST_CASE("rows: strided dots and accumulated rows equal the naive sums", "[kernels]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : {1, 7, 16, 17, 33, 63, 64, 65, 128, 129}) {
      for (std::int64_t count : {0, 1, 2, 3, 4, 5, 7, 11, 16, 33}) {
        INFO("n " << n << ", count " << count);
        const std::int64_t stride = n + 3;  // rows are not contiguous
        const auto rows = test::random_vector(static_cast<std::size_t>(std::max<std::int64_t>(1, count) * stride), 1);
        const auto a = test::random_vector(static_cast<std::size_t>(n), 2);
        const auto coef = test::random_vector(static_cast<std::size_t>(std::max<std::int64_t>(1, count)), 3);

        std::vector<float> dots(static_cast<std::size_t>(count) + 1, -7.0f);
        kernels::strided_dots(a.data(), rows.data(), stride, count, n, 0.5f, dots.data());
        std::vector<double> want_dots(static_cast<std::size_t>(count));
        for (std::int64_t c = 0; c < count; ++c)
          for (std::int64_t x = 0; x < n; ++x) want_dots[c] += 0.5 * double(a[x]) * double(rows[c * stride + x]);
        REQUIRE(test::max_scaled_error(dots.data(), want_dots.data(), want_dots.size(), 1e-5, 1e-5) <= 1.0);
        REQUIRE(dots[count] == -7.0f);  // nothing written past count

        auto y = test::random_vector(static_cast<std::size_t>(n), 4);
        std::vector<double> want_y(y.begin(), y.end());
        kernels::accumulate_rows(coef.data(), rows.data(), stride, count, n, y.data());
        for (std::int64_t c = 0; c < count; ++c)
          for (std::int64_t x = 0; x < n; ++x) want_y[x] += double(coef[c]) * double(rows[c * stride + x]);
        REQUIRE(test::max_scaled_error(y.data(), want_y.data(), want_y.size(), 1e-5, 1e-5) <= 1.0);
      }
    }
  });
}
