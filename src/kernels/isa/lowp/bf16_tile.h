// bf16 register tiles: C[rows×cols] (rows ≤ kBf16TileRows, cols ≤
// kBf16TileCols) from an A panel of kp × kBf16TileRows pairs and a B panel
// of kp × kBf16TileCols pairs (bf16_pack.h), then C = alpha·acc + beta·C, or
// alpha·acc when beta == 0 (C not read). Every element is one chain over the
// pairs in order, each pair adding its odd product and then its even one
// (vdpbf16ps), flushing sums below FLT_MIN to a signed zero: the instruction
// at avx512bf16, FP32 FMA elsewhere.
#pragma once
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <utility>

#include "../isa.h"
#include "../tile_store.h"
#include "attn/kernels/gemm_bf16.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

#if ATTN_AVX512
ATTN_AVX512_WARNINGS_OFF
// avx512bf16: 14 rows × 2 zmm = 28 accumulators, 2 B vectors, the A pair as
// an embedded broadcast. The emulation needs the odd and even halves of B
// and A apart: 8 rows.
inline constexpr int kBf16TileRows = ATTN_BF16 ? 14 : 8;
inline constexpr int kBf16TileCols = 32;

#if ATTN_BF16
inline __m512 dot_pair(__m512 acc, __m512i a_pair, __m512i b_pairs) {
  return _mm512_dpbf16_ps(acc, (__m512bh)a_pair, (__m512bh)b_pairs);
}
#else
inline __m512 flush_tiny(__m512 x) {
  const __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(FLT_MIN), _CMP_LT_OQ);
  return _mm512_mask_and_ps(x, tiny, x, _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u))));
}
inline __m512 odd_half(__m512i pairs) {
  return _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
inline __m512 even_half(__m512i pairs) { return _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16)); }
inline __m512 dot_pair(__m512 acc, __m512i a_pair, __m512i b_pairs) {
  acc = flush_tiny(_mm512_fmadd_ps(odd_half(a_pair), odd_half(b_pairs), acc));
  return flush_tiny(_mm512_fmadd_ps(even_half(a_pair), even_half(b_pairs), acc));
}
#endif

template <int kRows, bool kPartial>
void bf16_tile(std::int64_t kp, const std::uint32_t* a, const std::uint32_t* b, float* c, std::int64_t ldc, int cols,
               float alpha, float beta) {
  __m512 lo[kRows], hi[kRows];
  start_tile<kRows>(lo, hi, c, ldc, cols);
#pragma GCC unroll 2
  for (std::int64_t q = 0; q < kp; ++q) {
    const __m512i b_lo = _mm512_loadu_si512(b), b_hi = _mm512_loadu_si512(b + 16);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      const __m512i a_r = _mm512_set1_epi32(static_cast<int>(a[r]));
      lo[r] = dot_pair(lo[r], a_r, b_lo);
      hi[r] = dot_pair(hi[r], a_r, b_hi);
    }
    a += kBf16TileRows;
    b += kBf16TileCols;
  }
  store_tile<kRows>(lo, hi, c, ldc, column_masks(cols), alpha, beta);
  (void)kPartial;
}
ATTN_AVX512_WARNINGS_ON

#else
// Plain C++ with std::fma (no contraction can change it).
inline constexpr int kBf16TileRows = 4;
inline constexpr int kBf16TileCols = 16;

inline float flush_tiny(float x) { return std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x; }

template <int kRows, bool kPartial>
void bf16_tile(std::int64_t kp, const std::uint32_t* a, const std::uint32_t* b, float* c, std::int64_t ldc, int cols,
               float alpha, float beta) {
  float acc[kRows][kBf16TileCols] = {};
  const int width = kPartial ? cols : kBf16TileCols;
  for (std::int64_t q = 0; q < kp; ++q) {
    for (int r = 0; r < kRows; ++r) {
      const float a_odd = bf16_to_float(static_cast<std::uint16_t>(a[r] >> 16));
      const float a_even = bf16_to_float(static_cast<std::uint16_t>(a[r]));
      for (int j = 0; j < width; ++j) {
        const float b_odd = bf16_to_float(static_cast<std::uint16_t>(b[j] >> 16));
        const float b_even = bf16_to_float(static_cast<std::uint16_t>(b[j]));
        acc[r][j] = flush_tiny(std::fma(a_odd, b_odd, acc[r][j]));
        acc[r][j] = flush_tiny(std::fma(a_even, b_even, acc[r][j]));
      }
    }
    a += kBf16TileRows;
    b += kBf16TileCols;
  }
  for (int r = 0; r < kRows; ++r) {
    float* row = c + r * ldc;
    for (int j = 0; j < cols; ++j)
      row[j] = beta == 0.0f ? alpha * acc[r][j] : std::fma(alpha, acc[r][j], beta * row[j]);
  }
}
#endif

using Bf16TileFn = void (*)(std::int64_t, const std::uint32_t*, const std::uint32_t*, float*, std::int64_t, int, float,
                            float);

template <bool kPartial, std::size_t... I>
constexpr std::array<Bf16TileFn, sizeof...(I)> make_bf16_tiles(std::index_sequence<I...>) {
  return {&bf16_tile<static_cast<int>(I) + 1, kPartial>...};
}
// bf16_tile<rows, partial> for rows = 1..kBf16TileRows, indexed [partial][rows − 1].
inline constexpr std::array<std::array<Bf16TileFn, kBf16TileRows>, 2> kBf16Tiles = {
    make_bf16_tiles<false>(std::make_index_sequence<kBf16TileRows>{}),
    make_bf16_tiles<true>(std::make_index_sequence<kBf16TileRows>{})};

inline Bf16TileFn bf16_tile_for(int rows, int cols) { return kBf16Tiles[cols < kBf16TileCols][rows - 1]; }

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
