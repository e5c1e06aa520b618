// Softmax and log-softmax kernels against double-precision references, on
// every ISA with 1 and 2 threads; backwards against finite differences.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/kernels/softmax.h"

using namespace attn;
using namespace attn::kernels;

namespace {

struct Shape2 {
  std::int64_t rows, cols;
};

// Awkward sizes around the SIMD widths, and the model's shapes (attention
// rows, FFN width, output vocabulary).
const std::vector<Shape2> kShapes = {{1, 1},  {2, 2},   {3, 7},    {5, 17},    {4, 63},   {3, 64},
                                     {6, 65}, {2, 129}, {64, 256}, {64, 1024}, {8, 8000}, {40, 30}};

// valid[r] cycles through: none, one, a partial prefix, all.
std::vector<std::int32_t> mixed_valid(std::int64_t rows, std::int64_t cols) {
  std::vector<std::int32_t> valid(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t pattern[4] = {0, 1, (cols + 1) / 2, cols};
    valid[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(pattern[r % 4]);
  }
  return valid;
}

std::int64_t valid_of(const std::int32_t* valid, std::int64_t r, std::int64_t cols) {
  return valid == nullptr ? cols : valid[r];
}

std::vector<double> softmax_reference(const std::vector<double>& x, std::int64_t rows, std::int64_t cols,
                                      const std::int32_t* valid, double scale) {
  std::vector<double> y(x.size(), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = valid_of(valid, r, cols);
    if (n == 0) continue;
    const double* xr = x.data() + r * cols;
    double* yr = y.data() + r * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < n; ++j) m = std::max(m, scale * xr[j]);
    double sum = 0.0;
    for (std::int64_t j = 0; j < n; ++j) sum += yr[j] = std::exp(scale * xr[j] - m);
    for (std::int64_t j = 0; j < n; ++j) yr[j] /= sum;
  }
  return y;
}

std::vector<double> log_softmax_reference(const std::vector<double>& x, std::int64_t rows, std::int64_t cols) {
  std::vector<double> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) m = std::max(m, xr[j]);
    double sum = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) sum += std::exp(xr[j] - m);
    for (std::int64_t j = 0; j < cols; ++j) y[r * cols + j] = xr[j] - m - std::log(sum);
  }
  return y;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("softmax_forward matches a double reference, with masks, on every ISA", "[kernels][softmax]") {
  test::for_each_isa_and_threads([](Isa, int) {
    std::uint64_t seed = 1;
    for (const Shape2& s : kShapes) {
      for (bool masked : {false, true}) {
        for (float scale : {1.0f, 0.125f}) {
          INFO("rows " << s.rows << ", cols " << s.cols << ", masked " << masked << ", scale " << scale);
          const auto x = test::random_vector(static_cast<std::size_t>(s.rows * s.cols), ++seed, -4.0f, 4.0f);
          const auto valid = mixed_valid(s.rows, s.cols);
          const std::int32_t* v = masked ? valid.data() : nullptr;
          std::vector<float> y(x.size(), -1.0f);
          softmax_forward(x.data(), y.data(), s.rows, s.cols, v, scale);
          test::require_close(y, softmax_reference(to_double(x), s.rows, s.cols, v, scale), 1e-8, 1e-5);
          // Masked columns and empty rows are exactly zero; valid rows sum to 1.
          std::int64_t nonzero_masked = 0;
          double worst_sum_error = 0.0;
          for (std::int64_t r = 0; r < s.rows; ++r) {
            const std::int64_t n = valid_of(v, r, s.cols);
            double row_sum = 0.0;
            for (std::int64_t j = 0; j < s.cols; ++j) {
              const float value = y[static_cast<std::size_t>(r * s.cols + j)];
              if (j >= n && value != 0.0f) ++nonzero_masked;
              row_sum += value;
            }
            worst_sum_error = std::max(worst_sum_error, std::abs(row_sum - (n > 0 ? 1.0 : 0.0)));
          }
          REQUIRE(nonzero_masked == 0);
          REQUIRE(worst_sum_error < 1e-5);
          // In place gives the same bits.
          std::vector<float> in_place = x;
          softmax_forward(in_place.data(), in_place.data(), s.rows, s.cols, v, scale);
          REQUIRE(bitwise_equal(in_place, y));
        }
      }
    }
  });
}

TEST_CASE("softmax_forward is safe for huge logits", "[kernels][softmax]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (float magnitude : {80.0f, 1e4f, 1e38f}) {
      for (std::int64_t cols : {1, 7, 64, 129}) {
        INFO("magnitude " << magnitude << ", cols " << cols);
        const std::int64_t rows = 5;
        auto x = test::random_vector(static_cast<std::size_t>(rows * cols), 7 + cols, -magnitude, magnitude);
        x[0] = magnitude;  // an exact extreme, and a tie at the max in row 1
        if (cols > 1) x[static_cast<std::size_t>(cols)] = x[static_cast<std::size_t>(cols + 1)] = magnitude;
        std::vector<float> y(x.size());
        softmax_forward(x.data(), y.data(), rows, cols, nullptr, 1.0f);
        REQUIRE(std::all_of(y.begin(), y.end(), [](float value) { return std::isfinite(value); }));
        test::require_close(y, softmax_reference(to_double(x), rows, cols, nullptr, 1.0), 1e-7, 1e-5);
      }
    }
    // A row of equal logits is uniform; a row with -inf entries gives them 0.
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {5.0f, 5.0f, 5.0f, 5.0f, 1.0f, -inf, 1.0f, -inf};
    std::vector<float> y(x.size());
    softmax_forward(x.data(), y.data(), 2, 4, nullptr, 1.0f);
    test::require_close(y, {0.25, 0.25, 0.25, 0.25, 0.5, 0.0, 0.5, 0.0}, 1e-7, 1e-6);
  });
}

TEST_CASE("softmax_forward: valid beyond cols is clamped, results are reproducible bit for bit", "[kernels][softmax]") {
  const std::int64_t rows = 64, cols = 1024;
  const auto x = test::random_vector(static_cast<std::size_t>(rows * cols), 99, -6.0f, 6.0f);
  const auto valid = mixed_valid(rows, cols);
  const Isa saved_isa = active_isa();
  const int saved_threads = num_threads();
  for (Isa isa : test::supported_isas()) {
    set_active_isa(isa);
    std::vector<std::vector<float>> runs;
    for (int threads : {1, 2, 2}) {
      set_threads(threads);
      std::vector<float> y(x.size());
      softmax_forward(x.data(), y.data(), rows, cols, valid.data(), 0.5f);
      runs.push_back(y);
    }
    REQUIRE(bitwise_equal(runs[0], runs[1]));
    REQUIRE(bitwise_equal(runs[1], runs[2]));
  }
  set_active_isa(saved_isa);
  set_threads(saved_threads);
  std::vector<std::int32_t> too_long = {9, 9};
  std::vector<float> y(6);
  softmax_forward(x.data(), y.data(), 2, 3, too_long.data(), 1.0f);
  test::require_close(y, softmax_reference(to_double({x.begin(), x.begin() + 6}), 2, 3, nullptr, 1.0), 1e-8, 1e-5);
}

TEST_CASE("softmax_backward matches finite differences of a weighted sum", "[kernels][softmax]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Shape2& s : {Shape2{1, 1}, Shape2{3, 7}, Shape2{4, 17}, Shape2{2, 65}}) {
      for (bool masked : {false, true}) {
        INFO("rows " << s.rows << ", cols " << s.cols << ", masked " << masked);
        const std::size_t size = static_cast<std::size_t>(s.rows * s.cols);
        const float scale = 0.7f;
        const auto x = test::random_vector(size, 3 + s.cols, -2.0f, 2.0f);
        const auto w = test::random_vector(size, 4 + s.cols);
        const auto valid = mixed_valid(s.rows, s.cols);
        const std::int32_t* v = masked ? valid.data() : nullptr;

        std::vector<float> y(size), dx(size, 123.0f);
        softmax_forward(x.data(), y.data(), s.rows, s.cols, v, scale);
        softmax_backward(y.data(), w.data(), dx.data(), s.rows, s.cols, v, scale);

        // L(x) = Σ w ⊙ softmax(scale · x), all in double.
        std::vector<double> xd = to_double(x);
        auto loss = [&] {
          const auto yd = softmax_reference(xd, s.rows, s.cols, v, scale);
          double total = 0.0;
          for (std::size_t i = 0; i < size; ++i) total += w[i] * yd[i];
          return total;
        };
        std::vector<double> numeric(size);
        for (std::size_t i = 0; i < size; ++i) numeric[i] = test::central_difference(loss, xd[i]);
        test::require_close(dx, numeric, 1e-6, 1e-4);

        // dx may alias dy.
        std::vector<float> in_place = w;
        softmax_backward(y.data(), in_place.data(), in_place.data(), s.rows, s.cols, v, scale);
        REQUIRE(bitwise_equal(in_place, dx));
      }
    }
  });
}

TEST_CASE("softmax_backward matches the analytic double formula on model shapes", "[kernels][softmax]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Shape2& s : kShapes) {
      INFO("rows " << s.rows << ", cols " << s.cols);
      const std::size_t size = static_cast<std::size_t>(s.rows * s.cols);
      const auto x = test::random_vector(size, 11 + s.cols, -3.0f, 3.0f);
      const auto dy = test::random_vector(size, 12 + s.cols);
      const auto valid = mixed_valid(s.rows, s.cols);
      std::vector<float> y(size), dx(size);
      softmax_forward(x.data(), y.data(), s.rows, s.cols, valid.data(), 1.0f);
      softmax_backward(y.data(), dy.data(), dx.data(), s.rows, s.cols, valid.data(), 1.0f);
      std::vector<double> want(size, 0.0);
      for (std::int64_t r = 0; r < s.rows; ++r) {
        const std::int64_t n = valid[static_cast<std::size_t>(r)];
        double dot = 0.0;
        for (std::int64_t j = 0; j < n; ++j) dot += static_cast<double>(y[r * s.cols + j]) * dy[r * s.cols + j];
        for (std::int64_t j = 0; j < n; ++j)
          want[r * s.cols + j] = static_cast<double>(y[r * s.cols + j]) * (dy[r * s.cols + j] - dot);
      }
      test::require_close(dx, want, 1e-7, 1e-4);
    }
  });
}

TEST_CASE("log_softmax forward and backward match double references", "[kernels][softmax]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Shape2& s : kShapes) {
      INFO("rows " << s.rows << ", cols " << s.cols);
      const std::size_t size = static_cast<std::size_t>(s.rows * s.cols);
      auto x = test::random_vector(size, 21 + s.cols, -8.0f, 8.0f);
      x[0] = 1e4f;  // one huge logit: row 0 is then (0, -huge, ...)
      std::vector<float> y(size);
      log_softmax_forward(x.data(), y.data(), s.rows, s.cols);
      const auto want = log_softmax_reference(to_double(x), s.rows, s.cols);
      test::require_close(y, want, 1e-5, 1e-5);
      std::vector<float> in_place = x;
      log_softmax_forward(in_place.data(), in_place.data(), s.rows, s.cols);
      REQUIRE(bitwise_equal(in_place, y));

      const auto dy = test::random_vector(size, 22 + s.cols);
      std::vector<float> dx(size);
      log_softmax_backward(y.data(), dy.data(), dx.data(), s.rows, s.cols);
      std::vector<double> want_dx(size);
      for (std::int64_t r = 0; r < s.rows; ++r) {
        double dy_sum = 0.0;
        for (std::int64_t j = 0; j < s.cols; ++j) dy_sum += dy[r * s.cols + j];
        for (std::int64_t j = 0; j < s.cols; ++j)
          want_dx[r * s.cols + j] = dy[r * s.cols + j] - std::exp(want[r * s.cols + j]) * dy_sum;
      }
      test::require_close(dx, want_dx, 1e-5, 1e-4);
    }
    // Finite differences of L = Σ w ⊙ log_softmax(x) on a small shape.
    const std::int64_t rows = 3, cols = 17;
    const std::size_t size = rows * cols;
    const auto x = test::random_vector(size, 31, -3.0f, 3.0f);
    const auto w = test::random_vector(size, 32);
    std::vector<float> y(size), dx = w;
    log_softmax_forward(x.data(), y.data(), rows, cols);
    log_softmax_backward(y.data(), dx.data(), dx.data(), rows, cols);  // dx aliases dy
    std::vector<double> xd = to_double(x);
    auto loss = [&] {
      const auto yd = log_softmax_reference(xd, rows, cols);
      double total = 0.0;
      for (std::size_t i = 0; i < size; ++i) total += w[i] * yd[i];
      return total;
    };
    std::vector<double> numeric(size);
    for (std::size_t i = 0; i < size; ++i) numeric[i] = test::central_difference(loss, xd[i]);
    test::require_close(dx, numeric, 1e-5, 1e-4);
  });
}

TEST_CASE("softmax called per row from inside a parallel region gives the same bits", "[kernels][softmax]") {
  // Layers call kernels from their own parallel loops (attention per head,
  // the loss per row); the kernels then run serially on the calling thread.
  const std::int64_t rows = 64, cols = 1024;
  const auto x = test::random_vector(static_cast<std::size_t>(rows * cols), 5, -5.0f, 5.0f);
  const auto valid = mixed_valid(rows, cols);
  test::for_each_isa_and_threads([&](Isa, int) {
    std::vector<float> whole(x.size()), per_row(x.size());
    softmax_forward(x.data(), whole.data(), rows, cols, valid.data(), 0.25f);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t r = 0; r < rows; ++r)
      softmax_forward(x.data() + r * cols, per_row.data() + r * cols, 1, cols, valid.data() + r, 0.25f);
    REQUIRE(bitwise_equal(whole, per_row));
  });
}
