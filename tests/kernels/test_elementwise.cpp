// Elementwise arithmetic and reductions against double references, on every
// ISA with 1 and 2 threads; reductions bitwise independent of threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/kernels/elementwise.h"

using namespace attn;
using namespace attn::kernels;

namespace {
const std::vector<std::int64_t> kSizes = {1, 2, 7, 17, 63, 64, 65, 129, 5000, 100003};
}  // namespace

TEST_CASE("elementwise add, scale, axpy match double references", "[kernels][elementwise]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : kSizes) {
      INFO("n " << n);
      const std::size_t size = static_cast<std::size_t>(n);
      const auto a = test::random_vector(size, 1 + n), b = test::random_vector(size, 2 + n);
      std::vector<float> y(size);
      add(a.data(), b.data(), y.data(), n);
      std::vector<double> want(size);
      for (std::size_t i = 0; i < size; ++i) want[i] = static_cast<double>(a[i]) + b[i];
      test::require_close(y, want, 1e-7, 1e-7);
      std::vector<float> aliased = a;
      add(aliased.data(), b.data(), aliased.data(), n);
      REQUIRE(aliased == y);

      std::vector<float> x = a;
      scale(x.data(), -0.3f, n);
      for (std::size_t i = 0; i < size; ++i) want[i] = -0.3 * a[i];
      test::require_close(x, want, 1e-7, 1e-6);

      std::vector<float> acc = b;
      axpy(2.5f, a.data(), acc.data(), n);
      for (std::size_t i = 0; i < size; ++i) want[i] = b[i] + 2.5 * a[i];
      test::require_close(acc, want, 1e-6, 1e-6);
    }
  });
}

TEST_CASE("add_row_vector and sum_rows are each other's adjoint", "[kernels][elementwise]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (auto [rows, cols] :
         {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 7}, {17, 63}, {5, 65}, {2, 129}, {4096, 256}, {64, 1024}}) {
      INFO("rows " << rows << ", cols " << cols);
      const std::size_t size = static_cast<std::size_t>(rows * cols);
      const auto y0 = test::random_vector(size, rows + cols), v = test::random_vector(cols, cols);
      std::vector<float> y = y0;
      add_row_vector(y.data(), v.data(), rows, cols);
      std::vector<double> want(size);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j) want[r * cols + j] = static_cast<double>(y0[r * cols + j]) + v[j];
      test::require_close(y, want, 1e-7, 1e-7);

      std::vector<float> dv(static_cast<std::size_t>(cols), 1.0f);
      sum_rows(y0.data(), dv.data(), rows, cols);
      std::vector<double> want_dv(static_cast<std::size_t>(cols), 1.0);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j) want_dv[j] += y0[r * cols + j];
      test::require_close(dv, want_dv, 1e-4, 1e-5);
    }
  });
}

TEST_CASE("sum, sum_squares, max_value, all_finite", "[kernels][elementwise]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : kSizes) {
      INFO("n " << n);
      const auto x = test::random_vector(static_cast<std::size_t>(n), 3 * n, -2.0f, 1.0f);
      double want_sum = 0.0, want_squares = 0.0;
      float want_max = -std::numeric_limits<float>::infinity();
      for (float v : x) {
        want_sum += v;
        want_squares += static_cast<double>(v) * v;
        want_max = std::max(want_max, v);
      }
      REQUIRE(std::abs(sum(x.data(), n) - want_sum) <= 1e-9 * n);
      REQUIRE(std::abs(sum_squares(x.data(), n) - want_squares) <= 1e-9 * want_squares);
      REQUIRE(max_value(x.data(), n) == want_max);
      REQUIRE(all_finite(x.data(), n));
      for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()}) {
        for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
          std::vector<float> y = x;
          y[static_cast<std::size_t>(at)] = bad;
          REQUIRE_FALSE(all_finite(y.data(), n));
        }
      }
    }
    REQUIRE(sum(nullptr, 0) == 0.0);
    REQUIRE(max_value(nullptr, 0) == -std::numeric_limits<float>::infinity());
    REQUIRE(all_finite(nullptr, 0));
    const std::vector<float> big = {3e38f, 3e38f};  // finite values whose sum of squares overflows float
    REQUIRE(all_finite(big.data(), 2));
    REQUIRE(std::isfinite(sum_squares(big.data(), 2)));
  });
}

TEST_CASE("reductions are bitwise identical for 1 and 2 threads", "[kernels][elementwise]") {
  const std::int64_t n = 1 << 20, rows = 4096, cols = 256;
  const auto x = test::random_vector(static_cast<std::size_t>(n), 8);
  const Isa saved_isa = active_isa();
  const int saved_threads = num_threads();
  for (Isa isa : test::supported_isas()) {
    set_active_isa(isa);
    std::vector<double> sums, squares;
    std::vector<std::vector<float>> column_sums;
    for (int threads : {1, 2}) {
      set_threads(threads);
      sums.push_back(sum(x.data(), n));
      squares.push_back(sum_squares(x.data(), n));
      std::vector<float> dv(static_cast<std::size_t>(cols), 0.0f);
      sum_rows(x.data(), dv.data(), rows, cols);
      column_sums.push_back(dv);
    }
    INFO("isa " << isa_name(isa));
    REQUIRE(std::memcmp(&sums[0], &sums[1], sizeof(double)) == 0);
    REQUIRE(std::memcmp(&squares[0], &squares[1], sizeof(double)) == 0);
    REQUIRE(column_sums[0] == column_sums[1]);
  }
  set_active_isa(saved_isa);
  set_threads(saved_threads);
}
