// int8 products y = x·Wᵀ (gemm_int8.h): x quantized per row into u8 quads
// (one row panel at a time, quad-major: the kRows rows' quads q side by side),
// W pre-packed in s8 quads, int32 sums on vpdpbusd (avx512vnni and up) or in
// plain C++ (elsewhere: exact, so the same bits).
#include "../isa.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <array>
#include <utility>

#include <omp.h>

#include "../gemm_common.h"
#include "../tile_store.h"
#include "attn/core/error.h"
#include "attn/kernels/gemm_int8.h"
#include "../kernels.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
ATTN_AVX512_WARNINGS_OFF

// Rows of x per panel: with vpdpbusd 28 int32 accumulators + 2 B vectors.
constexpr int kRows = ATTN_VNNI ? 14 : 4;
constexpr int kCols = static_cast<int>(kInt8PanelCols);

// Quantizes `rows` rows of x (k each) into panel[q·kRows + r] (a u32 holding
// the u8 quad of row r, steps 4q..4q+3, each xq + 128; 128 past k) and
// scales[r] (NaN for a row with a non-finite value). Quad-major, so that a
// tile reads every row's quad q from one pointer (row-major took 14).
// row_quads: [quads], one row's quads before they are spread into the panel.
void pack_x(const float* x, std::int64_t ldx, int rows, std::int64_t k, std::int64_t quads, std::uint32_t* panel,
            std::uint32_t* row_quads, float* scales) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x + r * ldx;
    auto* bytes = reinterpret_cast<std::uint8_t*>(row_quads);
    float amax = 0.0f;
    bool finite = true;
    std::int64_t p = 0;
#if ATTN_AVX512
    // One pass: the largest |x| (max is exact in any order) and whether any is not finite.
    __m512 vmax = _mm512_setzero_ps();
    __mmask16 bad = 0;
    for (; p + 16 <= k; p += 16) {
      const __m512 magnitude = _mm512_abs_ps(_mm512_loadu_ps(row + p));
      vmax = _mm512_max_ps(vmax, magnitude);
      bad |= _mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(FLT_MAX), _CMP_NLE_UQ);
    }
    amax = _mm512_reduce_max_ps(vmax);
    finite = bad == 0;
#endif
    for (; p < k; ++p) {
      finite = finite && std::isfinite(row[p]);
      amax = std::max(amax, std::fabs(row[p]));
    }
    scales[r] = finite ? amax / 127.0f : std::numeric_limits<float>::quiet_NaN();
    if (!finite) {  // the row's results are NaN whatever it holds: quantize it as zeros
      for (std::int64_t q = 0; q < quads; ++q) panel[q * kRows + r] = 0x80808080u;
      continue;
    }
    const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
    p = 0;
#if ATTN_AVX512
    const __m512 v_inverse = _mm512_set1_ps(inverse);
    for (; p + 16 <= k; p += 16) {
      __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + p), v_inverse));
      q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes + p),
                       _mm512_cvtepi32_epi8(_mm512_add_epi32(q, _mm512_set1_epi32(128))));
    }
#endif
    for (; p < k; ++p)
      bytes[p] = static_cast<std::uint8_t>(
          static_cast<std::int32_t>(std::clamp(std::nearbyint(row[p] * inverse), -127.0f, 127.0f)) + 128);
    for (; p < 4 * quads; ++p) bytes[p] = 128;
    for (std::int64_t q = 0; q < quads; ++q) panel[q * kRows + r] = row_quads[q];
  }
}

#if ATTN_VNNI
template <int R>
void int8_tile(std::int64_t quads, const std::uint32_t* a, const std::int8_t* b, const float* x_scales,
               const float* w_scales, const std::int32_t* w_sums, float beta, float* y, std::int64_t ldy, int cols) {
  // a: [quads][kRows] u32 (R rows used); b: [quads][kCols] s8 quads.
  // The sums are __v16si, the builtin's own type: through _mm512_dpbusd_epi32
  // (__m512i, i.e. 8 × int64) GCC kept them in memory and stored all 28 every step.
  __v16si lo[R], hi[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = __v16si{};
  for (std::int64_t q = 0; q < quads; ++q) {
    const __v16si b_lo = (__v16si)_mm512_loadu_si512(b), b_hi = (__v16si)_mm512_loadu_si512(b + 64);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __v16si a_r = (__v16si)_mm512_set1_epi32(static_cast<int>(a[r]));
      lo[r] = __builtin_ia32_vpdpbusd_v16si(lo[r], a_r, b_lo);
      hi[r] = __builtin_ia32_vpdpbusd_v16si(hi[r], a_r, b_hi);
    }
    a += kRows;
    b += kCols * 4;
  }
  const auto [mask_lo, mask_hi] = column_masks(cols);
  const __m512i offset_lo = _mm512_slli_epi32(_mm512_maskz_loadu_epi32(mask_lo, w_sums), 7);
  const __m512i offset_hi = _mm512_slli_epi32(_mm512_maskz_loadu_epi32(mask_hi, w_sums + 16), 7);
  const __m512 scale_lo = _mm512_maskz_loadu_ps(mask_lo, w_scales),
               scale_hi = _mm512_maskz_loadu_ps(mask_hi, w_scales + 16);
  const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const __m512 sx = _mm512_set1_ps(x_scales[r]);
    const __m512 sum_lo = _mm512_cvtepi32_ps(_mm512_sub_epi32((__m512i)lo[r], offset_lo));
    const __m512 sum_hi = _mm512_cvtepi32_ps(_mm512_sub_epi32((__m512i)hi[r], offset_hi));
    __m512 v_lo = _mm512_mul_ps(_mm512_mul_ps(sum_lo, sx), scale_lo);
    __m512 v_hi = _mm512_mul_ps(_mm512_mul_ps(sum_hi, sx), scale_hi);
    float* row = y + r * ldy;
    if (beta != 0.0f) {
      v_lo = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask_lo, row), v_lo);
      v_hi = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask_hi, row + 16), v_hi);
    }
    _mm512_mask_storeu_ps(row, mask_lo, v_lo);
    _mm512_mask_storeu_ps(row + 16, mask_hi, v_hi);
  }
}
#else
// The same sums in plain C++ (no VNNI: exact int32 arithmetic all the same).
template <int R>
void int8_tile(std::int64_t quads, const std::uint32_t* a, const std::int8_t* b, const float* x_scales,
               const float* w_scales, const std::int32_t* w_sums, float beta, float* y, std::int64_t ldy, int cols) {
  std::int32_t acc[R][kCols] = {};
  for (std::int64_t q = 0; q < quads; ++q) {
    for (int r = 0; r < R; ++r) {
      std::uint8_t xa[4];
      std::memcpy(xa, a + q * kRows + r, 4);
      for (int j = 0; j < kCols; ++j)
        for (int t = 0; t < 4; ++t) acc[r][j] += static_cast<std::int32_t>(xa[t]) * b[j * 4 + t];
    }
    b += kCols * 4;
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < cols; ++j) {
      const float v = static_cast<float>(acc[r][j] - 128 * w_sums[j]) * x_scales[r] * w_scales[j];
      float& out = y[r * ldy + j];
      out = beta == 0.0f ? v : std::fma(beta, out, v);
    }
}
#endif

using Int8TileFn = void (*)(std::int64_t, const std::uint32_t*, const std::int8_t*, const float*, const float*,
                            const std::int32_t*, float, float*, std::int64_t, int);
template <std::size_t... I>
constexpr std::array<Int8TileFn, sizeof...(I)> make_int8_tiles(std::index_sequence<I...>) {
  return {&int8_tile<static_cast<int>(I) + 1>...};
}
constexpr std::array<Int8TileFn, kRows> kInt8Tiles = make_int8_tiles(std::make_index_sequence<kRows>{});

// x quantized, all its row panels: panel p holds rows 14p… as quads × kRows
// u32, at panels + p·quads·kRows. Shared by the product's threads, so that
// threads splitting the columns do not each quantize every row again.
struct Int8Buffers {
  PackBuffer<std::uint32_t> panels, row_quads;
  PackBuffer<float> scales;
};
Int8Buffers& int8_buffers() {
  thread_local Int8Buffers buffers;
  return buffers;
}

// Quantizes row panels [p0, p1) of x (m rows) into panels and scales ([m]).
void pack_panels(std::int64_t p0, std::int64_t p1, std::int64_t m, const float* x, std::int64_t ldx,
                 const QuantizedWeight& w, std::uint32_t* panels, float* scales) {
  std::uint32_t* row_quads = int8_buffers().row_quads.get(w.quads);  // [quads], this thread's
  for (std::int64_t p = p0; p < p1; ++p) {
    const std::int64_t i = p * kRows;
    const int rows = static_cast<int>(std::min<std::int64_t>(kRows, m - i));
    pack_x(x + i * ldx, ldx, rows, w.k, w.quads, panels + p * w.quads * kRows, row_quads, scales + i);
  }
}

// y[m0:m1, n0:n1] from the packed panels (m0 a multiple of kRows).
void run_region(std::int64_t m0, std::int64_t m1, std::int64_t n0, std::int64_t n1, const std::uint32_t* panels,
                const float* scales, const QuantizedWeight& w, float beta, float* y, std::int64_t ldy) {
  for (std::int64_t i = m0; i < m1; i += kRows) {
    const int rows = static_cast<int>(std::min<std::int64_t>(kRows, m1 - i));
    const std::uint32_t* panel = panels + (i / kRows) * w.quads * kRows;
    for (std::int64_t j = n0; j < n1; j += kCols) {
      const int cols = static_cast<int>(std::min<std::int64_t>(kCols, n1 - j));
      const std::int8_t* b = w.packed.data() + (j / kCols) * w.quads * kCols * 4;
      kInt8Tiles[static_cast<std::size_t>(rows - 1)](w.quads, panel, b, scales + i, w.scales.data() + j,
                                                     w.sums.data() + j, beta, y + i * ldy + j, ldy, cols);
    }
  }
}

ATTN_AVX512_WARNINGS_ON
}  // namespace

void gemm_int8(std::int64_t m, const float* x, std::int64_t ldx, const QuantizedWeight& w, float beta, float* y,
               std::int64_t ldy) {
  if (m < 0 || ldx < std::max<std::int64_t>(w.k, 1) || ldy < std::max<std::int64_t>(w.n, 1))
    throw Error("gemm_int8: bad shape: m " + std::to_string(m) + ", ldx " + std::to_string(ldx) + " (k " +
                std::to_string(w.k) + "), ldy " + std::to_string(ldy) + " (n " + std::to_string(w.n) + ")");
  if (m == 0 || w.n == 0) return;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const std::int64_t m_panels = ceil_div(m, kRows), n_panels = ceil_div(w.n, kCols);
  Int8Buffers& buffers = int8_buffers();
  std::uint32_t* panels = buffers.panels.get(m_panels * w.quads * kRows);  // [m_panels][quads][kRows]
  float* scales = buffers.scales.get(m);                                   // [m]
  if (threads == 1 || m * w.n * w.k < kParallelMinMacs) {
    for (std::int64_t p = 0; p < m_panels; ++p) {  // each panel used while it is in cache
      pack_panels(p, p + 1, m, x, ldx, w, panels, scales);
      run_region(p * kRows, std::min(m, (p + 1) * kRows), 0, w.n, panels, scales, w, beta, y, ldy);
    }
    return;
  }
  YieldingBarrier barrier(threads);  // after the packing, and at the end
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), t = omp_get_thread_num();
    pack_panels(m_panels * t / team, m_panels * (t + 1) / team, m, x, ldx, w, panels, scales);
    if (team == threads) {
      barrier.wait();
    } else {  // fewer threads than asked for (the condition is the whole team's)
#pragma omp barrier
    }
    int grid_m = 1, grid_n = 1;
    choose_grid(team, m_panels, n_panels, kRows, kCols, grid_m, grid_n);
    const Region r = grid_region(t, grid_m, grid_n, m, w.n, kRows, kCols);
    if (r.m0 < r.m1 && r.n0 < r.n1) run_region(r.m0, r.m1, r.n0, r.n1, panels, scales, w, beta, y, ldy);
    if (team == threads) barrier.wait();
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
