// LayerNorm kernels against a double reference and finite differences, on
// every ISA with 1 and 2 threads; parameter gradients independent of threads.
#include <cmath>
#include <cstring>
#include <vector>

#include "../support.h"
#include "attn/kernels/layernorm.h"

using namespace attn;
using namespace attn::kernels;

namespace {

struct Shape2 {
  std::int64_t rows, d;
};

const std::vector<Shape2> kShapes = {{1, 1},  {2, 2},   {3, 7},    {5, 17},   {4, 63},    {3, 64},
                                     {6, 65}, {2, 129}, {64, 256}, {33, 256}, {16, 1024}, {200, 64}};

struct Reference {
  std::vector<double> y, mean, rstd;
};

Reference layernorm_reference(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta, std::int64_t rows, std::int64_t d, double eps) {
  Reference ref{std::vector<double>(x.size()), std::vector<double>(rows), std::vector<double>(rows)};
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (std::int64_t j = 0; j < d; ++j) mean += x[r * d + j];
    mean /= d;
    double var = 0.0;
    for (std::int64_t j = 0; j < d; ++j) var += (x[r * d + j] - mean) * (x[r * d + j] - mean);
    var /= d;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::int64_t j = 0; j < d; ++j) ref.y[r * d + j] = (x[r * d + j] - mean) * rstd * gamma[j] + beta[j];
    ref.mean[r] = mean;
    ref.rstd[r] = rstd;
  }
  return ref;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("layernorm_forward matches a double reference on every ISA", "[kernels][layernorm]") {
  test::for_each_isa_and_threads([](Isa, int) {
    std::uint64_t seed = 100;
    for (const Shape2& s : kShapes) {
      INFO("rows " << s.rows << ", d " << s.d);
      const std::size_t size = static_cast<std::size_t>(s.rows * s.d);
      // An offset far from 0 checks that the variance does not cancel.
      const auto x = test::random_vector(size, ++seed, 20.0f, 24.0f);
      const auto gamma = test::random_vector(static_cast<std::size_t>(s.d), ++seed, 0.5f, 1.5f);
      const auto beta = test::random_vector(static_cast<std::size_t>(s.d), ++seed);
      std::vector<float> y(size), mean(s.rows), rstd(s.rows);
      const float eps = 1e-5f;
      layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), s.rows, s.d, eps);
      const Reference ref = layernorm_reference(to_double(x), to_double(gamma), to_double(beta), s.rows, s.d, eps);
      test::require_close(y, ref.y, 1e-4, 1e-4);
      test::require_close(mean, ref.mean, 0.0, 1e-6);
      test::require_close(rstd, ref.rstd, 0.0, 1e-4);
    }
    // No rows: nothing written, gradients untouched.
    {
      std::vector<float> g(4, 1.0f), b(4, 0.0f), dgamma(4, 2.0f), dbeta(4, 3.0f);
      layernorm_forward(nullptr, g.data(), b.data(), nullptr, nullptr, nullptr, 0, 4, 1e-5f);
      layernorm_backward(nullptr, nullptr, g.data(), nullptr, nullptr, nullptr, dgamma.data(), dbeta.data(), 0, 4);
      REQUIRE(dgamma == std::vector<float>(4, 2.0f));
      REQUIRE(dbeta == std::vector<float>(4, 3.0f));
    }
    // A constant row: variance 0, rstd = 1/sqrt(eps), y = beta.
    std::vector<float> x(8, 3.0f), gamma(8, 2.0f), beta(8, 0.25f), y(8), mean(1), rstd(1);
    layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), 1, 8, 1e-5f);
    test::require_close(y, std::vector<double>(8, 0.25), 1e-6, 0.0);
    REQUIRE(std::abs(rstd[0] - 1.0 / std::sqrt(1e-5)) < 1e-2);
  });
}

TEST_CASE("layernorm_backward matches finite differences for x, gamma and beta", "[kernels][layernorm]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Shape2& s : {Shape2{1, 2}, Shape2{3, 7}, Shape2{2, 17}, Shape2{2, 65}}) {
      INFO("rows " << s.rows << ", d " << s.d);
      const std::size_t size = static_cast<std::size_t>(s.rows * s.d), d = static_cast<std::size_t>(s.d);
      const float eps = 1e-5f;
      const auto x = test::random_vector(size, 7 + d, -2.0f, 2.0f);
      const auto gamma = test::random_vector(d, 8 + d, 0.5f, 1.5f);
      const auto beta = test::random_vector(d, 9 + d);
      const auto w = test::random_vector(size, 10 + d);  // dy
      std::vector<float> y(size), mean(s.rows), rstd(s.rows);
      layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), s.rows, s.d, eps);

      // Gradients accumulate onto what is already there.
      const float start = 0.5f;
      std::vector<float> dx(size, start), dgamma(d, start), dbeta(d, start);
      layernorm_backward(w.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
                         dbeta.data(), s.rows, s.d);

      std::vector<double> xd = to_double(x), gd = to_double(gamma), bd = to_double(beta);
      auto loss = [&] {
        const Reference ref = layernorm_reference(xd, gd, bd, s.rows, s.d, eps);
        double total = 0.0;
        for (std::size_t i = 0; i < size; ++i) total += w[i] * ref.y[i];
        return total;
      };
      std::vector<double> want_dx(size), want_dgamma(d), want_dbeta(d);
      for (std::size_t i = 0; i < size; ++i) want_dx[i] = start + test::central_difference(loss, xd[i]);
      for (std::size_t j = 0; j < d; ++j) {
        want_dgamma[j] = start + test::central_difference(loss, gd[j]);
        want_dbeta[j] = start + test::central_difference(loss, bd[j]);
      }
      test::require_close(dx, want_dx, 1e-4, 1e-3);
      test::require_close(dgamma, want_dgamma, 1e-4, 1e-4);
      test::require_close(dbeta, want_dbeta, 1e-4, 1e-4);

      // Without affine gradients, dx is the same.
      std::vector<float> dx_only(size, start);
      layernorm_backward(w.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx_only.data(), nullptr, nullptr,
                         s.rows, s.d);
      REQUIRE(bitwise_equal(dx_only, dx));
    }
  });
}

TEST_CASE("layernorm_backward matches the analytic double formula on model shapes", "[kernels][layernorm]") {
  test::for_each_isa_and_threads([](Isa, int) {
    std::uint64_t seed = 500;
    for (const Shape2& s : kShapes) {
      INFO("rows " << s.rows << ", d " << s.d);
      const std::size_t size = static_cast<std::size_t>(s.rows * s.d), d = static_cast<std::size_t>(s.d);
      const auto x = test::random_vector(size, ++seed, -3.0f, 3.0f);
      const auto gamma = test::random_vector(d, ++seed, 0.5f, 1.5f);
      const auto beta = test::random_vector(d, ++seed);
      const auto dy = test::random_vector(size, ++seed);
      std::vector<float> y(size), mean(s.rows), rstd(s.rows);
      layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), s.rows, s.d, 1e-5f);
      std::vector<float> dx(size), dgamma(d), dbeta(d);
      layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
                         dbeta.data(), s.rows, s.d);

      const Reference ref = layernorm_reference(to_double(x), to_double(gamma), to_double(beta), s.rows, s.d, 1e-5);
      std::vector<double> want_dx(size), want_dgamma(d, 0.0), want_dbeta(d, 0.0);
      for (std::int64_t r = 0; r < s.rows; ++r) {
        double g_mean = 0.0, g_xhat_mean = 0.0;
        for (std::int64_t j = 0; j < s.d; ++j) {
          const double xhat = (x[r * s.d + j] - ref.mean[r]) * ref.rstd[r];
          const double g = static_cast<double>(dy[r * s.d + j]) * gamma[j];
          g_mean += g / s.d;
          g_xhat_mean += g * xhat / s.d;
          want_dgamma[j] += dy[r * s.d + j] * xhat;
          want_dbeta[j] += dy[r * s.d + j];
        }
        for (std::int64_t j = 0; j < s.d; ++j) {
          const double xhat = (x[r * s.d + j] - ref.mean[r]) * ref.rstd[r];
          const double g = static_cast<double>(dy[r * s.d + j]) * gamma[j];
          want_dx[r * s.d + j] = ref.rstd[r] * (g - g_mean - xhat * g_xhat_mean);
        }
      }
      // d = 1: x̂ = 0 and dx = 0 exactly; the scale of the others is O(rstd).
      test::require_close(dx, want_dx, 1e-4, 1e-3);
      test::require_close(dgamma, want_dgamma, 1e-4, 1e-4);
      test::require_close(dbeta, want_dbeta, 1e-4, 1e-4);
    }
  });
}

TEST_CASE("layernorm_backward: dgamma and dbeta are bitwise identical for 1 and 2 threads", "[kernels][layernorm]") {
  const std::int64_t rows = 300, d = 256;
  const std::size_t size = static_cast<std::size_t>(rows * d);
  const auto x = test::random_vector(size, 1);
  const auto gamma = test::random_vector(d, 2, 0.5f, 1.5f);
  const auto beta = test::random_vector(d, 3);
  const auto dy = test::random_vector(size, 4);
  const Isa saved_isa = active_isa();
  const int saved_threads = num_threads();
  for (Isa isa : test::supported_isas()) {
    set_active_isa(isa);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 2}) {
      set_threads(threads);
      std::vector<float> y(size), mean(rows), rstd(rows), dx(size), dgamma(d), dbeta(d);
      layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows, d, 1e-5f);
      layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
                         dbeta.data(), rows, d);
      std::vector<float> all = y;
      for (const auto* part : {&mean, &rstd, &dx, &dgamma, &dbeta}) all.insert(all.end(), part->begin(), part->end());
      results.push_back(all);
    }
    INFO("isa " << isa_name(isa));
    REQUIRE(bitwise_equal(results[0], results[1]));
    REQUIRE(bitwise_equal(results[1], results[2]));
  }
  set_active_isa(saved_isa);
  set_threads(saved_threads);
}
