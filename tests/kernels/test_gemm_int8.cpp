// gemm_int8 against its contract written out in plain C++ (int8_model):
// bitwise on every ISA and thread count; and against the FP32 product within
// the quantization's error.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../support.h"
#include "attn/core/error.h"
#include "attn/kernels/gemm_int8.h"

using namespace attn;

namespace {

struct Int8Case {
  std::int64_t m, n, k, ldx, ldw, ldy;
  float beta;
  std::vector<float> x, w, y0;

  Int8Case(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::int64_t pad, float beta_, std::uint64_t seed)
      : m(m_), n(n_), k(k_), ldx(k_ + pad), ldw(k_ + pad), ldy(n_ + pad), beta(beta_) {
    x = test::random_vector(static_cast<std::size_t>(std::max<std::int64_t>(m * ldx, 1)), seed, -2.0f, 2.0f);
    w = test::random_vector(static_cast<std::size_t>(std::max<std::int64_t>(n * ldw, 1)), seed + 1, -0.3f, 0.3f);
    y0 = test::random_vector(static_cast<std::size_t>(std::max<std::int64_t>(m * ldy, 1)), seed + 2);
  }

  std::vector<float> run(const kernels::QuantizedWeight& q) const {
    std::vector<float> y = y0;
    kernels::gemm_int8(m, x.data(), ldx, q, beta, y.data(), ldy);
    return y;
  }

  // The header's arithmetic, element by element.
  std::vector<float> model() const {
    std::vector<float> y = y0;
    for (std::int64_t i = 0; i < m; ++i) {
      const float* xr = x.data() + i * ldx;
      float amax = 0.0f;
      bool finite = true;
      for (std::int64_t p = 0; p < k; ++p) {
        finite = finite && std::isfinite(xr[p]);
        amax = std::max(amax, std::fabs(xr[p]));
      }
      const float inverse = finite && amax > 0.0f ? 127.0f / amax : 0.0f;
      const float scale_x = finite ? amax / 127.0f : std::numeric_limits<float>::quiet_NaN();
      for (std::int64_t j = 0; j < n; ++j) {
        const float* wr = w.data() + j * ldw;
        float wmax = 0.0f;
        for (std::int64_t p = 0; p < k; ++p) wmax = std::max(wmax, std::fabs(wr[p]));
        const float w_inverse = wmax > 0.0f ? 127.0f / wmax : 0.0f;
        std::int32_t sum = 0, w_sum = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          // A row with a non-finite value is quantized as zeros (its scale, NaN, makes the results NaN).
          const auto xq =
              finite ? static_cast<std::int32_t>(std::clamp(std::nearbyint(xr[p] * inverse), -127.0f, 127.0f)) : 0;
          const auto wq = static_cast<std::int32_t>(std::clamp(std::nearbyint(wr[p] * w_inverse), -127.0f, 127.0f));
          sum += (xq + 128) * wq;
          w_sum += wq;
        }
        const float v = static_cast<float>(sum - 128 * w_sum) * scale_x * (wmax / 127.0f);
        float& out = y[static_cast<std::size_t>(i * ldy + j)];
        out = beta == 0.0f ? v : std::fma(beta, out, v);
      }
    }
    return y;
  }
};

bool same_bits_or_both_nan(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("quantize_weight: per-row scales, round to nearest even, row sums, the packed layout; non-finite refused",
          "[gemm][int8]") {
  const float w[2][5] = {{1.0f, -0.5f, 0.25f, 0.0f, 0.126f}, {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}};
  const kernels::QuantizedWeight q = kernels::quantize_weight(&w[0][0], 5, 2, 5);
  REQUIRE(q.quads == 2);
  REQUIRE(q.scales[0] == 1.0f / 127.0f);
  REQUIRE(q.scales[1] == 0.0f);
  // 127·[1, −0.5, 0.25, 0, 0.126] = [127, −63.5 → −64 (even), 31.75 → 32, 0, 16.002 → 16].
  const std::int8_t want[5] = {127, -64, 32, 0, 16};
  for (int p = 0; p < 5; ++p) REQUIRE(q.packed[static_cast<std::size_t>(((p / 4) * 32 + 0) * 4 + p % 4)] == want[p]);
  REQUIRE(q.packed[static_cast<std::size_t>((1 * 32 + 0) * 4 + 1)] == 0);  // past k
  REQUIRE(q.sums[0] == 127 - 64 + 32 + 16);
  REQUIRE(q.sums[1] == 0);
  const float bad[3] = {1.0f, std::numeric_limits<float>::infinity(), 0.0f};
  REQUIRE_THROWS_AS(kernels::quantize_weight(bad, 3, 1, 3), Error);
}

TEST_CASE("gemm_int8: awkward shapes, every ISA and 1/2 threads, bitwise its contract and near the FP32 product",
          "[gemm][int8]") {
  const std::int64_t sizes[] = {1, 2, 7, 17, 63, 64, 65, 129};
  std::vector<Int8Case> cases;
  std::uint64_t seed = 5;
  for (std::int64_t s : sizes) {
    cases.emplace_back(s, 33, 65, seed % 3, seed % 2 ? 0.0f : 0.5f, seed);
    ++seed;
    cases.emplace_back(15, s, 40, seed % 3, seed % 2 ? 0.0f : 0.5f, seed);
    ++seed;
    cases.emplace_back(9, 21, s, seed % 3, seed % 2 ? 0.0f : 0.5f, seed);
    ++seed;
  }
  cases.emplace_back(300, 520, 256, 1, 0.0f, 99);  // threads split C; many tiles
  cases.emplace_back(5, 1000, 1024, 0, 0.0f, 98);  // a decoding step's shape
  // A row of zeros and a row holding a NaN.
  Int8Case special(4, 40, 30, 2, 0.0f, 7);
  std::fill(special.x.begin() + special.ldx, special.x.begin() + special.ldx + special.k, 0.0f);
  special.x[static_cast<std::size_t>(2 * special.ldx + 3)] = std::numeric_limits<float>::quiet_NaN();
  cases.push_back(special);

  std::vector<kernels::QuantizedWeight> weights;
  for (const Int8Case& c : cases) weights.push_back(kernels::quantize_weight(c.w.data(), c.ldw, c.n, c.k));
  for (std::size_t i = 0; i + 1 < cases.size(); ++i) {
    // Quantization error: each operand within half a step of its row's scale.
    const Int8Case& c = cases[i];
    const std::vector<float> model = c.model();
    double error_squares = 0.0, exact_squares = 0.0;
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t j = 0; j < c.n; ++j) {
        double exact = 0.0, bound = 0.0;
        for (std::int64_t p = 0; p < c.k; ++p) {
          exact += static_cast<double>(c.x[static_cast<std::size_t>(r * c.ldx + p)]) *
                   c.w[static_cast<std::size_t>(j * c.ldw + p)];
          bound += (2.0 / 254.0) * 0.3 + (0.3 / 254.0) * 2.0;  // |x| ≤ 2, |w| ≤ 0.3
        }
        const std::size_t at = static_cast<std::size_t>(r * c.ldy + j);
        if (c.beta != 0.0f) exact += static_cast<double>(c.beta) * c.y0[at];
        REQUIRE(std::abs(model[at] - exact) <= bound + 1e-5);
        error_squares += (model[at] - exact) * (model[at] - exact);
        exact_squares += exact * exact;
      }
    // The worst case above grows with k and would let a model 10% off pass on long rows; typical
    // errors are far smaller: half a step of 254 per operand, uniform, gives ~0.6% of the product's
    // norm. The whole product within 2% of the exact one in the Frobenius norm.
    INFO("m " << c.m << " n " << c.n << " k " << c.k);
    REQUIRE(std::sqrt(error_squares) <= 0.02 * std::sqrt(exact_squares));
  }
  test::for_each_isa_and_threads(
      [&](Isa isa, int threads) {
        for (std::size_t i = 0; i < cases.size(); ++i) {
          const Int8Case& c = cases[i];
          INFO("isa " << isa_name(isa) << " threads " << threads << " m " << c.m << " n " << c.n << " k " << c.k);
          REQUIRE(same_bits_or_both_nan(c.run(weights[i]), c.model()));
        }
      },
      test::KernelBuilds::low_precision);
  const std::vector<float> y = special.run(weights.back());
  for (std::int64_t j = 0; j < special.n; ++j) {
    REQUIRE(y[static_cast<std::size_t>(special.ldy + j)] == 0.0f);
    REQUIRE(std::isnan(y[static_cast<std::size_t>(2 * special.ldy + j)]));
    REQUIRE(std::isfinite(y[static_cast<std::size_t>(3 * special.ldy + j)]));
  }
  float scratch[4] = {};
  REQUIRE_THROWS_AS(kernels::gemm_int8(1, scratch, 1, weights[0], 0.0f, scratch, 1), Error);
}

TEST_CASE("unpack_row: each row of a packed weight comes back as packed, on awkward shapes", "[kernels][int8]") {
  for (const auto [n, k] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {33, 7}, {70, 64}, {5, 130}}) {
    INFO(n << "x" << k);
    std::vector<std::int8_t> wq(static_cast<std::size_t>(n * k));
    for (std::size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<std::int8_t>(static_cast<int>(i * 37 % 255) - 127);
    const std::vector<float> scales(static_cast<std::size_t>(n), 0.5f);
    const kernels::QuantizedWeight w = kernels::pack_quantized_weight(wq.data(), k, scales.data(), n, k);
    std::vector<std::int8_t> row(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < n; ++j) {
      kernels::unpack_row(w, j, row.data());
      REQUIRE(std::equal(row.begin(), row.end(), wq.begin() + j * k));
    }
    REQUIRE_THROWS_AS(kernels::unpack_row(w, n, row.data()), std::out_of_range);
  }
}
