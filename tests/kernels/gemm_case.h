// A GEMM test case (padded operands, NaN in A's and B's padding, a guard in
// C's) with its double reference, and the shapes and layouts the GEMM tests
// walk: shared by the FP32 and low-precision GEMM tests.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/core/rng.h"
#include "attn/kernels/gemm.h"

namespace attn::test {

using kernels::Trans;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kGuard = -12345.0f;  // fills C's padding; must survive every call

// One product's operands, stored with padded leading dimensions. A's and B's
// padding holds NaN, so reading it poisons the result.
struct GemmCase {
  Trans ta = Trans::N, tb = Trans::N;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::vector<float> a, b, c0;  // c0: C before the call

  GemmCase(Trans ta_, Trans tb_, std::int64_t m_, std::int64_t n_, std::int64_t k_, float alpha_, float beta_,
           std::int64_t pad, std::uint64_t seed)
      : ta(ta_), tb(tb_), m(m_), n(n_), k(k_), alpha(alpha_), beta(beta_) {
    const std::int64_t a_rows = ta == Trans::N ? m : k, a_cols = ta == Trans::N ? k : m;
    const std::int64_t b_rows = tb == Trans::N ? k : n, b_cols = tb == Trans::N ? n : k;
    lda = std::max<std::int64_t>(a_cols + pad, 1);
    ldb = std::max<std::int64_t>(b_cols + pad, 1);
    ldc = std::max<std::int64_t>(n + pad, 1);
    a = padded(a_rows, a_cols, lda, seed, kNaN);
    b = padded(b_rows, b_cols, ldb, seed + 1, kNaN);
    c0 = padded(m, n, ldc, seed + 2, kGuard);
    if (beta == 0.0f)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) c0[static_cast<std::size_t>(i * ldc + j)] = kNaN;
  }

  static std::vector<float> padded(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                                   float fill) {
    std::vector<float> v(static_cast<std::size_t>(std::max<std::int64_t>(rows * ld, 1)), fill);
    const std::vector<float> values = random_vector(static_cast<std::size_t>(rows * cols), seed);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        v[static_cast<std::size_t>(i * ld + j)] = values[static_cast<std::size_t>(i * cols + j)];
    return v;
  }

  float op_a(std::int64_t i, std::int64_t p) const {
    return a[static_cast<std::size_t>(ta == Trans::N ? i * lda + p : p * lda + i)];
  }
  float op_b(std::int64_t p, std::int64_t j) const {
    return b[static_cast<std::size_t>(tb == Trans::N ? p * ldb + j : j * ldb + p)];
  }

  // C after the call, in double, padding included; `round` is applied to
  // every operand first (the identity for sgemm).
  std::vector<double> reference(float (*round)(float) = nullptr) const {
    std::vector<double> want(c0.begin(), c0.end());
    auto r = [&](float x) { return static_cast<double>(round ? round(x) : x); };
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (std::int64_t p = 0; p < k; ++p) acc += r(op_a(i, p)) * r(op_b(p, j));
        const std::size_t at = static_cast<std::size_t>(i * ldc + j);
        want[at] = alpha * acc + (beta == 0.0f ? 0.0 : beta * static_cast<double>(c0[at]));
      }
    return want;
  }

  // C after gemm(this case's arguments): sgemm by default.
  using GemmFn = void (*)(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);
  std::vector<float> run(GemmFn gemm = &kernels::sgemm_fp32) const {
    std::vector<float> c = c0;
    gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
    return c;
  }
};

inline const char* layout_name(Trans ta, Trans tb) {
  if (ta == Trans::N) return tb == Trans::N ? "NN" : "NT";
  return tb == Trans::N ? "TN" : "TT";
}

struct Shape3 {
  std::int64_t m, n, k;
};

// Each size of the awkward set in each dimension with the others fixed, plus
// random triples from the set.
inline std::vector<Shape3> covering_shapes() {
  const std::int64_t sizes[] = {1, 2, 7, 17, 63, 64, 65, 129};
  std::vector<Shape3> shapes;
  for (std::int64_t s : sizes) {
    shapes.push_back({s, 17, 65});
    shapes.push_back({33, s, 7});
    shapes.push_back({15, 40, s});
  }
  Rng rng(99);
  for (int i = 0; i < 12; ++i) {
    auto pick = [&] { return sizes[static_cast<int>(rng.uniform() * 8) % 8]; };
    const std::int64_t m = pick(), n = pick(), k = pick();
    shapes.push_back({m, n, k});
  }
  return shapes;
}

constexpr Trans kLayouts[4][2] = {
    {Trans::N, Trans::N}, {Trans::N, Trans::T}, {Trans::T, Trans::N}, {Trans::T, Trans::T}};

}  // namespace attn::test
