#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "gemm_case.h"
#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/kernels/gemm.h"

using namespace attn;
using attn::kernels::Trans;

using test::GemmCase;
using test::Shape3;
using test::covering_shapes;
using test::kLayouts;
using test::kNaN;
using test::layout_name;

namespace {

// Float accumulation over k terms of magnitude ≤ 1: error grows with k.
void require_matches(const std::vector<float>& got, const std::vector<double>& want, std::int64_t k) {
  test::require_close(got, want, 2e-6 * static_cast<double>(k + 4), 1e-5);
}

}  // namespace

TEST_CASE("sgemm: awkward shapes, all layouts, every ISA and 1/2 threads, against a double reference", "[gemm]") {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 1;
  for (const Shape3& s : covering_shapes())
    for (const auto& layout : kLayouts) {
      // Alternate alpha/beta and padding so every combination meets many shapes.
      const float alphas[] = {1.0f, -0.5f, 2.0f};
      const float betas[] = {0.0f, 1.0f, 0.75f};
      const float alpha = alphas[seed % 3], beta = betas[(seed / 3) % 3];
      cases.emplace_back(layout[0], layout[1], s.m, s.n, s.k, alpha, beta, static_cast<std::int64_t>(seed % 3) * 5,
                         seed * 11);
      ++seed;
    }
  std::vector<std::vector<double>> want;
  for (const GemmCase& gc : cases) want.push_back(gc.reference());
  test::for_each_isa_and_threads([&](Isa, int) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const GemmCase& gc = cases[i];
      INFO(layout_name(gc.ta, gc.tb) << " m " << gc.m << " n " << gc.n << " k " << gc.k << " alpha " << gc.alpha
                                     << " beta " << gc.beta << " lda " << gc.lda << " ldb " << gc.ldb << " ldc "
                                     << gc.ldc);
      require_matches(gc.run(), want[i], gc.k);
    }
  });
}

TEST_CASE("sgemm: model-sized and decoding shapes (several k blocks, many tiles, threads split C)", "[gemm]") {
  // 5 to 8 rows: a beam of 5 to 8 at batch 1, against a weight stored n×k.
  const Shape3 shapes[] = {{256, 256, 64}, {300, 96, 600}, {37, 2100, 20}, {700, 45, 33},
                           {3, 700, 300},  {5, 1030, 512}, {6, 37, 129},   {8, 515, 33}};
  for (const Shape3& s : shapes)
    for (const auto& layout : kLayouts) {
      const GemmCase gc(layout[0], layout[1], s.m, s.n, s.k, 0.5f, 0.25f, 3, static_cast<std::uint64_t>(s.m + s.n));
      const std::vector<double> want = gc.reference();
      std::vector<float> first;
      test::for_each_isa_and_threads([&](Isa, int threads) {
        INFO(layout_name(gc.ta, gc.tb) << " m " << s.m << " n " << s.n << " k " << s.k);
        const std::vector<float> got = gc.run();
        require_matches(got, want, s.k);
        // Bitwise the same on repeat, and with 2 threads as with 1.
        REQUIRE(std::memcmp(got.data(), gc.run().data(), got.size() * sizeof(float)) == 0);
        if (threads == 1)
          first = got;
        else
          REQUIRE(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) == 0);
      });
    }
}

TEST_CASE("sgemm: B too big for L2 over all of k is packed per k block while threads share rows", "[gemm]") {
  // 1030×260 floats of B exceed the 1 MiB whole-k limit; 460 rows give the
  // two threads rows to share. One layout: the blocking does not depend on it.
  const GemmCase gc(Trans::N, Trans::T, 460, 1030, 260, 1.0f, 0.5f, 2, 77);
  const std::vector<double> want = gc.reference();
  std::vector<float> first;
  test::for_each_isa_and_threads([&](Isa, int threads) {
    const std::vector<float> got = gc.run();
    require_matches(got, want, gc.k);
    if (threads == 1)
      first = got;
    else
      REQUIRE(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) == 0);
  });
}

TEST_CASE("sgemm: k == 0 and alpha == 0 scale C by beta; beta == 0 ignores NaN in C; empty C is untouched", "[gemm]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (float beta : {0.0f, 1.0f, -2.0f}) {
      const GemmCase gc(Trans::N, Trans::N, 9, 33, 0, 1.0f, beta, 2, 5);
      require_matches(gc.run(), gc.reference(), 0);
    }
    // alpha == 0: A and B are not read (as in BLAS), so NaN there is ignored.
    GemmCase gc(Trans::N, Trans::T, 20, 35, 19, 0.0f, 0.5f, 1, 6);
    std::fill(gc.a.begin(), gc.a.end(), kNaN);
    std::vector<double> want(gc.c0.begin(), gc.c0.end());
    for (std::int64_t i = 0; i < gc.m; ++i)
      for (std::int64_t j = 0; j < gc.n; ++j) want[static_cast<std::size_t>(i * gc.ldc + j)] *= 0.5;
    require_matches(gc.run(), want, 0);
    // m == 0 or n == 0: nothing is written.
    float c[4] = {1, 2, 3, 4};
    const float a[4] = {1, 1, 1, 1};
    kernels::sgemm_fp32(Trans::N, Trans::N, 0, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
    kernels::sgemm_fp32(Trans::N, Trans::N, 2, 0, 2, 1.0f, a, 2, a, 1, 0.0f, c, 1);
    REQUIRE((c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4));
  });
}

TEST_CASE("sgemm: bad sizes and leading dimensions are refused with an Error", "[gemm]") {
  float x[16] = {};
  REQUIRE_THROWS_AS(kernels::sgemm_fp32(Trans::N, Trans::N, -1, 2, 2, 1.0f, x, 2, x, 2, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32(Trans::N, Trans::N, 2, 2, 3, 1.0f, x, 2, x, 2, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32(Trans::T, Trans::N, 3, 2, 2, 1.0f, x, 2, x, 2, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32(Trans::N, Trans::T, 2, 2, 3, 1.0f, x, 3, x, 2, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32(Trans::N, Trans::N, 2, 3, 2, 1.0f, x, 2, x, 3, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32_batched(Trans::N, Trans::N, 2, 2, 2, 1.0f, x, 2, 4, x, 2, 4, 0.0f, x, 2, 4, -1),
                    Error);
}

TEST_CASE("sgemm_fp32_batched: attention-like products over the batch or inside each product", "[gemm]") {
  struct BatchCase {
    Trans ta, tb;
    std::int64_t m, n, k, batch;
  };
  // 8 × small: threads over the batch; 3 × larger: threads inside each product.
  const BatchCase batch_cases[] = {{Trans::N, Trans::T, 30, 30, 64, 8}, {Trans::N, Trans::N, 30, 64, 30, 5},
                                   {Trans::T, Trans::N, 64, 30, 30, 2}, {Trans::N, Trans::T, 150, 120, 64, 3},
                                   {Trans::N, Trans::N, 7, 9, 5, 1},    {Trans::N, Trans::N, 7, 9, 5, 0}};
  for (const BatchCase& bc : batch_cases) {
    // Item i is a padded GemmCase; the batch lays the items out end to end.
    const GemmCase shape(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, 0.0f, 4, 1);
    const std::size_t sa = shape.a.size(), sb = shape.b.size(), sc = shape.c0.size();
    std::vector<float> a, b, c;
    std::vector<std::vector<double>> want;
    for (std::int64_t i = 0; i < bc.batch; ++i) {
      const GemmCase gc(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, 0.5f, 4, static_cast<std::uint64_t>(100 + i));
      a.insert(a.end(), gc.a.begin(), gc.a.end());
      b.insert(b.end(), gc.b.begin(), gc.b.end());
      c.insert(c.end(), gc.c0.begin(), gc.c0.end());
      want.push_back(gc.reference());
    }
    test::for_each_isa_and_threads([&](Isa, int) {
      INFO(layout_name(bc.ta, bc.tb) << " m " << bc.m << " n " << bc.n << " k " << bc.k << " batch " << bc.batch);
      std::vector<float> out = c;
      kernels::sgemm_fp32_batched(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, a.data(), shape.lda,
                                  static_cast<std::int64_t>(sa), b.data(), shape.ldb, static_cast<std::int64_t>(sb),
                                  0.5f, out.data(), shape.ldc, static_cast<std::int64_t>(sc), bc.batch);
      for (std::int64_t i = 0; i < bc.batch; ++i) {
        const std::vector<float> got(out.begin() + static_cast<std::ptrdiff_t>(i * sc),
                                     out.begin() + static_cast<std::ptrdiff_t>((i + 1) * sc));
        require_matches(got, want[static_cast<std::size_t>(i)], bc.k);
      }
    });
  }
}

TEST_CASE("sgemm: called from inside an OpenMP parallel region (one product per thread)", "[gemm]") {
  const GemmCase gc(Trans::N, Trans::T, 80, 70, 90, 1.0f, 0.0f, 0, 42);
  const std::vector<double> want = gc.reference();
  test::for_each_isa_and_threads([&](Isa, int threads) {
    std::vector<std::vector<float>> results(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    results[static_cast<std::size_t>(omp_get_thread_num())] = gc.run();
    for (const auto& got : results) require_matches(got, want, gc.k);
  });
}

namespace {

// sgemm_fp32(N, N) with op(B) copied into a k×n store: what a packed B gives.
std::vector<float> product_with_b_stored_k_by_n(const GemmCase& gc) {
  std::vector<float> b_kn(static_cast<std::size_t>(std::max<std::int64_t>(gc.k * gc.n, 1)));
  for (std::int64_t p = 0; p < gc.k; ++p)
    for (std::int64_t j = 0; j < gc.n; ++j) b_kn[static_cast<std::size_t>(p * gc.n + j)] = gc.op_b(p, j);
  std::vector<float> c = gc.c0;
  kernels::sgemm_fp32(Trans::N, Trans::N, gc.m, gc.n, gc.k, gc.alpha, gc.a.data(), gc.lda, b_kn.data(),
                      std::max<std::int64_t>(gc.n, 1), gc.beta, c.data(), gc.ldc);
  return c;
}

}  // namespace

TEST_CASE("sgemm_fp32_packed: op(B) packed once gives sgemm_fp32's bits with B stored k×n, both B layouts, "
          "every ISA and 1/2 threads",
          "[gemm]") {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 171;
  for (const Shape3& s : covering_shapes())
    for (Trans tb : {Trans::N, Trans::T})
      cases.emplace_back(Trans::N, tb, s.m, s.n, s.k, 1.0f, (seed++ % 2) * 0.5f, 3, seed);
  // Decoding's shapes (a beam of 5 against a weight stored n×k), several k blocks, many panels.
  for (const Shape3& s : {Shape3{5, 1030, 512}, Shape3{4, 300, 1025}, Shape3{37, 2100, 64}, Shape3{300, 96, 600}})
    cases.emplace_back(Trans::N, Trans::T, s.m, s.n, s.k, -0.5f, 1.0f, 1, seed++);
  test::for_each_isa_and_threads([&](Isa, int) {
    for (const GemmCase& gc : cases) {
      INFO(layout_name(gc.ta, gc.tb) << " m " << gc.m << " n " << gc.n << " k " << gc.k << " beta " << gc.beta);
      // op(B) column j, step p: b[j·ldb + p] under T, b[p·ldb + j] under N.
      const kernels::Fp32PackedB packed = gc.tb == Trans::T ? kernels::pack_fp32_b(gc.b.data(), gc.ldb, 1, gc.n, gc.k)
                                                            : kernels::pack_fp32_b(gc.b.data(), 1, gc.ldb, gc.n, gc.k);
      REQUIRE(packed.panel_cols == kernels::fp32_panel_cols());
      std::vector<float> got = gc.c0;
      kernels::sgemm_fp32_packed(gc.m, gc.alpha, gc.a.data(), gc.lda, packed, gc.beta, got.data(), gc.ldc);
      const std::vector<float> want = product_with_b_stored_k_by_n(gc);
      REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      // From 5 rows on, also sgemm_fp32's bits with B as it was stored.
      if (gc.m > 4) REQUIRE(std::memcmp(got.data(), gc.run().data(), got.size() * sizeof(float)) == 0);
    }
  });
}

TEST_CASE("sgemm_fp32_packed: a B packed for another ISA's tiles is refused, not misread; bad sizes throw", "[gemm]") {
  const GemmCase gc(Trans::N, Trans::T, 3, 40, 9, 1.0f, 0.0f, 0, 5);
  kernels::Fp32PackedB packed = kernels::pack_fp32_b(gc.b.data(), gc.ldb, 1, gc.n, gc.k);
  packed.panel_cols = packed.panel_cols == 32 ? 16 : 32;
  std::vector<float> c = gc.c0;
  REQUIRE_THROWS_AS(kernels::sgemm_fp32_packed(gc.m, 1.0f, gc.a.data(), gc.lda, packed, 0.0f, c.data(), gc.ldc), Error);
  REQUIRE_THROWS_AS(kernels::pack_fp32_b(gc.b.data(), gc.ldb, 1, -1, gc.k), Error);
  const kernels::Fp32PackedB good = kernels::pack_fp32_b(gc.b.data(), gc.ldb, 1, gc.n, gc.k);
  REQUIRE_THROWS_AS(kernels::sgemm_fp32_packed(gc.m, 1.0f, gc.a.data(), 2, good, 0.0f, c.data(), gc.ldc), Error);
}
