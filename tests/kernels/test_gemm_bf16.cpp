// gemm_bf16 against its contract, written out element by element in plain
// C++ (bf16_model): bitwise on every ISA and thread count. The model itself
// is checked against a double reference of the bf16-rounded operands.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/core/error.h"
#include "attn/kernels/gemm_bf16.h"
#include "gemm_case.h"

using namespace attn;
using attn::kernels::Trans;
using test::GemmCase;

namespace {

float flush_tiny(float x) { return std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x; }

// C after gemm_bf16, as the header's contract states it.
std::vector<float> bf16_model(const GemmCase& gc) {
  std::vector<float> c = gc.c0;
  auto at = [&](std::int64_t i, std::int64_t j) -> float& { return c[static_cast<std::size_t>(i * gc.ldc + j)]; };
  if (gc.k == 0 || gc.alpha == 0.0f) {
    for (std::int64_t i = 0; i < gc.m; ++i)
      for (std::int64_t j = 0; j < gc.n; ++j) at(i, j) = gc.beta == 0.0f ? 0.0f : gc.beta * at(i, j);
    return c;
  }
  const std::int64_t blocks = (gc.k + kernels::kBf16KBlock - 1) / kernels::kBf16KBlock;
  const std::int64_t block_len = ((gc.k + blocks - 1) / blocks + 1) / 2 * 2;
  for (std::int64_t i = 0; i < gc.m; ++i)
    for (std::int64_t j = 0; j < gc.n; ++j)
      for (std::int64_t p0 = 0; p0 < gc.k; p0 += block_len) {
        const std::int64_t p1 = std::min(gc.k, p0 + block_len);
        float acc = 0.0f;
        for (std::int64_t p = p0; p < p1; p += 2) {
          const float a_odd = p + 1 < p1 ? kernels::round_to_bf16(gc.op_a(i, p + 1)) : 0.0f;
          const float b_odd = p + 1 < p1 ? kernels::round_to_bf16(gc.op_b(p + 1, j)) : 0.0f;
          acc = flush_tiny(std::fma(a_odd, b_odd, acc));
          acc = flush_tiny(std::fma(kernels::round_to_bf16(gc.op_a(i, p)), kernels::round_to_bf16(gc.op_b(p, j)), acc));
        }
        const float beta = p0 == 0 ? gc.beta : 1.0f;
        at(i, j) = beta == 0.0f ? gc.alpha * acc : std::fma(gc.alpha, acc, beta * at(i, j));
      }
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Bitwise the model on every ISA. Should a CPU's vdpbf16ps round otherwise
// than Intel's SDM describes (measured equal on Intel Xeon, family 6 model
// 207), the avx512bf16 result is held to the double reference instead and a
// warning names the difference: that is the CPU's arithmetic, not attn's.
void require_contract(const GemmCase& gc, Isa isa) {
  const std::vector<float> got = gc.run(&kernels::gemm_bf16);
  const std::vector<float> want = bf16_model(gc);
  if (same_bits(got, want)) return;
  if (isa != Isa::avx512bf16) FAIL("gemm_bf16 differs from its contract on " << isa_name(isa));
  WARN("this CPU's vdpbf16ps rounds differently from Intel's SDM; checked against the double reference only");
  test::require_close(got, gc.reference(&kernels::round_to_bf16), 2e-6 * static_cast<double>(gc.k + 4), 1e-5);
}

}  // namespace

TEST_CASE("bf16: rounding to nearest even, denormals to signed zero, NaN kept, overflow to inf", "[gemm][bf16]") {
  struct Golden {
    float x;
    std::uint16_t bits;
  };
  const Golden golden[] = {
      {1.0f, 0x3F80},
      {-2.0f, 0xC000},
      {1.00390625f, 0x3F80},                        // 1 + 2⁻⁸: a tie, to even (down)
      {1.01171875f, 0x3F82},                        // 1 + 2⁻⁷ + 2⁻⁸: a tie, to even (up)
      {std::nextafter(1.00390625f, 2.0f), 0x3F81},  // just above the tie: up
      {FLT_MAX, 0x7F80},
      {-FLT_MAX, 0xFF80},
      {1e-39f, 0x0000},
      {-1e-39f, 0x8000},  // denormals
      {FLT_MIN, 0x0080},
      {std::numeric_limits<float>::infinity(), 0x7F80},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
  };
  for (const Golden& g : golden) {
    INFO("x " << g.x);
    REQUIRE(kernels::bf16_bits(g.x) == g.bits);
  }
  REQUIRE(std::isnan(kernels::round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A signalling-NaN pattern whose payload lies in the dropped half stays a NaN.
  REQUIRE(std::isnan(kernels::round_to_bf16(std::bit_cast<float>(0x7F800001u))));
}

TEST_CASE("gemm_bf16: the packing's conversion (every layout's pack path) equals bf16_bits, special values included",
          "[gemm][bf16]") {
  // C = A·I with A holding the special values: with finite values each C
  // element is bf16(a)·1 (denormals: zero); an infinite one makes its row
  // NaN (inf·0), as in the model. FLT_MAX rounds to inf.
  const std::int64_t m = 19, k = 37;
  const float specials[] = {1.00390625f,
                            1.01171875f,
                            1e-39f,
                            -3e-39f,
                            3.0e38f,
                            -0.0f,
                            0.1f,
                            -7.3f,
                            65504.0f,
                            FLT_MAX,
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  test::for_each_isa_and_threads(
      [&](Isa, int) {
        for (const auto& layout : test::kLayouts)
          for (const bool finite_only : {true, false}) {
            GemmCase gc(layout[0], layout[1], m, k, k, 1.0f, 0.0f, 3, 8);
            const std::size_t count = finite_only ? std::size(specials) - 3 : std::size(specials);
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t p = 0; p < k; ++p) {
                const float x = specials[static_cast<std::size_t>(i * k + p) % count];
                gc.a[static_cast<std::size_t>(gc.ta == Trans::N ? i * gc.lda + p : p * gc.lda + i)] = x;
              }
            for (std::int64_t p = 0; p < k; ++p)
              for (std::int64_t j = 0; j < k; ++j)
                gc.b[static_cast<std::size_t>(gc.tb == Trans::N ? p * gc.ldb + j : j * gc.ldb + p)] = p == j ? 1.0f
                                                                                                             : 0.0f;
            const std::vector<float> c = gc.run(&kernels::gemm_bf16), model = bf16_model(gc);
            INFO(test::layout_name(gc.ta, gc.tb) << (finite_only ? ", finite" : ", with inf and NaN"));
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t j = 0; j < k; ++j) {
                const std::size_t at = static_cast<std::size_t>(i * gc.ldc + j);
                const float want = finite_only ? kernels::round_to_bf16(gc.op_a(i, j)) : model[at];
                INFO("a " << gc.op_a(i, j) << " got " << c[at] << " want " << want);
                // A sum from +0 loses a product's −0: compare as values.
                REQUIRE(((std::isnan(c[at]) && std::isnan(want)) || c[at] == want));
              }
          }
      },
      test::KernelBuilds::low_precision);
}

TEST_CASE("gemm_bf16: awkward shapes, all layouts, every ISA and 1/2 threads, bitwise its contract", "[gemm][bf16]") {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 3;
  for (const test::Shape3& s : test::covering_shapes())
    for (const auto& layout : test::kLayouts) {
      const float alphas[] = {1.0f, -0.5f, 2.0f};
      const float betas[] = {0.0f, 1.0f, 0.75f};
      cases.emplace_back(layout[0], layout[1], s.m, s.n, s.k, alphas[seed % 3], betas[(seed / 3) % 3],
                         static_cast<std::int64_t>(seed % 3) * 5, seed * 13);
      ++seed;
    }
  // The model against a double reference of the rounded operands: only the
  // FP32 accumulation differs.
  for (const GemmCase& gc : cases)
    test::require_close(bf16_model(gc), gc.reference(&kernels::round_to_bf16), 2e-6 * static_cast<double>(gc.k + 4),
                        1e-5);
  test::for_each_isa_and_threads(
      [&](Isa isa, int) {
        for (const GemmCase& gc : cases) {
          INFO(test::layout_name(gc.ta, gc.tb) << " m " << gc.m << " n " << gc.n << " k " << gc.k << " alpha "
                                               << gc.alpha << " beta " << gc.beta << " lda " << gc.lda);
          require_contract(gc, isa);
        }
      },
      test::KernelBuilds::low_precision);
}

TEST_CASE("gemm_bf16: model-sized shapes (several k blocks, many tiles, threads split C), bitwise its contract",
          "[gemm][bf16][big]") {
  const test::Shape3 shapes[] = {{256, 256, 64}, {300, 96, 1100}, {37, 2100, 20}, {700, 45, 33}, {3, 700, 300}};
  for (const test::Shape3& s : shapes)
    for (const auto& layout : test::kLayouts) {
      const GemmCase gc(layout[0], layout[1], s.m, s.n, s.k, 0.5f, 0.25f, 3, static_cast<std::uint64_t>(s.m + s.n));
      test::for_each_isa_and_threads(
          [&](Isa isa, int) {
            INFO(test::layout_name(gc.ta, gc.tb) << " m " << s.m << " n " << s.n << " k " << s.k);
            require_contract(gc, isa);
          },
          test::KernelBuilds::low_precision);
    }
}

TEST_CASE("gemm_bf16: k == 0 and alpha == 0 scale C by beta; bad shapes are refused", "[gemm][bf16]") {
  test::for_each_isa_and_threads(
      [](Isa isa, int) {
        for (float beta : {0.0f, 1.0f, -2.0f})
          require_contract(GemmCase(Trans::N, Trans::N, 9, 33, 0, 1.0f, beta, 2, 5), isa);
        GemmCase gc(Trans::N, Trans::T, 20, 35, 19, 0.0f, 0.5f, 1, 6);
        std::fill(gc.a.begin(), gc.a.end(), test::kNaN);
        require_contract(gc, isa);
      },
      test::KernelBuilds::low_precision);
  float x[16] = {};
  REQUIRE_THROWS_AS(kernels::gemm_bf16(Trans::N, Trans::N, 2, 2, 3, 1.0f, x, 2, x, 2, 0.0f, x, 2), Error);
  REQUIRE_THROWS_AS(kernels::gemm_bf16_batched(Trans::N, Trans::N, 2, 2, 2, 1.0f, x, 2, 4, x, 2, 4, 0.0f, x, 2, 4, -1),
                    Error);
}

TEST_CASE("gemm_bf16_batched: each product is what gemm_bf16 gives, over the batch or inside each product",
          "[gemm][bf16]") {
  struct BatchCase {
    Trans ta, tb;
    std::int64_t m, n, k, batch;
  };
  const BatchCase batch_cases[] = {{Trans::N, Trans::T, 30, 30, 64, 8},
                                   {Trans::N, Trans::N, 30, 64, 30, 5},
                                   {Trans::T, Trans::N, 150, 120, 64, 3},
                                   {Trans::N, Trans::N, 7, 9, 5, 0}};
  for (const BatchCase& bc : batch_cases) {
    std::vector<GemmCase> items;
    std::vector<float> a, b, c;
    for (std::int64_t i = 0; i < bc.batch; ++i) {
      items.emplace_back(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, 0.5f, 4, static_cast<std::uint64_t>(200 + i));
      a.insert(a.end(), items.back().a.begin(), items.back().a.end());
      b.insert(b.end(), items.back().b.begin(), items.back().b.end());
      c.insert(c.end(), items.back().c0.begin(), items.back().c0.end());
    }
    const GemmCase shape(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, 0.5f, 4, 1);
    const std::size_t sa = shape.a.size(), sb = shape.b.size(), sc = shape.c0.size();
    test::for_each_isa_and_threads(
        [&](Isa, int) {
          INFO(test::layout_name(bc.ta, bc.tb)
               << " m " << bc.m << " n " << bc.n << " k " << bc.k << " batch " << bc.batch);
          std::vector<float> out = c;
          kernels::gemm_bf16_batched(bc.ta, bc.tb, bc.m, bc.n, bc.k, 1.5f, a.data(), shape.lda,
                                     static_cast<std::int64_t>(sa), b.data(), shape.ldb, static_cast<std::int64_t>(sb),
                                     0.5f, out.data(), shape.ldc, static_cast<std::int64_t>(sc), bc.batch);
          for (std::int64_t i = 0; i < bc.batch; ++i) {
            const std::vector<float> got(out.begin() + static_cast<std::ptrdiff_t>(i * sc),
                                         out.begin() + static_cast<std::ptrdiff_t>((i + 1) * sc));
            REQUIRE(same_bits(got, items[static_cast<std::size_t>(i)].run(&kernels::gemm_bf16)));
          }
        },
        test::KernelBuilds::low_precision);
  }
}

TEST_CASE("gemm_bf16_packed: op(B) packed once gives gemm_bf16's bits, both B layouts, every ISA and 1/2 threads",
          "[gemm][bf16]") {
  std::vector<GemmCase> cases;
  std::uint64_t seed = 71;
  for (const test::Shape3& s : test::covering_shapes())
    for (Trans tb : {Trans::N, Trans::T})
      cases.emplace_back(Trans::N, tb, s.m, s.n, s.k, 1.0f, (seed++ % 2) * 0.5f, 3, seed);
  for (const test::Shape3& s : {test::Shape3{5, 1100, 1100}, test::Shape3{37, 2100, 64}, test::Shape3{300, 96, 1030}})
    cases.emplace_back(Trans::N, Trans::T, s.m, s.n, s.k, -0.5f, 1.0f, 1, seed++);
  kernels::Bf16PackedB reused;
  reused.pairs.assign(std::size_t{1} << 20, 0xFFFFFFFFu);
  test::for_each_isa_and_threads(
      [&](Isa, int) {
        for (const GemmCase& gc : cases) {
          INFO(test::layout_name(gc.ta, gc.tb)
               << " m " << gc.m << " n " << gc.n << " k " << gc.k << " beta " << gc.beta);
          // op(B) column j, step p: b[j·ldb + p] under T, b[p·ldb + j] under N.
          const kernels::Bf16PackedB packed = gc.tb == Trans::T
                                                  ? kernels::pack_bf16_b(gc.b.data(), gc.ldb, 1, gc.n, gc.k)
                                                  : kernels::pack_bf16_b(gc.b.data(), 1, gc.ldb, gc.n, gc.k);
          REQUIRE(packed.panel_cols == kernels::bf16_panel_cols());
          // Packed again into the storage of the last case (other shape, stale words): the same.
          gc.tb == Trans::T ? kernels::pack_bf16_b_into(gc.b.data(), gc.ldb, 1, gc.n, gc.k, reused)
                            : kernels::pack_bf16_b_into(gc.b.data(), 1, gc.ldb, gc.n, gc.k, reused);
          REQUIRE((reused.n == packed.n && reused.k == packed.k && reused.kc_len == packed.kc_len));
          REQUIRE(reused.pairs == packed.pairs);
          std::vector<float> got = gc.c0;
          kernels::gemm_bf16_packed(gc.m, gc.alpha, gc.a.data(), gc.lda, packed, gc.beta, got.data(), gc.ldc);
          REQUIRE(same_bits(got, gc.run(&kernels::gemm_bf16)));
        }
      },
      test::KernelBuilds::low_precision);
}

TEST_CASE("gemm_bf16_packed: a B packed for another ISA's tiles is refused, not misread", "[gemm][bf16]") {
  const GemmCase gc(Trans::N, Trans::T, 3, 40, 9, 1.0f, 0.0f, 0, 5);
  kernels::Bf16PackedB packed = kernels::pack_bf16_b(gc.b.data(), gc.ldb, 1, gc.n, gc.k);
  packed.panel_cols = packed.panel_cols == 32 ? 16 : 32;
  std::vector<float> c = gc.c0;
  REQUIRE_THROWS_AS(kernels::gemm_bf16_packed(gc.m, 1.0f, gc.a.data(), gc.lda, packed, 0.0f, c.data(), gc.ldc), Error);
}
